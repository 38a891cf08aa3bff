package convert

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/itarconv/itarconv/formats/barecat"
	"github.com/itarconv/itarconv/formats/tbl"
)

// TestTBLBarecatKeepsNames: TBL -> Barecat -> TBL gives the same file
// when names are what `tar cf x.tar .` writes ("./a.txt"), which Barecat
// stores normalized: the original names travel in metadata members.
func TestTBLBarecatKeepsNames(t *testing.T) {
	dir := t.TempDir()
	orig := filepath.Join(dir, "n.tbl")
	names := []string{"./a.txt", "./d/b.jpg", "c.jpg", "d//e.png"}
	w, err := tbl.Create(orig, tbl.WriterOptions{Version: 2, NumSamples: len(names)})
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range names {
		if err := w.Add(tbl.FormatFromName(n), strings.NewReader(n), int64(len(n)), []tbl.MetaEntry{tbl.NameMeta(n)}); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	bc := filepath.Join(dir, "n.barecat")
	if _, err := Convert(context.Background(), []string{orig}, bc, ConvertOptions{}); err != nil {
		t.Fatal(err)
	}
	a, err := barecat.Open(bc)
	if err != nil {
		t.Fatal(err)
	}
	if f, err := a.Lookup("a.txt"); err != nil || f.Size != int64(len("./a.txt")) {
		t.Errorf("a.txt in the archive: %+v, %v", f, err)
	}
	a.Close()
	back := filepath.Join(dir, "back.tbl")
	if _, err := Convert(context.Background(), []string{bc}, back, ConvertOptions{}); err != nil {
		t.Fatal(err)
	}
	x, _ := os.ReadFile(orig)
	y, _ := os.ReadFile(back)
	if !bytes.Equal(x, y) {
		r, _ := tbl.Open(back)
		defer r.Close()
		for i := range r.Len() {
			m, _ := r.Metadata(i)
			n, _ := tbl.SampleName(m)
			t.Logf("sample %d: %q", i, n)
		}
		t.Error("TBL -> Barecat -> TBL gives another file")
	}
}
