package tbl

import (
	"context"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/itarconv/itarconv/internal/filecopy"
	"github.com/itarconv/itarconv/internal/safefile"
)

// mergeInPlace finishes the shared data file the parts were written into
// (WriteRange): it checks that the parts cover its samples one after the
// other, reads their index entries for the figures (rewriting in place
// the entry of a sample a member across a boundary extends), writes the
// metadata section after the data from the parts' part.meta, the header
// over the first bytes, and renames the file to the output. No sample
// byte is read or copied.
func (m *merger) mergeInPlace(ctx context.Context) error {
	first := m.parts[0].info.InPlace
	var samples, bytes int64
	for _, p := range m.parts {
		ip := p.info.InPlace
		switch {
		case ip == nil:
			return p.errf(partInfoName, -1, "written as a copy, the other parts in place: parts of two runs")
		case ip.Layout != first.Layout || ip.Total != first.Total || ip.DataSize != first.DataSize:
			return p.errf(partInfoName, -1, "written in place for layout %s, the first part for layout %s: parts of two runs", ip.Layout, first.Layout)
		case ip.First != samples || ip.DataOffset != m.hdrLen+ip.Total*m.entLen+bytes:
			return p.errf(partInfoName, -1, "samples from %d at offset %d, the parts before end at sample %d, offset %d", ip.First, ip.DataOffset, samples, m.hdrLen+ip.Total*m.entLen+bytes)
		case p.dropLast != ip.TrailPaired:
			return p.errf(partInfoName, -1, "its last metadata member paired %v, the next part's first row says %v", ip.TrailPaired, p.dropLast)
		}
		samples += p.info.Samples
		bytes += ip.DataBytes
	}
	if samples != first.Total || bytes != first.DataSize || m.stats.Samples != first.Total {
		return fmt.Errorf("%s: the parts hold %d samples of %d bytes, the data file %d of %d: %w", first.Data, samples, bytes, first.Total, first.DataSize, ErrPart)
	}
	dataEnd := m.hdrLen + first.Total*m.entLen + first.DataSize
	// The first part's data file is the output; a part whose file is
	// another (parts gathered from several machines) has its share
	// copied into it: its index entries and its samples' bytes.
	target := filepath.Join(m.parts[0].dir, partDataName)
	f, err := os.OpenFile(target, os.O_RDWR, 0)
	if err != nil {
		return fmt.Errorf("%w (%w)", err, ErrPart)
	}
	defer f.Close()
	tfi, err := f.Stat()
	if err != nil {
		return err
	}
	for _, p := range m.parts[1:] {
		if err := m.gather(ctx, f, tfi, p); err != nil {
			return err
		}
	}
	// Each task's index entries are checked against its record below: a
	// task that did not write its share leaves zeros there. (The file
	// may end before dataEnd: empty samples last.)
	w := &partWrites{m: m, out: f, at: make([]partPlace, len(m.parts))}
	if m.opts.Version == 2 {
		if err := w.each(ctx, w.metaSizeInPlace); err != nil {
			return err
		}
	}
	meta := dataEnd
	for k := range w.at {
		w.at[k].meta = meta
		meta += w.at[k].metaSize
	}
	if err := w.each(ctx, w.finishInPlace); err != nil {
		return err
	}
	h := Header{Version: m.opts.Version, NumSamples: uint64(first.Total), HeaderSize: uint32(m.hdrLen + first.Total*m.entLen)}
	if m.opts.Version == 2 {
		h.Flags = FlagHasChecksums
		if size := meta - dataEnd; size > 0 {
			h.Flags |= FlagHasMetadata
			h.MetadataOffset, h.MetadataSize = uint64(dataEnd), uint64(size)
			m.mstats.MetaBytes = size
		}
	}
	for k := range w.at {
		pl := &w.at[k]
		m.stats.Bytes += pl.bytes
		for c, n := range pl.formats {
			if n > 0 {
				m.stats.Formats[strings.ToLower(Format(c).String())] += n
			}
		}
		m.mstats.EntriesRewritten += pl.entries
	}
	// Cut anything past the metadata section (a file of an earlier try
	// of this merge), then the header: the file is complete.
	if err := f.Truncate(meta); err != nil {
		return fmt.Errorf("writing %s: %w", first.Data, err)
	}
	if _, err := f.WriteAt(marshalHeader(&h), 0); err != nil {
		return fmt.Errorf("writing %s: %w", first.Data, err)
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("writing %s: %w", first.Data, err)
	}
	// The output is one more name of the file (the parts keep theirs
	// until they are removed), else the part's name renamed.
	dir, base := filepath.Split(m.out)
	if dir == "" {
		dir = "."
	}
	tmp := filepath.Join(dir, strings.TrimSuffix(safefile.TempName(base), "*")+"inplace")
	os.Remove(tmp)
	if err := os.Link(target, tmp); err != nil {
		tmp = target
	}
	rename := safefile.RenameNoReplace
	if m.opts.Overwrite {
		rename = os.Rename
	}
	if err := rename(tmp, m.out); err != nil {
		if tmp != target {
			os.Remove(tmp)
		}
		return fmt.Errorf("writing %s: %w", m.out, err)
	}
	safefile.SyncDir(dir)
	// The run's name of the file goes: a task run again must not write
	// into the output.
	if fi, err := os.Stat(first.Data); err == nil && os.SameFile(fi, tfi) {
		os.Remove(first.Data)
	}
	m.mstats.InPlace, m.mstats.BytesInPlace = true, first.DataSize-m.mstats.BytesCopied
	return nil
}

// gather copies part p's share into the output's data file f (of info
// fi), unless p's data file is that file.
func (m *merger) gather(ctx context.Context, f *os.File, fi os.FileInfo, p *mergePart) error {
	src, err := os.Open(filepath.Join(p.dir, partDataName))
	if err != nil {
		return fmt.Errorf("%w (%w)", err, ErrPart)
	}
	defer src.Close()
	sfi, err := src.Stat()
	if err != nil {
		return err
	}
	if os.SameFile(fi, sfi) {
		return nil
	}
	ip := p.info.InPlace
	idx := m.hdrLen + ip.First*m.entLen
	for _, r := range [][2]int64{{idx, p.info.Samples * m.entLen}, {ip.DataOffset, ip.DataBytes}} {
		if r[0]+r[1] > sfi.Size() {
			return p.errf(partDataName, sfi.Size(), "%d bytes, its share ends at %d", sfi.Size(), r[0]+r[1])
		}
		if _, err := filecopy.RangeContext(ctx, f, r[0], src, r[0], r[1]); err != nil {
			return fmt.Errorf("copying %s's share into %s: %w", src.Name(), f.Name(), err)
		}
	}
	m.mstats.BytesCopied += ip.DataBytes
	return nil
}

// metaSizeInPlace sets the size part k's blocks take in the output: its
// part.meta's, but where a member from an earlier part gives its first
// sample blocks of its own.
func (w *partWrites) metaSizeInPlace(ctx context.Context, k int) error {
	p, pl := w.m.parts[k], &w.at[k]
	pl.metaSize = p.info.InPlace.MetaSize
	if !p.headSet {
		return nil
	}
	var sz sizeWriter
	if err := w.m.walkPartMeta(ctx, p, &sz, false); err != nil {
		return err
	}
	pl.metaSize = int64(sz)
	return nil
}

// finishInPlace reads part k's index entries in the data file for the
// figures (and checks them), rewrites its first entry where a member
// extends that sample, and writes its metadata blocks.
func (w *partWrites) finishInPlace(ctx context.Context, k int) error {
	m, p, pl := w.m, w.m.parts[k], &w.at[k]
	ip := p.info.InPlace
	v := m.opts.Version
	sc := &scanner{f: w.out, off: m.hdrLen + ip.First*m.entLen, end: m.hdrLen + (ip.First+p.info.Samples)*m.entLen}
	next := ip.DataOffset
	for i := range p.info.Samples {
		if i%4096 == 0 && ctx.Err() != nil {
			return ctx.Err()
		}
		at := sc.off
		e, err := sc.next(int(m.entLen))
		if err != nil {
			return fmt.Errorf("%s: offset %d: index entry %d: %v: %w", ip.Data, at, ip.First+i, err, ErrPart)
		}
		if i == 0 && (p.headSet || p.headFields != nil) {
			if p.headFields != nil {
				p.headFields.applyEntry(e, v)
			}
			if p.headSet {
				e[21] &^= SampleHasMetadata
				if len(p.head) > 0 {
					e[21] |= SampleHasMetadata
				}
			}
			if _, err := w.out.WriteAt(e, at); err != nil {
				return fmt.Errorf("writing %s: %w", ip.Data, err)
			}
			pl.entries++
		}
		s := decodeEntry(e, v, int(ip.First+i))
		if s.Offset != next {
			return fmt.Errorf("%s: offset %d: sample %d at offset %d, want %d (a task did not write its share, or another run's did): %w", ip.Data, at, ip.First+i, s.Offset, next, ErrPart)
		}
		next += int64(s.StoredSize)
		size := int64(binary.LittleEndian.Uint32(e[8:]))
		if v == 2 {
			size = int64(binary.LittleEndian.Uint32(e[12:]))
		}
		pl.bytes += size
		pl.formats[s.Format]++
	}
	if next != ip.DataOffset+ip.DataBytes {
		return fmt.Errorf("%s: samples %d to %d end at %d, want %d: %w", ip.Data, ip.First, ip.First+p.info.Samples, next, ip.DataOffset+ip.DataBytes, ErrPart)
	}
	if v != 2 {
		return nil
	}
	if !p.headSet {
		if ip.MetaSize == 0 {
			return nil
		}
		src, err := os.Open(filepath.Join(p.dir, partMetaName))
		if err != nil {
			return fmt.Errorf("%w (%w)", err, ErrPart)
		}
		defer src.Close()
		if fi, err := src.Stat(); err != nil || fi.Size() != ip.MetaSize {
			return p.errf(partMetaName, -1, "not of the %d bytes recorded (%v)", ip.MetaSize, err)
		}
		if _, err := filecopy.RangeContext(ctx, w.out, pl.meta, src, 0, ip.MetaSize); err != nil {
			return fmt.Errorf("copying %s into %s: %w", src.Name(), ip.Data, err)
		}
		return nil
	}
	meta := &posWriter{f: w.out, off: pl.meta}
	if err := m.walkPartMeta(ctx, p, meta, true); err != nil {
		return err
	}
	if err := meta.flush(); err != nil {
		return fmt.Errorf("writing %s: %w", ip.Data, err)
	}
	if meta.off != pl.meta+pl.metaSize {
		return p.errf(partMetaName, -1, "changed while it was merged")
	}
	return nil
}

// walkPartMeta writes the blocks of a part written in place, numbered as
// the output has them already: those an earlier part's member gives its
// first sample first, then part.meta's, but for its first sample's where
// those replace them.
func (m *merger) walkPartMeta(ctx context.Context, p *mergePart, meta blockWriter, data bool) error {
	ip := p.info.InPlace
	var hb []byte
	for _, b := range p.head {
		hb = appendBlockHeader(hb[:0], uint64(ip.First), uint32(len(b.Data)), b.Type)
		meta.Write(hb)
		meta.Write(b.Data)
	}
	if ip.MetaSize == 0 {
		return nil
	}
	f, err := os.Open(filepath.Join(p.dir, partMetaName))
	if err != nil {
		return fmt.Errorf("%w (%w)", err, ErrPart)
	}
	defer f.Close()
	sc := &scanner{f: f, off: 0, end: ip.MetaSize}
	lo, hi := uint64(ip.First), uint64(ip.First+p.info.Samples)
	span := fmt.Sprintf("in a part of samples %d to %d", lo, hi)
	return m.copyMetaBlocks(ctx, p, partMetaName, sc, meta, data, lo, hi, span, func(h []byte, sample uint64) []byte {
		if sample == lo && p.headSet {
			return nil
		}
		return h
	})
}
