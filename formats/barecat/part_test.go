package barecat

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/itarconv/itarconv/dataset"
	"github.com/itarconv/itarconv/internal/mapped"
)

// testFile is a file of a generated archive.
type testFile struct {
	path string
	data []byte
	mode int64
	uid  int64
	gid  int64
	mt   int64
}

// genFiles makes n files in nested directories, of 0 to maxSize bytes
// (some empty, some exactly maxSize), with varied metadata.
func genFiles(seed uint64, n, maxSize int) []testFile {
	rng := rand.New(rand.NewPCG(seed, 7))
	fs := make([]testFile, n)
	for i := range fs {
		size := rng.IntN(maxSize + 1)
		switch i % 17 {
		case 3:
			size = 0
		case 5:
			size = maxSize
		}
		data := make([]byte, size)
		for j := range data {
			data[j] = byte(rng.Uint32())
		}
		fs[i] = testFile{
			path: fmt.Sprintf("set%d/%02d/sample%05d.%s", i%3, i/40%7, i, [...]string{"jpg", "cls", "json"}[i%3]),
			data: data, mode: []int64{0o644, 0o600, 0o755}[i%3], uid: int64(1000 + i%4), gid: int64(i % 5),
			mt: 1_700_000_000_000_000_000 + int64(i)*1_000_003 - int64(i%2)*3_000_000_000_000_000_000,
		}
	}
	return fs
}

// makeArchive writes a source archive of files and explicit directories.
func makeArchive(t testing.TB, files []testFile, dirs []Dir) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), "src.barecat")
	w, err := Create(out, WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range dirs {
		if err := w.AddDir(d); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range files {
		err := w.Add(File{Path: f.path, Size: int64(len(f.data)), Mode: f.mode, HasMode: true, UID: f.uid, HasUID: true,
			GID: f.gid, HasGID: true, MtimeNs: f.mt, HasMtime: true}, bytes.NewReader(f.data))
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return out
}

// archiveSource makes sources over a Barecat archive: a fresh one each
// call, since a Source serves one Run.
func archiveSource(t testing.TB, index string) func() dataset.PayloadSource {
	a := mustOpen(t, index)
	return func() dataset.PayloadSource { return &Source{Archive: a, Order: ByAddress} }
}

// memSource is a dataset given shard by shard, for the rows a Barecat
// source cannot have (a path twice, links, the root). Rows named with a
// "@" prefix are read through OpenPayload; with a "%" prefix they lie in
// a file (FileRegions), where the kernel copies them; with a "&" prefix
// too, but the row does not hold them (and OpenPayload refuses them).
type memSource struct {
	shards [][]dataset.Row
	data   map[string][]byte
	file   *os.File
	at     map[string]int64
}

func newMemSource(t testing.TB, shards [][]dataset.Row) *memSource {
	shards = slices.Clone(shards)
	for i := range shards {
		shards[i] = slices.Clone(shards[i])
	}
	s := &memSource{shards: shards, data: map[string][]byte{}, at: map[string]int64{}}
	var region []byte
	for _, rows := range shards {
		for i := range rows {
			r := &rows[i]
			switch name := string(r.Name); {
			case strings.HasPrefix(name, "@"):
				s.data[name] = r.Inline
				r.Inline = nil
			case strings.HasPrefix(name, "%"):
				s.at[name] = int64(len(region))
				region = append(region, r.Inline...)
			case strings.HasPrefix(name, "&"):
				s.at[name] = int64(len(region))
				region = append(region, r.Inline...)
				r.Inline = nil
			}
		}
	}
	f, err := os.Create(filepath.Join(t.TempDir(), "regions"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write(region); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	s.file = f
	return s
}

func (s *memSource) NumShards() int             { return len(s.shards) }
func (s *memSource) ShardName(shard int) string { return fmt.Sprintf("mem shard %d", shard) }
func (s *memSource) Scan(_ context.Context, shard int, emit func([]dataset.Row) error) error {
	rows := slices.Clone(s.shards[shard])
	if len(rows) == 0 {
		return nil
	}
	return emit(rows)
}
func (s *memSource) OpenPayload(r *dataset.Row) (io.Reader, error) {
	if _, ok := s.at[string(r.Name)]; ok && r.Inline == nil {
		return nil, fmt.Errorf("%s: read through OpenPayload, though it lies in a file", r.Name)
	}
	return bytes.NewReader(s.data[string(r.Name)]), nil
}
func (s *memSource) PayloadFile(r *dataset.Row) (*os.File, int64, bool) {
	off, ok := s.at[string(r.Name)]
	return s.file, off, ok
}

func fileRow(name, data string, mt int64) dataset.Row {
	return dataset.Row{Name: []byte(name), Kind: dataset.KindFile, Size: int64(len(data)), Mode: 0o640, UID: 7, GID: 8,
		ModTime: mt, ModTimeNsec: 5, Offset: -1, Inline: []byte(data)}
}

func dirRowOf(name string, mode int64, mt int64) dataset.Row {
	return dataset.Row{Name: []byte(name), Kind: dataset.KindDir, Mode: mode, UID: 3, GID: 4, ModTime: mt, Offset: -1}
}

// runParts splits the source's shards at bounds, writes each part (with
// a different number of workers) and merges them into out.
func runParts(t testing.TB, mk func() dataset.PayloadSource, bounds []int, out string, opts RowsOptions) ([]string, *RowsStats, *MergeStats, error) {
	t.Helper()
	base := t.TempDir()
	var dirs []string
	for k := 0; k+1 < len(bounds); k++ {
		dir := filepath.Join(base, fmt.Sprintf("part-%d", k))
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		src, err := dataset.Slice(mk(), bounds[k], bounds[k+1])
		if err != nil {
			t.Fatal(err)
		}
		o := opts
		o.Workers = 1 + k%3
		ps, err := WritePart(context.Background(), src, dir, o)
		if err != nil {
			return nil, nil, nil, err
		}
		if ps.Dir != dir || ps.Shards != len(mustGlob(t, filepath.Join(dir, "shard-*"))) {
			t.Fatalf("part %d: stats %+v", k, ps)
		}
		dirs = append(dirs, dir)
	}
	rs, ms, err := MergeParts(context.Background(), dirs, out, opts)
	return dirs, rs, ms, err
}

func mustGlob(t testing.TB, pattern string) []string {
	m, err := filepath.Glob(pattern)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// splits are the ways a source of n shards is cut into 1, 2, 3 and 7
// parts: even shares, and uneven ones with empty parts.
func splits(n int) [][]int {
	even := func(k int) []int {
		b := make([]int, k+1)
		for i := range b {
			b[i] = i * n / k
		}
		return b
	}
	one := min(1, n)
	return [][]int{
		even(1), even(2), even(3), even(7),
		{0, 0, n},        // an empty first part
		{0, n, n, n},     // two empty last parts
		{0, one, one, n}, // the first shard alone, then nothing
		{0, 0, one, one, min(2, n), min(3, n), n, n},
	}
}

// tableRows dumps a table of an index, row by row, in rowid order.
func tableRows(t testing.TB, index, q string) []string {
	t.Helper()
	db := openSQL(t, index, true)
	defer db.Close()
	rows, err := db.Query(q)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	var out []string
	for rows.Next() {
		vals, ptrs := scanSlots(len(cols))
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		out = append(out, fmt.Sprintf("%v", vals))
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// sameArchive compares a merged archive with the single run's through
// the Reader: the same files, in the same order, with the same paths,
// metadata and bytes (where they lie, shard and offset, may differ), and
// every row of every other table (the root's mtime only when rootMeta:
// otherwise it is the time each run started). The merged archive must
// pass Verify.
func sameArchive(t testing.TB, want, got string, rootMeta bool) {
	t.Helper()
	if a, b := archiveFiles(t, want), archiveFiles(t, got); !slices.Equal(a, b) {
		t.Fatalf("files:\nsingle run %d %.2000q\nmerge      %d %.2000q", len(a), a, len(b), b)
	}
	mtime := "CASE WHEN path = '' THEN NULL ELSE mtime_ns END"
	if rootMeta {
		mtime = "mtime_ns"
	}
	for _, q := range []string{
		`SELECT rowid, path, parent, size, crc32c, mode, uid, gid, mtime_ns FROM files ORDER BY rowid`,
		`SELECT rowid, path, parent, num_subdirs, num_files, num_files_tree, size_tree, mode, uid, gid, ` + mtime + ` FROM dirs ORDER BY rowid`,
		`SELECT key, value_text, value_int FROM config ORDER BY key`,
		`SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY type, name`,
	} {
		a, b := tableRows(t, want, q), tableRows(t, got, q)
		if !slices.Equal(a, b) {
			t.Fatalf("%s:\nsingle run %d rows %.2000q\nmerge      %d rows %.2000q", q, len(a), a, len(b), b)
		}
	}
	if a, b := tableRows(t, want, `SELECT name FROM sqlite_master WHERE name = 'sqlite_stat1'`), tableRows(t, got, `SELECT name FROM sqlite_master WHERE name = 'sqlite_stat1'`); len(a) != len(b) {
		t.Fatalf("sqlite_stat1: %q and %q", a, b)
	}
	ar, err := Open(got)
	if err != nil {
		t.Fatal(err)
	}
	defer ar.Close()
	rep, err := ar.Verify(context.Background())
	if err != nil || !rep.OK() {
		t.Fatalf("verify of the merged archive: %v %v", err, rep.Problems)
	}
}

// archiveFiles lists an archive's files in the order they were added
// (rowid), each with its metadata and a digest of its bytes as the Reader
// reads them, but not where it lies.
func archiveFiles(t testing.TB, index string) []string {
	t.Helper()
	a, err := Open(index)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	db := openSQL(t, index, true)
	defer db.Close()
	rows, err := db.Query(`SELECT path FROM files ORDER BY rowid`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var p string
		if err := rows.Scan(&p); err != nil {
			t.Fatal(err)
		}
		f, err := a.Lookup(p)
		if err != nil {
			t.Fatal(err)
		}
		data, err := a.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		f.Shard, f.Offset = 0, 0
		out = append(out, fmt.Sprintf("%+v %x", f, sha256.Sum256(data)))
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// linkedShards checks that every shard of the merged archive is a part's
// local shard, the same file (no byte copied), in task order.
func linkedShards(t testing.TB, out string, parts []string) {
	t.Helper()
	var local []string
	for _, dir := range parts {
		local = append(local, mustGlob(t, filepath.Join(dir, "shard-*"))...)
	}
	got := mustGlob(t, out+"-shard-*")
	if len(local) == 0 {
		// No file in any part: the archive has its one empty shard.
		if len(got) != 1 {
			t.Fatalf("no local shard, %d shards in the archive", len(got))
		}
		return
	}
	if len(got) != len(local) {
		t.Fatalf("%d shards in the archive, %d in the parts", len(got), len(local))
	}
	for i := range got {
		a, errA := os.Stat(local[i])
		b, errB := os.Stat(ShardPath(out, i))
		if errA != nil || errB != nil || !os.SameFile(a, b) {
			t.Fatalf("shard %d is not %s (%v %v)", i, local[i], errA, errB)
		}
	}
}

// sameStats checks that the merge reports what the single run did, and
// that its own figures add up.
func sameStats(t testing.TB, want, got *RowsStats, ms *MergeStats, parts int) {
	t.Helper()
	w, g := *want, *got
	w.Output, g.Output = "", ""
	w.Shards, g.Shards = 0, 0 // the parts' local shards
	if fmt.Sprint(w) != fmt.Sprint(g) {
		t.Fatalf("stats: single run %+v, merge %+v", w, g)
	}
	if ms.Parts != parts || ms.BytesLinked != want.Bytes || ms.BytesCopied != 0 || ms.ShardsCopied != 0 || ms.Rows != want.Files+want.Dirs && ms.Rows < want.Files {
		t.Fatalf("merge stats %+v for %+v", ms, want)
	}
	if want.Files > 0 && ms.ShardsLinked != got.Shards {
		t.Fatalf("merge stats %+v: %d shards", ms, got.Shards)
	}
}

func TestMergePartsSameAsWriteRows(t *testing.T) {
	// Hundreds of runs: what is compared is the bytes, not their way to
	// the disk.
	defer func(s bool) { fsync = s }(fsync)
	fsync = false
	dirMeta := func(p string, mode int64) Dir {
		return Dir{Path: p, Mode: mode, HasMode: true, UID: 5, HasUID: true, GID: 6, HasGID: true, MtimeNs: 1_600_000_000_123_456_789, HasMtime: true}
	}
	mixed := makeArchive(t, genFiles(1, 700, 600), []Dir{dirMeta("set1", 0o700), dirMeta("empty/deeper", 0o755), dirMeta("set0/03", 0o750)})
	many := makeArchive(t, genFiles(2, 2600, 120), nil)
	none := makeArchive(t, nil, nil)
	dirsOnly := makeArchive(t, nil, []Dir{dirMeta("a", 0o700), dirMeta("a/b/c", 0o711), dirMeta("z", 0o755)})
	zeros := makeArchive(t, []testFile{{path: "e/1", mode: 0o644}, {path: "e/2", mode: 0o644}, {path: "f", data: []byte("x")}}, nil)
	cases := []struct {
		name   string
		index  string
		sizes  []int64
		expect int // the source's shards
	}{
		{"mixed", mixed, []int64{0, 600, 4096}, 3},
		{"many", many, []int64{0, 1000}, 11},
		{"empty", none, []int64{0, 100}, 1},
		{"dirs-only", dirsOnly, []int64{0}, 1},
		{"zero-size", zeros, []int64{0, 1}, 1},
	}
	for _, c := range cases {
		mk := archiveSource(t, c.index)
		if n := mk().NumShards(); n != c.expect {
			t.Fatalf("%s: %d shards, want %d", c.name, n, c.expect)
		}
		for _, size := range c.sizes {
			opts := RowsOptions{ShardSize: size, Workers: 2}
			single := filepath.Join(t.TempDir(), "single.barecat")
			want, err := WriteRows(context.Background(), mk(), single, opts)
			if err != nil {
				t.Fatalf("%s: %v", c.name, err)
			}
			for _, b := range splits(c.expect) {
				t.Run(fmt.Sprintf("%s/shard%d/%v", c.name, size, b), func(t *testing.T) {
					out := filepath.Join(t.TempDir(), "merged.barecat")
					dirs, got, ms, err := runParts(t, mk, b, out, opts)
					if err != nil {
						t.Fatal(err)
					}
					sameArchive(t, single, out, false)
					linkedShards(t, out, dirs)
					sameStats(t, want, got, ms, len(b)-1)
				})
			}
		}
	}
}

// TestMergeRollsOverAcrossParts checks real figures on a dataset whose
// cuts are known: ten files of 400 bytes in a shard size of 1000 make
// five shards of two files in one run; parts of three files each cut
// differently, and the archive then has their shards as they are, every
// one linked, none copied.
func TestMergeRollsOverAcrossParts(t *testing.T) {
	var shards [][]dataset.Row
	for i := range 10 {
		shards = append(shards, []dataset.Row{fileRow(fmt.Sprintf("f%02d", i), strings.Repeat(string(rune('a'+i)), 400), 1)})
	}
	mk := func() dataset.PayloadSource { return newMemSource(t, shards) }
	opts := RowsOptions{ShardSize: 1000}
	single := filepath.Join(t.TempDir(), "single.barecat")
	want, err := WriteRows(context.Background(), mk(), single, opts)
	if err != nil {
		t.Fatal(err)
	}
	if want.Shards != 5 || want.Files != 10 || want.Bytes != 4000 {
		t.Fatalf("single run %+v", want)
	}
	for _, c := range []struct {
		bounds []int
		shards int
	}{
		{[]int{0, 10}, 5},
		{[]int{0, 4, 6, 10}, 5},        // cut where the one run cuts
		{[]int{0, 3, 6, 9, 10}, 7},     // f00 f01 | f02 || f03 f04 | f05 || f06 f07 | f08 || f09
		{[]int{0, 0, 5, 5, 10, 10}, 6}, // f00 f01 | f02 f03 | f04 || f05 f06 | f07 f08 | f09
	} {
		out := filepath.Join(t.TempDir(), "merged.barecat")
		dirs, got, ms, err := runParts(t, mk, c.bounds, out, opts)
		if err != nil {
			t.Fatal(err)
		}
		sameArchive(t, single, out, false)
		sameStats(t, want, got, ms, len(c.bounds)-1)
		linkedShards(t, out, dirs)
		if got.Shards != c.shards || ms.ShardsLinked != c.shards || ms.ShardsCopied != 0 || ms.BytesCopied != 0 || ms.BytesLinked != 4000 {
			t.Errorf("%v: %d shards, %+v, want %d linked, none copied", c.bounds, got.Shards, ms, c.shards)
		}
	}
}

// TestMergeAwkwardRows: rows that only a general source has, across part
// boundaries: the root's metadata, a directory given twice (the first
// wins), links (skipped), bytes read through OpenPayload or copied by the
// kernel, empty files.
func TestMergeAwkwardRows(t *testing.T) {
	link := dataset.Row{Name: []byte("l"), Kind: dataset.KindSymlink, Linkname: []byte("d/x"), Offset: -1}
	shards := [][]dataset.Row{
		{dirRowOf("d/", 0o750, 100), fileRow("d/x", "hello", 2), link},
		{},
		{dirRowOf("./", 0o700, 300), fileRow("@d/read", strings.Repeat("r", 900), 3), fileRow("%d/e/copied1", strings.Repeat("k", 300), 4)},
		{fileRow("%d/e/copied2", strings.Repeat("m", 700), 5), dirRowOf("d/", 0o711, 200), fileRow("d/empty", "", 6), link},
		{fileRow("z", "last", 7), dirRowOf("d/e/", 0o701, 400)},
	}
	mk := func() dataset.PayloadSource { return newMemSource(t, shards) }
	for _, size := range []int64{0, 1000, 1200} {
		opts := RowsOptions{ShardSize: size}
		single := filepath.Join(t.TempDir(), "single.barecat")
		want, err := WriteRows(context.Background(), mk(), single, opts)
		if err != nil {
			t.Fatal(err)
		}
		if want.Files != 6 || want.Dirs != 3 || want.Skipped["symlink"] != 2 {
			t.Fatalf("single run %+v", want)
		}
		for _, b := range splits(len(shards)) {
			out := filepath.Join(t.TempDir(), "merged.barecat")
			_, got, ms, err := runParts(t, mk, b, out, opts)
			if err != nil {
				t.Fatalf("%v: %v", b, err)
			}
			sameArchive(t, single, out, true)
			sameStats(t, want, got, ms, len(b)-1)
		}
	}
}

// noOutput checks that a failed merge left nothing in out's directory.
func noOutput(t testing.TB, out string) {
	t.Helper()
	entries, err := os.ReadDir(filepath.Dir(out))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		t.Errorf("left behind: %s", e.Name())
	}
}

// TestMergeAcrossPartsErrors: what the single run refuses, the merge
// refuses, when the rows are in different parts (or the same one).
func TestMergeAcrossPartsErrors(t *testing.T) {
	for _, c := range []struct {
		name   string
		shards [][]dataset.Row
		kind   error
	}{
		{"duplicate", [][]dataset.Row{{fileRow("a/x", "1", 1)}, {fileRow("b", "2", 1)}, {fileRow("a/x", "3", 1)}}, ErrDuplicatePath},
		{"file-then-dir", [][]dataset.Row{{fileRow("a", "1", 1)}, {fileRow("b", "2", 1)}, {fileRow("a/b", "3", 1)}}, ErrConflict},
		{"dir-then-file", [][]dataset.Row{{fileRow("a/b", "1", 1)}, {}, {fileRow("a", "3", 1)}}, ErrConflict},
		{"dir-row-on-file", [][]dataset.Row{{fileRow("a", "1", 1)}, {}, {dirRowOf("a/", 0o755, 1)}}, ErrConflict},
	} {
		t.Run(c.name, func(t *testing.T) {
			mk := func() dataset.PayloadSource { return newMemSource(t, c.shards) }
			single := filepath.Join(t.TempDir(), "single.barecat")
			if _, err := WriteRows(context.Background(), mk(), single, RowsOptions{}); !errors.Is(err, c.kind) {
				t.Fatalf("single run: %v, want %v", err, c.kind)
			}
			for _, b := range [][]int{{0, 3}, {0, 1, 3}, {0, 1, 2, 3}, {0, 2, 3}} {
				out := filepath.Join(t.TempDir(), "merged.barecat")
				dirs, _, _, err := runParts(t, mk, b, out, RowsOptions{})
				if !errors.Is(err, c.kind) {
					t.Fatalf("%v: %v, want %v", b, err, c.kind)
				}
				if c.kind == ErrDuplicatePath && !strings.Contains(err.Error(), `"a/x"`) {
					t.Errorf("%v: %v does not name the path", b, err)
				}
				if len(b) > 2 && !strings.Contains(err.Error(), dirs[len(dirs)-1]) {
					t.Errorf("%v: %v does not name the part", b, err)
				}
				noOutput(t, out)
			}
		})
	}
}

// TestWritePartRefuses: rows every run refuses fail the part itself, and
// leave its directory empty.
func TestWritePartRefuses(t *testing.T) {
	for _, c := range []struct {
		name string
		rows []dataset.Row
		opts RowsOptions
		kind error
	}{
		{"too-large", []dataset.Row{fileRow("a", "12345", 1)}, RowsOptions{ShardSize: 4}, ErrTooLarge},
		{"root-file", []dataset.Row{fileRow("./", "1", 1)}, RowsOptions{}, ErrInvalidPath},
		{"bad-path", []dataset.Row{fileRow("a/../../b", "1", 1)}, RowsOptions{}, ErrInvalidPath},
		{"short", []dataset.Row{{Name: []byte("s"), Kind: dataset.KindFile, Size: 10, Inline: []byte("abc"), Offset: -1}}, RowsOptions{}, ErrShortData},
	} {
		t.Run(c.name, func(t *testing.T) {
			single := filepath.Join(t.TempDir(), "single.barecat")
			_, err := WriteRows(context.Background(), newMemSource(t, [][]dataset.Row{c.rows}), single, c.opts)
			if !errors.Is(err, c.kind) {
				t.Fatalf("single run: %v, want %v", err, c.kind)
			}
			dir := t.TempDir()
			src := newMemSource(t, [][]dataset.Row{{fileRow("ok", "fine", 1)}, c.rows})
			if _, err := WritePart(context.Background(), src, dir, c.opts); !errors.Is(err, c.kind) {
				t.Fatalf("part: %v, want %v", err, c.kind)
			}
			noOutput(t, filepath.Join(dir, "x"))
		})
	}
}

// goodParts writes a dataset in three parts, and returns them with the
// single run's archive.
func goodParts(t *testing.T) (single string, parts []string) {
	mk := archiveSource(t, makeArchive(t, genFiles(3, 600, 500), nil))
	opts := RowsOptions{ShardSize: 1500}
	single = filepath.Join(t.TempDir(), "single.barecat")
	if _, err := WriteRows(context.Background(), mk(), single, opts); err != nil {
		t.Fatal(err)
	}
	parts, _, _, err := runParts(t, mk, []int{0, 1, 1, 3}, filepath.Join(t.TempDir(), "first.barecat"), opts)
	if err != nil {
		t.Fatal(err)
	}
	return single, parts
}

// treeSums maps every file under dirs to its bytes' hash.
func treeSums(t *testing.T, dirs []string) map[string]string {
	m := map[string]string{}
	for _, d := range dirs {
		entries, err := os.ReadDir(d)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			b, err := os.ReadFile(filepath.Join(d, e.Name()))
			if err != nil {
				t.Fatal(err)
			}
			m[filepath.Join(d, e.Name())] = sha(b)
		}
	}
	return m
}

func TestMergeDamagedParts(t *testing.T) {
	_, parts := goodParts(t)
	for _, c := range []struct {
		name   string
		damage func(t *testing.T, dir string) // on a copy of parts[2]
		opts   RowsOptions
		say    []string // in the message
	}{
		{"rows-truncated", func(t *testing.T, dir string) { truncate(t, filepath.Join(dir, "rows"), -7) }, RowsOptions{ShardSize: 1500}, []string{"rows: byte ", "unexpected EOF"}},
		{"rows-cut-in-records", func(t *testing.T, dir string) { truncate(t, filepath.Join(dir, "rows"), 100) }, RowsOptions{ShardSize: 1500}, []string{"rows: byte "}},
		{"rows-empty", func(t *testing.T, dir string) { truncate(t, filepath.Join(dir, "rows"), 0) }, RowsOptions{ShardSize: 1500}, []string{"rows: byte 0: reading the header"}},
		{"rows-flipped", func(t *testing.T, dir string) { flip(t, filepath.Join(dir, "rows"), 200) }, RowsOptions{ShardSize: 1500}, []string{"rows: byte "}},
		{"rows-checksum", func(t *testing.T, dir string) { flip(t, filepath.Join(dir, "rows"), -2) }, RowsOptions{ShardSize: 1500}, []string{"checksum"}},
		{"rows-trailing", func(t *testing.T, dir string) { appendTo(t, filepath.Join(dir, "rows"), "x") }, RowsOptions{ShardSize: 1500}, []string{"after the end"}},
		{"version", func(t *testing.T, dir string) { setByte(t, filepath.Join(dir, "rows"), 8, 2) }, RowsOptions{ShardSize: 1500}, []string{"rows: byte 8: part format version 2; this build reads version 1"}},
		{"magic", func(t *testing.T, dir string) { setByte(t, filepath.Join(dir, "rows"), 0, 'X') }, RowsOptions{ShardSize: 1500}, []string{"not a Barecat part"}},
		{"rows-missing", func(t *testing.T, dir string) { os.Remove(filepath.Join(dir, "rows")) }, RowsOptions{ShardSize: 1500}, []string{"no rows file"}},
		{"shard-truncated", func(t *testing.T, dir string) { truncate(t, filepath.Join(dir, "shard-00001"), 10) }, RowsOptions{ShardSize: 1500}, []string{"shard-00001: 10 bytes, the rows file says"}},
		{"shard-missing", func(t *testing.T, dir string) { os.Remove(filepath.Join(dir, "shard-00000")) }, RowsOptions{ShardSize: 1500}, []string{"local shard 0"}},
		{"shard-extra", func(t *testing.T, dir string) {
			n := len(mustGlob(t, filepath.Join(dir, "shard-*")))
			os.WriteFile(filepath.Join(dir, partShardName(n)), nil, 0o644)
		}, RowsOptions{ShardSize: 1500}, []string{"which the rows file does not list"}},
		{"other-shard-size", func(*testing.T, string) {}, RowsOptions{ShardSize: 1600}, []string{"written with shard size 1500, merged with 1600"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			bad := copyDir(t, parts[2])
			c.damage(t, bad)
			use := []string{parts[0], parts[1], bad}
			before := treeSums(t, use)
			out := filepath.Join(t.TempDir(), "merged.barecat")
			_, _, err := MergeParts(context.Background(), use, out, c.opts)
			if !errors.Is(err, ErrPart) {
				t.Fatalf("%v, want ErrPart", err)
			}
			who := bad
			if c.opts.ShardSize != 1500 { // found at the first part
				who = parts[0]
			}
			for _, s := range append(c.say, who) {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("%q does not say %q", err, s)
				}
			}
			noOutput(t, out)
			if after := treeSums(t, use); fmt.Sprint(before) != fmt.Sprint(after) {
				t.Errorf("the parts changed")
			}
		})
	}
}

func truncate(t *testing.T, p string, n int64) {
	if n < 0 {
		st, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		n += st.Size()
	}
	if err := os.Truncate(p, n); err != nil {
		t.Fatal(err)
	}
}

func flip(t *testing.T, p string, at int) {
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if at < 0 {
		at += len(b)
	}
	b[at] ^= 0x10
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func setByte(t *testing.T, p string, at int, v byte) {
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	b[at] = v
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func appendTo(t *testing.T, p, s string) {
	f, err := os.OpenFile(p, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(s)
	f.Close()
}

// TestMergeOverwrite: an existing archive is refused without Overwrite
// and replaced with it, its shards past the new last one removed, as
// WriteRows does; the parts are left as they were.
func TestMergeOverwrite(t *testing.T) {
	single, parts := goodParts(t)
	out := filepath.Join(t.TempDir(), "merged.barecat")
	mk := archiveSource(t, makeArchive(t, genFiles(4, 300, 500), nil))
	if _, err := WriteRows(context.Background(), mk(), out, RowsOptions{ShardSize: 500}); err != nil {
		t.Fatal(err)
	}
	old := len(mustGlob(t, out+"-shard-*"))
	oldIndex, _ := os.ReadFile(out)
	before := treeSums(t, parts)
	_, _, err := MergeParts(context.Background(), parts, out, RowsOptions{ShardSize: 1500})
	if !errors.Is(err, fs.ErrExist) {
		t.Fatalf("%v, want fs.ErrExist", err)
	}
	if now, _ := os.ReadFile(out); !bytes.Equal(now, oldIndex) {
		t.Fatal("the existing archive changed")
	}
	_, _, err = MergeParts(context.Background(), parts, out, RowsOptions{ShardSize: 1500, Overwrite: true})
	if err != nil {
		t.Fatal(err)
	}
	sameArchive(t, single, out, false)
	if n, m := len(mustGlob(t, single+"-shard-*")), len(mustGlob(t, out+"-shard-*")); n != m || n >= old {
		t.Fatalf("%d shards, the single run %d, the old archive %d", m, n, old)
	}
	if after := treeSums(t, parts); fmt.Sprint(before) != fmt.Sprint(after) {
		t.Errorf("the parts changed")
	}
	checkVerify(t, mustOpen(t, out))
}

// TestSourceSlices: a Barecat source cut anywhere (dataset.Slice, as a
// partitioned run's task takes its share) gives exactly its share of the
// rows, whichever chunk a worker asks for first.
func TestSourceSlices(t *testing.T) {
	mk := archiveSource(t, makeArchive(t, genFiles(5, 256*11+17, 8), []Dir{{Path: "x", Mode: 0o700, HasMode: true}}))
	names := func(src dataset.PayloadSource, workers int) []string {
		var got []string
		err := dataset.Run(context.Background(), src, dataset.RowFunc(func(_ int, r *dataset.Row) error {
			got = append(got, fmt.Sprintf("%s %d %x", r.Name, r.Size, r.Inline))
			return nil
		}), dataset.Options{Workers: workers})
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	all := names(mk(), 2)
	if len(all) != 256*11+17+1 {
		t.Fatalf("%d rows", len(all))
	}
	for _, b := range [][]int{{0, 12}, {0, 5, 12}, {0, 1, 9, 11, 12}, {10, 12}, {11, 12}, {3, 3}} {
		var got []string
		for k := 0; k+1 < len(b); k++ {
			for _, workers := range []int{1, 4} {
				src, err := dataset.Slice(mk(), b[k], b[k+1])
				if err != nil {
					t.Fatal(err)
				}
				part := names(src, workers)
				if workers == 1 {
					got = append(got, part...)
				}
			}
		}
		want := all
		if b[0] > 0 {
			want = all[1+256*b[0]:]
		}
		if b[0] == b[len(b)-1] {
			want = nil
		}
		if !slices.Equal(got, want) {
			t.Fatalf("%v: %d rows, want %d", b, len(got), len(want))
		}
	}
	// A chunk before the one the lister started at is read by itself.
	s := mk().(*Source)
	s.init()
	s.from = 3
	for _, shard := range []int{0, 2, 11} {
		c := s.readChunk(context.Background(), shard)
		if c.err != nil || len(c.files) != map[int]int{0: 256, 2: 256, 11: 17}[shard] {
			t.Fatalf("chunk %d: %d files, %v", shard, len(c.files), c.err)
		}
	}
}

// FuzzPartRows: the rows file reader takes any bytes: nothing panics, and
// whatever is wrong is an ErrPart error.
func FuzzPartRows(f *testing.F) {
	for _, shards := range [][][]dataset.Row{
		{{dirRowOf("./", 0o700, -5), fileRow("d/x", "hello", 2), {Name: []byte("l"), Kind: dataset.KindSymlink, Offset: -1}}},
		{{fileRow("a", strings.Repeat("a", 40), 1), fileRow("b", strings.Repeat("b", 40), 1), dirRowOf("c/", 0o755, 1<<40)}},
		{},
	} {
		dir := f.TempDir()
		if _, err := WritePart(context.Background(), newMemSource(f, shards), dir, RowsOptions{ShardSize: 50}); err != nil {
			f.Fatal(err)
		}
		b, err := os.ReadFile(filepath.Join(dir, partRowsName))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(partMagic))
	f.Add([]byte(partMagic + "\x01S"))
	f.Fuzz(func(t *testing.T, data []byte) {
		pr, err := newPartReader(bytes.NewReader(data), "rows")
		if err != nil {
			if !errors.Is(err, ErrPart) {
				t.Fatalf("%v is not ErrPart", err)
			}
			return
		}
		for range len(data) + 1 {
			r, shard, off, err := pr.next()
			if err == io.EOF {
				if pr.sum == nil {
					t.Fatal("EOF without a summary")
				}
				return
			}
			if err != nil {
				if !errors.Is(err, ErrPart) {
					t.Fatalf("%v is not ErrPart", err)
				}
				return
			}
			if r.kind == recFile && (r.size < 0 || off < 0 || shard < 0 || shard >= len(pr.n.shards)) {
				t.Fatalf("file %+v at %d:%d", r, shard, off)
			}
		}
		t.Fatal("more records than bytes")
	})
}

// TestWritePartBytesInFiles: a source whose rows do not hold their bytes
// but say where they lie (FileRegions, as tar shards do) has them read
// on the workers for their CRC-32C and copied by the kernel, never read
// through OpenPayload by the writer.
func TestWritePartBytesInFiles(t *testing.T) {
	var shards [][]dataset.Row
	var want []byte
	for i := range 40 {
		data := strings.Repeat(string(rune('a'+i%26)), 100+i*37)
		shards = append(shards, []dataset.Row{fileRow(fmt.Sprintf("&f%02d", i), data, int64(i)), fileRow(fmt.Sprintf("&e%02d", i), "", 1)})
		want = append(want, data...)
	}
	mk := func() dataset.PayloadSource { return newMemSource(t, shards) }
	out := filepath.Join(t.TempDir(), "merged.barecat")
	dirs, got, ms, err := runParts(t, mk, []int{0, 13, 40}, out, RowsOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got.Files != 80 || got.Bytes != int64(len(want)) || ms.BytesCopied != 0 {
		t.Fatalf("%+v %+v", got, ms)
	}
	linkedShardsHold(t, out, dirs, want)
}

// TestMergeReadsRowsOnce: the merge reads each part's rows file once
// (it took a first pass over every one to plan the shards), one at a
// time (a merge of many parts holds no file open for each), and the
// archive is still the single run's.
func TestMergeReadsRowsOnce(t *testing.T) {
	single, parts := goodParts(t)
	opens := map[string]int{}
	var opened []*os.File
	defer func(f func(string) (*os.File, error)) { openRows = f }(openRows)
	openRows = func(name string) (*os.File, error) {
		opens[name]++
		for _, f := range opened {
			if f.Fd() != ^uintptr(0) {
				t.Errorf("%s opened while %s is open", name, f.Name())
			}
		}
		f, err := os.Open(name)
		if err == nil {
			opened = append(opened, f)
		}
		return f, err
	}
	out := filepath.Join(t.TempDir(), "merged.barecat")
	if _, _, err := MergeParts(context.Background(), parts, out, RowsOptions{ShardSize: 1500}); err != nil {
		t.Fatal(err)
	}
	sameArchive(t, single, out, false)
	for _, p := range parts {
		if n := opens[filepath.Join(p, partRowsName)]; n != 1 {
			t.Errorf("%s: rows file opened %d times, want 1", p, n)
		}
	}
}

// TestPartReaderAllocs: reading a rows file allocates each record's path
// and nothing else (it allocated its length's description and the path
// twice), so the merge's pass over the rows costs little beside the index.
func TestPartReaderAllocs(t *testing.T) {
	var buf bytes.Buffer
	pw := newPartWriter(&buf, 0)
	if err := pw.shard(); err != nil {
		t.Fatal(err)
	}
	const n = 2000
	for i := range n {
		f := File{Path: fmt.Sprintf("set%d/sample%06d.jpg", i%3, i), Size: int64(i), Mode: 0o644, HasMode: true, MtimeNs: int64(i) << 40, HasMtime: true}
		if err := pw.file(f); err != nil {
			t.Fatal(err)
		}
	}
	if err := pw.close(); err != nil {
		t.Fatal(err)
	}
	rows := buf.Bytes()
	var got int
	allocs := testing.AllocsPerRun(3, func() {
		pr, err := newPartReader(bytes.NewReader(rows), "rows")
		if err != nil {
			t.Fatal(err)
		}
		for got = 0; ; got++ {
			if _, _, _, err := pr.next(); err == io.EOF {
				break
			} else if err != nil {
				t.Fatal(err)
			}
		}
	})
	if got != n {
		t.Fatalf("%d records read, want %d", got, n)
	}
	// The reader's buffer and its few fields are allocated once.
	if per := allocs / n; per > 1.05 {
		t.Errorf("%.2f allocations a record, want 1 (its path)", per)
	}
}

// TestMergeFilterOnlyOnRepeats: a merge builds the index without the
// filter of paths (it looked each row up in it), and runs again with it
// only where Close finds a repeated path, so that the error still names
// the part and the path.
func TestMergeFilterOnlyOnRepeats(t *testing.T) {
	single, parts := goodParts(t)
	var runs []bool
	defer func() { mergeRun = nil }()
	mergeRun = func(filtered bool) { runs = append(runs, filtered) }
	out := filepath.Join(t.TempDir(), "merged.barecat")
	if _, _, err := MergeParts(context.Background(), parts, out, RowsOptions{ShardSize: 1500}); err != nil {
		t.Fatal(err)
	}
	sameArchive(t, single, out, false)
	if !slices.Equal(runs, []bool{false}) {
		t.Errorf("runs %v, want one without the filter", runs)
	}

	runs = nil
	shards := [][]dataset.Row{{fileRow("a/x", "1", 1)}, {fileRow("b", "2", 1)}, {fileRow("a/x", "3", 1)}}
	mk := func() dataset.PayloadSource { return newMemSource(t, shards) }
	dirs, _, _, err := runParts(t, mk, []int{0, 1, 3}, filepath.Join(t.TempDir(), "dup.barecat"), RowsOptions{})
	if !errors.Is(err, ErrDuplicatePath) || !strings.Contains(err.Error(), `"a/x"`) || !strings.Contains(err.Error(), dirs[1]) {
		t.Errorf("%v: want the repeated path and its part %s", err, dirs[1])
	}
	if !slices.Equal(runs, []bool{false, true}) {
		t.Errorf("runs %v, want one without the filter, then one with it", runs)
	}
}

// TestMergeDamagedKeepsArchive: a part found damaged only at the end of
// its rows file (the merge no longer reads every rows file before it
// starts the archive) leaves an archive it was to replace as it was, its
// index and shards alike.
func TestMergeDamagedKeepsArchive(t *testing.T) {
	_, parts := goodParts(t)
	out := filepath.Join(t.TempDir(), "merged.barecat")
	mk := archiveSource(t, makeArchive(t, genFiles(4, 300, 500), nil))
	if _, err := WriteRows(context.Background(), mk(), out, RowsOptions{ShardSize: 500}); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Dir(out)
	before := treeSums(t, []string{dir})
	bad := copyDir(t, parts[2])
	flip(t, filepath.Join(bad, "rows"), -2) // the checksum
	_, _, err := MergeParts(context.Background(), []string{parts[0], parts[1], bad}, out, RowsOptions{ShardSize: 1500, Overwrite: true})
	if !errors.Is(err, ErrPart) || !strings.Contains(err.Error(), "checksum") {
		t.Fatalf("%v, want the checksum's ErrPart", err)
	}
	if after := treeSums(t, []string{dir}); fmt.Sprint(before) != fmt.Sprint(after) {
		t.Errorf("the archive's directory changed: %d files, %d before", len(after), len(before))
	}
}

// shardFilesSource is a source whose shards are files holding their rows'
// bytes at Row.DataOffset, as tar shards do (dataset.ShardFiles, no
// FileRegions); OpenPayload refuses, so that a part reads nothing through
// it.
type shardFilesSource struct {
	paths []string
	rows  [][]dataset.Row
}

func newShardFilesSource(t *testing.T, shards [][]string) *shardFilesSource {
	s := &shardFilesSource{}
	for i, files := range shards {
		var data []byte
		var rows []dataset.Row
		for j, f := range files {
			data = append(data, make([]byte, 100)...) // a header's place
			rows = append(rows, dataset.Row{Name: []byte(fmt.Sprintf("s%d/f%02d", i, j)), Kind: dataset.KindFile, Size: int64(len(f)),
				Mode: 0o644, Offset: -1, DataOffset: int64(len(data))})
			data = append(data, f...)
		}
		p := filepath.Join(t.TempDir(), fmt.Sprintf("shard%d", i))
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		s.paths, s.rows = append(s.paths, p), append(s.rows, rows)
	}
	return s
}

func (s *shardFilesSource) NumShards() int             { return len(s.rows) }
func (s *shardFilesSource) ShardName(shard int) string { return s.paths[shard] }
func (s *shardFilesSource) Scan(_ context.Context, shard int, emit func([]dataset.Row) error) error {
	return emit(slices.Clone(s.rows[shard]))
}
func (s *shardFilesSource) OpenPayload(r *dataset.Row) (io.Reader, error) {
	return nil, fmt.Errorf("%s: read through OpenPayload, though it lies in its shard's file", r.Name)
}
func (s *shardFilesSource) ShardFile(shard int) (*os.File, error) { return os.Open(s.paths[shard]) }

// TestWritePartFromShardFiles: tar shards' payloads are mapped on the
// workers, checksummed there, and written from the mapping: the parts'
// shards hold the files' bytes, the merged archive verifies; a shard cut
// short after it was listed is an error naming it, not a crash.
func TestWritePartFromShardFiles(t *testing.T) {
	var shards [][]string
	var want []byte
	for i := range 6 {
		var files []string
		for j := range 7 {
			f := strings.Repeat(string(rune('a'+(i*7+j)%26)), 50+i*131+j*17)
			files = append(files, f)
			want = append(want, f...)
		}
		shards = append(shards, files)
	}
	src := newShardFilesSource(t, shards)
	out := filepath.Join(t.TempDir(), "merged.barecat")
	dirs, got, _, err := runParts(t, func() dataset.PayloadSource { return src }, []int{0, 2, 6}, out, RowsOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got.Files != 42 || got.Bytes != int64(len(want)) {
		t.Fatalf("%+v", got)
	}
	linkedShardsHold(t, out, dirs, want)

	// A shard cut short: its payloads are gone from the mapping.
	if err := os.Truncate(src.paths[3], 120); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	_, err = WritePart(context.Background(), src, dir, RowsOptions{})
	if !errors.Is(err, mapped.ErrGone) || !strings.Contains(err.Error(), src.paths[3]) {
		t.Fatalf("a shard cut short: %v; want mapped.ErrGone naming %s", err, src.paths[3])
	}
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Errorf("%d files left in the part's directory", len(left))
	}
}

// linkedShardsHold checks that the merged archive's shards are the parts'
// own, linked, that they hold want back to back, and that it verifies.
func linkedShardsHold(t *testing.T, out string, dirs []string, want []byte) {
	t.Helper()
	linkedShards(t, out, dirs)
	var all []byte
	for _, sh := range mustGlob(t, out+"-shard-*") {
		b, err := os.ReadFile(sh)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, b...)
	}
	if !bytes.Equal(all, want) {
		t.Fatalf("the shards hold %d bytes, not the files' %d", len(all), len(want))
	}
	rep, err := mustOpen(t, out).Verify(context.Background())
	if err != nil || !rep.OK() {
		t.Fatalf("verify: %v %v", err, rep.Problems)
	}
}
