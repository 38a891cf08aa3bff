package convert

import (
	"archive/tar"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/itarconv/itarconv/formats/tarfile"
	"github.com/itarconv/itarconv/formats/tbl"
)

// TestUnsafeNamesRefusedOnTheWayIn: a member whose name could not come
// back out of the target (absolute, with "..", empty) is refused when tar
// shards are converted, into TBL as into Barecat, with one sentinel and a
// message naming the shard, the offset and the member; nothing is
// written. A TBL file whose metadata gives such a name names the file
// when the tar fold refuses it.
func TestUnsafeNamesRefusedOnTheWayIn(t *testing.T) {
	for _, name := range []string{"../../x.jpg", "/etc/x.jpg", "a/../../x.jpg"} {
		dir := t.TempDir()
		shard := filepath.Join(dir, "u_0000.tar")
		writeTar(t, shard, []member{{name: "ok.jpg", typ: tar.TypeReg, body: "x"}, {name: name, typ: tar.TypeReg, body: "bad"}})
		for _, to := range []string{"tbl", "barecat"} {
			out := filepath.Join(t.TempDir(), "out."+to)
			_, err := Convert(context.Background(), []string{shard}, out, ConvertOptions{To: to})
			if !errors.Is(err, tarfile.ErrUnsafeName) || !strings.Contains(err.Error(), "u_0000.tar: offset 1024: ") ||
				!strings.Contains(err.Error(), `"`+name+`"`) {
				t.Errorf("%q into %s: %v", name, to, err)
			}
			if _, err := os.Stat(out); !os.IsNotExist(err) {
				t.Errorf("%q into %s: output exists", name, to)
			}
		}
	}

	dir := t.TempDir()
	path := filepath.Join(dir, "n.tbl")
	w, err := tbl.Create(path, tbl.WriterOptions{Version: 2, NumSamples: 1})
	if err != nil {
		t.Fatal(err)
	}
	w.Add(tbl.JPEG, strings.NewReader("x"), 1, []tbl.MetaEntry{tbl.NameMeta("../x.jpg")})
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	_, err = Convert(context.Background(), []string{path}, filepath.Join(dir, "out"), ConvertOptions{})
	if !errors.Is(err, tarfile.ErrUnsafeName) || !strings.Contains(err.Error(), path) {
		t.Errorf("TBL -> tar: %v", err)
	}
}
