package convert

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/itarconv/itarconv/dataset"
	"github.com/itarconv/itarconv/formats/tarscan"
	"github.com/itarconv/itarconv/formats/tbl"
	"github.com/itarconv/itarconv/internal/mapped"
	"github.com/itarconv/itarconv/internal/pathguard"
)

// TBLOptions tune TarToTBL.
type TBLOptions struct {
	Version int  // 1 or 2 (default 2)
	LZ4     bool // v2: an LZ4 block per sample where it is smaller
	// NoNames leaves v2's metadata section out: member names are lost.
	NoNames bool
	// CompatTurboLoader selects members as TurboLoader's v2 converter does
	// (regular files with a known extension and size > 0, named by their
	// header's name field as a C string), for byte-identical output.
	CompatTurboLoader bool
	Workers           int
	Scan              tarscan.Options
	Progress          func(Progress)
}

// TBLStats describes a conversion to TBL.
type TBLStats struct {
	Output    string           `json:"output"`
	Version   int              `json:"version"`
	Samples   int64            `json:"samples"`
	Bytes     int64            `json:"bytes"`
	Formats   map[string]int64 `json:"formats"`
	Skipped   map[string]int64 `json:"skipped"` // members not converted, by reason
	NamesKept bool             `json:"names_kept"`
	// MetaMembers counts the metadata members whose blocks were given back
	// to their samples (see tbl.MetaSuffix); MetaDropped those a TBL
	// without a metadata section (v1, --no-names) could not keep.
	MetaMembers int64 `json:"metadata_members"`
	MetaDropped int64 `json:"metadata_dropped"`
}

// TarToTBL converts tar shards (in fid order) into one TBL file (see
// ToTBL). The tar source is read in place: headers only for the count,
// payloads mapped a batch at a time for the copy.
func TarToTBL(ctx context.Context, shards []string, out string, opts TBLOptions) (*TBLStats, error) {
	if opts.CompatTurboLoader {
		opts.Scan.HeaderBlocks = true
	}
	return ToTBL(ctx, func(bool) (PayloadSource, error) {
		src := NewTarShards(shards, opts.Scan)
		src.BatchBytes = 2 << 20 // payloads wait in memory between Prepare and Write
		return src, nil
	}, out, opts)
}

// ToTBL converts any source into one TBL file: every file row becomes a
// sample, in the source's order. newSource makes the source of each of the
// two passes: a first one counts the samples (TBL's header and index come
// first: its source may list rows without their bytes, counting is true),
// the second copies them, one sample in memory at a time (TBL's CRC and LZ4
// need the whole sample). Tar shards are read in place; other sources give
// each payload in the row (Row.Inline) or, for large ones, through
// OpenPayload.
func ToTBL(ctx context.Context, newSource func(counting bool) (PayloadSource, error), out string, opts TBLOptions) (*TBLStats, error) {
	if opts.Version == 0 {
		opts.Version = 2
	}
	counting, err := newSource(true)
	if err != nil {
		return nil, err
	}
	tars, _ := counting.(*TarShards)
	if opts.CompatTurboLoader {
		if opts.Version != 2 {
			return nil, fmt.Errorf("--compat turboloader reproduces the v2 converter: it needs TBL version 2")
		}
		if tars == nil {
			return nil, fmt.Errorf("--compat turboloader reproduces the converter of tar shards: the source must be tar")
		}
		opts.NoNames = true // upstream never writes the metadata section
	}
	var paths []string
	if tars != nil {
		paths = tars.Paths
	}
	sel := &tblSelector{compat: opts.CompatTurboLoader, shards: paths, skipped: map[string]int64{}, src: counting}
	var pairing tblPairing
	count := dataset.RowFunc(func(shard int, r *Row) error {
		ok, err := sel.take(shard, r)
		if err != nil {
			return err
		}
		meta := false
		if ok && !opts.CompatTurboLoader {
			if meta, err = sel.isMetaMember(shard, r); err != nil {
				return err
			}
		}
		// A metadata member is no sample when the sample it extends follows.
		if res, _ := pairing.next(string(r.Name), ok, meta, nil); res == pairedFlushed {
			sel.n++
		}
		if ok && !meta {
			sel.n++
		}
		return nil
	})
	err = Run(ctx, counting, count, Options{Workers: opts.Workers})
	closeSource(counting)
	if err != nil {
		return nil, err
	}
	if pairing.pending != nil {
		sel.n++
	}
	src, err := newSource(false)
	if err != nil {
		return nil, err
	}
	defer closeSource(src)
	w, err := tbl.Create(out, tbl.WriterOptions{Version: opts.Version, LZ4: opts.LZ4, NumSamples: int(sel.n)})
	if err != nil {
		return nil, err
	}
	sink := &tblSink{w: w, src: src, sel: &tblSelector{compat: opts.CompatTurboLoader, shards: paths, skipped: map[string]int64{}},
		opts: opts, stats: &TBLStats{Output: out, Version: opts.Version, Formats: map[string]int64{}, NamesKept: opts.Version == 2 && !opts.NoNames}}
	sink.tars, _ = src.(*TarShards)
	err = Run(ctx, src, sink, Options{Workers: opts.Workers, Progress: opts.Progress})
	if err == nil {
		err = sink.flushPending()
	}
	if err != nil {
		w.Abort()
		return nil, err
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	sink.stats.Skipped = sink.sel.skipped
	return sink.stats, nil
}

// closeSource closes a source that holds files open.
func closeSource(src Source) {
	if c, ok := src.(io.Closer); ok {
		c.Close()
	}
}

// tblSelector decides which rows become samples.
type tblSelector struct {
	src     PayloadSource // the source, where it is not tar
	compat  bool
	shards  []string
	n       int64
	skipped map[string]int64
}

// take reports whether a row becomes a sample and counts those that do not.
func (s *tblSelector) take(shard int, r *Row) (bool, error) {
	reason, err := s.reason(shard, r)
	if reason != "" {
		s.skipped[reason]++
	}
	return reason == "" && err == nil, err
}

// reason says why a row does not become a sample ("" when it does). It
// keeps no state, so workers may call it in parallel.
func (s *tblSelector) reason(shard int, r *Row) (string, error) {
	if !s.compat {
		if r.Kind != KindFile {
			return r.Kind.String(), nil
		}
		return "", nil
	}
	// TurboLoader's v2 tool: type '0' or NUL, size > 0, and a known
	// extension after the last dot of the name field read as a C string,
	// which for a 100-byte name runs on into the mode field.
	if r.Type != tarscan.TypeReg && r.Type != tarscan.TypeRegA {
		return "not a regular file", nil
	}
	if r.Size == 0 {
		return "empty", nil
	}
	name, err := s.compatName(shard, r)
	if err != nil {
		return "", err
	}
	if tbl.FormatFromName(name) == tbl.FormatUnknown {
		return "unknown extension", nil
	}
	return "", nil
}

// isMetaMember tells whether a regular member is a metadata member by its
// name and first bytes (read from the shard: the first pass has headers
// only).
func (s *tblSelector) isMetaMember(shard int, r *Row) (bool, error) {
	if !tbl.IsMetaMember(r.Name, r.Size, []byte(tbl.MetaMagic)) {
		return false, nil
	}
	if s.shards == nil { // not tar: the payload is in the row, or read here (the writer's goroutine)
		head := r.Inline
		if head == nil && s.src != nil {
			rd, err := s.src.OpenPayload(r)
			if err != nil {
				return false, err
			}
			head = make([]byte, len(tbl.MetaMagic))
			_, err = io.ReadFull(rd, head)
			if c, ok := rd.(io.Closer); ok {
				c.Close()
			}
			if err != nil {
				return false, err
			}
		}
		return tbl.IsMetaMember(r.Name, r.Size, head), nil
	}
	f, err := pathguard.Open(s.shards[shard])
	if err != nil {
		return false, err
	}
	defer f.Close()
	head := make([]byte, len(tbl.MetaMagic))
	if _, err := f.ReadAt(head, r.DataOffset); err != nil {
		return false, fmt.Errorf("%s: offset %d: reading %q: %w", s.shards[shard], r.DataOffset, r.Name, err)
	}
	return tbl.IsMetaMember(r.Name, r.Size, head), nil
}

// tblPairing follows, in dataset order, the metadata members and the
// samples they extend: a metadata member counts as such only when the
// member right after it is the sample it is named after. Both passes of
// TarToTBL run it, so that they agree on the number of samples.
type tblPairing struct {
	pending *tblPending
}

type tblPending struct {
	target string // the sample the member extends
	name   string
	blocks []tbl.MetaEntry // the second pass's
	raw    []byte          // the member's bytes, should it be a sample after all
	shard  int
	offset int64
}

type pairResult int

const (
	pairedNone    pairResult = iota // no metadata member was waiting
	pairedMatched                   // the waiting member extends this sample
	pairedFlushed                   // the waiting member is an ordinary sample after all
)

// next advances over one member: sample tells whether it becomes a sample,
// meta whether it is a metadata member (p holds it, in the second pass).
// It returns what became of the member that was waiting, and that member.
func (t *tblPairing) next(name string, sample, meta bool, p *tblPending) (pairResult, *tblPending) {
	prev, res := t.pending, pairedNone
	if prev != nil {
		res = pairedFlushed
		if sample && !meta && name == prev.target {
			res = pairedMatched
		}
	}
	t.pending = nil
	if meta {
		if p == nil {
			p = &tblPending{}
		}
		p.target = strings.TrimSuffix(name, tbl.MetaSuffix)
		t.pending = p
	}
	return res, prev
}

// compatName is the member's name as TurboLoader reads it.
func (s *tblSelector) compatName(shard int, r *Row) (string, error) {
	if len(r.Name) < 100 {
		return string(r.Name), nil
	}
	f, err := pathguard.Open(s.shards[shard])
	if err != nil {
		return "", err
	}
	defer f.Close()
	var hdr [tarscan.BlockSize]byte
	if _, err := f.ReadAt(hdr[:], r.Offset); err != nil {
		return "", fmt.Errorf("%s: offset %d: %w", s.shards[shard], r.Offset, err)
	}
	if i := bytes.IndexByte(hdr[:], 0); i >= 0 {
		return string(hdr[:i]), nil
	}
	return string(hdr[:]), nil
}

type tblSink struct {
	w       *tbl.Writer
	src     PayloadSource
	tars    *TarShards // src, when it is tar shards: payloads are mapped
	sel     *tblSelector
	opts    TBLOptions
	stats   *TBLStats
	pairing tblPairing // Write's, in dataset order
}

// tblPrepared is one row of a batch, ready to append.
type tblPrepared struct {
	skip   string // why the row is not a sample, or ""
	sample tbl.Prepared
	meta   []tbl.MetaEntry
	// metaMember holds a metadata member's blocks (and bytes, should it be
	// a sample after all); sample is then unset.
	metaMember *tblPending
	// late: the payload is not in the row; the writer reads it
	// (OpenPayload is the writer's alone).
	late bool
}

// Prepare reads each sample of the batch and works out its checksum,
// dimensions and LZ4 block on the worker, so that Write only appends.
func (s *tblSink) Prepare(b *Batch) error {
	p := &tblBatch{samples: make([]tblPrepared, len(b.Rows))}
	b.Prep = p
	out := p.samples
	lo, hi := int64(-1), int64(0)
	for i := range b.Rows {
		r := &b.Rows[i]
		why, err := s.sel.reason(b.Shard, r)
		if err != nil {
			return err
		}
		out[i].skip = why
		if why == "" && r.Size > 0 {
			if lo < 0 {
				lo = r.DataOffset
			}
			lo, hi = min(lo, r.DataOffset), max(hi, r.DataOffset+r.Size)
		}
	}
	if s.tars == nil {
		// Not tar: the payload is in the row, or the writer reads it.
		for i := range b.Rows {
			r := &b.Rows[i]
			switch {
			case out[i].skip != "":
			case r.Inline == nil && r.Size > 0:
				out[i].late = true
			default:
				if err := s.prepare(b.Shard, r, &out[i], nil, nil); err != nil {
					return err
				}
			}
		}
		return nil
	}
	if lo < 0 {
		// Empty samples only: nothing to read, but each has its metadata.
		for i := range b.Rows {
			if out[i].skip == "" {
				if err := s.prepare(b.Shard, &b.Rows[i], &out[i], nil, nil); err != nil {
					return err
				}
			}
		}
		return nil
	}
	f, err := pathguard.Open(s.tars.Paths[b.Shard])
	if err != nil {
		return err
	}
	defer f.Close()
	// The batch's payloads are checked and written from the page cache
	// (mapped) rather than copied into memory first; where mapping is
	// not possible, each is read.
	p.region, err = mapped.Map(f, lo, hi-lo)
	if err != nil && !errors.Is(err, mapped.ErrUnsupported) {
		return err
	}
	var r *Row
	err = mapped.Guard(func() error {
		for i := range b.Rows {
			if r = &b.Rows[i]; out[i].skip == "" {
				if err := s.prepare(b.Shard, r, &out[i], f, p.region); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if errors.Is(err, mapped.ErrGone) {
		err = fmt.Errorf("%s: %q, payload at offset %d: %w", s.where(b.Shard), r.Name, r.DataOffset, err)
	}
	if err != nil {
		p.region.Close()
	}
	return err
}

// tblBatch is what Prepare worked out for a batch.
type tblBatch struct {
	samples []tblPrepared
	region  *mapped.Region // the mapped payloads, nil if read
}

// prepare works out one sample: its bytes from the region (or read from
// f), format, dimensions, checksum and LZ4 block.
func (s *tblSink) prepare(shard int, r *Row, out *tblPrepared, f *os.File, region *mapped.Region) error {
	var data []byte
	switch {
	case r.Size == 0:
	case r.Inline != nil:
		data = r.Inline
	case region != nil:
		data = region.Bytes(r.DataOffset, r.Size)
	default:
		data = make([]byte, r.Size)
		if _, err := f.ReadAt(data, r.DataOffset); err != nil {
			return fmt.Errorf("%s: offset %d: reading %q: %w", s.where(shard), r.Offset, r.Name, err)
		}
	}
	name := string(r.Name)
	if !s.opts.CompatTurboLoader && tbl.IsMetaMember(r.Name, r.Size, data) {
		blocks, err := tbl.DecodeMetaMember(data)
		if err != nil {
			return fmt.Errorf("%s: offset %d: %q: %w", s.where(shard), r.Offset, name, err)
		}
		out.metaMember = &tblPending{name: name, blocks: blocks, raw: bytes.Clone(data), shard: shard, offset: r.Offset}
		return nil
	}
	var err error
	out.sample, out.meta, err = s.prepareSample(name, data)
	if err != nil {
		return fmt.Errorf("%s: offset %d: %q: %w", s.where(shard), r.Offset, name, err)
	}
	return nil
}

// prepareSample works out a sample's format, dimensions, checksum and LZ4
// block, and the metadata block that keeps its name.
func (s *tblSink) prepareSample(name string, data []byte) (tbl.Prepared, []tbl.MetaEntry, error) {
	format := tbl.FormatFromName(name)
	if s.opts.Version == 1 && format > tbl.TIFF {
		format = tbl.FormatUnknown // v1 knows formats up to TIFF
	}
	var width, height uint16
	var meta []tbl.MetaEntry
	if s.opts.Version == 2 {
		width, height = tbl.ImageDimensions(format, data)
		if !s.opts.NoNames {
			meta = []tbl.MetaEntry{tbl.NameMeta(name)}
		}
	}
	p, err := tbl.PrepareSample(s.opts.Version, s.opts.LZ4, format, width, height, data)
	return p, meta, err
}

func (s *tblSink) EndShard(int) error { return nil }

func (s *tblSink) Write(b *Batch) error {
	prep := b.Prep.(*tblBatch)
	// The writer copies what it is given: the mapping can go after. Bytes
	// a shrunk shard lost fault when copied.
	defer prep.region.Close()
	err := mapped.Guard(func() error { return s.write(b, prep) })
	if errors.Is(err, mapped.ErrGone) {
		err = fmt.Errorf("%s: %w", s.where(b.Shard), err)
	}
	return err
}

func (s *tblSink) write(b *Batch, prep *tblBatch) error {
	for i, p := range prep.samples {
		r := &b.Rows[i]
		res, prev := s.pairing.next(string(r.Name), p.skip == "", p.metaMember != nil, p.metaMember)
		if res == pairedFlushed {
			if err := s.addOrdinary(prev); err != nil {
				return err
			}
		}
		if p.skip != "" {
			s.sel.skipped[p.skip]++
			continue
		}
		if p.metaMember != nil {
			continue // waits for the member after it
		}
		if p.late {
			var err error
			if p.sample, p.meta, err = s.readLate(r); err != nil {
				return fmt.Errorf("%s: %q: %w", s.where(b.Shard), r.Name, err)
			}
		}
		meta := p.meta
		if res == pairedMatched {
			s.stats.MetaMembers++
			if s.opts.Version == 2 && !s.opts.NoNames {
				meta = prev.blocks
			} else {
				s.stats.MetaDropped++
			}
		}
		if err := s.add(p.sample, meta); err != nil {
			return fmt.Errorf("%s: offset %d: %q: %w", s.where(b.Shard), r.Offset, r.Name, err)
		}
	}
	return nil
}

func (s *tblSink) add(p tbl.Prepared, meta []tbl.MetaEntry) error {
	if err := s.w.AddPrepared(p, meta); err != nil {
		return err
	}
	p.Release() // the writer has copied it
	s.stats.Samples++
	s.stats.Bytes += int64(p.Size)
	s.stats.Formats[strings.ToLower(p.Format.String())]++
	return nil
}

// where names a shard of the source in messages: a tar shard's path.
func (s *tblSink) where(shard int) string {
	if s.tars != nil {
		return s.tars.Paths[shard]
	}
	return s.src.ShardName(shard)
}

// readLate reads a payload the row does not carry (a large file of a
// source that reads in place), on the writer, and prepares the sample.
func (s *tblSink) readLate(r *Row) (tbl.Prepared, []tbl.MetaEntry, error) {
	data, err := dataset.ReadPayload(s.src, r)
	if err != nil {
		return tbl.Prepared{}, nil, err
	}
	return s.prepareSample(string(r.Name), data)
}

// addOrdinary writes a member that looked like a metadata member but is
// not followed by its sample: it is a sample like any other.
func (s *tblSink) addOrdinary(m *tblPending) error {
	p, meta, err := s.prepareSample(m.name, m.raw)
	if err == nil {
		err = s.add(p, meta)
	}
	if err != nil {
		return fmt.Errorf("%s: offset %d: %q: %w", s.where(m.shard), m.offset, m.name, err)
	}
	return nil
}

// flushPending writes a metadata member left waiting at the end.
func (s *tblSink) flushPending() error {
	m := s.pairing.pending
	s.pairing.pending = nil
	if m == nil {
		return nil
	}
	return s.addOrdinary(m)
}
