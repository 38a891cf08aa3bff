package fold

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/itarconv/itarconv/formats/registry"
)

// writeTarFile writes a tar of the given files (name, content), in order.
func writeTarFile(t *testing.T, path string, files [][2]string) {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, f := range files {
		tw.WriteHeader(&tar.Header{Name: f[0], Mode: 0o644, Size: int64(len(f[1])), Typeflag: tar.TypeReg})
		tw.Write([]byte(f[1]))
	}
	tw.Close()
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestTarThroughRegistry: the tar format opens a fold and writes one
// through the registry alone, as any other format's conversion would.
func TestTarThroughRegistry(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in")
	os.Mkdir(in, 0o755)
	writeTarFile(t, filepath.Join(in, "data_0.tar"), [][2]string{{"a/1.txt", "one"}, {"a/2.bin", "two!"}})
	writeTarFile(t, filepath.Join(in, "data_1.tar"), [][2]string{{"b/3.txt", "three"}})

	f := registry.Lookup("tar")
	if f == nil || f.Open == nil || f.Create == nil {
		t.Fatal("tar is not registered with Open and Create")
	}
	if got := registry.Detect(filepath.Join(in, "data_1.tar")); got != f {
		t.Errorf("Detect(shard) = %v", got)
	}
	d, err := f.Open([]string{in}, registry.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	type entry struct {
		name, shard string
		size        int64
	}
	var got []entry
	err = d.List(context.Background(), func(e registry.Entry) error {
		got = append(got, entry{e.Name, e.Fields[0].Value.(string), e.Size})
		return nil
	})
	want := []entry{{"a/1.txt", "data_0.tar", 3}, {"a/2.bin", "data_0.tar", 4}, {"b/3.txt", "data_1.tar", 5}}
	if err != nil || len(got) != len(want) {
		t.Fatalf("List: %v, %v", got, err)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("entry %d = %+v, want %+v", i, got[i], want[i])
		}
	}
	if b, err := d.ReadEntry("b/3.txt"); err != nil || string(b) != "three" {
		t.Errorf("ReadEntry(b/3.txt) = %q, %v", b, err)
	}
	if _, err := d.ReadEntry("nope"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("ReadEntry(nope): %v, want fs.ErrNotExist", err)
	}
	if d.Size() != (6+4)*512 || d.Unit() != "members" {
		t.Errorf("Size, Unit = %d, %s", d.Size(), d.Unit())
	}

	out := filepath.Join(dir, "out")
	res, err := f.Create(context.Background(), d, out, registry.CreateOptions{Format: CreateOptions{Fold: "val"}})
	if err != nil {
		t.Fatal(err)
	}
	st := res.Stats.(*WriteStats)
	if st.Members != 3 || st.Bytes != 12 || st.Index.Rows != 3 || len(res.Warnings) != 0 {
		t.Errorf("stats %+v, warnings %v", st, res.Warnings)
	}
	back, err := f.Open([]string{out}, registry.OpenOptions{Format: OpenOptions{Fold: "val"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range want {
		b, err := back.ReadEntry(e.name)
		if wantB, _ := d.ReadEntry(e.name); err != nil || !bytes.Equal(b, wantB) {
			t.Errorf("%s: %q, %v; want %q", e.name, b, err, wantB)
		}
	}

	if _, err := f.Open([]string{in}, registry.OpenOptions{Format: OpenOptions{Fold: "nope"}}); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Open of a missing fold: %v", err)
	}
	writeTarFile(t, filepath.Join(in, "other_0.tar"), nil)
	if _, err := f.Open([]string{in}, registry.OpenOptions{}); !errors.Is(err, ErrChooseFold) {
		t.Errorf("Open of a directory of two folds: %v", err)
	}
}
