package formattest

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/itarconv/itarconv/dataset"
	"github.com/itarconv/itarconv/formats/registry"
	"github.com/itarconv/itarconv/internal/pathguard"
)

// The toy format is the smallest format that passes the suite: "TOY1",
// then each file as a name and its bytes (u32 lengths, little-endian),
// then the CRC-32 of all that. Its bugs (a toy with one) are what the
// suite must find.
type toyBugs struct {
	detectByName    bool // Detect looks at the name only
	clobber         bool // Create replaces an existing file without Overwrite
	inPlace         bool // Create writes at the path itself, no temporary
	ignoreCtx       bool // Create and List never look at the context
	followFIFO      bool // Open opens what it is given, FIFO or not
	trustLengths    bool // Open slices by the lengths the file claims
	noChecksum      bool // Open and Verify never check the CRC
	unwrapped       bool // Create's errors lose what they wrap (%v)
	truncateOnWrite bool // Create leaves out the last file
}

const toyMagic = "TOY1"

func registerToy(t interface{ Cleanup(func()) }, name string, bugs toyBugs) {
	x := &toy{bugs: bugs}
	registry.Register(&registry.Format{Name: name, Label: "Toy", Detect: x.detect,
		Claims: func(path string) bool { return strings.HasSuffix(path, ".toy") },
		Open:   x.open, Create: x.create, Verify: x.verify,
		Inspect: func(ctx context.Context, path string) (registry.Report, error) {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			_, err := x.read(path)
			return nil, err
		}})
	t.Cleanup(func() { registry.Unregister(name) })
}

type toy struct{ bugs toyBugs }

func (x *toy) detect(path string) bool {
	if x.bugs.detectByName {
		return strings.HasSuffix(path, ".toy")
	}
	b, ok := registry.Head(path, len(toyMagic))
	return ok && string(b) == toyMagic
}

var errToy = errors.New("not a toy file")

// read reads and checks a toy file.
func (x *toy) read(path string) ([]File, error) {
	var b []byte
	var err error
	if x.bugs.followFIFO {
		b, err = os.ReadFile(path)
	} else {
		var f *os.File
		if f, err = pathguard.Open(path); err == nil {
			b, err = io.ReadAll(f)
			f.Close()
		}
	}
	if err != nil {
		return nil, err
	}
	if len(b) < len(toyMagic)+4 || string(b[:4]) != toyMagic {
		return nil, fmt.Errorf("%s: %w", path, errToy)
	}
	body := b[:len(b)-4]
	if !x.bugs.noChecksum && crc32.ChecksumIEEE(body) != binary.LittleEndian.Uint32(b[len(b)-4:]) {
		return nil, fmt.Errorf("%s: checksum mismatch: %w", path, registry.ErrVerify)
	}
	var files []File
	for off := 4; off < len(body); {
		field := func() ([]byte, error) {
			if !x.bugs.trustLengths && off+4 > len(body) {
				return nil, fmt.Errorf("%s, offset %d: %w", path, off, errToy)
			}
			n := int(binary.LittleEndian.Uint32(body[off:]))
			off += 4
			if !x.bugs.trustLengths && n > len(body)-off {
				return nil, fmt.Errorf("%s, offset %d: %w", path, off, errToy)
			}
			v := body[off : off+n]
			off += n
			return v, nil
		}
		name, err := field()
		if err != nil {
			return nil, err
		}
		data, err := field()
		if err != nil {
			return nil, err
		}
		files = append(files, File{string(name), bytes.Clone(data)})
	}
	return files, nil
}

func (x *toy) verify(ctx context.Context, path string) (registry.Report, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	_, err := x.read(path)
	return nil, err
}

func (x *toy) open(paths []string, _ registry.OpenOptions) (registry.Dataset, error) {
	if len(paths) != 1 {
		return nil, fmt.Errorf("toy takes one path")
	}
	files, err := x.read(paths[0])
	if err != nil {
		return nil, err
	}
	return &toyDataset{x: x, in: Rows{Shards: []Shard{files}}, path: paths[0]}, nil
}

type toyDataset struct {
	x    *toy
	in   Rows
	path string
}

func (d *toyDataset) Rows(listing bool) (dataset.PayloadSource, error) { return d.in.Rows(listing) }

func (d *toyDataset) List(ctx context.Context, fn func(registry.Entry) error) error {
	for _, f := range d.in.Shards[0] {
		if err := ctx.Err(); err != nil && !d.x.bugs.ignoreCtx {
			return err
		}
		if err := fn(registry.Entry{Name: f.Name, Size: int64(len(f.Data))}); err != nil {
			return err
		}
	}
	return nil
}

func (d *toyDataset) ReadEntry(name string) ([]byte, error) {
	for _, f := range d.in.Shards[0] {
		if f.Name == name {
			return f.Data, nil
		}
	}
	return nil, fmt.Errorf("%s: no %s: %w", d.path, name, fs.ErrNotExist)
}

func (d *toyDataset) Size() int64        { return 0 }
func (d *toyDataset) Unit() string       { return "files" }
func (d *toyDataset) Warnings() []string { return nil }
func (d *toyDataset) Close() error       { return nil }

// create writes a temporary file beside path and renames it into place
// once complete.
func (x *toy) create(ctx context.Context, in registry.Input, path string, o registry.CreateOptions) (*registry.Result, error) {
	if !o.Overwrite && !x.bugs.clobber {
		if _, err := os.Lstat(path); err == nil {
			return nil, fmt.Errorf("%s: %w", path, fs.ErrExist)
		}
	}
	wrap := func(err error) error {
		if x.bugs.unwrapped {
			return fmt.Errorf("%s: %v", path, err)
		}
		return fmt.Errorf("%s: %w", path, err)
	}
	if !x.bugs.ignoreCtx {
		if err := ctx.Err(); err != nil {
			return nil, wrap(err)
		}
	} else {
		ctx = context.Background()
	}
	if x.bugs.inPlace {
		// The output appears at once, and stays when a row fails.
		f, err := os.Create(path)
		if err != nil {
			return nil, err
		}
		f.Close()
	}
	src, err := in.Rows(false)
	if err != nil {
		return nil, err
	}
	defer registry.CloseSource(src)
	var files []File
	err = dataset.Run(ctx, src, dataset.RowFunc(func(_ int, r *dataset.Row) error {
		b, err := payload(src, r)
		files = append(files, File{string(r.Name), b})
		return err
	}), dataset.Options{Workers: 1})
	if err != nil {
		return nil, wrap(err)
	}
	if x.bugs.truncateOnWrite {
		files = files[:len(files)-1]
	}
	body := []byte(toyMagic)
	for _, f := range files {
		body = binary.LittleEndian.AppendUint32(body, uint32(len(f.Name)))
		body = append(body, f.Name...)
		body = binary.LittleEndian.AppendUint32(body, uint32(len(f.Data)))
		body = append(body, f.Data...)
	}
	body = binary.LittleEndian.AppendUint32(body, crc32.ChecksumIEEE(body))
	if x.bugs.inPlace {
		return &registry.Result{}, os.WriteFile(path, body, 0o644)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".toy-*")
	if err != nil {
		return nil, err
	}
	defer os.Remove(tmp.Name())
	_, err = tmp.Write(body)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		return nil, err
	}
	return &registry.Result{Summary: fmt.Sprintf("%d files", len(files))}, nil
}
