package convert

import (
	"archive/tar"
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	gotime "time"

	"github.com/itarconv/itarconv/formats/barecat"
)

// stageShards writes tar shards of many members of mixed sizes (empty,
// a few bytes, KiBs, and some past stageMax, which the kernel copies
// rather than a worker stages), in directories, and returns them with
// their members in order.
func stageShards(t *testing.T) ([]string, [][]member) {
	t.Helper()
	dir := t.TempDir()
	when := gotime.Unix(1700000000, 5)
	var shards []string
	var all [][]member
	n := 0
	for s := range 3 {
		ms := []member{{name: fmt.Sprintf("d%d/", s), typ: tar.TypeDir, mode: 0o750, mtime: when}}
		for i := range 700 {
			size := (n * 7919) % 9000
			switch {
			case n%97 == 0:
				size = 0
			case n%301 == 5:
				size = stageMax + 1 + n
			case n%3 == 0:
				size %= 300
			}
			body := bytes.Repeat([]byte{byte(n), byte(n >> 8), byte(i)}, size/3+1)[:size]
			ms = append(ms, member{name: fmt.Sprintf("d%d/s%03d/m%06d.bin", s, i/50, n), typ: tar.TypeReg, body: string(body), mode: 0o644, mtime: when})
			n++
		}
		p := filepath.Join(dir, fmt.Sprintf("train_%04d.tar", s))
		writeTar(t, p, ms)
		shards = append(shards, p)
		all = append(all, ms)
	}
	return shards, all
}

// archiveDump is every shard of an archive and every row of its tables
// but the root directory's mtime (the time each run started).
func archiveDump(t *testing.T, path string) []string {
	t.Helper()
	var out []string
	for i := 0; ; i++ {
		b, err := os.ReadFile(barecat.ShardPath(path, i))
		if err != nil {
			break
		}
		out = append(out, fmt.Sprintf("shard %d: %d bytes %x", i, len(b), b))
	}
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, q := range []string{
		`SELECT rowid, path, shard, offset, size, crc32c, mode, uid, gid, mtime_ns FROM files ORDER BY rowid`,
		`SELECT rowid, path, num_subdirs, num_files, num_files_tree, size_tree, mode, uid, gid, CASE WHEN path = '' THEN NULL ELSE mtime_ns END FROM dirs ORDER BY rowid`,
		`SELECT key, value_text, value_int FROM config ORDER BY key`,
		`SELECT tbl, idx, stat FROM sqlite_stat1 ORDER BY tbl, idx`,
	} {
		rows, err := db.Query(q)
		if err != nil {
			t.Fatal(err)
		}
		cols, _ := rows.Columns()
		for rows.Next() {
			vals := make([]any, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			if err := rows.Scan(ptrs...); err != nil {
				t.Fatal(err)
			}
			out = append(out, fmt.Sprint(vals...))
		}
		rows.Close()
	}
	return out
}

// TestTarToBarecatStagedSameBytes: the workers stage the payloads and the
// Writer only places them, so the archive must not depend on the number
// of workers nor on the memory budget, and must be what the Writer makes
// of the same members added one by one (Add, from memory), shard size
// limit included.
func TestTarToBarecatStagedSameBytes(t *testing.T) {
	shards, members := stageShards(t)
	for _, limit := range []int64{0, 3 << 20} {
		// The reference: each member added in order.
		ref := filepath.Join(t.TempDir(), "ref.barecat")
		w, err := barecat.Create(ref, barecat.WriterOptions{ShardSizeLimit: limit})
		if err != nil {
			t.Fatal(err)
		}
		for _, ms := range members {
			for _, m := range ms {
				if m.typ == tar.TypeDir {
					d := barecat.Dir{Path: strings.TrimSuffix(m.name, "/"), Mode: m.mode, HasMode: true, UID: 1000, HasUID: true,
						GID: 100, HasGID: true, MtimeNs: m.mtime.UnixNano(), HasMtime: true}
					if err := w.AddDir(d); err != nil {
						t.Fatal(err)
					}
					continue
				}
				f := barecat.File{Path: m.name, Size: int64(len(m.body)), Mode: m.mode, HasMode: true, UID: 1000, HasUID: true,
					GID: 100, HasGID: true, MtimeNs: m.mtime.UnixNano(), HasMtime: true}
				if err := w.Add(f, strings.NewReader(m.body)); err != nil {
					t.Fatal(err)
				}
			}
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		want := archiveDump(t, ref)
		// A memory budget of a byte: the smallest batches, and no
		// filter of paths (SQLite's index finds repeats).
		for _, c := range []struct {
			workers int
			memory  int64
		}{{1, 0}, {4, 0}, {4, 1}} {
			workers := c.workers
			out := filepath.Join(t.TempDir(), "o.barecat")
			st, err := TarToBarecat(context.Background(), shards, out, BarecatOptions{Workers: workers, ShardSize: limit, Memory: c.memory})
			if err != nil {
				t.Fatal(err)
			}
			if st.Files != 2100 || st.Dirs != 3 {
				t.Fatalf("limit %d, %d workers: %+v", limit, workers, st)
			}
			if got := archiveDump(t, out); !slices.Equal(got, want) {
				for i := range min(len(got), len(want)) {
					if got[i] != want[i] {
						t.Fatalf("limit %d, %d workers: entry %d:\n got %.300s\nwant %.300s", limit, workers, i, got[i], want[i])
					}
				}
				t.Fatalf("limit %d, %d workers: %d entries, want %d", limit, workers, len(got), len(want))
			}
		}
	}
}

// TestTarToBarecatRepeatFoundLate: with a memory budget too small for the
// Writer's filter of paths, a repeated path is found by SQLite as its row
// goes in, after later members; the error still names both members.
func TestTarToBarecatRepeatFoundLate(t *testing.T) {
	dir := t.TempDir()
	when := gotime.Unix(1700000000, 0)
	var ms []member
	for i := range 600 {
		ms = append(ms, member{name: fmt.Sprintf("a/%04d", i), typ: tar.TypeReg, body: "x", mode: 0o644, mtime: when})
	}
	writeTar(t, filepath.Join(dir, "s_0000.tar"), ms)
	ms = append(ms[:0], member{name: "b", typ: tar.TypeReg, body: "y", mode: 0o644, mtime: when},
		member{name: "./a/0007", typ: tar.TypeReg, body: "z", mode: 0o644, mtime: when})
	for i := range 300 {
		ms = append(ms, member{name: fmt.Sprintf("c/%04d", i), typ: tar.TypeReg, body: "x", mode: 0o644, mtime: when})
	}
	writeTar(t, filepath.Join(dir, "s_0001.tar"), ms)
	shards := []string{filepath.Join(dir, "s_0000.tar"), filepath.Join(dir, "s_0001.tar")}
	out := filepath.Join(dir, "o.barecat")
	_, err := TarToBarecat(context.Background(), shards, out, BarecatOptions{Memory: 1})
	if !errors.Is(err, barecat.ErrDuplicatePath) || !strings.Contains(err.Error(), `"a/0007": `+shards[0]+" offset ") ||
		!strings.Contains(err.Error(), " and "+shards[1]+" offset ") {
		t.Fatalf("error %v, want both members of a/0007 named", err)
	}
	if m, _ := filepath.Glob(filepath.Join(dir, "o.barecat*")); len(m) != 0 {
		t.Fatalf("left behind: %q", m)
	}
}
