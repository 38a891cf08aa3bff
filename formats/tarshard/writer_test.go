package tarshard

import (
	"archive/tar"
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestWriterRollsOverAndRenames(t *testing.T) {
	dir := t.TempDir()
	w, err := Create(Options{Dir: dir, Fold: "train", ShardSize: 8 << 10})
	if err != nil {
		t.Fatal(err)
	}
	var locs []Location
	for i := 0; i < 10; i++ {
		body := bytes.Repeat([]byte{byte('a' + i)}, 1500+i)
		name := strings.Repeat("d/", i) + "f" + string(rune('0'+i)) + ".bin"
		loc, err := w.Add(Member{Name: name, Typeflag: tar.TypeReg, Size: int64(len(body)), Mode: 0o640, UID: 7, GID: 8,
			ModTime: 1700000000, ModTimeNsec: int32(i * 1000)}, bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		locs = append(locs, loc)
	}
	// Before Close, no shard has its final name.
	if m, _ := filepath.Glob(filepath.Join(dir, "train_*.tar")); len(m) != 0 {
		t.Fatalf("shards visible before Close: %v", m)
	}
	shards, err := w.Close()
	if err != nil {
		t.Fatal(err)
	}
	if len(shards) < 2 || filepath.Base(shards[0]) != "train_0000.tar" {
		t.Fatalf("shards %v", shards)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != len(shards) {
		t.Errorf("directory holds %d entries for %d shards", len(entries), len(shards))
	}
	// Read back with archive/tar: names, bytes, metadata; and each
	// location's header is where the index will say.
	i := 0
	for fid, p := range shards {
		data, _ := os.ReadFile(p)
		if int64(len(data)) > 8<<10 {
			t.Errorf("%s: %d bytes, over the limit", p, len(data))
		}
		tr := tar.NewReader(bytes.NewReader(data))
		for {
			h, err := tr.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(tr)
			if locs[i].Shard != fid || len(body) != 1500+i || body[0] != byte('a'+i) || h.Mode != 0o640 || h.Uid != 7 ||
				h.ModTime.UnixNano() != 1700000000*1e9+int64(i*1000) {
				t.Errorf("member %d: fid %d, %+v", i, locs[i].Shard, h)
			}
			off := locs[i].HeaderOffset
			if !bytes.HasPrefix(data[off:off+100], []byte(h.Name)) && len(h.Name) <= 100 {
				t.Errorf("member %d: no header named %q at %d", i, h.Name, off)
			}
			i++
		}
	}
	if i != 10 {
		t.Errorf("read %d members", i)
	}
}

func TestUnsafeNames(t *testing.T) {
	w, _ := Create(Options{Dir: t.TempDir(), Fold: "train"})
	defer w.Abort()
	for _, name := range []string{"/etc/passwd", "../x", "a/../../x", "a/..", "", "."} {
		if _, err := w.Add(Member{Name: name, Typeflag: tar.TypeReg}, nil); !errors.Is(err, ErrUnsafeName) {
			t.Errorf("%q: %v, want ErrUnsafeName", name, err)
		}
	}
	for _, name := range []string{"a..b", "..a/b", "a/b/"} {
		if err := CheckName(name); err != nil {
			t.Errorf("%q: %v", name, err)
		}
	}
}

func TestAbortLeavesNothing(t *testing.T) {
	dir := t.TempDir()
	w, _ := Create(Options{Dir: dir, Fold: "val", ShardSize: 2048})
	for i := 0; i < 5; i++ {
		w.Add(Member{Name: "x.bin", Typeflag: tar.TypeReg, Size: 1000}, bytes.NewReader(make([]byte, 1000)))
	}
	w.Abort()
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("left behind: %v", entries)
	}
}

func TestShardNameDigits(t *testing.T) {
	for _, tt := range []struct {
		i, n int
		want string
	}{{0, 1, "a_0000.tar"}, {9999, 10000, "a_9999.tar"}, {5, 10001, "a_00005.tar"}} {
		if got := ShardName("a", tt.i, tt.n, 4); got != tt.want {
			t.Errorf("ShardName(%d of %d) = %s, want %s", tt.i, tt.n, got, tt.want)
		}
	}
}
