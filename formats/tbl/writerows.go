package tbl

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path"
	"runtime"
	"strings"

	"github.com/itarconv/itarconv/dataset"
	"github.com/itarconv/itarconv/formats/registry"
	"github.com/itarconv/itarconv/formats/tarfile"
	"github.com/itarconv/itarconv/internal/human"
	"github.com/itarconv/itarconv/internal/mapped"
)

// RowsOptions tune WriteRows.
type RowsOptions struct {
	Version int  // 1 or 2 (default 2)
	LZ4     bool // v2: an LZ4 block per sample where it is smaller
	// NoNames leaves v2's metadata section out: row names are lost.
	NoNames bool
	// NoMetaMembers takes metadata members (MetaSuffix) as samples like
	// any other, rather than giving their blocks to the sample after them.
	NoMetaMembers bool
	// Compat names a converter whose output to reproduce byte for byte:
	// "turboloader", TurboLoader's v2 converter of tar shards. Package
	// convert's converter of tar shards reads it; WriteRows, and the
	// registry's Create from any other rows, refuse it (ErrCompat).
	Compat string
	// Select, if set, decides which rows become samples in place of the
	// default (every file row, and every hard link, a sample with its
	// target's bytes): it returns why a row is not one, or ""
	// when it is. It is called from several goroutines at once, in both
	// passes. (A converter that selects as another tool does sets it.)
	Select func(shard int, r *dataset.Row) (skip string, err error)
	// Overwrite replaces a file of the output's name (--force); without
	// it, the output is committed only where none exists.
	Overwrite bool
	Workers   int
	Progress  func(dataset.Progress)
	// Memory bounds the bytes kept in memory for the whole file until its
	// end: the metadata section (names), which follows the data, is held
	// up to Memory bytes, then goes to a temporary file beside the output
	// (removed at the end, also on error). 0 means DefaultMemory. The
	// index is written in place and nothing else is kept a sample, so
	// memory does not grow with the samples.
	Memory int64
	// Run names the partitioned run a task of WriteRange belongs to,
	// where the caller knows it: a digest of what the run is (its
	// inputs with their sizes and modification times, its options),
	// such as package partition's RunID. The run's tasks share their
	// count of the dataset under it. "": WriteRange digests every
	// shard's name, size and modification time itself.
	Run string
}

// DefaultMemory is RowsOptions.Memory's default.
const DefaultMemory = 16 << 20

// RowsStats describes a TBL file WriteRows wrote.
type RowsStats struct {
	Output    string           `json:"output"`
	Version   int              `json:"version"`
	Samples   int64            `json:"samples"`
	Bytes     int64            `json:"bytes"`
	Formats   map[string]int64 `json:"formats"`
	Skipped   map[string]int64 `json:"skipped"` // rows not converted, by reason
	NamesKept bool             `json:"names_kept"`
	// MetaMembers counts the metadata members whose blocks were given back
	// to their samples (see MetaSuffix); MetaDropped those a TBL without a
	// metadata section (v1, NoNames) could not keep.
	MetaMembers int64 `json:"metadata_members"`
	MetaDropped int64 `json:"metadata_dropped"`
	// Hardlinks counts the hard links written as samples with their
	// target's bytes.
	Hardlinks int64 `json:"hardlinks"`
}

// ErrHardlinkTarget: a hard link whose target is no earlier file of the
// dataset (tar extracts such a link only if the target exists already).
var ErrHardlinkTarget = errors.New("hard link to no earlier file")

// CheckName refuses a row whose name a tar fold could not give back, as
// every converter from tar refuses it (tarfile.CheckName: absolute, with
// a ".." component, or empty), naming where it was found: the shard and
// the record's offset there.
func CheckName(where string, r *dataset.Row) error {
	if tarfile.CheckName(r.Name) == nil {
		return nil
	}
	if r.Offset >= 0 {
		where = fmt.Sprintf("%s: offset %d", where, r.Offset)
	}
	return fmt.Errorf("%s: %s: %w (absolute, empty or with a \"..\" component: it could not come back out)", where, human.NameBytes(r.Name), tarfile.ErrUnsafeName)
}

// linkPath is the path a member name or a hard link's target names, as
// extracting the tar resolves it: "./a//b" is "a/b".
func linkPath(name []byte) string {
	return path.Clean(string(name))
}

// WriteRows writes any source into one TBL file at out: every file row
// becomes a sample, in the source's order, and so does every hard link,
// with the bytes of the latest file of its target's path before it (as
// extracting a tar gives it). newSource makes the source of
// each of the two passes: a first one counts the samples (TBL's header
// and index come first: its source may list rows without their bytes,
// counting is true), the second copies them. A row's bytes come in
// the row (Row.Inline); else, from a source whose shards are files
// (dataset.ShardFiles), each batch's payloads are mapped where they lie;
// else the writer reads them through OpenPayload.
//
// Both passes do a row's work on the workers (Options.Workers): the
// first judges each batch's rows there, the second works out each
// sample's checksum, LZ4 block and metadata there and makes the batch a
// run that placers write where it goes (place.go); the ordered writer
// only adds up counts and gives each batch its place, and follows rows
// one by one only in batches holding a metadata member or a hard link.
// Memory does not grow with the samples: the index is written in place,
// the metadata section too where its start is known before (no LZ4, no
// hard links), and otherwise held up to RowsOptions.Memory, then spilled
// beside the output.
func WriteRows(ctx context.Context, newSource func(counting bool) (dataset.PayloadSource, error), out string, opts RowsOptions) (*RowsStats, error) {
	return writeRows(ctx, newSource, out, opts, nil)
}

// writeRows is WriteRows; edges, if not nil, is told the rows at the two
// ends of the dataset that a metadata member may pair across (WritePart).
func writeRows(ctx context.Context, newSource func(counting bool) (dataset.PayloadSource, error), out string, opts RowsOptions, edges *partEdges) (*RowsStats, error) {
	if opts.Compat != "" {
		return nil, fmt.Errorf("%s: %q: %w", out, opts.Compat, ErrCompat)
	}
	if opts.Version == 0 {
		opts.Version = 2
	}
	counting, err := newSource(true)
	if err != nil {
		return nil, err
	}
	sel := &selector{sel: opts.Select, skipped: map[string]int64{}, src: counting}
	sel.files, _ = counting.(dataset.ShardFiles)
	// The paths hard links name: the copying pass keeps where the latest
	// file of each lies.
	targets := map[string]*dataset.Row{}
	cs := &countSink{sel: sel, src: counting, noMetaMembers: opts.NoMetaMembers, targets: targets}
	err = dataset.Run(ctx, counting, cs, dataset.Options{Workers: opts.Workers})
	registry.CloseSource(counting)
	if err != nil {
		return nil, err
	}
	if cs.pairing.pending != nil {
		sel.n++
		cs.bytes += cs.pending
	}
	// A format code v1 does not define comes only from a metadata member
	// giving a sample's own code back: it is written as it was.
	w, err := Create(out, WriterOptions{Version: opts.Version, LZ4: opts.LZ4, NumSamples: int(sel.n), KeepFormat: true, Replace: opts.Overwrite,
		SpoolMemory: int(min(cmp.Or(max(opts.Memory, 0), DefaultMemory), math.MaxInt32))})
	if err != nil {
		return nil, err
	}
	workers := cmp.Or(max(opts.Workers, 0), runtime.GOMAXPROCS(0))
	if !opts.LZ4 && len(targets) == 0 {
		// Each sample's stored bytes are its row's.
		w.setDataSize(cs.bytes)
	}
	w.setPlacers(workers)
	w.placerCount = workers
	st, err := copyRows(ctx, newSource, w, opts, edges, targets, false)
	if err != nil {
		return nil, err
	}
	st.Output = out
	return st, nil
}

// copyRows is the second pass of WriteRows (and of WriteRange, with w
// writing a task's share): the samples of newSource(false) written
// through w, which it closes (or aborts). A metadata member left waiting
// at the end is written as a sample, unless keepTrailing (the next
// task's first sample takes it: edges.last has it).
func copyRows(ctx context.Context, newSource func(counting bool) (dataset.PayloadSource, error), w *Writer, opts RowsOptions, edges *partEdges, targets map[string]*dataset.Row, keepTrailing bool) (*RowsStats, error) {
	src, err := newSource(false)
	if err != nil {
		w.Abort()
		return nil, err
	}
	defer registry.CloseSource(src)
	sink := &rowsSink{w: w, src: src, sel: &selector{sel: opts.Select, skipped: map[string]int64{}},
		opts: opts, stats: &RowsStats{Version: opts.Version, Formats: map[string]int64{}, NamesKept: opts.Version == 2 && !opts.NoNames},
		edges: edges, targets: targets, targetSet: make(map[string]struct{}, len(targets))}
	for t := range targets {
		sink.targetSet[t] = struct{}{}
	}
	sink.files, _ = src.(dataset.ShardFiles)
	_, sink.copyInline = src.(dataset.Releaser)
	err = dataset.Run(ctx, src, sink, dataset.Options{Workers: opts.Workers, Progress: opts.Progress})
	if err == nil && edges != nil {
		edges.last = sink.pairing.pending
	}
	if err == nil && keepTrailing {
		if sink.pairing.pending == nil {
			err = fmt.Errorf("%s: no metadata member at the end, where the count found one: %w", w.name(), ErrChanged)
		}
		sink.pairing.pending = nil
	} else if err == nil && edges != nil && w.share != nil {
		// Written here as a sample, as the count found: the next part
		// has nothing to take.
		edges.last = nil
	}
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
	sink.countFormats()
	sink.stats.Skipped = sink.sel.skipped
	return sink.stats, nil
}

// selector decides which rows become samples.
type selector struct {
	src     dataset.PayloadSource // the first pass's source, for metadata members' first bytes
	files   dataset.ShardFiles    // src, where its shards are files
	sel     func(shard int, r *dataset.Row) (string, error)
	n       int64
	skipped map[string]int64
}

// take reports whether a row becomes a sample and counts those that do not.
func (s *selector) take(shard int, r *dataset.Row) (bool, error) {
	reason, err := s.reason(shard, r)
	if reason != "" {
		s.skipped[reason]++
	}
	return reason == "" && err == nil, err
}

// reason says why a row does not become a sample ("" when it does). It
// keeps no state, so workers may call it in parallel.
func (s *selector) reason(shard int, r *dataset.Row) (string, error) {
	if s.sel != nil {
		return s.sel(shard, r)
	}
	if r.Kind != dataset.KindFile && r.Kind != dataset.KindHardlink {
		return r.Kind.String(), nil
	}
	return "", nil
}

// isMetaMember tells whether a file row is a metadata member by its name
// and first bytes (the first pass's rows need not carry them: they are
// read from the shard's file, or through OpenPayload on the writer's
// goroutine).
func (s *selector) isMetaMember(shard int, r *dataset.Row) (bool, error) {
	if r.Kind != dataset.KindFile || !IsMetaMember(r.Name, r.Size, []byte(MetaMagic)) {
		return false, nil
	}
	head := r.Inline
	switch {
	case head != nil:
	case s.files != nil:
		f, err := s.files.ShardFile(shard)
		if err != nil {
			return false, err
		}
		defer f.Close()
		head = make([]byte, len(MetaMagic))
		if _, err := f.ReadAt(head, r.DataOffset); err != nil {
			return false, fmt.Errorf("%s: offset %d: reading %q: %w", f.Name(), r.DataOffset, r.Name, err)
		}
	case s.src != nil:
		rd, err := s.src.OpenPayload(r)
		if err != nil {
			return false, err
		}
		head = make([]byte, len(MetaMagic))
		_, err = io.ReadFull(rd, head)
		if c, ok := rd.(io.Closer); ok {
			c.Close()
		}
		if err != nil {
			return false, err
		}
	}
	return IsMetaMember(r.Name, r.Size, head), nil
}

// metaPairing follows, in dataset order, the metadata members and the
// samples they extend: a metadata member counts as such only when the
// row right after it is the sample it is named after. Both passes of
// WriteRows run it, so that they agree on the number of samples.
type metaPairing struct {
	pending *pendingMeta
}

type pendingMeta struct {
	target string // the sample the member extends
	name   string
	member Member // the second pass's
	raw    []byte // the member's bytes, should it be a sample after all
	where  string // its shard, for messages
	offset int64
}

type pairResult int

const (
	pairedNone    pairResult = iota // no metadata member was waiting
	pairedMatched                   // the waiting member extends this sample
	pairedFlushed                   // the waiting member is an ordinary sample after all
)

// next advances over one row: sample tells whether it becomes a sample,
// meta whether it is a metadata member (p holds it, in the second pass).
// It returns what became of the member that was waiting, and that member.
func (t *metaPairing) next(name []byte, sample, meta bool, p *pendingMeta) (pairResult, *pendingMeta) {
	prev, res := t.pending, pairedNone
	if prev != nil {
		res = pairedFlushed
		if sample && !meta && string(name) == prev.target {
			res = pairedMatched
		}
	}
	t.pending = nil
	if meta {
		if p == nil {
			p = &pendingMeta{}
		}
		p.target = strings.TrimSuffix(string(name), MetaSuffix)
		t.pending = p
	}
	return res, prev
}

type rowsSink struct {
	w       *Writer
	src     dataset.PayloadSource
	files   dataset.ShardFiles // src, where its shards are files: payloads are mapped
	sel     *selector
	opts    RowsOptions
	stats   *RowsStats
	pairing metaPairing // Write's, in dataset order
	edges   *partEdges  // WritePart's, else nil
	// targets holds, for each path a hard link names, where the bytes of
	// the latest sample of that path so far lie (nil before there is one).
	targets map[string]*dataset.Row
	// targetSet holds the same paths, for the workers: it is only read.
	targetSet map[string]struct{}
	// copyInline: the source takes back a batch's bytes once it is
	// written (dataset.Releaser), before the run is: large samples are
	// copied (small ones always are).
	copyInline bool
	formats    [256]int64  // samples by format
	b          *runBuilder // the writer's, for a batch it follows row by row
}

// rowPrepared is one row of a batch, ready to append.
type rowPrepared struct {
	skip   string // why the row is not a sample, or ""
	sample Prepared
	meta   []MetaEntry
	// metaMember holds a metadata member's blocks (and bytes, should it be
	// a sample after all); sample is then unset.
	metaMember *pendingMeta
	// late: the payload is not in the row; the writer reads it
	// (OpenPayload is the writer's alone).
	late bool
	// link: a hard link, whose target's bytes the writer reads (linkTo).
	link   bool
	linkTo *dataset.Row
}

// rowsBatch is what Prepare worked out for a batch.
type rowsBatch struct {
	samples []rowPrepared
	region  *mapped.Region // the mapped payloads, nil if read
	where   string         // the shard, for messages: its file's name where it was opened
	// run holds the batch's samples ready to place, when no row needs
	// the writer (no hard link, no metadata member, no payload it reads);
	// then the figures below are the batch's.
	run     *run
	n       int64 // samples
	bytes   int64 // their uncompressed bytes
	formats [RAWU8 + 1]int64
	skipped map[string]int64
	targets []int // the rows that are samples of paths hard links name
}

// Prepare reads each sample of the batch and works out its checksum,
// dimensions and LZ4 block on the worker, so that Write only appends.
func (s *rowsSink) Prepare(b *dataset.Batch) error {
	p := &rowsBatch{samples: make([]rowPrepared, len(b.Rows)), where: s.src.ShardName(b.Shard)}
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
		if why == "" && r.Kind == dataset.KindHardlink {
			out[i].link = true
			continue
		}
		if why == "" && r.Size > 0 && r.Inline == nil {
			if lo < 0 {
				lo = r.DataOffset
			}
			lo, hi = min(lo, r.DataOffset), max(hi, r.DataOffset+r.Size)
		}
	}
	if s.files == nil || lo < 0 {
		// The payload is in the row, or the writer reads it (or there is
		// none: empty samples only, each with its metadata).
		for i := range b.Rows {
			r := &b.Rows[i]
			switch {
			case out[i].skip != "" || out[i].link:
			case r.Inline == nil && r.Size > 0:
				out[i].late = true
			default:
				if err := s.prepare(p.where, r, &out[i], nil, nil); err != nil {
					return err
				}
			}
		}
		return s.makeRun(b, p)
	}
	f, err := s.files.ShardFile(b.Shard)
	if err != nil {
		return err
	}
	defer f.Close()
	p.where = f.Name()
	// The batch's payloads are checked and written from the page cache
	// (mapped) rather than copied into memory first; where mapping is
	// not possible, each is read.
	p.region, err = mapped.Map(f, lo, hi-lo)
	if err != nil && !errors.Is(err, mapped.ErrUnsupported) {
		return err
	}
	var r *dataset.Row
	err = mapped.Guard(func() error {
		for i := range b.Rows {
			if r = &b.Rows[i]; out[i].skip == "" && !out[i].link {
				if err := s.prepare(p.where, r, &out[i], f, p.region); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if errors.Is(err, mapped.ErrGone) {
		err = fmt.Errorf("%s: %q, payload at offset %d: %w", p.where, r.Name, r.DataOffset, err)
	}
	if err == nil {
		err = s.makeRun(b, p)
	}
	if err != nil {
		p.region.Close()
	}
	return err
}

// makeRun makes the batch's samples a run, with the batch's figures,
// unless some row needs the writer. It copies the small samples (from
// the mapping: see mapped.Guard).
func (s *rowsSink) makeRun(b *dataset.Batch, p *rowsBatch) error {
	for i := range p.samples {
		if o := &p.samples[i]; o.skip == "" && (o.link || o.late || o.metaMember != nil || int(o.sample.Format) >= len(p.formats)) {
			return nil
		}
	}
	var small int64 // the bytes the run copies
	for i := range p.samples {
		if o := &p.samples[i]; o.skip == "" && len(o.sample.Stored) <= runSmall {
			small += int64(len(o.sample.Stored))
		}
	}
	rb := newRunBuilder(s.opts.Version, small, len(b.Rows))
	err := mapped.Guard(func() error {
		for i := range p.samples {
			o := &p.samples[i]
			if o.skip != "" {
				if p.skipped == nil {
					p.skipped = map[string]int64{}
				}
				p.skipped[o.skip]++
				continue
			}
			r := &b.Rows[i]
			if err := rb.add(&o.sample, o.meta); err != nil {
				return fmt.Errorf("%s: offset %d: %q: %w", p.where, r.Offset, r.Name, err)
			}
			if len(s.targetSet) > 0 {
				if _, ok := s.targetSet[linkPath(r.Name)]; ok {
					p.targets = append(p.targets, i)
				}
			}
			p.n++
			p.bytes += int64(o.sample.Size)
			p.formats[o.sample.Format]++
		}
		return nil
	})
	if errors.Is(err, mapped.ErrGone) {
		err = fmt.Errorf("%s: %w", p.where, err)
	}
	if err != nil {
		return err
	}
	p.run = rb.done()
	mapped := false // a sample's bytes are still those of the mapping
	for i := range p.samples {
		o := &p.samples[i]
		switch {
		case o.skip != "" || len(o.sample.Stored) <= runSmall:
			if o.sample.block != nil {
				// Copied: the LZ4 block goes back now.
				o.sample.block.release()
				o.sample.block = nil
			}
		case o.sample.block != nil:
			p.run.release = append(p.run.release, o.sample.Release)
		default:
			mapped = true
		}
	}
	if !mapped && p.region != nil {
		// Every byte the run writes is copied: the mapping, and the
		// pages it holds, go now rather than once the run is written.
		p.region.Close()
		p.region = nil
	}
	return nil
}

// prepare works out one sample: its bytes from the row, the region (or
// read from f), format, dimensions, checksum and LZ4 block.
func (s *rowsSink) prepare(where string, r *dataset.Row, out *rowPrepared, f *os.File, region *mapped.Region) error {
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
			return fmt.Errorf("%s: offset %d: reading %q: %w", where, r.Offset, r.Name, err)
		}
	}
	name := string(r.Name)
	if ok, err := s.metaMember(where, r, out, data); ok || err != nil {
		return err
	}
	var err error
	out.sample, out.meta, err = s.prepareSample(name, data)
	if err != nil {
		return fmt.Errorf("%s: offset %d: %q: %w", where, r.Offset, name, err)
	}
	if s.copyInline && r.Inline != nil && !out.sample.Compressed && len(data) > runSmall {
		// The source takes the bytes back once the batch is written;
		// the run is written after.
		out.sample.Stored = bytes.Clone(data)
	}
	return nil
}

// metaMember tells whether a row is a metadata member, by its name and
// bytes, and if so keeps its blocks (and bytes) in out.
func (s *rowsSink) metaMember(where string, r *dataset.Row, out *rowPrepared, data []byte) (bool, error) {
	if s.opts.NoMetaMembers || !IsMetaMember(r.Name, r.Size, data) {
		return false, nil
	}
	m, err := DecodeMember(data)
	if err != nil {
		return false, fmt.Errorf("%s: offset %d: %q: %w", where, r.Offset, r.Name, err)
	}
	out.metaMember = &pendingMeta{name: string(r.Name), member: m, raw: bytes.Clone(data), where: where, offset: r.Offset}
	return true, nil
}

// prepareSample works out a sample's format, dimensions, checksum and LZ4
// block, and the metadata block that keeps its name.
func (s *rowsSink) prepareSample(name string, data []byte) (Prepared, []MetaEntry, error) {
	format := nameFormat(s.opts.Version, name)
	var width, height uint16
	var meta []MetaEntry
	if s.opts.Version == 2 {
		width, height = ImageDimensions(format, data)
		if !s.opts.NoNames {
			meta = []MetaEntry{NameMeta(name)}
		}
	}
	p, err := PrepareSample(s.opts.Version, s.opts.LZ4, format, width, height, data)
	return p, meta, err
}

func (s *rowsSink) EndShard(int) error { return nil }

func (s *rowsSink) Write(b *dataset.Batch) error {
	prep := b.Prep.(*rowsBatch)
	if r := prep.run; r != nil && s.pairing.pending == nil && (s.edges == nil || s.edges.seen) {
		// The whole batch as Prepare made it: its figures added, its
		// place given.
		if prep.region != nil {
			r.release = append(r.release, func() { prep.region.Close() })
		}
		for why, n := range prep.skipped {
			s.sel.skipped[why] += n
		}
		s.stats.Samples += prep.n
		s.stats.Bytes += prep.bytes
		for f, n := range prep.formats {
			s.formats[f] += n
		}
		for _, i := range prep.targets {
			s.keepTarget(b.Shard, &b.Rows[i], &prep.samples[i])
		}
		return s.placeRun(r)
	}
	// Row by row, into a run of the writer's, written with the mapping
	// (which goes after it) and Prepare's LZ4 blocks. Bytes a shrunk
	// shard lost fault when copied.
	s.b = newRunBuilder(s.opts.Version, b.Bytes, len(b.Rows))
	err := mapped.Guard(func() error { return s.write(b, prep) })
	if errors.Is(err, mapped.ErrGone) {
		err = fmt.Errorf("%s: %w", prep.where, err)
	}
	r := s.b.done()
	s.b = nil
	if prep.run != nil {
		r.release = append(r.release, prep.run.release...)
	} else {
		for i := range prep.samples {
			if o := &prep.samples[i]; o.sample.block != nil {
				r.release = append(r.release, o.sample.Release)
			}
		}
	}
	if prep.region != nil {
		r.release = append(r.release, func() { prep.region.Close() })
	}
	if err != nil {
		releaseRun(r)
		return err
	}
	return s.placeRun(r)
}

// placeRun places a run, or releases it if it holds no sample.
func (s *rowsSink) placeRun(r *run) error {
	if r.n == 0 {
		releaseRun(r)
		return nil
	}
	return s.w.place(r)
}

func (s *rowsSink) write(b *dataset.Batch, prep *rowsBatch) error {
	for i := range prep.samples {
		p, r := &prep.samples[i], &b.Rows[i]
		if p.link {
			if err := s.readLink(prep.where, r, p); err != nil {
				return err
			}
		}
		if p.late {
			// Read on the writer: a metadata member too, which the
			// first pass found by its first bytes.
			if err := s.readLate(prep.where, r, p); err != nil {
				return err
			}
		}
		if s.edges != nil && !s.edges.seen {
			s.edges.seen = true
			s.edges.first = edgeRow{Name: bytes.Clone(r.Name), Sample: p.skip == "", Meta: p.metaMember != nil}
		}
		res, prev := s.pairing.next(r.Name, p.skip == "", p.metaMember != nil, p.metaMember)
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
			continue // waits for the row after it
		}
		meta, smp := p.meta, p.sample
		if res == pairedMatched {
			s.stats.MetaMembers++
			switch m := &prev.member; {
			case !m.Stated: // the name's block, as without the member
			case s.opts.Version == 2 && !s.opts.NoNames:
				meta = m.Blocks
			case len(m.Blocks) > 0:
				s.stats.MetaDropped++
			}
			prev.member.apply(&smp, s.opts.Version)
		}
		if err := s.add(smp, meta); err != nil {
			return fmt.Errorf("%s: offset %d: %q: %w", prep.where, r.Offset, r.Name, err)
		}
		s.keepTarget(b.Shard, r, p)
	}
	return nil
}

// keepTarget remembers where the bytes of a sample lie when a hard link
// names its path.
func (s *rowsSink) keepTarget(shard int, r *dataset.Row, p *rowPrepared) {
	if len(s.targets) == 0 {
		return
	}
	t := linkPath(r.Name)
	if _, ok := s.targets[t]; !ok {
		return
	}
	if p.link {
		s.targets[t] = p.linkTo // a link to a link: the same bytes
		return
	}
	at := &dataset.Row{Name: r.Name, Kind: dataset.KindFile, DataFile: r.DataFile, Offset: r.Offset, DataOffset: r.DataOffset, Size: r.Size}
	if r.Inline != nil {
		at.Inline = bytes.Clone(r.Inline)
	}
	s.targets[t] = at
}

// readLink reads the bytes of a hard link's target, the latest sample of
// that path before it, and prepares the link as a sample of its own name.
func (s *rowsSink) readLink(where string, r *dataset.Row, p *rowPrepared) error {
	at := s.targets[linkPath(r.Linkname)]
	if at == nil {
		return fmt.Errorf("%s: offset %d: %q to %q: %w", where, r.Offset, r.Name, r.Linkname, ErrHardlinkTarget)
	}
	data := at.Inline
	if data == nil && at.Size > 0 {
		var err error
		if data, err = dataset.ReadPayload(s.src, at); err != nil {
			return fmt.Errorf("%s: %q, the target of hard link %q: %w", where, at.Name, r.Name, err)
		}
	}
	var err error
	if p.sample, p.meta, err = s.prepareSample(string(r.Name), data); err != nil {
		return fmt.Errorf("%s: offset %d: %q: %w", where, r.Offset, r.Name, err)
	}
	p.linkTo = at
	s.stats.Hardlinks++
	return nil
}

// add appends a sample to the writer's run (s.b). Its bytes stay where
// they are until the run is written.
func (s *rowsSink) add(p Prepared, meta []MetaEntry) error {
	if err := s.b.add(&p, meta); err != nil {
		return err
	}
	s.stats.Samples++
	s.stats.Bytes += int64(p.Size)
	s.formats[p.Format]++
	return nil
}

// countFormats sets the stats' samples by format.
func (s *rowsSink) countFormats() {
	for f, n := range s.formats {
		if n > 0 {
			s.stats.Formats[strings.ToLower(Format(f).String())] += n
		}
	}
}

// readLate reads a payload the row does not carry (a large file of a
// source that reads in place), on the writer, and prepares the sample or
// keeps the metadata member.
func (s *rowsSink) readLate(where string, r *dataset.Row, p *rowPrepared) error {
	data, err := dataset.ReadPayload(s.src, r)
	if err != nil {
		return fmt.Errorf("%s: %q: %w", where, r.Name, err)
	}
	if ok, err := s.metaMember(where, r, p, data); ok || err != nil {
		return err
	}
	if p.sample, p.meta, err = s.prepareSample(string(r.Name), data); err != nil {
		return fmt.Errorf("%s: %q: %w", where, r.Name, err)
	}
	return nil
}

// addOrdinary writes a row that looked like a metadata member but is not
// followed by its sample: it is a sample like any other.
func (s *rowsSink) addOrdinary(m *pendingMeta) error {
	p, meta, err := s.prepareSample(m.name, m.raw)
	if err == nil {
		err = s.add(p, meta)
	}
	if err != nil {
		return fmt.Errorf("%s: offset %d: %q: %w", m.where, m.offset, m.name, err)
	}
	return nil
}

// flushPending writes a metadata member left waiting at the end.
func (s *rowsSink) flushPending() error {
	m := s.pairing.pending
	s.pairing.pending = nil
	if m == nil {
		return nil
	}
	s.b = newRunBuilder(s.opts.Version, int64(len(m.raw)), 1)
	err := s.addOrdinary(m)
	r := s.b.done()
	s.b = nil
	if err != nil {
		releaseRun(r)
		return err
	}
	return s.placeRun(r)
}
