package fold

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/itarconv/itarconv/dataset"
	"github.com/itarconv/itarconv/formats/tarfile"
	"github.com/itarconv/itarconv/partition"
)

// mixedShards writes shards whose members take both of the tar writer's
// paths: plain ustar headers, and pax headers (long or non-ASCII names,
// sub-second times) whose padding archive/tar writes late; directories,
// symbolic links and hard links (which a fold does not copy) among them.
func mixedShards(t *testing.T, counts ...int) []string {
	t.Helper()
	dir := t.TempDir()
	var paths []string
	i := 0
	for s, n := range counts {
		var buf bytes.Buffer
		tw := tar.NewWriter(&buf)
		for range n {
			name := fmt.Sprintf("d%d/s%05d", i%3, i)
			switch i % 5 {
			case 1:
				name = strings.Repeat("long/", 25) + name
			case 3:
				name += "é"
			}
			h := &tar.Header{Name: name + ".bin", Size: int64(i * 97 % 1500), Mode: 0o644, ModTime: time.Unix(1700000000, int64(i%2)*5e8), Format: tar.FormatPAX}
			tw.WriteHeader(h)
			tw.Write(bytes.Repeat([]byte{byte(i)}, int(h.Size)))
			switch i % 11 {
			case 4:
				tw.WriteHeader(&tar.Header{Name: name + "/", Typeflag: tar.TypeDir, Mode: 0o755})
			case 6:
				tw.WriteHeader(&tar.Header{Name: name + ".lnk", Typeflag: tar.TypeSymlink, Linkname: name + ".bin"})
			case 8:
				tw.WriteHeader(&tar.Header{Name: name + ".hard", Typeflag: tar.TypeLink, Linkname: name + ".bin"})
			case 9:
				tw.WriteHeader(&tar.Header{Name: name + "noext", Size: 2, Mode: 0o644})
				tw.Write([]byte("xy"))
			}
			i++
		}
		tw.Close()
		p := filepath.Join(dir, fmt.Sprintf("in_%d.tar", s))
		if err := os.WriteFile(p, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	return paths
}

// readFold reads a fold's shards and index from dir, by name, and removes
// them.
func readFold(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	entries, _ := os.ReadDir(dir)
	files := map[string][]byte{}
	for _, e := range entries {
		p := filepath.Join(dir, e.Name())
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		files[e.Name()] = b
		os.Remove(p)
	}
	return files
}

// TestFoldPartsEqualOneRun: a fold written by 1, 2, 3 or 7 tasks and
// merged is the fold one run writes, shards and index byte for byte, and
// the same figures, with shards rolled over inside and across the parts.
func TestFoldPartsEqualOneRun(t *testing.T) {
	ctx := context.Background()
	shards := mixedShards(t, 40, 3, 0, 75, 20, 1)
	for _, c := range []struct {
		size       int64
		maxMembers int
		contiguous bool
	}{{0, 0, false}, {8 << 10, 0, false}, {20 << 10, 7, true}} {
		t.Run(fmt.Sprintf("size=%d,max=%d", c.size, c.maxMembers), func(t *testing.T) {
			out := t.TempDir()
			opts := WriteOptions{Dir: out, Fold: "f", ShardSize: c.size, MaxMembers: c.maxMembers, Workers: 2,
				Index: IndexOptions{Contiguous: c.contiguous}}
			want, err := Write(ctx, NewTarShards(shards, tarfile.Options{}), opts)
			if err != nil {
				t.Fatal(err)
			}
			wantFiles := readFold(t, out)
			if c.size == 8<<10 && len(want.Shards) < 10 {
				t.Fatalf("one run wrote %d shards: no rollover to test", len(want.Shards))
			}
			for _, n := range []int{1, 2, 3, 7} {
				all := NewTarShards(shards, tarfile.Options{})
				var parts []string
				for k := range n {
					lo, hi := partition.Range(dataset.ShardSizes(all), partition.Task{K: k, N: n})
					src, err := dataset.Slice(all, lo, hi)
					if err != nil {
						t.Fatal(err)
					}
					part := t.TempDir()
					if _, err := WritePart(ctx, src, part, WriteOptions{Workers: 1 + k%2, Index: opts.Index}); err != nil {
						t.Fatal(err)
					}
					parts = append(parts, part)
				}
				got, ms, err := MergeParts(ctx, parts, opts)
				if err != nil {
					t.Fatal(err)
				}
				gotFiles := readFold(t, out)
				if len(gotFiles) != len(wantFiles) {
					t.Errorf("%d tasks: %d files, one run %d", n, len(gotFiles), len(wantFiles))
				}
				for name, b := range wantFiles {
					if !bytes.Equal(gotFiles[name], b) {
						t.Errorf("%d tasks: %s differs (%d bytes, one run's %d)", n, name, len(gotFiles[name]), len(b))
					}
				}
				for i := range got.Shards {
					got.Shards[i] = filepath.Base(got.Shards[i])
				}
				w := *want
				w.Shards = nil
				for _, s := range want.Shards {
					w.Shards = append(w.Shards, filepath.Base(s))
				}
				gi, wi := *got.Index, *w.Index
				got.Index, w.Index = nil, nil
				if fmt.Sprintf("%+v %+v", *got, gi) != fmt.Sprintf("%+v %+v", w, wi) {
					t.Errorf("%d tasks: the figures differ from one run's", n)
				}
				var tarBytes int64
				for name, b := range wantFiles {
					if strings.HasSuffix(name, ".tar") {
						tarBytes += int64(len(b)) - 1024
					}
				}
				if ms.CopiedBytes != tarBytes {
					t.Errorf("%d tasks: copied %d bytes, the shards hold %d of members", n, ms.CopiedBytes, tarBytes)
				}
			}
		})
	}
}

// TestFoldPartDamaged: a part's body or log cut short or changed is an
// error naming the file, and leaves no fold.
func TestFoldPartDamaged(t *testing.T) {
	ctx := context.Background()
	shards := mixedShards(t, 30)
	part := t.TempDir()
	if _, err := WritePart(ctx, NewTarShards(shards, tarfile.Options{}), part, WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		file string
		edit func([]byte) []byte
		want string
	}{
		{membersFile, func(b []byte) []byte { return b[:len(b)-2] }, "byte "},
		{membersFile, func(b []byte) []byte { return append(b, 0, 0, 0, 0, 0) }, "a member at"},
		{membersFile, func(b []byte) []byte { return append([]byte("X"), b[1:]...) }, "not a members log"},
		{bodyFile, func(b []byte) []byte { return b[:len(b)-512] }, "not the"},
		{bodyFile, func(b []byte) []byte { return b[:len(b)-100] }, "not the"},
		{entriesFile, func(b []byte) []byte { return b[:len(b)-1] }, "byte "},
	} {
		p := filepath.Join(part, c.file)
		orig, _ := os.ReadFile(p)
		os.WriteFile(p, c.edit(orig), 0o644)
		out := t.TempDir()
		_, _, err := MergeParts(ctx, []string{part}, WriteOptions{Dir: out})
		if !errors.Is(err, ErrPart) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s changed: %v", c.file, err)
		}
		if left, _ := os.ReadDir(out); len(left) != 0 {
			t.Errorf("%s changed: the merge left %d files", c.file, len(left))
		}
		os.WriteFile(p, orig, 0o644)
	}
}
