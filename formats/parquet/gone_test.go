package parquet

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/itarconv/itarconv/internal/mapped"
	"github.com/itarconv/itarconv/testing/testutil"
)

// TestGoneNamesSource: a row group's value mapped from a source shard cut
// short since cannot be written: the error names the source and the
// offset of the bytes it lost, and the Parquet file being written, not
// that file's temporary name alone.
func TestGoneNamesSource(t *testing.T) {
	dir := t.TempDir()
	src, f := testutil.SourceFile(t, dir, "train-0001.tar", 64<<10)
	r, err := mapped.Map(f, 0, 64<<10)
	if err != nil {
		t.Skip(err)
	}
	g := newRowGroup(1)
	g.regions = append(g.regions, r)
	defer g.reset()
	if err := os.Truncate(src, 0); err != nil {
		t.Fatal(err)
	}
	tmp, err := os.Create(filepath.Join(dir, ".tmp-out"))
	if err != nil {
		t.Fatal(err)
	}
	defer tmp.Close()
	err = mapped.WritePieces(tmp, [][]byte{[]byte("page header"), r.Bytes(8192, 1000)}, 4)
	err = g.goneFrom(err, "out/train-00000-of-00001.parquet")
	if !errors.Is(err, mapped.ErrGone) || !strings.Contains(err.Error(), src+": offset 8192, writing out/train-00000-of-00001.parquet") {
		t.Fatalf("%v, want ErrGone naming %s at offset 8192 and the output", err, src)
	}
	other := errors.New("disk full")
	if got := g.goneFrom(other, "out"); got != other {
		t.Errorf("another error became %v", got)
	}
}
