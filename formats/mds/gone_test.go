package mds

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/itarconv/itarconv/internal/mapped"
	"github.com/itarconv/itarconv/testing/testutil"
)

// TestWriteJobSourceCutShort: a value mapped from a source shard cut
// short since cannot be written into the MDS shard: the error names the
// source and the offset of the bytes it lost, not the shard being written.
func TestWriteJobSourceCutShort(t *testing.T) {
	dir := t.TempDir()
	src, f := testutil.SourceFile(t, dir, "train-0001.tar", 64<<10)
	win := &window{f: &sharedFile{f: f}, lo: 0, hi: 64 << 10}
	win.f.refs.Add(1)
	win.hold()
	if err := os.Truncate(src, 0); err != nil {
		t.Fatal(err)
	}
	out, err := os.Create(filepath.Join(dir, "shard.00000.mds"))
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	j := &job{sh: &shardOut{f: out}, pieces: []val{{b: []byte("head")}, {win: win, off: 8192, n: 1000}}, wins: []*window{win}}
	err = new(writer).writeJob(j)
	wasMapped := win.m != nil
	j.release()
	if !wasMapped {
		t.Skip("the system did not map the source")
	}
	if !errors.Is(err, mapped.ErrGone) || !strings.Contains(err.Error(), src+": offset 8192") || !strings.Contains(err.Error(), "shard.00000.mds") {
		t.Fatalf("%v, want ErrGone naming %s at offset 8192", err, src)
	}
}
