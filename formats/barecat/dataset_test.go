package barecat

import (
	"bytes"
	"context"
	"errors"
	"io"
	"io/fs"
	"path/filepath"
	"testing"

	"github.com/itarconv/itarconv/dataset"
	"github.com/itarconv/itarconv/formats/registry"
)

// rowsInput is a dataset of files given whole, in order.
type rowsInput [][2]string

func (in rowsInput) Rows(bool) (dataset.PayloadSource, error) { return in, nil }
func (in rowsInput) NumShards() int                           { return 1 }
func (in rowsInput) ShardName(int) string                     { return "input" }
func (in rowsInput) OpenPayload(r *dataset.Row) (io.Reader, error) {
	return bytes.NewReader(r.Inline), nil
}
func (in rowsInput) Scan(_ context.Context, _ int, emit func([]dataset.Row) error) error {
	rows := []dataset.Row{{Name: []byte("d/"), Kind: dataset.KindDir, Mode: 0o750, Offset: -1}}
	for _, f := range in {
		rows = append(rows, dataset.Row{Name: []byte(f[0]), Kind: dataset.KindFile, Size: int64(len(f[1])),
			Mode: 0o600, ModTime: 1700000000, Offset: -1, Inline: []byte(f[1])})
	}
	return emit(rows)
}

// TestThroughRegistry: Barecat is created from any rows, and opened,
// listed and read by name, through the registry alone.
func TestThroughRegistry(t *testing.T) {
	f := registry.Lookup("barecat")
	in := rowsInput{{"d/b.txt", "bee"}, {"a.bin", "\x00\x01"}, {"d/c/e.json", "{}"}}
	out := filepath.Join(t.TempDir(), "x.barecat")
	res, err := f.Create(context.Background(), in, out, registry.CreateOptions{Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	st := res.Stats.(*RowsStats)
	if st.Files != 3 || st.Dirs != 1 || st.Bytes != 7 || st.Shards != 1 {
		t.Errorf("stats %+v", st)
	}
	if registry.Detect(out) != f {
		t.Fatalf("%s is not detected as Barecat", out)
	}
	d, err := f.Open([]string{out}, registry.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	var names []string
	err = d.List(context.Background(), func(e registry.Entry) error {
		names = append(names, e.Name)
		if want := map[string]int64{"a.bin": 2, "d/b.txt": 3, "d/c/e.json": 2}[e.Name]; e.Size != want || e.Fields[0].Key != "shard" {
			t.Errorf("%s: size %d, fields %v", e.Name, e.Size, e.Fields)
		}
		return nil
	})
	if err != nil || len(names) != 3 || names[0] != "a.bin" || names[2] != "d/c/e.json" {
		t.Errorf("List: %v, %v (want path order)", names, err)
	}
	for _, c := range in {
		if b, err := d.ReadEntry(c[0]); err != nil || string(b) != c[1] {
			t.Errorf("ReadEntry(%s) = %q, %v", c[0], b, err)
		}
	}
	if _, err := d.ReadEntry("nope"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("ReadEntry(nope): %v", err)
	}
	if _, err := f.Create(context.Background(), in, out, registry.CreateOptions{}); !errors.Is(err, fs.ErrExist) {
		t.Errorf("Create over an archive: %v, want fs.ErrExist", err)
	}
	if _, err := f.Create(context.Background(), rowsInput{{"a", "1"}, {"a", "2"}}, filepath.Join(t.TempDir(), "y.barecat"), registry.CreateOptions{}); !errors.Is(err, ErrDuplicatePath) {
		t.Errorf("a path twice: %v, want ErrDuplicatePath", err)
	}
}
