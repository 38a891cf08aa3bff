package convert_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/itarconv/itarconv/convert"
	"github.com/itarconv/itarconv/dataset"
	"github.com/itarconv/itarconv/formats/registry"
)

// A format of its own, as a new format package would add it: one
// registration, and every other format converts into it and out of it.
// A toy file is "TOY1\n", then one line per file: its name and its bytes
// in hex.
const toyMagic = "TOY1\n"

func registerToy(t *testing.T) {
	registry.Register(&registry.Format{
		Name:  "toy",
		Label: "Toy",
		Detect: func(path string) bool {
			b, ok := registry.Head(path, len(toyMagic))
			return ok && string(b) == toyMagic
		},
		Claims: func(path string) bool { return strings.HasSuffix(path, ".toy") },
		Open:   openToy,
		Create: createToy,
	})
	t.Cleanup(func() { registry.Unregister("toy") })
}

type toyFile struct {
	name string
	data []byte
}

// toyDataset is a toy file read whole (a toy is small).
type toyDataset struct{ files []toyFile }

func openToy(paths []string, _ registry.OpenOptions) (registry.Dataset, error) {
	b, err := os.ReadFile(paths[0])
	if err != nil {
		return nil, err
	}
	d := &toyDataset{}
	for i, line := range strings.Split(strings.TrimSuffix(strings.TrimPrefix(string(b), toyMagic), "\n"), "\n") {
		name, hx, ok := strings.Cut(line, "\t")
		data, err := hex.DecodeString(hx)
		if !ok || err != nil {
			return nil, fmt.Errorf("%s: line %d: not <name> TAB <hex>", paths[0], i+2)
		}
		d.files = append(d.files, toyFile{name, data})
	}
	return d, nil
}

func (d *toyDataset) Rows(bool) (dataset.PayloadSource, error) { return d, nil }
func (d *toyDataset) NumShards() int                           { return 1 }
func (d *toyDataset) ShardName(int) string                     { return "toy" }
func (d *toyDataset) Scan(_ context.Context, _ int, emit func([]dataset.Row) error) error {
	rows := make([]dataset.Row, len(d.files))
	for i, f := range d.files {
		rows[i] = dataset.Row{Name: []byte(f.name), Kind: dataset.KindFile, Size: int64(len(f.data)), Mode: 0o644, Offset: -1, Inline: f.data}
	}
	return emit(rows)
}
func (d *toyDataset) OpenPayload(r *dataset.Row) (io.Reader, error) {
	return bytes.NewReader(r.Inline), nil
}
func (d *toyDataset) List(_ context.Context, fn func(registry.Entry) error) error {
	for _, f := range d.files {
		if err := fn(registry.Entry{Name: f.name, Size: int64(len(f.data))}); err != nil {
			return err
		}
	}
	return nil
}
func (d *toyDataset) ReadEntry(name string) ([]byte, error) {
	for _, f := range d.files {
		if f.name == name {
			return f.data, nil
		}
	}
	return nil, fmt.Errorf("%s: %w", name, fs.ErrNotExist)
}
func (d *toyDataset) Size() int64        { return 0 }
func (d *toyDataset) Unit() string       { return "files" }
func (d *toyDataset) Warnings() []string { return nil }
func (d *toyDataset) Close() error       { return nil }

// toyMemory is the memory budget the last createToy was given.
var toyMemory int64

func createToy(ctx context.Context, in registry.Input, path string, o registry.CreateOptions) (*registry.Result, error) {
	toyMemory = o.Memory
	src, err := in.Rows(false)
	if err != nil {
		return nil, err
	}
	defer registry.CloseSource(src)
	var buf bytes.Buffer
	w := bufio.NewWriter(&buf)
	w.WriteString(toyMagic)
	n := 0
	err = dataset.Run(ctx, src, dataset.RowFunc(func(_ int, r *dataset.Row) error {
		if r.Kind != dataset.KindFile {
			return nil
		}
		data := r.Inline
		if data == nil {
			var err error
			if data, err = dataset.ReadPayload(src, r); err != nil {
				return err
			}
		}
		n++
		_, err := fmt.Fprintf(w, "%s\t%x\n", r.Name, data)
		return err
	}), dataset.Options{Workers: o.Workers})
	if err != nil {
		return nil, err
	}
	w.Flush()
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		return nil, err
	}
	return &registry.Result{Stats: map[string]int{"files": n}, Summary: fmt.Sprintf("%s: %d files", path, n)}, nil
}

// TestAFormatOfItsOwn: a format registered in a test converts to and from
// the built-in formats through convert.Convert, with no converter written
// for any pair, and comes back byte for byte. (SCDL holds one matrix and
// its files: a toy's files are no archive, and ToSCDL says so.)
func TestAFormatOfItsOwn(t *testing.T) {
	registerToy(t)
	dir := t.TempDir()
	in := filepath.Join(dir, "in.toy")
	want := toyMagic + "a/1.txt\t6f6e65\nb/2.bin\t00ff10\nc.json\t7b7d\n"
	os.WriteFile(in, []byte(want), 0o644)
	ctx := context.Background()

	for _, via := range []struct{ to, path string }{{"tar", "fold"}, {"barecat", "x.barecat"}, {"tbl", "x.tbl"}} {
		mid := filepath.Join(dir, via.path)
		if _, err := convert.Convert(ctx, []string{in}, mid, convert.ConvertOptions{To: via.to}); err != nil {
			t.Fatalf("toy -> %s: %v", via.to, err)
		}
		back := filepath.Join(dir, via.to+".toy")
		res, err := convert.Convert(ctx, []string{mid}, back, convert.ConvertOptions{To: "toy"})
		if err != nil {
			t.Fatalf("%s -> toy: %v", via.to, err)
		}
		if got, _ := os.ReadFile(back); string(got) != want {
			t.Errorf("toy -> %s -> toy:\n%q\nwant\n%q", via.to, got, want)
		}
		if res.Summary != back+": 3 files" {
			t.Errorf("summary %q", res.Summary)
		}
	}
	// The memory budget reaches the target's Create.
	if _, err := convert.Convert(ctx, []string{filepath.Join(dir, "fold")}, filepath.Join(dir, "m.toy"), convert.ConvertOptions{To: "toy", Memory: 12345}); err != nil || toyMemory != 12345 {
		t.Errorf("tar -> toy with Memory 12345: %v, Create got %d", err, toyMemory)
	}
	if _, err := convert.Convert(ctx, []string{in}, filepath.Join(dir, "x.toy"), convert.ConvertOptions{}); !errors.Is(err, convert.ErrSameFormat) {
		t.Errorf("toy -> toy: %v, want ErrSameFormat", err)
	}
	registry.Lookup("toy").Create = nil
	if _, err := convert.Convert(ctx, []string{filepath.Join(dir, "fold")}, filepath.Join(dir, "y.toy"), convert.ConvertOptions{To: "toy"}); !errors.Is(err, convert.ErrNoConverter) {
		t.Errorf("tar -> toy without Create: %v, want ErrNoConverter", err)
	}
}
