package convert

import (
	"archive/tar"
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/itarconv/itarconv/fold"
	"github.com/itarconv/itarconv/formats/tbl"
)

// TestTBLHardlinks: tar -> TBL keeps hard links as samples with the bytes
// of their target's latest file before them (through "./" paths and
// links to links), as tar -> Barecat does, and refuses a link to no
// earlier file; --compat turboloader leaves them out as TurboLoader does.
func TestTBLHardlinks(t *testing.T) {
	dir := t.TempDir()
	shard := filepath.Join(dir, "train_0000.tar")
	writeTar(t, shard, []member{
		{name: "a.jpg", body: "old", typ: tar.TypeReg},
		{name: "./a.jpg", body: "new-a", typ: tar.TypeReg},
		{name: "b.jpg", link: "a.jpg", typ: tar.TypeLink},
		{name: "c.jpg", link: "./b.jpg", typ: tar.TypeLink},
		{name: "a.jpg", body: "newest", typ: tar.TypeReg}, // after the links: not theirs
	})
	out := filepath.Join(dir, "x.tbl")
	st, err := TarToTBL(context.Background(), []string{shard}, out, TBLOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if st.Samples != 5 || st.Hardlinks != 2 || len(st.Skipped) != 0 {
		t.Errorf("stats %+v", st)
	}
	r, err := tbl.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	fst, err := fold.Write(context.Background(), &tbl.Source{Reader: r}, fold.WriteOptions{Dir: filepath.Join(dir, "back")})
	r.Close()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range readTarDir(t, fst.Shards) {
		got = append(got, e.name+"="+e.body)
	}
	if s := strings.Join(got, " "); s != "a.jpg=old ./a.jpg=new-a b.jpg=new-a c.jpg=new-a a.jpg=newest" {
		t.Errorf("back: %s", s)
	}

	st, err = TarToTBL(context.Background(), []string{shard}, filepath.Join(dir, "compat.tbl"), TBLOptions{CompatTurboLoader: true})
	if err != nil {
		t.Fatal(err)
	}
	if st.Samples != 3 || st.Hardlinks != 0 || st.Skipped["not a regular file"] != 2 {
		t.Errorf("compat: stats %+v", st)
	}

	bad := filepath.Join(dir, "bad_0000.tar")
	writeTar(t, bad, []member{
		{name: "early.jpg", link: "late.jpg", typ: tar.TypeLink},
		{name: "late.jpg", body: "x", typ: tar.TypeReg},
	})
	_, err = TarToTBL(context.Background(), []string{bad}, filepath.Join(dir, "bad.tbl"), TBLOptions{})
	if !errors.Is(err, tbl.ErrHardlinkTarget) || !strings.Contains(err.Error(), "bad_0000.tar") || !strings.Contains(err.Error(), `"early.jpg"`) {
		t.Errorf("a link to a later file: %v", err)
	}
}
