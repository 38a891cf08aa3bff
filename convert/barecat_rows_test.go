package convert

import (
	"archive/tar"
	"context"
	"database/sql"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	_ "modernc.org/sqlite"

	"github.com/itarconv/itarconv/fold"
	"github.com/itarconv/itarconv/formats/barecat"
	"github.com/itarconv/itarconv/testing/testutil"
)

// editedArchive converts the sample shards to a Barecat archive and runs
// stmts on its index.
func editedArchive(t *testing.T, stmts ...string) string {
	t.Helper()
	_, shards := sampleShards(t)
	out := filepath.Join(t.TempDir(), "d.barecat")
	if _, err := TarToBarecat(context.Background(), shards, out, BarecatOptions{}); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite", out)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, q := range stmts {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	return out
}

func barecatToTar(t *testing.T, archive, dir string) (*fold.WriteStats, error) {
	t.Helper()
	a, err := barecat.Open(archive)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	return fold.Write(context.Background(), &barecat.Source{Archive: a, Order: barecat.ByPath}, fold.WriteOptions{Dir: dir, Fold: "train"})
}

// TestBarecatToTarRefusesBadRows: rows whose metadata a tar header would
// carry wrong, and a path that is both a directory and a file, stop the
// conversion with an error naming the row, the field and the value, and
// leave no file in the output directory.
func TestBarecatToTarRefusesBadRows(t *testing.T) {
	cases := []struct {
		name string
		sql  string
		kind error
		want []string // in the message
	}{
		{"negative uid", `UPDATE files SET uid = -1 WHERE path = 'imgs/a.jpg'`, barecat.ErrBadRow, []string{`"imgs/a.jpg"`, "uid -1"}},
		{"uid over 2^32-1", `UPDATE files SET uid = 4294967296 WHERE path = 'empty.txt'`, barecat.ErrBadRow, []string{`"empty.txt"`, "uid 4294967296"}},
		{"gid over 2^32-1", `UPDATE files SET gid = 4294967296 WHERE path = 'imgs/a.jpg'`, barecat.ErrBadRow, []string{`"imgs/a.jpg"`, "gid 4294967296"}},
		{"negative gid", `UPDATE files SET gid = -7 WHERE path = 'hard.jpg'`, barecat.ErrBadRow, []string{`"hard.jpg"`, "gid -7"}},
		{"negative mode", `UPDATE files SET mode = -1 WHERE path = 'imgs/a.jpg'`, barecat.ErrBadRow, []string{`"imgs/a.jpg"`, "mode -1"}},
		{"mode past the type bits", `UPDATE files SET mode = 262564 WHERE path = 'imgs/a.jpg'`, barecat.ErrBadRow, []string{`"imgs/a.jpg"`, "mode 262564"}}, // 0o1000644
		{"fifo type bits", `UPDATE files SET mode = 4516 WHERE path = 'empty.txt'`, barecat.ErrBadRow, []string{`"empty.txt"`, "mode 4516"}},                // 0o10644
		{"directory type on a file", `UPDATE files SET mode = 16877 WHERE path = 'imgs/a.jpg'`, barecat.ErrBadRow, []string{`"imgs/a.jpg"`, "file row: mode 16877"}},
		{"file type on a directory", `UPDATE dirs SET mode = 33188 WHERE path = 'imgs'`, barecat.ErrBadRow, []string{`"imgs"`, "directory row: mode 33188"}},
		{"directory negative uid", `UPDATE dirs SET uid = -1 WHERE path = 'imgs'`, barecat.ErrBadRow, []string{`"imgs"`, "uid -1"}},
		{"directory gid over 2^32-1", `UPDATE dirs SET gid = 99999999999 WHERE path = 'deep'`, barecat.ErrBadRow, []string{`"deep"`, "gid 99999999999"}},
		{"directory and file", `UPDATE config SET value_int = 0 WHERE key = 'use_triggers'; INSERT INTO dirs (path) VALUES ('empty.txt'); UPDATE config SET value_int = 1 WHERE key = 'use_triggers'`, barecat.ErrConflict, []string{`"empty.txt"`, "directory row and a file row"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			archive := editedArchive(t, c.sql)
			dir := filepath.Join(t.TempDir(), "out")
			_, err := barecatToTar(t, archive, dir)
			if !errors.Is(err, c.kind) {
				t.Fatalf("got %v, want %v", err, c.kind)
			}
			for _, w := range append(c.want, archive) {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not name %s", err, w)
				}
			}
			if entries, _ := os.ReadDir(dir); len(entries) != 0 {
				t.Errorf("left in the output directory: %v", entries)
			}
			// verify says it too.
			a, err := barecat.Open(archive)
			if err != nil {
				t.Fatal(err)
			}
			defer a.Close()
			rep, err := a.Verify(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			found := false
			for _, p := range rep.Problems {
				found = found || errors.Is(p, c.kind)
			}
			if !found {
				t.Errorf("verify found %v, want a %v problem", rep.Problems, c.kind)
			}
		})
	}
}

// TestBarecatToTarEdgeMetadata: the largest uid and gid, set-id bits and
// file-system modes with their type bits convert, and GNU tar reads the
// result with the same values.
func TestBarecatToTarEdgeMetadata(t *testing.T) {
	tarTool := testutil.NeedTool(t, "tar")
	archive := editedArchive(t,
		`UPDATE files SET uid = 4294967295, gid = 4294967295, mode = 35309 WHERE path = 'imgs/a.jpg'`, // 0o104755
		`UPDATE files SET mode = 3071 WHERE path = 'empty.txt'`,                                       // 0o5777
		`UPDATE dirs SET mode = 17407, uid = 0, gid = 0 WHERE path = 'imgs'`,                          // 0o41777
	)
	dir := filepath.Join(t.TempDir(), "out")
	st, err := barecatToTar(t, archive, dir)
	if err != nil {
		t.Fatal(err)
	}
	headers := map[string]*tar.Header{}
	var listing string
	for _, shard := range st.Shards {
		f, err := os.Open(shard)
		if err != nil {
			t.Fatal(err)
		}
		tr := tar.NewReader(f)
		for {
			h, err := tr.Next()
			if err != nil {
				break
			}
			headers[h.Name] = h
		}
		f.Close()
		out, err := exec.Command(tarTool, "--numeric-owner", "-tvf", shard).CombinedOutput()
		if err != nil {
			t.Fatalf("tar -tvf %s: %v\n%s", shard, err, out)
		}
		listing += string(out)
	}
	for name, want := range map[string][3]int64{
		"imgs/a.jpg": {0o4755, 4294967295, 4294967295},
		"empty.txt":  {0o5777, 1000, 100},
		"imgs/":      {0o1777, 0, 0},
	} {
		h := headers[name]
		if h == nil || h.Mode != want[0] || int64(h.Uid) != want[1] || int64(h.Gid) != want[2] {
			t.Errorf("%s: header %+v, want mode %o uid %d gid %d", name, h, want[0], want[1], want[2])
		}
	}
	for _, want := range []string{"-rwsr-xr-x 4294967295/4294967295", "drwxrwxrwt 0/0", "-rwsrwxrwt 1000/100"} {
		if !strings.Contains(listing, want) {
			t.Errorf("tar -tvf: no %q in\n%s", want, listing)
		}
	}
}
