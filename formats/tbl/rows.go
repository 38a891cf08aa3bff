package tbl

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"sync"

	"github.com/itarconv/itarconv/dataset"
)

// Source reads a TBL file as one shard of rows: each sample under its
// v2 metadata name (or "key" plus the format's extension), else
// %09d.<ext> from its index. Metadata other than that name, and index
// fields that neither the name nor the bytes give back, travel in a
// member of its own before the sample's (see MetaSuffix and Member),
// every block kept. Payloads come back decompressed and CRC-checked.
//
// A name given by the metadata never takes the fallback name of another
// sample that has none: such a given name becomes <stem>~<index>.<ext>
// (see SampleName), its own blocks kept in the metadata member, so that
// no two rows share a name on that account.
type Source struct {
	Reader *Reader
	// NoData lists the rows without the samples' bytes (a pass that only
	// counts or names them); OpenPayload still reads any one.
	NoData bool
	// NameChanged, if set, tells whether the target stores a name
	// otherwise (Barecat writes "./a" as "a"): in a file with metadata,
	// such a sample's blocks, its name's among them, then travel in a
	// metadata member, which gives the name back as it was.
	NameChanged func(name string) bool

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
	// The file first: a message about a row names where it is.
	return fmt.Sprintf("%s, samples %d-%d", s.Reader.path, shard*tblChunk, min(s.Reader.Len(), (shard+1)*tblChunk)-1)
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
		smp, err := s.Reader.entry(i)
		var name string
		var blocks []MetaEntry
		if err == nil {
			name, blocks, err = s.sampleName(i, smp)
		}
		var m Member
		if err == nil {
			if s.Reader.HasMetadata() && (!onlyName(blocks, name) || s.NameChanged != nil && s.NameChanged(name)) {
				m.Blocks, m.Stated = blocks, true
			}
			err = s.indexFields(&m, name, smp, views.Data[i-from])
		}
		if err != nil {
			views.Release()
			return err
		}
		if m.Stated || m.HasFormat || m.HasDims {
			meta := EncodeMember(m)
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

// indexFields sets in m the index fields of smp that a writer would not
// derive from the sample's name and bytes (data; read here when the rows
// carry none and the bytes matter).
func (s *Source) indexFields(m *Member, name string, smp Sample, data []byte) error {
	v := s.Reader.Version()
	f := nameFormat(v, name)
	if smp.Format != f {
		m.Format, m.HasFormat = smp.Format, true
	}
	if v < 2 {
		return nil // no dimensions
	}
	var w, h uint16
	if smp.Size >= 16 && f <= TIFF { // else ImageDimensions is (0, 0)
		if data == nil {
			var err error
			if data, err = s.Reader.ReadSample(smp.Index, nil); err != nil {
				return err
			}
		}
		w, h = ImageDimensions(f, data)
	}
	if w != smp.Width || h != smp.Height {
		m.Width, m.Height, m.HasDims = smp.Width, smp.Height, true
	}
	return nil
}

// SampleName is the name sample i gets in a conversion to tar: the name
// its metadata gives (a "name", else a "key" and the format's extension),
// else its fallback name, %09d.<ext> of its index. A given name equal to
// the fallback name of another sample that has no given name yields: it
// becomes <stem>~<i>.<ext> (<name>~<i> without an extension).
func (s *Source) SampleName(i int) (string, error) {
	name, _, err := s.sampleName(i, s.Reader.Sample(i))
	return name, err
}

// fallbackName is the name of sample i without a given name.
func fallbackName(i int, f Format) string {
	return fmt.Sprintf("%09d.%s", i, f.Ext())
}

// sampleName names sample i and returns its metadata blocks.
func (s *Source) sampleName(i int, smp Sample) (string, []MetaEntry, error) {
	name, meta, err := s.givenName(i, true)
	if err != nil {
		return "", nil, err
	}
	if name == "" {
		return fallbackName(i, smp.Format), meta, nil
	}
	if j, ok := s.fallbackOf(name); ok && j != i {
		// Sample j's fallback name, unless j has a name of its own.
		other, _, err := s.givenName(j, false)
		if err != nil {
			return "", nil, err
		}
		if other == "" {
			if dot := strings.LastIndexByte(name, '.'); dot >= 0 {
				name = fmt.Sprintf("%s~%d%s", name[:dot], i, name[dot:])
			} else {
				name = fmt.Sprintf("%s~%d", name, i)
			}
		}
	}
	return name, meta, nil
}

// fallbackOf tells whose fallback name name is, if anyone's.
func (s *Source) fallbackOf(name string) (int, bool) {
	dot := strings.IndexByte(name, '.')
	if dot < 9 || dot > 19 {
		return 0, false
	}
	j := 0
	for _, c := range []byte(name[:dot]) {
		if c < '0' || c > '9' {
			return 0, false
		}
		j = j*10 + int(c-'0')
		if j >= s.Reader.Len() {
			return 0, false
		}
	}
	return j, fallbackName(j, s.Reader.Sample(j).Format) == name
}

// givenName returns the name sample i's metadata gives it ("" when
// none), and its metadata blocks. count tells whether a block that does
// not parse is counted (BadJSON): once per sample, when it is named.
func (s *Source) givenName(i int, count bool) (string, []MetaEntry, error) {
	if s.Reader.Version() < 2 {
		return "", nil, nil
	}
	meta, err := s.Reader.Metadata(i)
	if err != nil || len(meta) == 0 {
		return "", nil, err
	}
	if count && hasBadJSON(meta) {
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
				smp, err := s.Reader.entry(i)
				if err != nil {
					return "", nil, err
				}
				name = k + "." + smp.Format.Ext()
			}
		}
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
	smp, err := s.Reader.entry(r.DataFile)
	if err != nil || smp.Compressed || smp.Offset != r.DataOffset || int64(smp.StoredSize) != r.Size {
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
