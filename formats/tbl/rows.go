package tbl

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"sync"

	"github.com/itarconv/itarconv/dataset"
)

// Source reads a TBL file as one shard of rows: each sample under its
// v2 metadata name (or "key" plus the format's extension), else
// %09d.<ext> from its index. Metadata other than that name travels in a
// member of its own before the sample's (see MetaSuffix), every block
// kept. Payloads come back decompressed and CRC-checked.
type Source struct {
	Reader *Reader
	// NoData lists the rows without the samples' bytes (a pass that only
	// counts or names them); OpenPayload still reads any one.
	NoData bool

	held dataset.Held // the mappings of batches not yet written

	mu      sync.Mutex
	badJSON []int // samples with a JSON-typed block that does not parse
	nBad    int64
}

// rowFileMode is the mode of every row: TBL stores none.
const rowFileMode = 0o644

// BadJSON returns how many samples have a JSON-typed metadata block that
// does not parse (kept as it is, never used as a name), and the first few
// of them.
func (s *Source) BadJSON() (int64, []int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.nBad, slices.Sorted(slices.Values(s.badJSON))
}

// tblChunk is how many samples one scan reads. Chunks are small (a few
// MiB) so that the workers, which take chunks in turn, read and check
// samples in parallel within the bounded queues instead of one worker
// running ahead while the other waits.
const tblChunk = 256

func (s *Source) NumShards() int { return max(1, (s.Reader.Len()+tblChunk-1)/tblChunk) }
func (s *Source) ShardName(shard int) string {
	return fmt.Sprintf("samples %d-%d", shard*tblChunk, min(s.Reader.Len(), (shard+1)*tblChunk)-1)
}

// Scan reads a chunk of samples on a worker: names from the metadata, and
// the bytes themselves, decompressed and checked where they lie (see
// ViewSamples), so the writer only writes. Rows carry the sample index
// in DataFile; metadata members carry their bytes inline.
func (s *Source) Scan(ctx context.Context, shard int, emit func([]dataset.Row) error) error {
	from, to := shard*tblChunk, min(s.Reader.Len(), (shard+1)*tblChunk)
	views := &Views{Data: make([][]byte, to-from)}
	if !s.NoData {
		var err error
		if views, err = s.Reader.ViewSamples(from, to); err != nil {
			return err
		}
	}
	rows := make([]dataset.Row, 0, 2*(to-from))
	for i := from; i < to; i++ {
		if ctx.Err() != nil {
			views.Release()
			return ctx.Err()
		}
		smp := s.Reader.Sample(i)
		name, blocks, err := s.sampleName(i, smp)
		if err != nil {
			views.Release()
			return err
		}
		if s.Reader.HasMetadata() && !onlyName(blocks, name) {
			meta := EncodeMetaMember(blocks)
			rows = append(rows, dataset.Row{Name: []byte(name + MetaSuffix), Kind: dataset.KindFile, Size: int64(len(meta)),
				Mode: rowFileMode, DataFile: i, Offset: -1, Inline: meta})
		}
		rows = append(rows, dataset.Row{Name: []byte(name), Kind: dataset.KindFile, Size: int64(smp.Size), Mode: rowFileMode,
			DataFile: i, Offset: -1, DataOffset: smp.Offset, Inline: views.Data[i-from]})
	}
	return s.held.Emit(rows, views, emit)
}

// Release gives back the mapped bytes of a written batch.
func (s *Source) Release(b *dataset.Batch) {
	s.held.Release(b)
}

// SampleName is the name sample i gets in a conversion to tar.
func (s *Source) SampleName(i int) (string, error) {
	name, _, err := s.sampleName(i, s.Reader.Sample(i))
	return name, err
}

// sampleName names sample i and returns its metadata blocks.
func (s *Source) sampleName(i int, smp Sample) (string, []MetaEntry, error) {
	fallback := fmt.Sprintf("%09d.%s", i, smp.Format.Ext())
	if s.Reader.Version() < 2 {
		return fallback, nil, nil
	}
	meta, err := s.Reader.Metadata(i)
	if err != nil || len(meta) == 0 {
		return fallback, nil, err
	}
	if hasBadJSON(meta) {
		s.mu.Lock()
		s.nBad++
		if len(s.badJSON) < 5 {
			s.badJSON = append(s.badJSON, i)
		}
		s.mu.Unlock()
	}
	name, other, ok := NameFields(meta)
	if !ok {
		// No name: the first JSON object may give a "key".
		for _, m := range meta {
			if m.Type == MetaJSON && json.Unmarshal(m.Data, &other) == nil {
				break
			}
		}
	}
	if name == "" {
		if key, found := other["key"]; found {
			var k string
			if json.Unmarshal(key, &k) == nil && k != "" {
				name = k + "." + smp.Format.Ext()
			}
		}
	}
	if name == "" {
		name = fallback
	}
	return name, meta, nil
}

// PayloadFile gives where an uncompressed sample's bytes lie in the TBL
// file (FileRegions).
func (s *Source) PayloadFile(r *dataset.Row) (*os.File, int64, bool) {
	f := s.Reader.File()
	if f == nil || r.Offset != -1 || r.DataFile < 0 || r.DataFile >= s.Reader.Len() {
		return nil, 0, false
	}
	smp := s.Reader.Sample(r.DataFile)
	if smp.Compressed || smp.Offset != r.DataOffset || int64(smp.StoredSize) != r.Size {
		return nil, 0, false // a metadata member, or a compressed sample
	}
	return f, smp.Offset, true
}

func (s *Source) OpenPayload(r *dataset.Row) (io.Reader, error) {
	return s.Reader.OpenSample(r.DataFile)
}

// Held is the number of batches whose mapped bytes are not yet released:
// zero once a Run is over.
func (s *Source) Held() int { return s.held.Len() }
