package convert

import (
	"archive/tar"
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	gotime "time"

	"github.com/itarconv/itarconv/fold"
	"github.com/itarconv/itarconv/formats/tarfile"
	"github.com/itarconv/itarconv/formats/taridx"
	"github.com/itarconv/itarconv/testing/testutil"
)

type tarEntry struct {
	name  string
	typ   byte
	mode  int64
	mtime int64
	nsec  int
	body  string
}

func readTarDir(t *testing.T, paths []string) []tarEntry {
	t.Helper()
	var out []tarEntry
	testutil.EachTarMember(t, paths, func(h *tar.Header, b []byte) {
		out = append(out, tarEntry{h.Name, h.Typeflag, h.Mode, h.ModTime.Unix(), h.ModTime.Nanosecond(), string(b)})
	})
	return out
}

// TestWriteFoldReshards copies a fold into shards of another size: every
// member, its bytes and metadata survive, and the new fold is indexed.
func TestWriteFoldReshards(t *testing.T) {
	src := t.TempDir()
	var want []tarEntry
	for s := 0; s < 3; s++ {
		var buf bytes.Buffer
		tw := tar.NewWriter(&buf)
		for i := 0; i < 7; i++ {
			e := tarEntry{name: fmt.Sprintf("dir%d/é%02d.json", s, i), typ: tar.TypeReg, mode: 0o600, mtime: 1600000000 + int64(i), nsec: 123 * i, body: fmt.Sprint(bytes.Repeat([]byte{'x'}, 700*i))}
			tw.WriteHeader(&tar.Header{Name: e.name, Typeflag: e.typ, Mode: e.mode, Size: int64(len(e.body)), ModTime: mtime(e.mtime, e.nsec), Format: tar.FormatPAX})
			tw.Write([]byte(e.body))
			want = append(want, e)
		}
		tw.Close()
		os.WriteFile(filepath.Join(src, fmt.Sprintf("in_%d.tar", s)), buf.Bytes(), 0o644)
	}
	paths, _ := filepath.Glob(filepath.Join(src, "*.tar"))
	out := filepath.Join(t.TempDir(), "out")
	ts := fold.NewTarShards(paths, tarfile.Options{})
	st, err := fold.Write(context.Background(), ts, fold.WriteOptions{Dir: out, Fold: "val", ShardSize: 6000})
	ts.Close()
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Shards) < 3 || st.Members != 21 || st.Index.Rows != 21 {
		t.Fatalf("stats %+v", st)
	}
	got := readTarDir(t, st.Shards)
	if len(got) != len(want) {
		t.Fatalf("%d members, want %d", len(got), len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("member %d: %+v, want %+v", i, got[i], want[i])
		}
	}
	x, err := taridx.ReadFile(filepath.Join(out, "val.taridx"))
	if err != nil || x.Len() != 21 {
		t.Fatalf("index: %v", err)
	}
}

func mtime(sec int64, nsec int) gotime.Time { return gotime.Unix(sec, int64(nsec)) }
