package convert

import (
	"archive/tar"
	"bytes"
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/itarconv/itarconv/dataset"
	"github.com/itarconv/itarconv/fold"
	"github.com/itarconv/itarconv/formats/barecat"
	"github.com/itarconv/itarconv/formats/tbl"
)

// tblMetaCases: samples with every kind of metadata a TBL v2 file holds.
var tblMetaCases = []struct {
	format tbl.Format
	data   string
	meta   []tbl.MetaEntry
	name   string // the member's name in the fold
	side   bool   // a metadata member goes before it
}{
	{tbl.JPEG, "abc", []tbl.MetaEntry{tbl.NameMeta("cat/1.jpg")}, "cat/1.jpg", false},
	{tbl.PNG, "de", []tbl.MetaEntry{{Type: tbl.MetaJSON, Data: []byte(`{"name":"dog/2.png","label":3}`)}}, "dog/2.png", true},
	{tbl.FormatUnknown, "f", []tbl.MetaEntry{{Type: tbl.MetaJSON, Data: []byte(`[1,2,3]`)},
		{Type: tbl.MetaMsgpack, Data: []byte("\x81\xa1a\x01")}, {Type: tbl.MetaCustom, Data: []byte("\xff\x00raw")}}, "000000002.bin", true},
	{tbl.JPEG, "gh", []tbl.MetaEntry{{Type: tbl.MetaJSON, Data: []byte(`{"name": "not json`)}}, "000000003.jpg", true},
	{tbl.JPEG, "ij", nil, "000000004.jpg", true},
	{tbl.PNG, "kl", []tbl.MetaEntry{{Type: tbl.MetaJSON, Data: []byte(`{"key":"k7"}`)}}, "k7.png", true},
	{tbl.JPEG, "mn", []tbl.MetaEntry{tbl.NameMeta("x.jpg"), {Type: tbl.MetaJSON, Data: []byte(`{"extra":1}`)},
		{Type: tbl.MetaProtobuf, Data: []byte{8, 1}}}, "x.jpg", true},
	{tbl.JPEG, "", []tbl.MetaEntry{tbl.NameMeta("empty.jpg")}, "empty.jpg", false},
}

func writeMetaTBL(t *testing.T, path string) {
	t.Helper()
	w, err := tbl.Create(path, tbl.WriterOptions{Version: 2, NumSamples: len(tblMetaCases)})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range tblMetaCases {
		if err := w.Add(c.format, strings.NewReader(c.data), int64(len(c.data)), c.meta); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestTBLMetadataRoundTrip: TBL v2 -> tar -> TBL v2 gives back every
// sample, format, dimension and metadata block: the very same file.
func TestTBLMetadataRoundTrip(t *testing.T) {
	dir := t.TempDir()
	orig := filepath.Join(dir, "m.tbl")
	writeMetaTBL(t, orig)
	r, err := tbl.Open(orig)
	if err != nil {
		t.Fatal(err)
	}
	src := &tbl.Source{Reader: r}
	fst, err := fold.Write(context.Background(), src, fold.WriteOptions{Dir: filepath.Join(dir, "fold"), ShardSize: 2048})
	r.Close()
	if err != nil {
		t.Fatal(err)
	}
	if n, first := src.BadJSON(); n != 1 || !reflect.DeepEqual(first, []int{3}) {
		t.Errorf("BadJSON = %d %v, want 1 [3]", n, first)
	}
	// The fold: each sample under its name, metadata members before those
	// whose blocks the name alone does not give back.
	var want []string
	for _, c := range tblMetaCases {
		if c.side {
			want = append(want, c.name+tbl.MetaSuffix)
		}
		want = append(want, c.name)
	}
	var got []string
	for _, e := range readTarDir(t, fst.Shards) {
		got = append(got, e.name)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("members\n%q\nwant\n%q", got, want)
	}
	if len(fst.Shards) < 2 {
		t.Fatalf("%d shards: the test wants a metadata member and its sample split across shards", len(fst.Shards))
	}
	back := filepath.Join(dir, "back.tbl")
	st, err := TarToTBL(context.Background(), fst.Shards, back, TBLOptions{Version: 2})
	if err != nil {
		t.Fatal(err)
	}
	if st.Samples != int64(len(tblMetaCases)) || st.MetaMembers != 6 || st.MetaDropped != 0 {
		t.Errorf("stats: %d samples, %d metadata members, %d dropped", st.Samples, st.MetaMembers, st.MetaDropped)
	}
	a, _ := os.ReadFile(orig)
	b, _ := os.ReadFile(back)
	if !bytes.Equal(a, b) {
		t.Errorf("the round trip gives another file (%d bytes, was %d)", len(b), len(a))
	}
	rb, err := tbl.Open(back)
	if err != nil {
		t.Fatal(err)
	}
	defer rb.Close()
	for i, c := range tblMetaCases {
		m, err := rb.Metadata(i)
		if err != nil || !reflect.DeepEqual(m, c.meta) {
			t.Errorf("sample %d: metadata %v, %v; want %v", i, m, err, c.meta)
		}
	}
	// To v1, the metadata cannot stay: counted as dropped (but for the
	// member saying that sample 4 has none), and no member becomes a
	// sample of its own.
	st, err = TarToTBL(context.Background(), fst.Shards, filepath.Join(dir, "v1.tbl"), TBLOptions{Version: 1})
	if err != nil {
		t.Fatal(err)
	}
	if st.Samples != int64(len(tblMetaCases)) || st.MetaDropped != 5 {
		t.Errorf("v1: %d samples, %d dropped", st.Samples, st.MetaDropped)
	}
}

// TestTBLMetaMemberLookalikes: a member that looks like a metadata member
// but is not followed by its sample, or does not start as one, is a sample
// like any other.
func TestTBLMetaMemberLookalikes(t *testing.T) {
	dir := t.TempDir()
	meta := string(tbl.EncodeMetaMember([]tbl.MetaEntry{{Type: 1, Data: []byte(`{"a":1}`)}}))
	shard := filepath.Join(dir, "train_0000.tar")
	writeTar(t, shard, []member{
		{name: "a.jpg" + tbl.MetaSuffix, body: meta, typ: tar.TypeReg}, // followed by another name
		{name: "b.jpg", body: "b", typ: tar.TypeReg},
		{name: "c.jpg" + tbl.MetaSuffix, body: `{"other":1}`, typ: tar.TypeReg}, // not the opening
		{name: "c.jpg", body: "c", typ: tar.TypeReg},
		{name: "d.jpg" + tbl.MetaSuffix, body: meta, typ: tar.TypeReg}, // last member
	})
	out := filepath.Join(dir, "x.tbl")
	st, err := TarToTBL(context.Background(), []string{shard}, out, TBLOptions{Version: 2})
	if err != nil {
		t.Fatal(err)
	}
	if st.Samples != 5 || st.MetaMembers != 0 {
		t.Errorf("%d samples, %d metadata members; want 5, 0", st.Samples, st.MetaMembers)
	}
	r, err := tbl.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	for i, name := range []string{"a.jpg" + tbl.MetaSuffix, "b.jpg", "c.jpg" + tbl.MetaSuffix, "c.jpg", "d.jpg" + tbl.MetaSuffix} {
		m, _ := r.Metadata(i)
		if got, _ := tbl.SampleName(m); got != name {
			t.Errorf("sample %d is %q, want %q", i, got, name)
		}
	}
}

// TestTBLMetadataThroughBarecat: TBL v2 -> Barecat -> TBL v2 directly
// keeps every metadata block too (the metadata members are files of the
// archive, in the order they were added; the counting pass reads their
// first bytes, not the others').
func TestTBLMetadataThroughBarecat(t *testing.T) {
	dir := t.TempDir()
	orig := filepath.Join(dir, "m.tbl")
	writeMetaTBL(t, orig)
	r, err := tbl.Open(orig)
	if err != nil {
		t.Fatal(err)
	}
	bc := filepath.Join(dir, "m.barecat")
	if _, err := ToBarecat(context.Background(), &tbl.Source{Reader: r}, bc, BarecatOptions{}); err != nil {
		t.Fatal(err)
	}
	r.Close()
	a, err := barecat.Open(bc)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	back := filepath.Join(dir, "back.tbl")
	st, err := ToTBL(context.Background(), func(counting bool) (dataset.PayloadSource, error) {
		return &barecat.Source{Archive: a, Order: barecat.ByAddress, NoData: counting}, nil
	}, back, TBLOptions{Version: 2})
	if err != nil {
		t.Fatal(err)
	}
	x, _ := os.ReadFile(orig)
	y, _ := os.ReadFile(back)
	if st.MetaMembers != 6 || !bytes.Equal(x, y) {
		t.Errorf("%d metadata members; the round trip gives another file (%d bytes, was %d)", st.MetaMembers, len(y), len(x))
	}
}
