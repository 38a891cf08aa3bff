package convert

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/itarconv/itarconv/fold"
	"github.com/itarconv/itarconv/formats/tbl"
	"github.com/itarconv/itarconv/testing/testutil"
)

// TestTBLCompatTurboLoader: --compat turboloader writes upstream's v2 files
// byte for byte, raw and with LZ4, for every conformance case.
func TestTBLCompatTurboLoader(t *testing.T) {
	root := testutil.Conformance(t, "tbl")
	cases, _ := os.ReadDir(root)
	if len(cases) < 6 {
		t.Fatalf("%d TBL cases", len(cases))
	}
	for _, c := range cases {
		name := c.Name()
		in := filepath.Join(root, name, name+".tar")
		for _, lz4 := range []bool{false, true} {
			ref := filepath.Join(root, name, name+".v2raw.tbl")
			if lz4 {
				ref = filepath.Join(root, name, name+".v2lz4.tbl")
			}
			want, err := os.ReadFile(ref)
			if err != nil {
				t.Fatal(err)
			}
			out := filepath.Join(t.TempDir(), "out.tbl")
			if _, err := TarToTBL(context.Background(), []string{in}, out, TBLOptions{CompatTurboLoader: true, LZ4: lz4}); err != nil {
				t.Fatalf("%s lz4=%v: %v", name, lz4, err)
			}
			got, _ := os.ReadFile(out)
			if !bytes.Equal(got, want) {
				t.Errorf("%s lz4=%v: %d bytes differ from upstream's %d", name, lz4, len(got), len(want))
			}
		}
	}
}

// TestTBLRoundTrip: tar -> TBL v2 -> tar keeps names and bytes (with and
// without LZ4), a hard link becoming a file with its target's bytes, as
// into Barecat; tar -> v1 keeps bytes and order, and names come back from
// the sample index.
func TestTBLRoundTrip(t *testing.T) {
	_, shards := sampleShards(t)
	want := []string{"./imgs/a.jpg", "./imgs/日本.cls", "./empty.txt", "deep/er/" + strings.Repeat("x", 150) + ".bin", "hard.jpg"}
	bodies := []string{"jpeg-a", "7", "", strings.Repeat("z", 3000), "jpeg-a"}
	for _, opts := range []TBLOptions{{Version: 2}, {Version: 2, LZ4: true}, {Version: 1}} {
		out := filepath.Join(t.TempDir(), "x.tbl")
		st, err := TarToTBL(context.Background(), shards, out, opts)
		if err != nil {
			t.Fatalf("%+v: %v", opts, err)
		}
		if st.Samples != 5 || st.Hardlinks != 1 || st.Skipped["dir"] != 2 || st.Skipped["symlink"] != 1 || st.Skipped["hardlink"] != 0 {
			t.Errorf("%+v: stats %+v", opts, st)
		}
		r, err := tbl.Open(out)
		if err != nil {
			t.Fatal(err)
		}
		if err := r.Verify(); err != nil {
			t.Errorf("%+v: verify: %v", opts, err)
		}
		back := filepath.Join(t.TempDir(), "back")
		src := &tbl.Source{Reader: r}
		fst, err := fold.Write(context.Background(), src, fold.WriteOptions{Dir: back})
		r.Close()
		if err != nil {
			t.Fatal(err)
		}
		if src.Held() != 0 {
			t.Errorf("%+v: %d batches' mappings never released", opts, src.Held())
		}
		entries := readTarDir(t, fst.Shards)
		if len(entries) != 5 {
			t.Fatalf("%+v: %d members back", opts, len(entries))
		}
		for i, e := range entries {
			wantName := want[i] // names come back exactly as they were
			if opts.Version == 1 {
				wantName = []string{"000000000.jpg", "000000001.bin", "000000002.bin", "000000003.bin", "000000004.jpg"}[i]
			}
			if e.name != wantName || e.body != bodies[i] {
				t.Errorf("%+v: member %d is %q (%d bytes), want %q", opts, i, e.name, len(e.body), wantName)
			}
		}
	}
}

// TestTBLMetaJSON: v2 metadata beyond the name comes back in a metadata
// member just before the sample, its JSON readable as it was (the whole
// round trip: TestTBLMetadataRoundTrip).
func TestTBLMetaJSON(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "m.tbl")
	w, err := tbl.Create(path, tbl.WriterOptions{Version: 2, NumSamples: 2})
	if err != nil {
		t.Fatal(err)
	}
	w.Add(tbl.JPEG, strings.NewReader("abc"), 3, []tbl.MetaEntry{{Type: 1, Data: []byte(`{"name":"cat/1.jpg","label":3}`)}})
	w.Add(tbl.PNG, strings.NewReader("de"), 2, []tbl.MetaEntry{{Type: 1, Data: []byte(`{"key":"k7"}`)}})
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	r, _ := tbl.Open(path)
	defer r.Close()
	fst, err := fold.Write(context.Background(), &tbl.Source{Reader: r}, fold.WriteOptions{Dir: filepath.Join(dir, "out")})
	if err != nil {
		t.Fatal(err)
	}
	entries := readTarDir(t, fst.Shards)
	var got []string
	for _, e := range entries {
		got = append(got, e.name+"="+e.body)
	}
	want := `cat/1.jpg.tblmeta.json={"tbl_metadata":[{"type":1,"text":"{\"name\":\"cat/1.jpg\",\"label\":3}"}]}` + "\n" +
		`|cat/1.jpg=abc|k7.png.tblmeta.json={"tbl_metadata":[{"type":1,"text":"{\"key\":\"k7\"}"}]}` + "\n|k7.png=de"
	if strings.Join(got, "|") != want {
		t.Errorf("members %q", got)
	}
}
