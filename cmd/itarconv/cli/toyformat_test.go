package cli

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

// A format of its own, registered as a new format package would: the
// command line converts into it and out of it, lists, reads, inspects and
// verifies it, applies the overwrite rule to what it writes and gives it
// its option as a flag, with no change of its own.
//
// A toy is "TOY1\n", then one line per file: its name, a tab, its bytes
// in hex; beside it, PATH.count holds the number of files (a second
// output, for the overwrite rule).
const toyMagic = "TOY1\n"

type toyOptions struct{ Upper bool }

func registerToyFormat(t *testing.T) {
	registry.Register(&registry.Format{
		Name:  "toy",
		Label: "Toy",
		Detect: func(path string) bool {
			b, ok := registry.Head(path, len(toyMagic))
			return ok && string(b) == toyMagic
		},
		Claims:  func(path string) bool { return strings.HasSuffix(path, ".toy") },
		Damaged: func(path string) error { _, err := readToy(path); return err },
		Open: func(paths []string, o registry.OpenOptions) (registry.Dataset, error) {
			if err := registry.NoOptions("Toy", o.Format); err != nil {
				return nil, err
			}
			files, err := readToy(paths[0])
			return &toyDataset{files}, err
		},
		Create: createToy,
		Inspect: func(_ context.Context, path string) (registry.Report, error) {
			files, err := readToy(path)
			if err != nil {
				return nil, err
			}
			return toyReport{Files: len(files)}, nil
		},
		Verify: func(_ context.Context, path string) (registry.Report, error) {
			files, err := readToy(path)
			if err != nil {
				return toyReport{Problem: err.Error()}, fmt.Errorf("%s: %w", path, registry.ErrVerify)
			}
			b, _ := os.ReadFile(path + ".count")
			if string(b) != fmt.Sprint(len(files)) {
				return toyReport{Files: len(files), Problem: "count mismatch"}, fmt.Errorf("%s: %w", path, registry.ErrVerify)
			}
			return toyReport{Files: len(files)}, nil
		},
		Outputs: func(path string, _ registry.Conversion) registry.Outputs {
			var o registry.Outputs
			for _, p := range []string{path, path + ".count"} {
				if _, err := os.Lstat(p); err == nil {
					o.Replaced = append(o.Replaced, p)
				}
			}
			return o
		},
		Options: []registry.Option{{Name: "toy-upper", Type: registry.Bool, Default: "false",
			Help: "Toy: names in capitals", Dir: registry.Write, Applies: "writing Toy"}},
		ParseOptions: func(dir registry.Direction, v registry.Values) (any, error) {
			if dir == registry.Read {
				return nil, nil // a toy is read one way
			}
			return toyOptions{Upper: v.Bool("toy-upper")}, nil
		},
	})
	t.Cleanup(func() { registry.Unregister("toy") })
}

type toyFile struct {
	name string
	data []byte
}

func readToy(path string) ([]toyFile, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	body, ok := strings.CutPrefix(string(b), toyMagic)
	if !ok {
		return nil, fmt.Errorf("%s: offset 0: no toy magic: %w", path, fs.ErrInvalid)
	}
	var files []toyFile
	for i, line := range strings.Split(strings.TrimSuffix(body, "\n"), "\n") {
		name, hx, ok := strings.Cut(line, "\t")
		data, err := hex.DecodeString(hx)
		if !ok || err != nil {
			return nil, fmt.Errorf("%s: line %d: not <name> TAB <hex>: %w", path, i+2, fs.ErrInvalid)
		}
		files = append(files, toyFile{name, data})
	}
	return files, nil
}

type toyReport struct {
	Files   int    `json:"files"`
	Problem string `json:"problem,omitempty"`
}

func (r toyReport) WriteText(w io.Writer) error {
	if r.Problem != "" {
		_, err := fmt.Fprintf(w, "DAMAGED: %s\n", r.Problem)
		return err
	}
	_, err := fmt.Fprintf(w, "OK: %d toy files\n", r.Files)
	return err
}

type toyDataset struct{ files []toyFile }

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

func createToy(ctx context.Context, in registry.Input, path string, o registry.CreateOptions) (*registry.Result, error) {
	opts, err := registry.FormatOptions[toyOptions]("Toy", o.Format)
	if err != nil {
		return nil, err
	}
	if !o.Overwrite {
		if _, err := os.Lstat(path); err == nil {
			return nil, fmt.Errorf("%s: %w", path, fs.ErrExist)
		}
	}
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
		name := string(r.Name)
		if opts.Upper {
			name = strings.ToUpper(name)
		}
		n++
		_, err := fmt.Fprintf(w, "%s\t%x\n", name, data)
		return err
	}), dataset.Options{Workers: 1})
	if err != nil {
		return nil, err
	}
	w.Flush()
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		return nil, err
	}
	if err := os.WriteFile(path+".count", []byte(fmt.Sprint(n)), 0o644); err != nil {
		return nil, err
	}
	return &registry.Result{Stats: map[string]int{"files": n}, Summary: fmt.Sprintf("%s: %d files", path, n)}, nil
}

func TestToyFormatCLI(t *testing.T) {
	registerToyFormat(t)
	src, payloads := writeShards(t, 2, 3)
	out := t.TempDir()
	toy := filepath.Join(out, "d.toy")

	// tar shards -> toy, through the row model.
	if code, _, stderr := run(t, "convert", "-q", src, toy); code != 0 {
		t.Fatalf("convert to toy: exit %d: %s", code, stderr)
	}
	files, err := readToy(toy)
	if err != nil || len(files) != len(payloads) {
		t.Fatalf("toy holds %d files (%v), want %d", len(files), err, len(payloads))
	}
	// ls and cat.
	code, stdout, stderr := run(t, "ls", toy)
	if code != 0 || strings.Count(stdout, "\n") != len(payloads) || !strings.Contains(stdout, "s000001.cls\t") {
		t.Errorf("ls: exit %d: %q %s", code, stdout, stderr)
	}
	if code, stdout, stderr := run(t, "cat", toy, "s000004.jpg"); code != 0 || stdout != string(payloads["s000004.jpg"]) {
		t.Errorf("cat: exit %d: %s", code, stderr)
	}
	// inspect and verify.
	if code, stdout, _ := runResult(t, "inspect", "--json", toy); code != 0 || stdout != fmt.Sprintf("{\n  \"files\": %d\n}\n", len(payloads)) {
		t.Errorf("inspect: exit %d: %q", code, stdout)
	}
	if code, stdout, _ := run(t, "verify", toy); code != 0 || !strings.Contains(stdout, fmt.Sprintf("OK: %d toy files", len(payloads))) {
		t.Errorf("verify: exit %d: %q", code, stdout)
	}
	// toy -> tar shards, and back byte for byte.
	back := filepath.Join(out, "back")
	if code, _, stderr := run(t, "convert", "-q", toy, back); code != 0 {
		t.Fatalf("convert from toy: exit %d: %s", code, stderr)
	}
	if code, stdout, stderr := run(t, "cat", back, "s000002.cls"); code != 0 || stdout != string(payloads["s000002.cls"]) {
		t.Errorf("cat after the round trip: exit %d: %s", code, stderr)
	}

	// The overwrite rule, over the toy's own outputs: its second file
	// alone is refused by name, and --force replaces both.
	os.Remove(toy)
	code, _, stderr = run(t, "convert", "-q", src, toy)
	if code != ExitData || !strings.Contains(stderr, toy+".count exists; --force replaces it") {
		t.Errorf("existing .count: exit %d: %s", code, stderr)
	}
	if _, err := os.Stat(toy); err == nil {
		t.Errorf("%s written despite the refusal", toy)
	}
	// Its option: a flag that applies to writing it, typed when it gets
	// there, refused elsewhere.
	if code, _, stderr := run(t, "convert", "-q", "--force", "--toy-upper", src, toy); code != 0 {
		t.Fatalf("--force --toy-upper: exit %d: %s", code, stderr)
	}
	if files, _ := readToy(toy); len(files) == 0 || files[0].name != strings.ToUpper(files[0].name) {
		t.Errorf("--toy-upper: %v", files)
	}
	code, _, stderr = run(t, "convert", "-q", "--toy-upper", src, filepath.Join(out, "x.tbl"))
	if code != ExitUsage || !strings.Contains(stderr, "--toy-upper applies to writing Toy") {
		t.Errorf("--toy-upper into TBL: exit %d: %s", code, stderr)
	}
	// An input the toy would replace is refused.
	if code, _, stderr := run(t, "convert", "-q", "--force", "--to", "toy", toy, toy); code != ExitUsage {
		t.Errorf("output is input: exit %d: %s", code, stderr)
	}

	// A damaged toy is a corrupt Toy, by its name, and verify fails.
	bad := filepath.Join(out, "bad.toy")
	os.WriteFile(bad, []byte("garbage"), 0o644)
	if code, _, stderr := run(t, "inspect", bad); code != ExitData || !strings.Contains(stderr, "corrupt Toy") {
		t.Errorf("inspect damaged: exit %d: %s", code, stderr)
	}
	os.WriteFile(toy+".count", []byte("0"), 0o644)
	if code, stdout, _ := run(t, "verify", toy); code != ExitData || !strings.Contains(stdout, "count mismatch") {
		t.Errorf("verify damaged: exit %d: %q", code, stdout)
	}
}

// TestUnknownTargetFormat: a target format no package registered has no
// outputs to guess (it was once taken for a directory of tar folds).
func TestUnknownTargetFormat(t *testing.T) {
	dst := filepath.Join(t.TempDir(), "out")
	os.WriteFile(dst, []byte("x"), 0o644)
	_, err := targetOutputs(dst, convertFlags{to: "nosuch"}, nil)
	if !errors.Is(err, convert.ErrUnknownFormat) {
		t.Errorf("targetOutputs(unknown format): %v, want ErrUnknownFormat", err)
	}
	fl := convertFlags{to: "nosuch"}
	if err := checkOverwrite(nil, dst, fl); !errors.Is(err, convert.ErrUnknownFormat) {
		t.Errorf("checkOverwrite(unknown format): %v, want ErrUnknownFormat", err)
	}
	if code, _, stderr := run(t, "convert", "--to", "nosuch", dst, dst+"2"); code != ExitUsage || !strings.Contains(stderr, `unknown format "nosuch"`) {
		t.Errorf("--to nosuch: exit %d: %s", code, stderr)
	}
}
