package barecat

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/itarconv/itarconv/internal/sqliteuri"
	"github.com/itarconv/itarconv/testing/testutil"
	_ "modernc.org/sqlite" // the plain driver, "sqlite", to edit copies of archives
)

// The types below follow the expected.json files that barecat 0.3.1's
// conformance cases in testdata/conformance/barecat/<case>/ hold: every row
// of every table.

type expCase struct {
	IndexFile string `json:"index_file"`
	Shards    []struct {
		Name      string `json:"name"`
		Size      int64  `json:"size"`
		IsSymlink bool   `json:"is_symlink"`
	} `json:"shards"`
	Config []struct {
		Key       string  `json:"key"`
		ValueText *string `json:"value_text"`
		ValueInt  *int64  `json:"value_int"`
	} `json:"config"`
	Files       []expFile `json:"files"`
	Dirs        []expDir  `json:"dirs"`
	UserVersion int       `json:"sqlite_user_version"`
	PageSize    int       `json:"sqlite_page_size"`
	JournalMode string    `json:"sqlite_journal_mode"`
}

type expFile struct {
	Path      string  `json:"path"`
	Parent    string  `json:"parent"`
	Shard     int     `json:"shard"`
	Offset    int64   `json:"offset"`
	Size      int64   `json:"size"`
	CRC32C    *int64  `json:"crc32c"`
	CRCActual uint32  `json:"crc32c_actual"`
	SHA256    string  `json:"sha256"`
	Mode      *int64  `json:"mode"`
	UID       *int64  `json:"uid"`
	GID       *int64  `json:"gid"`
	MtimeNs   *int64  `json:"mtime_ns"`
	MtimeType string  `json:"mtime_ns_sqlite_type"`
	ModeOctal *string `json:"mode_octal"`
}

type expDir struct {
	Path         string  `json:"path"`
	Parent       *string `json:"parent"`
	NumSubdirs   int64   `json:"num_subdirs"`
	NumFiles     int64   `json:"num_files"`
	NumFilesTree int64   `json:"num_files_tree"`
	SizeTree     int64   `json:"size_tree"`
	Mode         *int64  `json:"mode"`
	UID          *int64  `json:"uid"`
	GID          *int64  `json:"gid"`
	MtimeNs      *int64  `json:"mtime_ns"`
}

// file is the File the row describes.
func (e expFile) file() File {
	f := File{Path: e.Path, Shard: e.Shard, Offset: e.Offset, Size: e.Size}
	f.CRC32C, f.HasCRC = opt32(e.CRC32C)
	f.Mode, f.HasMode = opt(e.Mode)
	f.UID, f.HasUID = opt(e.UID)
	f.GID, f.HasGID = opt(e.GID)
	f.MtimeNs, f.HasMtime = opt(e.MtimeNs)
	return f
}

// dir is the Dir the row describes.
func (e expDir) dir() Dir {
	d := Dir{Path: e.Path, NumSubdirs: e.NumSubdirs, NumFiles: e.NumFiles,
		NumFilesTree: e.NumFilesTree, SizeTree: e.SizeTree}
	d.Mode, d.HasMode = opt(e.Mode)
	d.UID, d.HasUID = opt(e.UID)
	d.GID, d.HasGID = opt(e.GID)
	d.MtimeNs, d.HasMtime = opt(e.MtimeNs)
	return d
}

func opt(p *int64) (int64, bool) {
	if p == nil {
		return 0, false
	}
	return *p, true
}

func opt32(p *int64) (uint32, bool) {
	if p == nil {
		return 0, false
	}
	return uint32(*p), true
}

var conformanceCases = []string{"basic", "cli_create", "empty", "multishard", "wrap_tar"}

// confDir is testdata/conformance/barecat/<name>.
func confDir(t testing.TB, name string) string {
	return filepath.Join(testutil.Conformance(t, "barecat"), name)
}

func loadExpected(t testing.TB, name string) *expCase {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(confDir(t, name), "expected.json"))
	if err != nil {
		t.Fatal(err)
	}
	var e expCase
	if err := json.Unmarshal(b, &e); err != nil {
		t.Fatalf("%s/expected.json: %v", name, err)
	}
	return &e
}

// caseIndex returns the index of a conformance case to open, in place
// when possible. A shard that barecat made a symlink but that reached us
// as a regular file holding the link's target (wrap_tar's shard 00000,
// flattened by whatever copied the cases) is restored as a symlink in a
// copy of the case.
func caseIndex(t testing.TB, name string) string {
	t.Helper()
	dir := confDir(t, name)
	e := loadExpected(t, name)
	var flat []string
	for _, s := range e.Shards {
		st, err := os.Lstat(filepath.Join(dir, s.Name))
		if err != nil {
			t.Fatal(err)
		}
		if s.IsSymlink && st.Mode().IsRegular() {
			flat = append(flat, s.Name)
		}
	}
	if len(flat) == 0 {
		return filepath.Join(dir, e.IndexFile)
	}
	tmp := copyDir(t, dir)
	for _, n := range flat {
		target, err := os.ReadFile(filepath.Join(dir, n))
		if err != nil {
			t.Fatal(err)
		}
		tgt := strings.TrimSpace(string(target))
		if _, err := os.Stat(filepath.Join(dir, tgt)); err != nil {
			t.Fatalf("%s: shard %s should be a symlink, and holds %q, which is not a file beside it", name, n, tgt)
		}
		p := filepath.Join(tmp, n)
		if err := os.Remove(p); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(tgt, p); err != nil {
			t.Fatal(err)
		}
	}
	return filepath.Join(tmp, e.IndexFile)
}

// copyDir copies the regular files of dir into a new temporary directory,
// writable.
func copyDir(t testing.TB, dir string) string {
	t.Helper()
	tmp := t.TempDir()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if !e.Type().IsRegular() {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(tmp, e.Name()), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return tmp
}

// schemaDump renders sqlite_master as the conformance cases'
// schema_dump.sql does.
func schemaDump(t testing.TB, index string) string {
	t.Helper()
	db := openSQL(t, index, true)
	defer db.Close()
	rows, err := db.Query(`SELECT type, name, tbl_name, sql FROM sqlite_master WHERE sql IS NOT NULL ORDER BY rowid`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var es []schemaEntry
	for rows.Next() {
		var e schemaEntry
		if err := rows.Scan(&e.Type, &e.Name, &e.Table, &e.SQL); err != nil {
			t.Fatal(err)
		}
		es = append(es, e)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return formatSchemaDump(es)
}

// openSQL opens an index with the plain SQLite driver.
func openSQL(t testing.TB, index string, readonly bool) *sql.DB {
	t.Helper()
	q := ""
	if readonly {
		q = "mode=ro"
	}
	uri, err := sqliteuri.File(index, q)
	if err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite", uri)
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	return db
}

// execSQL runs statements on an index (a copy: never one in shared/).
func execSQL(t testing.TB, index string, stmts ...string) {
	t.Helper()
	db := openSQL(t, index, false)
	defer db.Close()
	for _, s := range stmts {
		if _, err := db.Exec(s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
}

func allFiles(t testing.TB, a *Archive, order Order) []File {
	t.Helper()
	var fs []File
	if err := a.Files(context.Background(), order, func(f File) error {
		fs = append(fs, f)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return fs
}

func allDirs(t testing.TB, a *Archive) []Dir {
	t.Helper()
	var ds []Dir
	if err := a.Dirs(context.Background(), func(d Dir) error {
		ds = append(ds, d)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return ds
}

func sha(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

func mustOpen(t testing.TB, path string) *Archive {
	t.Helper()
	a, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	return a
}

// wantErr checks that err is an *Error wrapping kind.
func wantErr(t testing.TB, err, kind error) {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) || !errors.Is(err, kind) {
		t.Fatalf("error %v (%T), want an *Error wrapping %q", err, err, kind)
	}
}

func readAll(t testing.TB, a *Archive, f File) []byte {
	t.Helper()
	r, err := a.Open(f)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	b, err := io.ReadAll(r)
	if err != nil {
		t.Fatalf("%s: %v", f.Path, err)
	}
	return b
}

func sortedFiles(fs []File) []File {
	return slices.SortedFunc(slices.Values(fs), func(a, b File) int { return strings.Compare(a.Path, b.Path) })
}
