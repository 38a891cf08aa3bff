package formattest

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"database/sql"
	"fmt"
	"io/fs"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/itarconv/itarconv/formats/registry"

	_ "modernc.org/sqlite" // database/sql's "sqlite": a database of no format's
)

// copyTree copies the file or directory src to dst, keeping FIFOs and
// links as what they are not: only regular files and directories are
// copied.
func copyTree(t testing.TB, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		to := filepath.Join(dst, rel)
		switch {
		case d.IsDir():
			return os.MkdirAll(to, 0o755)
		case d.Type().IsRegular():
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			return os.WriteFile(to, b, 0o644)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// snapshot maps what dir holds, by path relative to it, to its content
// (a directory's is "dir/").
func snapshot(t testing.TB, dir string) map[string]string {
	t.Helper()
	m := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p == dir {
			return nil
		}
		rel, _ := filepath.Rel(dir, p)
		switch {
		case d.IsDir():
			m[rel] = "dir/"
		case d.Type().IsRegular():
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			m[rel] = string(b)
		default:
			m[rel] = d.Type().String()
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func keys(m map[string]string) []string {
	return slices.Sorted(maps.Keys(m))
}

// diffSnapshots says how two snapshots differ ("" when not).
func diffSnapshots(got, want map[string]string) string {
	if d := diffNames(got, want); d != "" {
		return d
	}
	var changed []string
	for k, v := range want {
		if got[k] != v {
			changed = append(changed, k)
		}
	}
	if len(changed) > 0 {
		slices.Sort(changed)
		return "changed: " + strings.Join(changed, ", ")
	}
	return ""
}

// diffNames says which paths one snapshot has and the other not.
func diffNames(got, want map[string]string) string {
	var extra, missing []string
	for k := range got {
		if _, ok := want[k]; !ok {
			extra = append(extra, k)
		}
	}
	for k := range want {
		if _, ok := got[k]; !ok {
			missing = append(missing, k)
		}
	}
	slices.Sort(extra)
	slices.Sort(missing)
	var d []string
	if len(extra) > 0 {
		d = append(d, "extra: "+strings.Join(extra, ", "))
	}
	if len(missing) > 0 {
		d = append(d, "missing: "+strings.Join(missing, ", "))
	}
	return strings.Join(d, "; ")
}

func relTo(t testing.TB, dir, p string) string {
	t.Helper()
	rel, err := filepath.Rel(dir, p)
	if err != nil || strings.HasPrefix(rel, "..") {
		t.Fatalf("%s is not under %s", p, dir)
	}
	return rel
}

// foreignFile is a file of another format, or of none: its name, and
// its paths (a dataset's files and directories).
type foreignFile struct {
	name  string
	paths []string
}

// foreign writes files that are not of the format self: files of no
// format (text, random bytes, JSON, a plain SQLite database, a gzip
// stream), a tar file (unless self is the tar format), and a sample of
// every other registered format that can be created (the paths in it
// that format detects as its own).
func foreign(t testing.TB, self string) []foreignFile {
	t.Helper()
	dir := t.TempDir()
	var files []foreignFile
	add := func(name string, b []byte) {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		files = append(files, foreignFile{name, []string{p}})
	}
	add("empty", nil)
	add("text", bytes.Repeat([]byte("not a file of any format. "), 200))
	random := make([]byte, 8192)
	r := rand.New(rand.NewPCG(1, 2))
	for i := range random {
		random[i] = byte(r.Uint32())
	}
	add("random", random)
	add("json", []byte(`{"__kind__": "none", "shards": []}`))
	tarBytes := tarOf(t, Sample()[0])
	if self != "tar" {
		add("plain.tar", tarBytes)
	}
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(tarBytes)
	zw.Close()
	add("gzip", gz.Bytes())
	files = append(files, foreignFile{"plain.sqlite", []string{plainSQLite(t, filepath.Join(dir, "plain.sqlite"))}})

	for _, f := range registry.All() {
		if f.Name == self || f.Create == nil {
			continue
		}
		fdir := filepath.Join(dir, "format-"+f.Name)
		if err := os.Mkdir(fdir, 0o755); err != nil {
			t.Fatal(err)
		}
		err := guard(func() error {
			_, err := f.Create(context.Background(), &Rows{Shards: Sample()}, filepath.Join(fdir, "sample"), registry.CreateOptions{Workers: 1})
			return err
		})
		if err != nil {
			continue // a format that takes other rows than the sample's
		}
		// The files the format itself recognises as its own (a fold
		// holds a TARIDX file too, which is TARIDX's).
		ff := foreignFile{name: "format-" + f.Name}
		filepath.WalkDir(fdir, func(p string, d fs.DirEntry, err error) error {
			if err == nil && p != fdir && f.Detect(p) {
				ff.paths = append(ff.paths, p)
			}
			return nil
		})
		files = append(files, ff)
	}
	return files
}

// tarOf is a tar file of files, as Python's tarfile or GNU tar write one.
func tarOf(t testing.TB, files []File) []byte {
	t.Helper()
	var b bytes.Buffer
	tw := tar.NewWriter(&b)
	for _, f := range files {
		hdr := &tar.Header{Name: f.Name, Mode: 0o644, Size: int64(len(f.Data)), Typeflag: tar.TypeReg, Format: tar.FormatUSTAR}
		if err := tw.WriteHeader(hdr); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write(f.Data); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// plainSQLite writes an SQLite database of no format's at path.
func plainSQLite(t testing.TB, path string) string {
	t.Helper()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, q := range []string{
		"CREATE TABLE files (path TEXT PRIMARY KEY, offset INTEGER, size INTEGER)",
		"INSERT INTO files VALUES ('a/b.txt', 512, 3), ('c.jpg', 1024, 10)",
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", path, fmt.Errorf("%s: %w", q, err))
		}
	}
	return path
}
