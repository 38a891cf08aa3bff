package tbl

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/itarconv/itarconv/dataset"
)

// toyMember is one row of the toy sources below.
type toyMember struct {
	name string
	kind dataset.Kind
	data []byte
}

// toyRows is a dataset of no format: its shards are files holding the
// payloads one after the other, with a few bytes of padding between them.
// How the sink is given the bytes depends on the wrapper (toyFiles,
// toyOpener, toyInline).
type toyRows struct {
	paths  []string
	shards [][]toyMember
	rows   [][]dataset.Row
}

func newToyRows(t *testing.T, shards [][]toyMember) *toyRows {
	t.Helper()
	d := &toyRows{shards: shards}
	for i, members := range shards {
		var buf bytes.Buffer
		var rows []dataset.Row
		for _, m := range members {
			buf.WriteString("pad")
			rows = append(rows, dataset.Row{Name: []byte(m.name), Kind: m.kind, Size: int64(len(m.data)), Mode: 0o644,
				DataFile: i, Offset: -1, DataOffset: int64(buf.Len())})
			buf.Write(m.data)
		}
		p := filepath.Join(t.TempDir(), fmt.Sprintf("shard%d.bin", i))
		if err := os.WriteFile(p, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		d.paths, d.rows = append(d.paths, p), append(d.rows, rows)
	}
	return d
}

func (d *toyRows) NumShards() int             { return len(d.rows) }
func (d *toyRows) ShardName(shard int) string { return fmt.Sprintf("toy %d", shard) }
func (d *toyRows) Scan(_ context.Context, shard int, emit func([]dataset.Row) error) error {
	// Two batches a shard, so that a metadata member and its sample may
	// fall in different ones.
	rows := append([]dataset.Row(nil), d.rows[shard]...)
	half := len(rows) / 2
	if err := emit(rows[:half]); err != nil {
		return err
	}
	return emit(rows[half:])
}

// OpenPayload reads the bytes from the shard's file.
func (d *toyRows) OpenPayload(r *dataset.Row) (io.Reader, error) {
	f, err := os.Open(d.paths[r.DataFile])
	if err != nil {
		return nil, err
	}
	return struct {
		io.Reader
		io.Closer
	}{io.NewSectionReader(f, r.DataOffset, r.Size), f}, nil
}

// toyFiles gives the shards' files (dataset.ShardFiles): the sink maps them.
type toyFiles struct {
	*toyRows
	opened *atomic.Int64
}

func (d toyFiles) ShardFile(shard int) (*os.File, error) {
	d.opened.Add(1)
	return os.Open(d.paths[shard])
}

// toyOpener gives the bytes through OpenPayload alone.
type toyOpener struct{ *toyRows }

// toyInline carries the bytes in the rows.
type toyInline struct{ *toyRows }

func (d toyInline) Scan(ctx context.Context, shard int, emit func([]dataset.Row) error) error {
	return d.toyRows.Scan(ctx, shard, func(rows []dataset.Row) error {
		for i := range rows {
			for k, r := range d.rows[shard] {
				if r.Kind == dataset.KindFile && r.DataOffset == rows[i].DataOffset {
					rows[i].Inline = d.shards[shard][k].data
				}
			}
		}
		return emit(rows)
	})
}

// TestWriteRowsFromAnySource: a source whose shards are files (mapped by
// the sink), one that only opens payloads and one that carries them in
// its rows give the same TBL file, byte for byte, with the metadata
// members' blocks given to their samples and a directory skipped.
func TestWriteRowsFromAnySource(t *testing.T) {
	meta := EncodeMetaMember([]MetaEntry{{Type: MetaJSON, Data: []byte(`{"name":"b/x.png","label":7}`)}, {Type: MetaCustom, Data: []byte{0, 1, 2}}})
	shards := [][]toyMember{
		{
			{name: "a.jpg", kind: dataset.KindFile, data: []byte("jpeg bytes")},
			{name: "b", kind: dataset.KindDir},
			{name: "b/x.png" + MetaSuffix, kind: dataset.KindFile, data: meta},
			{name: "b/x.png", kind: dataset.KindFile, data: bytes.Repeat([]byte("png "), 3000)},
			{name: "empty.txt", kind: dataset.KindFile},
		},
		{
			{name: "lonely.bin" + MetaSuffix, kind: dataset.KindFile, data: meta}, // no sample after it: a sample itself
			{name: "c.cls", kind: dataset.KindFile, data: []byte("3")},
			{name: "d.bin", kind: dataset.KindFile, data: []byte(strings.Repeat("d", 70000))},
		},
	}
	toy := newToyRows(t, shards)
	var opened atomic.Int64
	sources := map[string]dataset.PayloadSource{
		"files":  toyFiles{toy, &opened},
		"opener": toyOpener{toy},
		"inline": toyInline{toy},
	}
	var want []byte
	for _, name := range []string{"files", "opener", "inline"} {
		for k, opts := range []RowsOptions{{}, {LZ4: true}, {Version: 1}} {
			out := filepath.Join(t.TempDir(), name+".tbl")
			src := sources[name]
			st, err := WriteRows(context.Background(), func(bool) (dataset.PayloadSource, error) { return src, nil }, out, opts)
			if err != nil {
				t.Fatalf("%s %+v: %v", name, opts, err)
			}
			if st.Samples != 6 || st.Skipped["dir"] != 1 || st.MetaMembers != 1 || st.MetaDropped != int64(k/2) {
				t.Errorf("%s %+v: stats %+v", name, opts, st)
			}
			got, err := os.ReadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			if k == 0 {
				if want == nil {
					want = got
				} else if !bytes.Equal(got, want) {
					t.Errorf("%s: %d bytes differ from the mapped source's %d", name, len(got), len(want))
				}
				r, err := Open(out)
				if err != nil {
					t.Fatal(err)
				}
				if err := r.Verify(); err != nil {
					t.Errorf("%s: %v", name, err)
				}
				if m, err := r.Metadata(1); err != nil || len(m) != 2 || m[1].Type != MetaCustom {
					t.Errorf("%s: sample 1's metadata %v, %v: want the member's two blocks", name, m, err)
				}
				r.Close()
			}
		}
	}
	if opened.Load() == 0 {
		t.Error("the sink never asked a ShardFiles source for its files")
	}
}
