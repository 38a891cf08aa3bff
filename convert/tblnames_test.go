package convert

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/itarconv/itarconv/fold"
	"github.com/itarconv/itarconv/formats/barecat"
	"github.com/itarconv/itarconv/formats/tbl"
)

// TestTBLFallbackNamesCollide: a name given by a sample's metadata that
// is another unnamed sample's fallback name (%09d.<ext>) yields, the same
// way every time, so that no two members share a name: into tar, into
// Barecat (which refused the second), and back to the same TBL file.
func TestTBLFallbackNamesCollide(t *testing.T) {
	dir := t.TempDir()
	orig := filepath.Join(dir, "k.tbl")
	js := func(s string) []tbl.MetaEntry { return []tbl.MetaEntry{{Type: tbl.MetaJSON, Data: []byte(s)}} }
	samples := []struct {
		meta []tbl.MetaEntry
		want string
	}{
		{js(`{"key":"000000001"}`), "000000001~0.jpg"}, // sample 1 has no name: its fallback wins
		{nil, "000000001.jpg"},
		{[]tbl.MetaEntry{tbl.NameMeta("000000003.jpg")}, "000000003.jpg"}, // sample 3 has a name: kept
		{[]tbl.MetaEntry{tbl.NameMeta("x.jpg")}, "x.jpg"},
		{[]tbl.MetaEntry{tbl.NameMeta("000000005.jpg")}, "000000005~4.jpg"},
		{nil, "000000005.jpg"},
		{[]tbl.MetaEntry{tbl.NameMeta("000000006.jpg")}, "000000006.jpg"}, // its own fallback name
		{[]tbl.MetaEntry{tbl.NameMeta("000000001.png")}, "000000001.png"}, // another extension than sample 1's
	}
	w, err := tbl.Create(orig, tbl.WriterOptions{Version: 2, NumSamples: len(samples)})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range samples {
		if err := w.Add(tbl.JPEG, strings.NewReader("j"), 1, s.meta); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	r, err := tbl.Open(orig)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	src := &tbl.Source{Reader: r}
	var want []string
	for i, s := range samples {
		want = append(want, s.want)
		if got, err := src.SampleName(i); err != nil || got != s.want {
			t.Errorf("sample %d is %q (%v), want %q", i, got, err, s.want)
		}
	}
	fst, err := fold.Write(context.Background(), src, fold.WriteOptions{Dir: filepath.Join(dir, "fold")})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range readTarDir(t, fst.Shards) {
		if !strings.HasSuffix(e.name, tbl.MetaSuffix) {
			got = append(got, e.name)
		}
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("members %q, want %q", got, want)
	}
	back := filepath.Join(dir, "back.tbl")
	if _, err := TarToTBL(context.Background(), fst.Shards, back, TBLOptions{}); err != nil {
		t.Fatal(err)
	}
	a, _ := os.ReadFile(orig)
	b, _ := os.ReadFile(back)
	if !bytes.Equal(a, b) {
		t.Error("TBL -> tar -> TBL gives another file")
	}
	bc := filepath.Join(dir, "k.barecat")
	if _, err := ToBarecat(context.Background(), &tbl.Source{Reader: r}, bc, BarecatOptions{}); err != nil {
		t.Fatalf("into Barecat: %v", err)
	}
	ar, err := barecat.Open(bc)
	if err != nil {
		t.Fatal(err)
	}
	defer ar.Close()
	if _, err := ar.Lookup("000000001~0.jpg"); err != nil {
		t.Error(err)
	}
}
