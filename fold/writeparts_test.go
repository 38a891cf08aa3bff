package fold

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/itarconv/itarconv/dataset"
	"github.com/itarconv/itarconv/formats/tarfile"
	"github.com/itarconv/itarconv/formats/taridx"
	"github.com/itarconv/itarconv/partition"
	"github.com/itarconv/itarconv/testing/testutil"
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

// foldMembers reads a fold's shards in order, as one tar stream: each
// member's header and payload, in a line; and the fold's index rows as the
// members they name (name, size, extension, crash id), in index order.
func foldMembers(t *testing.T, shards []string, index string) (members, rows []string, x *taridx.Index) {
	t.Helper()
	testutil.EachTarMember(t, shards, func(h *tar.Header, b []byte) {
		members = append(members, fmt.Sprintf("%s %c %d %o %s %v %x", h.Name, h.Typeflag, h.Size, h.Mode, h.Linkname, h.ModTime.UnixNano(), sha256.Sum256(b)))
	})
	x, err := taridx.ReadFile(index)
	if err != nil {
		t.Fatal(err)
	}
	for i := range int(x.Header.NRows) {
		r := x.Row(i)
		rows = append(rows, fmt.Sprintf("%d %s %d %d %x", r.Size, x.Exts[r.ExtID], r.CrashID, r.ExtID, r.KeyHash))
	}
	return members, rows, x
}

// TestFoldPartsMergeLikeOneRun: a fold written by 1, 2, 3 or 7 tasks and
// merged holds the members one run writes, with the same headers, bytes
// and order, and an index of the same rows in the same order (only fids
// and offsets may differ, where the shards end differs) that verify
// passes; the merge links every shard and copies no byte.
func TestFoldPartsMergeLikeOneRun(t *testing.T) {
	ctx := context.Background()
	shards := mixedShards(t, 40, 3, 0, 75, 20, 1)
	for _, c := range []struct {
		size       int64
		maxMembers int
		contiguous bool
	}{{0, 0, false}, {8 << 10, 0, false}, {20 << 10, 7, true}} {
		t.Run(fmt.Sprintf("size=%d,max=%d", c.size, c.maxMembers), func(t *testing.T) {
			one := t.TempDir()
			opts := WriteOptions{Dir: one, Fold: "f", ShardSize: c.size, MaxMembers: c.maxMembers, Workers: 2,
				Index: IndexOptions{Contiguous: c.contiguous}}
			want, err := Write(ctx, NewTarShards(shards, tarfile.Options{}), opts)
			if err != nil {
				t.Fatal(err)
			}
			wantMembers, wantRows, wantX := foldMembers(t, want.Shards, filepath.Join(one, "f.taridx"))
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
					if _, err := WritePart(ctx, src, part, WriteOptions{Workers: 1 + k%2, ShardSize: c.size, MaxMembers: c.maxMembers, Index: opts.Index}); err != nil {
						t.Fatal(err)
					}
					parts = append(parts, part)
				}
				out := t.TempDir()
				mo := opts
				mo.Dir = out
				got, ms, err := MergeParts(ctx, parts, mo)
				if err != nil {
					t.Fatal(err)
				}
				gotMembers, gotRows, gotX := foldMembers(t, got.Shards, filepath.Join(out, "f.taridx"))
				if !slices.Equal(gotMembers, wantMembers) {
					t.Errorf("%d tasks: %d members, one run %d, or not the same", n, len(gotMembers), len(wantMembers))
				}
				if !slices.Equal(gotRows, wantRows) {
					t.Errorf("%d tasks: the index rows differ from one run's", n)
				}
				gh, wh := gotX.Header, wantX.Header
				if gh.NStems != wh.NStems || gh.NCrash != wh.NCrash || gh.Flags != wh.Flags || !slices.Equal(gotX.Exts, wantX.Exts) {
					t.Errorf("%d tasks: index header %+v, one run's %+v", n, gh, wh)
				}
				if got.Members != want.Members || got.Bytes != want.Bytes || fmt.Sprint(got.Skipped) != fmt.Sprint(want.Skipped) ||
					got.Index.Rows != want.Index.Rows || got.Index.Stems != want.Index.Stems || got.Index.Shards != len(got.Shards) {
					t.Errorf("%d tasks: the figures differ from one run's: %+v %+v, want %+v %+v", n, *got, *got.Index, *want, *want.Index)
				}
				if ms.Linked != len(got.Shards) || ms.CopiedBytes != 0 {
					t.Errorf("%d tasks: %d of %d shards linked, %d bytes copied", n, ms.Linked, len(got.Shards), ms.CopiedBytes)
				}
				f, err := Open(filepath.Join(out, "f.taridx"), got.Shards)
				if err != nil {
					t.Fatal(err)
				}
				rep, err := f.Verify(ctx, VerifyOptions{Data: true})
				if err != nil || !rep.OK() {
					t.Errorf("%d tasks: verify: %v %+v", n, err, rep)
				}
				if c.size == 0 && len(got.Shards) > n {
					t.Errorf("%d tasks: %d shards", n, len(got.Shards))
				}
			}
		})
	}
}

// TestFoldPartsFailedMergeKeepsParts: a merge that fails (a shard of the
// fold's name already there) leaves the parts as they were, so that it
// can run again; the fold then appears whole.
func TestFoldPartsFailedMergeKeepsParts(t *testing.T) {
	ctx := context.Background()
	shards := mixedShards(t, 30, 30)
	var parts []string
	var members int64
	for k := range 2 {
		part := t.TempDir()
		src, _ := dataset.Slice(NewTarShards(shards, tarfile.Options{}), k, k+1)
		st, err := WritePart(ctx, src, part, WriteOptions{ShardSize: 8 << 10})
		if err != nil {
			t.Fatal(err)
		}
		members += st.Members
		parts = append(parts, part)
	}
	out := t.TempDir()
	if err := os.WriteFile(filepath.Join(out, "train_0003.tar"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := MergeParts(ctx, parts, WriteOptions{Dir: out, ShardSize: 8 << 10}); !errors.Is(err, ErrExists) && !errors.Is(err, fs.ErrExist) {
		t.Fatalf("merge over another fold's shard: %v", err)
	}
	if left, _ := os.ReadDir(out); len(left) != 1 {
		t.Errorf("the failed merge left %d files", len(left))
	}
	os.Remove(filepath.Join(out, "train_0003.tar"))
	st, _, err := MergeParts(ctx, parts, WriteOptions{Dir: out, ShardSize: 8 << 10})
	if err != nil {
		t.Fatal(err)
	}
	if st.Members != members || members < 60 {
		t.Errorf("%d members, the tasks wrote %d", st.Members, members)
	}
}

// TestFoldPartDamaged: a part's shard or index part cut short or changed
// is an error naming the file, and leaves no fold.
func TestFoldPartDamaged(t *testing.T) {
	ctx := context.Background()
	shards := mixedShards(t, 30)
	for _, c := range []struct {
		file string
		edit func([]byte) []byte
		want string
	}{
		{"shard_0000.tar", func(b []byte) []byte { return b[:len(b)-512] }, "not the"},
		{writeTally, func(b []byte) []byte { return []byte(strings.Replace(string(b), "shard_0000.tar", "../x.tar", 1)) }, "a shard named"},
		{taridx.PartFile, func(b []byte) []byte { return slices.Concat(b[:32], b[64:]) }, taridx.PartFile + ": byte "},
		{taridx.PartFile, func(b []byte) []byte { return b[:len(b)-1] }, taridx.PartFile + ": byte "},
	} {
		part := t.TempDir()
		if _, err := WritePart(ctx, NewTarShards(shards, tarfile.Options{}), part, WriteOptions{}); err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(part, c.file)
		orig, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(p, c.edit(orig), 0o644)
		out := t.TempDir()
		_, _, err = MergeParts(ctx, []string{part}, WriteOptions{Dir: out})
		if !errors.Is(err, ErrPart) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s changed: %v", c.file, err)
		}
		if left, _ := os.ReadDir(out); len(left) != 0 {
			t.Errorf("%s changed: the merge left %d files", c.file, len(left))
		}
	}
}
