package tbl

import (
	"cmp"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/itarconv/itarconv/internal/filecopy"
	"github.com/itarconv/itarconv/internal/pathguard"
	"github.com/itarconv/itarconv/internal/safefile"
	"github.com/itarconv/itarconv/internal/syswrite"
)

// MergeStats describes what MergeParts did beyond the RowsStats of the
// file it wrote.
type MergeStats struct {
	Parts int `json:"parts"`
	// BytesCopied counts the samples' bytes copied from the parts' files
	// as ranges (in the kernel where the system allows), unchanged.
	BytesCopied int64 `json:"bytes_copied"`
	// Linked tells that one part's file became the output as it is (a hard
	// link: every other part had no sample); BytesLinked is its size.
	Linked      bool  `json:"linked"`
	BytesLinked int64 `json:"bytes_linked"`
	// What the merge rewrote: the index entries (their offsets, and a
	// sample flag where a member paired across a boundary), and the
	// metadata section (block headers renumbered, blocks copied).
	EntriesRewritten int64 `json:"entries_rewritten"`
	MetaBytes        int64 `json:"metadata_bytes"`
	// BoundaryMembers counts the metadata members that a task ended on and
	// that went to the sample opening a later task's share, as in a single
	// run: their own samples were dropped from their parts.
	BoundaryMembers int `json:"boundary_members"`
	// InPlace tells that the tasks wrote the samples into the output's
	// data file themselves (WriteRange): the merge wrote the metadata
	// section and the header, and renamed the file; BytesInPlace is the
	// samples' bytes it left where they were.
	InPlace      bool  `json:"in_place"`
	BytesInPlace int64 `json:"bytes_in_place"`
}

// MergeParts joins the parts WritePart wrote (their directories, in task
// order) into one TBL file at out: byte for byte what WriteRows writes
// over all the rows, and the same RowsStats. opts must have the format
// options every part was written with (Progress and Select are not
// used; Workers bounds the parts written at once, each by a goroutine). The samples' bytes are copied as ranges of the parts' files
// (internal/filecopy), the index and metadata section written anew; when a
// single part has samples, its file becomes the output as it is (a hard
// link where the file system allows). The output is written under a
// temporary name and renamed into place when complete, replacing any file
// at out as WriteRows does; on an error nothing is left at out (an earlier
// file there is untouched). The parts are only read. Errors about a part
// name its directory and file and wrap ErrPart.
//
// Parts written in place (WriteRange) are merged without any copy of the
// samples: the run's data file, where the tasks wrote the index and the
// samples, gets the metadata section and the header and is renamed to
// out (mergeInPlace); the parts of one run are all of one kind.
func MergeParts(ctx context.Context, parts []string, out string, opts RowsOptions) (*RowsStats, *MergeStats, error) {
	if opts.Version == 0 {
		opts.Version = 2
	}
	if opts.Version != 1 && opts.Version != 2 {
		return nil, nil, fmt.Errorf("merging into %s: version %d (1 or 2)", out, opts.Version)
	}
	if opts.Version == 1 && opts.LZ4 {
		return nil, nil, fmt.Errorf("merging into %s: version 1 has no compression: %w", out, ErrUnrepresentable)
	}
	if len(parts) == 0 {
		return nil, nil, fmt.Errorf("merging into %s: no parts", out)
	}
	m := &merger{opts: opts, out: out, hdrLen: int64(headerLen(opts.Version)), entLen: int64(entryLen(opts.Version)),
		stats: &RowsStats{Output: out, Version: opts.Version, Formats: map[string]int64{}, Skipped: map[string]int64{},
			NamesKept: opts.Version == 2 && !opts.NoNames},
		mstats: &MergeStats{Parts: len(parts)}}
	defer m.close()
	for _, dir := range parts {
		if err := ctx.Err(); err != nil {
			return nil, nil, err
		}
		p, err := openPart(dir, opts)
		if err != nil {
			return nil, nil, err
		}
		m.parts = append(m.parts, p)
	}
	for _, p := range m.parts {
		if (p.info.InPlace != nil) != (m.parts[0].info.InPlace != nil) {
			return nil, nil, p.errf(partInfoName, -1, "written in place %v, the first part %v: parts of two runs", p.info.InPlace != nil, m.parts[0].info.InPlace != nil)
		}
	}
	if err := m.pair(); err != nil {
		return nil, nil, err
	}
	var err error
	if m.parts[0].info.InPlace != nil {
		if _, err := os.Lstat(out); err == nil && !opts.Overwrite {
			return nil, nil, fmt.Errorf("%s: %w", out, safefile.ErrExists)
		}
		if err := m.mergeInPlace(ctx); err != nil {
			return nil, nil, err
		}
		return m.stats, m.mstats, nil
	}
	if only := m.onlyPart(); only != nil {
		err = m.link(ctx, only)
	} else {
		err = m.write(ctx)
	}
	if err != nil {
		return nil, nil, err
	}
	return m.stats, m.mstats, nil
}

// mergePart is one part being merged.
type mergePart struct {
	dir      string
	info     *partInfo
	f        *os.File // part.tbl
	hdr      Header
	dataEnd  int64 // where part.tbl's data ends (its metadata section, or its end)
	lastSize int64 // the stored size of its last sample

	// Decided by pair, as the single run's pairing decides.
	dropLast bool        // its last sample is a metadata member given to a later part's first sample
	head     []MetaEntry // the blocks of its first sample, given by an earlier part's member
	headSet  bool
	// headFields holds the index fields that member gives its first
	// sample, if any.
	headFields *Member
}

func (p *mergePart) errf(file string, off int64, format string, args ...any) error {
	where := filepath.Join(p.dir, file)
	if off >= 0 {
		return fmt.Errorf("%s: offset %d: %s: %w", where, off, fmt.Sprintf(format, args...), ErrPart)
	}
	return fmt.Errorf("%s: %s: %w", where, fmt.Sprintf(format, args...), ErrPart)
}

// openPart reads a part's record and checks part.tbl's header against it.
func openPart(dir string, opts RowsOptions) (*mergePart, error) {
	p := &mergePart{dir: dir}
	data, err := readSmall(filepath.Join(dir, partInfoName), partInfoMax)
	if err != nil {
		return nil, fmt.Errorf("%s: %w: %w", dir, err, ErrPart)
	}
	if p.info, err = decodePartInfo(data); err != nil {
		return nil, p.errf(partInfoName, -1, "%v", err)
	}
	if err := p.info.options(opts); err != nil {
		return nil, p.errf(partInfoName, -1, "%v", err)
	}
	if p.info.InPlace != nil {
		// Its samples are in the run's data file, checked by the merge.
		return p, nil
	}
	if p.f, err = pathguard.Open(filepath.Join(dir, partTBLName)); err != nil {
		return nil, fmt.Errorf("%w: %w", err, ErrPart)
	}
	if err := p.checkHeader(); err != nil {
		p.f.Close()
		return nil, err
	}
	return p, nil
}

// readSmall reads a whole file of at most limit bytes.
func readSmall(path string, limit int64) ([]byte, error) {
	f, err := pathguard.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("%s: more than %d bytes", path, limit)
	}
	return data, nil
}

// checkHeader reads part.tbl's header and checks it against the record
// and the layout the Writer gives: header, index, data, metadata section,
// nothing after.
func (p *mergePart) checkHeader() error {
	fi, err := p.f.Stat()
	if err != nil {
		return fmt.Errorf("%s: %w: %w", p.f.Name(), err, ErrPart)
	}
	info := p.info
	if fi.Size() != info.FileSize {
		return p.errf(partTBLName, fi.Size(), "%d bytes, the part recorded %d: cut short or changed since it was written", fi.Size(), info.FileSize)
	}
	v := info.TBLVersion
	b := make([]byte, headerLen(v))
	if _, err := p.f.ReadAt(b, 0); err != nil {
		return p.errf(partTBLName, 0, "reading the header: %v", err)
	}
	le := binary.LittleEndian
	magic := MagicV2
	if v == 1 {
		magic = MagicV1
	}
	if string(b[:4]) != magic || le.Uint32(b[4:]) != uint32(v) {
		return p.errf(partTBLName, 0, "not a TBL v%d header", v)
	}
	h := Header{Version: v, NumSamples: le.Uint64(b[8:]), HeaderSize: le.Uint32(b[16:])}
	if v == 2 {
		h.MetadataOffset, h.MetadataSize = le.Uint64(b[24:]), le.Uint64(b[32:])
		h.Flags, h.CRC32 = le.Uint32(b[40:]), le.Uint32(b[44:])
		if headerCRC(b) != h.CRC32 {
			return p.errf(partTBLName, 44, "header CRC-32 %08x, computed %08x", h.CRC32, headerCRC(b))
		}
	}
	p.hdr = h
	hdrEnd := int64(headerLen(v)) + info.Samples*int64(entryLen(v))
	switch {
	case h.NumSamples != uint64(info.Samples):
		return p.errf(partTBLName, 8, "%d samples, the part recorded %d", h.NumSamples, info.Samples)
	case int64(h.HeaderSize) != hdrEnd:
		return p.errf(partTBLName, 16, "header size %d, want %d", h.HeaderSize, hdrEnd)
	}
	p.dataEnd = info.FileSize
	want := uint32(0)
	if v == 2 {
		want = FlagHasChecksums
		if info.LZ4 {
			want |= FlagCompressed
		}
		if h.MetadataSize > 0 {
			want |= FlagHasMetadata
			if h.MetadataOffset < uint64(hdrEnd) || h.MetadataOffset+h.MetadataSize != uint64(info.FileSize) {
				return p.errf(partTBLName, 24, "a metadata section of %d bytes at %d in a file of %d", h.MetadataSize, h.MetadataOffset, info.FileSize)
			}
			p.dataEnd = int64(h.MetadataOffset)
		} else if h.MetadataOffset != 0 {
			return p.errf(partTBLName, 24, "an empty metadata section at %d", h.MetadataOffset)
		}
	}
	if h.Flags != want {
		return p.errf(partTBLName, 40, "header flags %#x, want %#x", h.Flags, want)
	}
	if info.Samples > 0 {
		// The last sample's size: what a member paired across a boundary
		// takes out of the part's data.
		e := make([]byte, entryLen(v))
		at := hdrEnd - int64(len(e))
		if _, err := p.f.ReadAt(e, at); err != nil {
			return p.errf(partTBLName, at, "reading the last entry: %v", err)
		}
		s := decodeEntry(e, v, int(info.Samples-1))
		p.lastSize = int64(s.StoredSize)
		if s.Offset+p.lastSize != p.dataEnd {
			return p.errf(partTBLName, at, "the last sample ends at %d, the data at %d", s.Offset+p.lastSize, p.dataEnd)
		}
	}
	return nil
}

// merger joins parts.
type merger struct {
	opts           RowsOptions
	out            string
	parts          []*mergePart
	hdrLen, entLen int64
	stats          *RowsStats
	mstats         *MergeStats
}

func (m *merger) close() {
	for _, p := range m.parts {
		if p.f != nil {
			p.f.Close()
		}
	}
}

// names tells whether the output keeps metadata blocks.
func (m *merger) names() bool { return m.opts.Version == 2 && !m.opts.NoNames }

// pair follows metadata members across the parts as the single run's
// pairing follows them across rows: a member a part ends on waits through
// parts without rows, and goes to the next part's first row if that is
// its sample.
func (m *merger) pair() error {
	var waiting *mergePart
	for _, p := range m.parts {
		first := p.info.First
		if first == nil {
			continue // no rows: the member waits on
		}
		if w := waiting; w != nil {
			target := strings.TrimSuffix(string(w.info.Trailing.Name), MetaSuffix)
			if first.Sample && !first.Meta && string(first.Name) == target {
				w.dropLast = true
				m.mstats.BoundaryMembers++
				m.stats.MetaMembers++
				t := w.info.Trailing
				switch {
				case t.NoBlocks: // the sample keeps its name's block
				case !m.names():
					if t.Blocks > 0 {
						m.stats.MetaDropped++
					}
				default:
					blocks, err := w.trailingBlocks()
					if err != nil {
						return err
					}
					p.head, p.headSet = blocks, true
				}
				if mm := t.member(); mm.HasFormat || mm.HasDims {
					p.headFields = &mm
				}
			}
		}
		waiting = nil
		if p.info.Trailing != nil {
			waiting = p
		}
	}
	for _, p := range m.parts {
		m.stats.MetaMembers += p.info.MetaMembers
		m.stats.MetaDropped += p.info.MetaDropped
		for k, n := range p.info.Skipped {
			m.stats.Skipped[k] += n
		}
		m.stats.Samples += p.info.Samples
		if p.dropLast && p.info.InPlace == nil {
			m.stats.Samples-- // its last sample is the member's, dropped
		}
	}
	limit := int64(MaxSamplesV2)
	if m.opts.Version == 1 {
		limit = MaxSamplesV1
	}
	if m.stats.Samples > limit {
		return fmt.Errorf("merging into %s: %d samples: a v%d index holds at most %d (its size is a 32-bit field): %w",
			m.out, m.stats.Samples, m.opts.Version, limit, ErrUnrepresentable)
	}
	return nil
}

// trailingBlocks reads the blocks of the member a part ends on.
func (p *mergePart) trailingBlocks() ([]MetaEntry, error) {
	t := p.info.Trailing
	data, err := readSmall(filepath.Join(p.dir, partTrailingName), metaMemberMax*2)
	if err != nil {
		return nil, fmt.Errorf("%s: %w: %w", p.dir, err, ErrPart)
	}
	if int64(len(data)) != t.Size {
		return nil, p.errf(partTrailingName, int64(len(data)), "%d bytes, the part recorded %d: cut short or changed", len(data), t.Size)
	}
	blocks, err := parseBlocks(data, t.Blocks)
	if err != nil {
		return nil, p.errf(partTrailingName, -1, "%v", err)
	}
	return blocks, nil
}

// onlyPart returns the part whose file is the output unchanged: the one
// part with samples (no member can then pair across parts), or the first
// when none has any (every part's file is then the same empty TBL).
func (m *merger) onlyPart() *mergePart {
	var only *mergePart
	for _, p := range m.parts {
		if p.info.Samples > 0 {
			if only != nil {
				return nil
			}
			only = p
		}
	}
	if only == nil {
		only = m.parts[0]
	}
	return only
}

// link makes p's file the output: a hard link renamed into place, or a
// copy where the file system does not link.
func (m *merger) link(ctx context.Context, p *mergePart) error {
	if err := m.scanIndex(ctx, p, nil, nil); err != nil { // the stats, and a check of the index
		return err
	}
	dir, base := filepath.Split(m.out)
	if dir == "" {
		dir = "."
	}
	safefile.SweepLeftovers(dir)
	tmp := filepath.Join(dir, strings.TrimSuffix(safefile.TempName(base), "*")+"link")
	os.Remove(tmp)
	if err := os.Link(p.f.Name(), tmp); err != nil {
		return m.write(ctx) // another file system, or no links: copy
	}
	rename := safefile.RenameNoReplace
	if m.opts.Overwrite {
		rename = os.Rename
	}
	if err := rename(tmp, m.out); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("writing %s: %w", m.out, err)
	}
	safefile.SyncDir(dir)
	m.mstats.Linked, m.mstats.BytesLinked = true, p.info.FileSize
	return nil
}

// write writes the output: the data of every part as ranges, the index
// and metadata section rewritten, the header last.
func (m *merger) write(ctx context.Context) error {
	// link may have counted the samples before falling back.
	m.stats.Bytes, m.stats.Formats = 0, map[string]int64{}
	f, err := safefile.Create(m.out)
	if err != nil {
		return err
	}
	if err := m.writeBody(ctx, f.File); err != nil {
		f.Abort()
		return err
	}
	if m.opts.Overwrite {
		return f.CommitReplace()
	}
	return f.Commit()
}

func (m *merger) writeBody(ctx context.Context, out *os.File) error {
	n := m.stats.Samples
	dataStart := m.hdrLen + n*m.entLen
	// Where each part's entries, bytes and blocks go is known before any
	// is written (its blocks' size once its metadata section is walked):
	// the parts are then written at once, each by a goroutine of its own
	// (up to Workers), and their figures added up after, in order.
	w := &partWrites{m: m, out: out, at: make([]partPlace, len(m.parts))}
	idx, at := m.hdrLen, dataStart
	var sample uint64 // the output's number of each part's first sample
	for k, p := range m.parts {
		size := p.dataEnd - int64(p.hdr.HeaderSize)
		if p.dropLast {
			size -= p.lastSize
		}
		w.at[k] = partPlace{index: idx, data: at, size: size, first: sample}
		kept := p.info.Samples
		if p.dropLast {
			kept--
		}
		idx += kept * m.entLen
		at += size
		sample += uint64(kept)
	}
	h := Header{Version: m.opts.Version, NumSamples: uint64(n), HeaderSize: uint32(dataStart)}
	if m.opts.Version == 2 {
		if err := w.each(ctx, w.metaSize); err != nil {
			return err
		}
		meta := at
		for k := range w.at {
			w.at[k].meta = meta
			meta += w.at[k].metaSize
		}
		h.Flags = FlagHasChecksums
		if m.opts.LZ4 {
			h.Flags |= FlagCompressed
		}
		if size := meta - at; size > 0 {
			h.Flags |= FlagHasMetadata
			h.MetadataOffset, h.MetadataSize = uint64(at), uint64(size)
			m.mstats.MetaBytes = size
		}
	}
	if err := w.each(ctx, w.write); err != nil {
		return err
	}
	for k := range w.at {
		pl := &w.at[k]
		m.stats.Bytes += pl.bytes
		for f, c := range pl.formats {
			if c > 0 {
				m.stats.Formats[strings.ToLower(Format(f).String())] += c
			}
		}
		m.mstats.BytesCopied += pl.size
		m.mstats.EntriesRewritten += pl.entries
	}
	if _, err := out.WriteAt(marshalHeader(&h), 0); err != nil {
		return fmt.Errorf("writing %s: %w", m.out, err)
	}
	return nil
}

// partWrites writes the parts of a merge, each where partPlace says.
type partWrites struct {
	m   *merger
	out *os.File
	at  []partPlace // by part
}

// partPlace is where a part goes in the output, and what it held.
type partPlace struct {
	index, data, meta int64 // where its entries, bytes and blocks go
	size              int64 // its bytes
	metaSize          int64 // its blocks' (the output's)
	first             uint64

	bytes   int64 // its samples' uncompressed bytes
	formats [256]int64
	entries int64
}

// each runs fn on every part, several at once, and gives the error of
// the first part that failed.
func (w *partWrites) each(ctx context.Context, fn func(ctx context.Context, k int) error) error {
	workers := cmp.Or(max(w.m.opts.Workers, 0), runtime.GOMAXPROCS(0))
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	errs := make([]error, len(w.at))
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(workers, len(w.at)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				k := int(next.Add(1) - 1)
				if k >= len(w.at) {
					return
				}
				if errs[k] = fn(ctx, k); errs[k] != nil {
					cancel()
				}
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil && !errors.Is(err, context.Canceled) {
			return err
		}
	}
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// write copies part k's bytes and writes its entries and blocks.
func (w *partWrites) write(ctx context.Context, k int) error {
	m, p, pl := w.m, w.m.parts[k], &w.at[k]
	if pl.size > 0 {
		if _, err := filecopy.RangeContext(ctx, w.out, pl.data, p.f, int64(p.hdr.HeaderSize), pl.size); err != nil {
			return fmt.Errorf("copying %s's data into %s: %w", p.f.Name(), m.out, err)
		}
	}
	index := &posWriter{f: w.out, off: pl.index}
	shift := pl.data - int64(p.hdr.HeaderSize)
	if err := m.scanIndex(ctx, p, pl, func(i int64, e []byte) error {
		le := binary.LittleEndian
		le.PutUint64(e, le.Uint64(e)+uint64(shift))
		if i == 0 && p.headSet {
			e[21] &^= SampleHasMetadata
			if len(p.head) > 0 {
				e[21] |= SampleHasMetadata
			}
		}
		pl.entries++
		_, err := index.Write(e)
		return err
	}); err != nil {
		return err
	}
	if err := index.flush(); err != nil {
		return fmt.Errorf("writing %s: %w", m.out, err)
	}
	if m.opts.Version != 2 {
		return nil
	}
	meta := &posWriter{f: w.out, off: pl.meta}
	if err := m.copyMeta(ctx, p, meta, pl.first); err != nil {
		return err
	}
	if err := meta.flush(); err != nil {
		return fmt.Errorf("writing %s: %w", m.out, err)
	}
	if meta.off != pl.meta+pl.metaSize {
		return p.errf(partTBLName, int64(p.hdr.MetadataOffset), "its metadata section changed while it was merged")
	}
	return nil
}

// metaSize sets the size part k's blocks take in the output, by a walk
// of their headers (copyMeta's, with nothing written).
func (w *partWrites) metaSize(ctx context.Context, k int) error {
	var sz sizeWriter
	if err := w.m.walkMeta(ctx, w.m.parts[k], &sz, w.at[k].first, false); err != nil {
		return err
	}
	w.at[k].metaSize = int64(sz)
	return nil
}

// sizeWriter counts what is written to it.
type sizeWriter int64

func (s *sizeWriter) Write(b []byte) (int, error) {
	*s += sizeWriter(len(b))
	return len(b), nil
}

// scanIndex reads p's index entries but a dropped last one, checks that
// they lie back to back over the data region as the Writer lays them,
// counts them in the stats, and hands each to fn (if not nil) to rewrite.
func (m *merger) scanIndex(ctx context.Context, p *mergePart, pl *partPlace, fn func(i int64, e []byte) error) error {
	v := m.opts.Version
	n := p.info.Samples
	if p.dropLast {
		n--
	}
	sc := &scanner{f: p.f, off: m.hdrLen, end: m.hdrLen + n*m.entLen}
	next := int64(p.hdr.HeaderSize)
	if pl == nil {
		// Counted into the stats at once.
		pl = &partPlace{}
		defer func() {
			m.stats.Bytes += pl.bytes
			for f, k := range pl.formats {
				if k > 0 {
					m.stats.Formats[strings.ToLower(Format(f).String())] += k
				}
			}
		}()
	}
	for i := range n {
		if i%4096 == 0 && ctx.Err() != nil {
			return ctx.Err()
		}
		at := sc.off
		e, err := sc.next(int(m.entLen))
		if err != nil {
			return p.errf(partTBLName, at, "index entry %d: %v", i, err)
		}
		if i == 0 && p.headFields != nil {
			p.headFields.applyEntry(e, v)
		}
		s := decodeEntry(e, v, int(i))
		if s.Offset != next {
			return p.errf(partTBLName, at, "sample %d at offset %d, want %d (samples lie back to back)", i, s.Offset, next)
		}
		next += int64(s.StoredSize)
		if next > p.dataEnd {
			return p.errf(partTBLName, at, "sample %d ends at %d, past the data's end %d", i, next, p.dataEnd)
		}
		size := int64(binary.LittleEndian.Uint32(e[8:]))
		if v == 2 {
			size = int64(binary.LittleEndian.Uint32(e[12:]))
		}
		pl.bytes += size
		pl.formats[s.Format]++
		if fn != nil {
			if err := fn(i, e); err != nil {
				return fmt.Errorf("writing %s: %w", m.out, err)
			}
		}
	}
	if want := p.dataEnd - p.lastSizeIf(p.dropLast); next != want {
		return p.errf(partTBLName, int64(p.hdr.HeaderSize), "the samples end at %d, the data at %d", next, want)
	}
	return nil
}

func (p *mergePart) lastSizeIf(dropped bool) int64 {
	if dropped {
		return p.lastSize
	}
	return 0
}

// bigBlock is the size from which a metadata block is copied as a range
// of the part's file rather than through the buffer.
const bigBlock = 64 << 10

// copyMeta writes p's metadata blocks to meta, numbered from first: those
// of its first sample replaced by the blocks a member gave it, those of a
// dropped last sample left out.
func (m *merger) copyMeta(ctx context.Context, p *mergePart, meta *posWriter, first uint64) error {
	if err := m.walkMeta(ctx, p, meta, first, true); err != nil {
		return err
	}
	return meta.err
}

// blockWriter is where walkMeta writes the blocks: a posWriter, or a
// sizeWriter that only counts them.
type blockWriter interface {
	Write(b []byte) (int, error)
	copyRange(src *os.File, off, n int64) error
}

func (s *sizeWriter) copyRange(_ *os.File, _, n int64) error {
	*s += sizeWriter(n)
	return nil
}

// walkMeta is copyMeta into any blockWriter; without data, the blocks'
// bytes are not read, only counted (copyRange).
func (m *merger) walkMeta(ctx context.Context, p *mergePart, meta blockWriter, first uint64, data bool) error {
	var hb []byte
	if p.headSet {
		for _, b := range p.head {
			hb = appendBlockHeader(hb[:0], first, uint32(len(b.Data)), b.Type)
			meta.Write(hb)
			meta.Write(b.Data)
		}
	}
	if p.hdr.MetadataSize == 0 {
		return nil
	}
	sc := &scanner{f: p.f, off: int64(p.hdr.MetadataOffset), end: p.info.FileSize}
	n := uint64(p.info.Samples)
	return m.copyMetaBlocks(ctx, p, partTBLName, sc, meta, data, 0, n, fmt.Sprintf("in a part of %d samples", n), func(h []byte, sample uint64) []byte {
		if (sample == 0 && p.headSet) || (p.dropLast && sample == n-1) {
			return nil
		}
		return appendBlockHeader(hb[:0], first+sample, binary.LittleEndian.Uint32(h[8:]), binary.LittleEndian.Uint16(h[12:]))
	})
}

// copyMetaBlocks copies the metadata blocks sc reads (of part p's file
// name) into meta: each block's header checked (samples lo to hi-1, in
// order; span says so in messages), then handed to header, which returns
// the header the block is written under, or nil to leave the block out;
// a large block's body (every body, without data) is copied in the
// kernel, a small one through the scanner.
func (m *merger) copyMetaBlocks(ctx context.Context, p *mergePart, name string, sc *scanner, meta blockWriter, data bool, lo, hi uint64, span string, header func(h []byte, sample uint64) []byte) error {
	le := binary.LittleEndian
	prev := lo
	for blocks := 0; sc.off < sc.end; blocks++ {
		if blocks%4096 == 0 && ctx.Err() != nil {
			return ctx.Err()
		}
		at := sc.off
		h, err := sc.next(MetaBlockLen)
		if err != nil {
			return p.errf(name, at, "metadata block header: %v", err)
		}
		sample, size := le.Uint64(h), le.Uint32(h[8:])
		if sample < prev || sample >= hi || h[14] != 0 || h[15] != 0 {
			return p.errf(name, at, "a metadata block of sample %d after sample %d's, %s", sample, prev, span)
		}
		prev = sample
		if int64(size) > sc.end-sc.off {
			return p.errf(name, at, "a metadata block of %d bytes, %d left", size, sc.end-sc.off)
		}
		hdr := header(h, sample)
		if hdr == nil {
			sc.skip(int64(size))
			continue
		}
		meta.Write(hdr)
		if size >= bigBlock || !data {
			if err := meta.copyRange(sc.f, sc.off, int64(size)); err != nil {
				return fmt.Errorf("copying %s's metadata into %s: %w", sc.f.Name(), m.out, err)
			}
			sc.skip(int64(size))
			continue
		}
		b, err := sc.next(int(size))
		if err != nil {
			return p.errf(name, at, "metadata block: %v", err)
		}
		meta.Write(b)
	}
	return nil
}

// scanner reads a region of a file front to back through a window, for
// the small records of an index or metadata section.
type scanner struct {
	f        *os.File
	off, end int64 // the next byte to hand out, the region's end
	buf      []byte
	lo       int64 // the file offset of buf[0]
}

const scanWindow = 256 << 10

// next returns the n bytes at the scanner's offset (n at most the window),
// valid until the next call.
func (s *scanner) next(n int) ([]byte, error) {
	if int64(n) > s.end-s.off {
		return nil, fmt.Errorf("%d bytes wanted, %d left in the region", n, s.end-s.off)
	}
	if s.off < s.lo || s.off+int64(n) > s.lo+int64(len(s.buf)) {
		size := max(int64(n), min(scanWindow, s.end-s.off))
		if int64(cap(s.buf)) < size {
			s.buf = make([]byte, size)
		}
		s.buf = s.buf[:size]
		if k, err := s.f.ReadAt(s.buf, s.off); int64(k) < size {
			if err == nil || err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return nil, fmt.Errorf("reading %d bytes at %d: %v", size, s.off, err)
		}
		s.lo = s.off
	}
	b := s.buf[s.off-s.lo : s.off-s.lo+int64(n)]
	s.off += int64(n)
	return b, nil
}

func (s *scanner) skip(n int64) { s.off += n }

// posWriter writes front to back from an offset of a file through a
// buffer, so that the index and the metadata section, which lie at
// offsets known in advance, are written in large writes.
type posWriter struct {
	f   *os.File
	off int64 // where buf goes
	buf []byte
	err error
}

func (w *posWriter) Write(b []byte) (int, error) {
	if w.err != nil {
		return 0, w.err
	}
	if w.buf == nil {
		w.buf = make([]byte, 0, 1<<20)
	}
	if len(w.buf)+len(b) > cap(w.buf) {
		if err := w.flush(); err != nil {
			return 0, err
		}
		if len(b) > cap(w.buf) {
			if _, err := syswrite.WriteAt(w.f, b, w.off); err != nil {
				w.err = err
				return 0, err
			}
			w.off += int64(len(b))
			return len(b), nil
		}
	}
	w.buf = append(w.buf, b...)
	return len(b), nil
}

func (w *posWriter) flush() error {
	if w.err != nil || len(w.buf) == 0 {
		return w.err
	}
	if _, err := syswrite.WriteAt(w.f, w.buf, w.off); err != nil {
		w.err = err
		return err
	}
	w.off += int64(len(w.buf))
	w.buf = w.buf[:0]
	return nil
}

// copyRange copies n bytes at off of src after what was written.
func (w *posWriter) copyRange(src *os.File, off, n int64) error {
	if err := w.flush(); err != nil {
		return err
	}
	if _, err := filecopy.Range(w.f, w.off, src, off, n); err != nil {
		w.err = err
		return err
	}
	w.off += n
	return nil
}
