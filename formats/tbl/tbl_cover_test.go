package tbl

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/itarconv/itarconv/dataset"
	"github.com/itarconv/itarconv/formats/registry"
)

// coverRows is an input of inline files in shards of two.
type coverRows struct{ names, bodies []string }

func (c coverRows) Rows(bool) (dataset.PayloadSource, error) { return &coverSource{c}, nil }

type coverSource struct{ c coverRows }

func (s *coverSource) NumShards() int         { return (len(s.c.names) + 1) / 2 }
func (s *coverSource) ShardName(i int) string { return fmt.Sprint("shard", i) }
func (s *coverSource) Scan(_ context.Context, shard int, emit func([]dataset.Row) error) error {
	var rows []dataset.Row
	for i := 2 * shard; i < min(2*shard+2, len(s.c.names)); i++ {
		rows = append(rows, dataset.Row{Name: []byte(s.c.names[i]), Kind: dataset.KindFile, Size: int64(len(s.c.bodies[i])),
			Mode: 0o644, Inline: []byte(s.c.bodies[i]), DataFile: shard})
	}
	return emit(rows)
}
func (s *coverSource) OpenPayload(r *dataset.Row) (io.Reader, error) {
	return bytes.NewReader(r.Inline), nil
}

// TestRegistryRoundTrip: rows written through the registry's Create, and
// by parts merged with MergeParts, give the same file; it opens, lists,
// reads, inspects and verifies through the registry; a damaged byte is a
// verification failure (registry.ErrVerify) the text report calls BROKEN.
func TestRegistryRoundTrip(t *testing.T) {
	f := registry.Lookup("tbl")
	in := coverRows{
		names:  []string{"a/0.jpg", "a/1.txt", "b/2.json", "b/3.bin", "c/4.png"},
		bodies: []string{"\xff\xd8\xff jpeg", "text one", `{"k": 2}`, strings.Repeat("z", 5000), "\x89PNG\r\n\x1a\n png"},
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "a.tbl")
	res, err := f.Create(context.Background(), in, path, registry.CreateOptions{Format: RowsOptions{LZ4: true}})
	if err != nil {
		t.Fatal(err)
	}
	if st := res.Stats.(*RowsStats); st.Samples != 5 || !st.NamesKept || !strings.Contains(res.Summary, "TBL v2, 5 samples") || len(res.Warnings) != 0 {
		t.Errorf("result %+v %+v", res, st)
	}
	if !Detect(path) || Detect(filepath.Join(dir, "nosuch")) || !f.Claims("x.tbl") {
		t.Error("Detect or Claims")
	}
	if _, err := f.Create(context.Background(), in, path, registry.CreateOptions{}); !errors.Is(err, os.ErrExist) {
		t.Errorf("over an existing file: %v, want fs.ErrExist", err)
	}

	var parts []string
	for k := range 2 {
		part := filepath.Join(t.TempDir(), fmt.Sprint("p", k))
		os.Mkdir(part, 0o755)
		sub := coverRows{names: in.names[3*k : min(3*k+3, 5)], bodies: in.bodies[3*k : min(3*k+3, 5)]}
		if _, err := f.CreatePart(context.Background(), sub, part, registry.CreateOptions{Format: RowsOptions{LZ4: true}}); err != nil {
			t.Fatal(err)
		}
		parts = append(parts, part)
	}
	merged := filepath.Join(dir, "m.tbl")
	res, err = f.MergeParts(context.Background(), parts, merged, registry.CreateOptions{Format: RowsOptions{LZ4: true}})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(res.Summary, "from 2 parts") {
		t.Errorf("merge summary %q", res.Summary)
	}
	a, _ := os.ReadFile(path)
	b, _ := os.ReadFile(merged)
	if !bytes.Equal(a, b) {
		t.Errorf("merged file (%d bytes) differs from one run's (%d bytes)", len(b), len(a))
	}

	d, err := f.Open([]string{path}, registry.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	d.List(context.Background(), func(e registry.Entry) error {
		data, err := d.ReadEntry(e.Name)
		names = append(names, fmt.Sprintf("%s=%d", e.Name, len(data)))
		return err
	})
	if got := strings.Join(names, " "); got != "a/0.jpg=8 a/1.txt=8 b/2.json=8 b/3.bin=5000 c/4.png=12" {
		t.Errorf("entries %s", got)
	}
	src, _ := d.Rows(false)
	rows := 0
	dataset.Run(context.Background(), src, dataset.RowFunc(func(_ int, r *dataset.Row) error {
		rows++
		return nil
	}), dataset.Options{})
	if rows != 5 || d.Warnings() != nil {
		t.Errorf("%d rows, warnings %v", rows, d.Warnings())
	}
	d.Close()
	if _, err := f.Open([]string{path, merged}, registry.OpenOptions{}); err == nil || !strings.Contains(err.Error(), "one path, not 2") {
		t.Errorf("two paths: %v", err)
	}

	rep, err := f.Inspect(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	info := rep.(*Info)
	if info.Samples != 5 || info.Version != 2 || info.WithMetadata != 5 || info.MetadataTypes["json"] != 5 || info.Compressed == 0 || info.Ratio <= 1 {
		t.Errorf("info %+v", info)
	}
	var text bytes.Buffer
	info.WriteText(&text)
	if !strings.Contains(text.String(), "samples   5\n") || !strings.Contains(text.String(), "format  samples") {
		t.Errorf("inspect text %q", text.String())
	}
	rep, err = f.Verify(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	text.Reset()
	rep.WriteText(&text)
	if !strings.Contains(text.String(), "OK: 5 samples (bounds, header CRC-32") {
		t.Errorf("verify text %q", text.String())
	}
	// A byte of a payload flipped.
	at := bytes.Index(a, []byte("text one"))
	if at < 0 {
		t.Fatal("payload not stored as it is")
	}
	a[at+2] ^= 0x55
	os.WriteFile(path, a, 0o644)
	rep, err = f.Verify(context.Background(), path)
	if !errors.Is(err, registry.ErrVerify) || rep == nil {
		t.Fatalf("a damaged file: %v", err)
	}
	text.Reset()
	rep.WriteText(&text)
	if !strings.Contains(text.String(), "BROKEN") {
		t.Errorf("verify text %q", text.String())
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := f.Inspect(ctx, merged); !errors.Is(err, context.Canceled) {
		t.Errorf("a canceled inspect: %v", err)
	}
	if _, err := f.Verify(ctx, merged); !errors.Is(err, context.Canceled) {
		t.Errorf("a canceled verify: %v", err)
	}
}

// TestVerifyBadJSON: a JSON-typed metadata block that does not parse is
// damage Verify reports, and a copy warns of it.
func TestVerifyBadJSON(t *testing.T) {
	path := filepath.Join(t.TempDir(), "j.tbl")
	w, err := Create(path, WriterOptions{Version: 2, NumSamples: 2})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Add(FormatUnknown, strings.NewReader("payload"), 7, []MetaEntry{{Type: MetaMsgpack, Data: []byte{0x80}}}); err != nil {
		t.Fatal(err)
	}
	if err := w.Add(FormatUnknown, strings.NewReader("payload"), 7, []MetaEntry{{Type: MetaJSON, Data: []byte("{not json")}}); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	_, err = Verify(context.Background(), path)
	if !errors.Is(err, registry.ErrVerify) || !strings.Contains(err.Error(), "sample 1 block 0") {
		t.Errorf("bad JSON: %v", err)
	}
}
