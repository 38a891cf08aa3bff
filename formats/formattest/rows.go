package formattest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"testing"

	"github.com/itarconv/itarconv/dataset"
	"github.com/itarconv/itarconv/formats/registry"
)

// File is one file of a sample dataset: its name in the dataset and its
// bytes.
type File struct {
	Name string
	Data []byte
}

// Shard is a shard of a sample dataset: its files, in order.
type Shard []File

// Files are the files of shards, in dataset order.
func Files(shards []Shard) []File {
	var all []File
	for _, s := range shards {
		all = append(all, s...)
	}
	return all
}

// Sample is the default sample dataset: two shards of WebDataset-style
// samples (a key, then one member per extension), names in order by key
// and within a key by extension, of a few sizes (an empty payload, one
// past a 512-byte block).
func Sample() []Shard {
	return sample("", 0)
}

// sample makes a sample whose names start with prefix and whose bytes
// are salted, so that two samples differ in both.
func sample(prefix string, salt byte) []Shard {
	var shards []Shard
	key := 0
	for s := 0; s < 2; s++ {
		var sh Shard
		for i := 0; i < 3; i++ {
			k := fmt.Sprintf("%s%06d", prefix, key)
			cls := []byte(fmt.Sprintf("%d", key%7))
			img := make([]byte, 1+key*300)
			for j := range img {
				img[j] = byte(j*31+key) ^ salt
			}
			if key == 1 {
				img = img[:0]
			}
			sh = append(sh, File{k + ".cls", cls}, File{k + ".jpg", img}, File{k + ".json", []byte(fmt.Sprintf(`{"key":%q}`, k))})
			key++
		}
		shards = append(shards, sh)
	}
	return shards
}

// ErrInjected is the error a failing source returns (Rows' FailAfter).
var ErrInjected = errors.New("formattest: injected source error")

// Rows is a dataset held in memory, as a registry.Input: each call of
// Rows returns a new source over the same rows.
type Rows struct {
	Shards []Shard
	// FailAfter, when positive, makes a source's scan fail with
	// ErrInjected once it has emitted that many rows (counted across
	// shards); FailPayload makes the payload of that row fail instead.
	FailAfter   int
	FailPayload bool
	// OnRow is called as each row is emitted (a test cancels a context
	// there).
	OnRow func(n int)
}

// Name is what a summary calls the input.
func (r *Rows) Name() string { return "formattest rows" }

// Rows returns a new source over the rows.
func (r *Rows) Rows(bool) (dataset.PayloadSource, error) {
	return &source{r: r}, nil
}

type source struct {
	r *Rows
}

func (s *source) NumShards() int             { return len(s.r.Shards) }
func (s *source) ShardName(shard int) string { return fmt.Sprintf("formattest shard %d", shard) }

// Scan emits a shard's files one row a batch, so that a failure or a
// cancellation comes between rows.
func (s *source) Scan(ctx context.Context, shard int, emit func([]dataset.Row) error) error {
	before := 0
	for i := 0; i < shard; i++ {
		before += len(s.r.Shards[i])
	}
	for i, f := range s.r.Shards[shard] {
		n := before + i
		if s.r.FailAfter > 0 && n >= s.r.FailAfter && !s.r.FailPayload {
			return fmt.Errorf("%s, row %d: %w", s.ShardName(shard), i, ErrInjected)
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if s.r.OnRow != nil {
			s.r.OnRow(n)
		}
		row := dataset.Row{Name: []byte(f.Name), Kind: dataset.KindFile, Type: '0', Size: int64(len(f.Data)),
			Mode: 0o644, ModTime: 1700000000, DataFile: shard, Offset: -1, DataOffset: int64(i)}
		if err := emit([]dataset.Row{row}); err != nil {
			return err
		}
	}
	return nil
}

// OpenPayload finds a row's bytes by its shard (DataFile) and place
// (DataOffset).
func (s *source) OpenPayload(r *dataset.Row) (io.Reader, error) {
	if r.DataFile < 0 || r.DataFile >= len(s.r.Shards) || r.DataOffset < 0 || r.DataOffset >= int64(len(s.r.Shards[r.DataFile])) {
		return nil, fmt.Errorf("formattest: no row %d of shard %d", r.DataOffset, r.DataFile)
	}
	if s.r.FailAfter > 0 && s.r.FailPayload {
		n := int(r.DataOffset)
		for i := 0; i < r.DataFile; i++ {
			n += len(s.r.Shards[i])
		}
		if n >= s.r.FailAfter {
			return nil, fmt.Errorf("%s, row %d: %w", s.ShardName(r.DataFile), r.DataOffset, ErrInjected)
		}
	}
	return bytes.NewReader(s.r.Shards[r.DataFile][r.DataOffset].Data), nil
}

// ReadSample reads the dataset at path, of the named registered format,
// as a sample: its files, shard by shard. A format that takes rows of its
// own layout (SCDL's cells) gets its sample from a file of its own so.
func ReadSample(t testing.TB, format, path string) []Shard {
	t.Helper()
	f := registry.Lookup(format)
	if f == nil || f.Open == nil {
		t.Fatalf("no format %q that opens", format)
	}
	ds, err := f.Open([]string{path}, registry.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer ds.Close()
	src, err := ds.Rows(false)
	if err != nil {
		t.Fatal(err)
	}
	defer registry.CloseSource(src)
	shards := make([]Shard, src.NumShards())
	err = dataset.Run(context.Background(), src, dataset.RowFunc(func(shard int, r *dataset.Row) error {
		if r.Kind != dataset.KindFile {
			return nil
		}
		b, err := payload(src, r)
		shards[shard] = append(shards[shard], File{string(r.Name), b})
		return err
	}), dataset.Options{Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	return shards
}

// payload reads a row's payload: its Inline bytes, for a row a source
// makes, else through OpenPayload.
func payload(src dataset.PayloadSource, r *dataset.Row) ([]byte, error) {
	if r.Inline != nil {
		if int64(len(r.Inline)) != r.Size {
			return nil, fmt.Errorf("%d inline bytes, size %d", len(r.Inline), r.Size)
		}
		return bytes.Clone(r.Inline), nil
	}
	return dataset.ReadPayload(src, r)
}
