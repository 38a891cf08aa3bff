package tbl

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"sort"
	"sync"

	"github.com/itarconv/itarconv/internal/offheap"
	"github.com/itarconv/itarconv/internal/pathguard"
)

// Reader reads a TBL file. Open checks the whole index and metadata
// section; afterwards the reader keeps next to nothing a sample: the index
// entries of a file whose samples lie in file order (every writer's) are
// read again when used, a window of them at a time, and the metadata
// blocks of one whose blocks lie in sample order (every writer's) are
// found from where each group of metaGroupLen samples' blocks starts.
// Other files keep their index in memory (16 or 24 bytes a sample) and
// the place of every metadata block. Sample bytes are read on demand with
// positioned reads, so its methods are safe for concurrent use.
type Reader struct {
	path    string
	f       *os.File // closed by Close; nil when reading from an io.ReaderAt
	ra      io.ReaderAt
	hdr     Header
	entLen  int
	closed  bool
	dataEnd int64 // the metadata section's start, or the file's end
	// index is the whole index, for a file whose samples are not in file
	// order; nil otherwise, when windows hold the entries used lately.
	index   []byte
	winMu   sync.Mutex
	windows [indexWindows]window
	// hasMeta holds, a bit a sample, the has-metadata flags, while Open
	// checks the metadata section.
	hasMeta []uint64
	// metaGroup[g] is where, from the metadata section's start, the blocks
	// of samples g*metaGroupLen and later start (the last entry is the
	// section's size), for files whose blocks lie in sample order; groups
	// caches the blocks of groups read lately. Other files get meta, every
	// block's place, sorted by sample.
	metaGroup []int64
	groups    [indexWindows]window
	meta      []metaRef
	// release gives back the tables kept outside the Go heap (Close).
	release []func()
}

// A window holds the bytes of consecutive index entries, or of a group's
// metadata blocks, from lo.
type window struct {
	lo  int
	buf []byte
}

const (
	indexWindows = 8    // windows kept, each holding
	windowLen    = 4096 // entries
	// metaGroupLen is how many samples' blocks a metadata group holds;
	// metaGroupMax how many bytes of them are read at once (larger groups
	// are walked block by block).
	metaGroupLen = 64
	metaGroupMax = 1 << 20
)

// metaRef locates one metadata block's bytes.
type metaRef struct {
	off    int64
	size   uint32
	sample uint32
	typ    uint16
}

// Open opens and validates the TBL file at path, either version.
//
// TurboLoader's reader checks the magic, the version, the v2 header CRC and
// that the index is inside the file. Open also requires, so that a file it
// accepts can be read without surprises:
//
//   - a version field that agrees with the magic;
//   - header_size exactly the size of the header and index;
//   - zero reserved and padding bytes, and no flag bits it does not know;
//   - every sample's bytes after the index and inside the file (v2 with
//     metadata: before the metadata section), without overflow, and no two
//     samples sharing a byte;
//   - in v2, uncompressed_size equal to the stored size (or 0, which the
//     format documents as "not compressed") unless the sample is
//     compressed; if it is, a non-zero size that an LZ4 block of the
//     stored size can reach, in a file flagged as compressed;
//   - a metadata section inside the file, made of whole blocks for existing
//     samples with zero reserved fields, present exactly when the header
//     and the samples' flags say so.
//
// Sample bytes and their checksums are checked when read (ReadSample,
// OpenSample) and by Verify.
func Open(path string) (*Reader, error) {
	f, err := pathguard.Open(path)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	r, err := newReader(path, f, fi.Size())
	if err != nil {
		f.Close()
		return nil, err
	}
	return r, nil
}

func (r *Reader) fail(kind error, sample int, off int64, format string, args ...any) error {
	return &Error{Path: r.path, Sample: sample, Offset: off, Err: kind, Detail: fmt.Sprintf(format, args...)}
}

// readAt fills b from off. A short read means the file shrank since Open.
func (r *Reader) readAt(b []byte, off int64, sample int) error {
	n, err := r.ra.ReadAt(b, off)
	if n == len(b) {
		return nil
	}
	if err == nil || errors.Is(err, io.EOF) {
		return r.fail(ErrTruncated, sample, off+int64(n), "the file ends %d bytes into a %d-byte read", n, len(b))
	}
	if sample >= 0 {
		return fmt.Errorf("%s: sample %d: %w", r.path, sample, err)
	}
	return fmt.Errorf("%s: %w", r.path, err)
}

// newReader validates the header, index and metadata section of a file of
// size bytes read through ra; name is used in errors.
func newReader(name string, ra io.ReaderAt, size int64) (*Reader, error) {
	r := &Reader{path: name, ra: ra}
	r.f, _ = ra.(*os.File) // Close closes it
	ok := false
	defer func() {
		if !ok {
			r.releaseTables()
		}
	}()
	var hb [HeaderSizeV2]byte
	v, err := r.readMagic(&hb, size)
	if err != nil {
		return nil, err
	}
	if err := r.parseHeader(&hb, v); err != nil {
		return nil, err
	}
	if err := r.checkSections(size); err != nil {
		return nil, err
	}
	if err := r.checkIndex(); err != nil {
		return nil, err
	}
	if r.hdr.Flags&FlagHasMetadata != 0 {
		err := r.scanMetadata(false)
		if errors.Is(err, errScattered) {
			err = r.scanMetadata(true)
		}
		if err != nil {
			return nil, err
		}
	}
	r.hasMeta = nil
	ok = true
	return r, nil
}

// readMagic reads the header's bytes into hb (all the file has of them)
// and gives the version its magic names. It tells a file cut short inside
// the magic or the header from one that is no TBL file at all.
func (r *Reader) readMagic(hb *[HeaderSizeV2]byte, size int64) (int, error) {
	got := int(min(size, HeaderSizeV2))
	if err := r.readAt(hb[:got], 0, -1); err != nil {
		return 0, err
	}
	if size == 0 {
		return 0, r.fail(ErrFormat, -1, 0, "empty file")
	}
	if got < 4 {
		if bytes.HasPrefix([]byte("TBL"), hb[:got]) {
			return 0, r.fail(ErrTruncated, -1, size, "file of %d bytes ends inside the magic", size)
		}
		return 0, r.fail(ErrFormat, -1, 0, "bad magic %q", hb[:got])
	}
	if string(hb[:3]) != "TBL" {
		return 0, r.fail(ErrFormat, -1, 0, "bad magic %q", hb[:4])
	}
	var v int
	switch hb[3] {
	case 1, 2:
		v = int(hb[3])
	default:
		return 0, r.fail(ErrVersion, -1, 3, "magic %q: version %d (this reader knows 1 and 2)", hb[:4], hb[3])
	}
	r.entLen = entryLen(v)
	if hl := headerLen(v); size < int64(hl) {
		return 0, r.fail(ErrTruncated, -1, size, "file of %d bytes ends inside the %d-byte v%d header", size, hl, v)
	}
	return v, nil
}

// parseHeader decodes a v1 or v2 header into r.hdr, checking its CRC-32
// (v2) before trusting any field, then that its reserved bytes are zero
// and its flags known: a later version's header is refused, not misread.
func (r *Reader) parseHeader(hb *[HeaderSizeV2]byte, v int) error {
	le := binary.LittleEndian
	if fv := le.Uint32(hb[4:]); fv != uint32(v) {
		return r.fail(ErrVersion, -1, 4, "version field %d with a v%d magic", fv, v)
	}
	h := Header{Version: v, NumSamples: le.Uint64(hb[8:]), HeaderSize: le.Uint32(hb[16:])}
	reserved := [][2]int{{20, 32}}
	if v == 2 {
		h.MetadataOffset = le.Uint64(hb[24:])
		h.MetadataSize = le.Uint64(hb[32:])
		h.Flags = le.Uint32(hb[40:])
		h.CRC32 = le.Uint32(hb[44:])
		if c := headerCRC(hb[:]); c != h.CRC32 {
			return r.fail(ErrChecksum, -1, 44, "header CRC-32 is %#08x, the header's bytes give %#08x", h.CRC32, c)
		}
		reserved = [][2]int{{20, 24}, {48, 64}}
	}
	r.hdr = h
	for _, span := range reserved {
		for o := span[0]; o < span[1]; o++ {
			if hb[o] != 0 {
				return r.fail(ErrCorrupt, -1, int64(o), "reserved header byte %d is %#02x, not zero", o, hb[o])
			}
		}
	}
	if h.Flags&^knownHeaderFlags != 0 {
		return r.fail(ErrCorrupt, -1, 40, "unknown header flag bits %#x", h.Flags&^knownHeaderFlags)
	}
	return nil
}

// checkSections checks that the index the header describes, and the
// metadata section (v2), lie inside a file of size bytes without
// overlapping, before anything is read from them, and sets where the
// samples' data ends.
func (r *Reader) checkSections(size int64) error {
	h := r.hdr
	maxN := uint64(MaxSamplesV2)
	if h.Version == 1 {
		maxN = MaxSamplesV1
	}
	if h.NumSamples > maxN {
		return r.fail(ErrCorrupt, -1, 8, "num_samples %d: an index that large does not fit the 32-bit header_size", h.NumSamples)
	}
	n := int(h.NumSamples)
	want := int64(headerLen(h.Version)) + int64(n)*int64(r.entLen)
	if int64(h.HeaderSize) != want {
		return r.fail(ErrCorrupt, -1, 16, "header_size %d, but a header and %d index entries take %d bytes", h.HeaderSize, n, want)
	}
	if want > size {
		return r.fail(ErrTruncated, -1, size, "the index ends at %d, past the end of the file (%d bytes)", want, size)
	}
	r.dataEnd = size
	if h.Version != 2 {
		return nil
	}
	hasMeta := h.Flags&FlagHasMetadata != 0
	switch {
	case !hasMeta && (h.MetadataOffset != 0 || h.MetadataSize != 0):
		return r.fail(ErrCorrupt, -1, 24, "metadata section at %d (%d bytes) without the has-metadata flag", h.MetadataOffset, h.MetadataSize)
	case !hasMeta:
	case h.MetadataSize < MetaBlockLen:
		return r.fail(ErrCorrupt, -1, 32, "has-metadata flag with a metadata section of %d bytes", h.MetadataSize)
	case h.MetadataOffset < uint64(want):
		return r.fail(ErrCorrupt, -1, 24, "metadata_offset %d is inside the header or index (data starts at %d)", h.MetadataOffset, want)
	case h.MetadataOffset > uint64(size) || h.MetadataSize > uint64(size)-h.MetadataOffset:
		return r.fail(ErrTruncated, -1, size, "the %d-byte metadata section at %d runs past the end of the file (%d bytes)", h.MetadataSize, h.MetadataOffset, size)
	default:
		r.dataEnd = int64(h.MetadataOffset)
	}
	return nil
}

// checkIndex validates every entry's fields and checks that no two samples
// share a byte.
func (r *Reader) checkIndex() error {
	le := binary.LittleEndian
	hl, el := int64(headerLen(r.hdr.Version)), int64(r.entLen)
	v1 := r.hdr.Version == 1
	lim := entryLimits{
		dataStart:    uint64(r.hdr.HeaderSize),
		dataEnd:      uint64(r.dataEnd),
		compressedOK: r.hdr.Flags&FlagCompressed != 0,
		metaOK:       r.hdr.Flags&FlagHasMetadata != 0,
	}
	prevEnd, inOrder := lim.dataStart, true
	if lim.metaOK {
		r.hasMeta = make([]uint64, (r.Len()+63)/64)
	}
	br := bufio.NewReaderSize(io.NewSectionReader(r.ra, hl, int64(r.Len())*el), 64<<10)
	e := make([]byte, el)
	for i := range r.Len() {
		base := hl + int64(i)*el
		if k, err := io.ReadFull(br, e); err != nil {
			if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
				return r.fail(ErrTruncated, -1, base+int64(k), "the file ends inside the index")
			}
			return fmt.Errorf("%s: %w", r.path, err)
		}
		off, stored := le.Uint64(e), le.Uint32(e[8:])
		// The common entry is vouched for inline; checkEntry decides on
		// any other, and words the error.
		fine := off >= lim.dataStart && off <= lim.dataEnd && uint64(stored) <= lim.dataEnd-off
		var flags byte
		if v1 {
			fine = fine && e[13]|e[14]|e[15] == 0
		} else {
			flags = e[21]
			fine = fine && lim.fineV2(flags, stored, le.Uint32(e[12:]))
		}
		if !fine {
			if err := r.checkEntry(lim, v1, i, base, e, off, stored); err != nil {
				return err
			}
		}
		if flags&SampleHasMetadata != 0 {
			r.hasMeta[i/64] |= 1 << (i % 64)
		}
		if stored > 0 {
			if off < prevEnd {
				inOrder = false
			} else {
				prevEnd = off + uint64(stored)
			}
		}
	}
	if inOrder {
		return nil
	}
	// Samples out of file order (no writer's): the index stays in memory
	// for the overlap check and every later use.
	r.index = r.alloc(int(int64(r.Len()) * el))
	if err := r.readAt(r.index, hl, -1); err != nil {
		return err
	}
	return r.checkOverlap()
}

// entryLimits are what checkEntry holds each index entry to, taken from
// the header once rather than for each of a million entries.
type entryLimits struct {
	dataStart, dataEnd   uint64 // where the samples' bytes may lie
	compressedOK, metaOK bool   // the file's flags allow the samples'
}

// fineV2 tells, cheaply (checkIndex asks for each of up to millions of
// entries), that a v2 entry's flags and sizes pass checkEntry: a plain
// sample, or a compressed one within LZ4's bound, with metadata only
// where the file has some. It is a sufficient condition only: an entry it
// does not vouch for goes to checkEntry.
func (lim entryLimits) fineV2(flags byte, stored, usize uint32) bool {
	if flags&SampleHasMetadata != 0 && !lim.metaOK {
		return false
	}
	switch flags &^ (SampleHasMetadata | SampleVerified) {
	case 0:
		return usize == 0 || usize == stored
	case SampleCompressed:
		return lim.compressedOK && stored != 0 && usize != 0 && uint64(usize) <= maxLZ4Output(stored)
	}
	return false
}

// checkEntry checks index entry i, e at offset base: its reserved bytes
// (v1) or its flags and sizes (v2), and that its stored bytes, off on,
// lie between the index and the metadata section or the file's end. A
// bound on what LZ4 can decode keeps a corrupt uncompressed size from
// making ReadSample allocate gigabytes.
func (r *Reader) checkEntry(lim entryLimits, v1 bool, i int, base int64, e []byte, off uint64, stored uint32) error {
	if v1 {
		for k := 13; k < 16; k++ {
			if e[k] != 0 {
				return r.fail(ErrCorrupt, i, base+int64(k), "reserved index byte is %#02x, not zero", e[k])
			}
		}
	} else {
		usize, flags := binary.LittleEndian.Uint32(e[12:]), e[21]
		switch {
		case flags&^knownSampleFlags != 0:
			return r.fail(ErrCorrupt, i, base+21, "unknown sample flag bits %#02x", flags&^knownSampleFlags)
		case flags&SampleCompressed != 0 && !lim.compressedOK:
			return r.fail(ErrCorrupt, i, base+21, "compressed sample in a file without the compressed flag")
		case flags&SampleCompressed != 0 && (stored == 0 || usize == 0):
			return r.fail(ErrCorrupt, i, base+8, "compressed sample of %d stored bytes, uncompressed_size %d", stored, usize)
		case flags&SampleCompressed != 0 && uint64(usize) > maxLZ4Output(stored):
			return r.fail(ErrCorrupt, i, base+12, "uncompressed_size %d: an LZ4 block of %d bytes decodes to at most %d", usize, stored, maxLZ4Output(stored))
		case flags&SampleCompressed == 0 && usize != 0 && stored != usize:
			return r.fail(ErrCorrupt, i, base+12, "uncompressed_size %d differs from size %d, and the sample is not compressed", usize, stored)
		case flags&SampleHasMetadata != 0 && !lim.metaOK:
			return r.fail(ErrCorrupt, i, base+21, "has-metadata flag, but the file has no metadata section")
		}
	}
	if off < lim.dataStart {
		return r.fail(ErrCorrupt, i, base, "data offset %d is inside the header or index (data starts at %d)", off, lim.dataStart)
	}
	if off > lim.dataEnd || uint64(stored) > lim.dataEnd-off {
		if lim.metaOK {
			return r.fail(ErrCorrupt, i, base, "%d bytes at %d run into the metadata section at %d", stored, off, lim.dataEnd)
		}
		return r.fail(ErrTruncated, i, base, "%d bytes at %d run past the end of the file (%d bytes)", stored, off, lim.dataEnd)
	}
	return nil
}

// maxLZ4Output bounds what an LZ4 block of n bytes can decode to: a
// length byte adds at most 255 bytes of output. Checking it at Open keeps a
// few corrupt bytes from making ReadSample allocate gigabytes.
func maxLZ4Output(n uint32) uint64 { return 255*uint64(n) + 255 }

// checkOverlap finds two samples sharing a byte when the index is not in
// file order (TurboLoader always writes it in order; others may not).
func (r *Reader) checkOverlap() error {
	var order []int32
	for i := range r.Len() {
		if r.stored(i) > 0 {
			order = append(order, int32(i))
		}
	}
	slices.SortFunc(order, func(a, b int32) int {
		oa, ob := r.offset(int(a)), r.offset(int(b))
		switch {
		case oa < ob:
			return -1
		case oa > ob:
			return 1
		}
		return int(a) - int(b)
	})
	last := -1 // the sample whose bytes reach furthest so far
	var lastEnd uint64
	for _, k := range order {
		i := int(k)
		off := r.offset(i)
		if last >= 0 && off < lastEnd {
			later := max(i, last)
			return r.fail(ErrCorrupt, later, int64(headerLen(r.hdr.Version))+int64(later)*int64(r.entLen),
				"samples %d and %d share bytes: [%d, %d) and [%d, %d)", min(i, last), later,
				r.offset(last), lastEnd, off, off+uint64(r.stored(i)))
		}
		if end := off + uint64(r.stored(i)); end > lastEnd {
			last, lastEnd = i, end
		}
	}
	return nil
}

func (r *Reader) offset(i int) uint64 {
	return binary.LittleEndian.Uint64(r.index[i*r.entLen:])
}

func (r *Reader) stored(i int) uint32 {
	return binary.LittleEndian.Uint32(r.index[i*r.entLen+8:])
}

// errScattered: the metadata blocks do not lie in sample order.
var errScattered = errors.New("metadata blocks out of sample order")

// scanMetadata walks the metadata section once, checking its blocks and
// recording where each group of samples' blocks starts; where the blocks
// are not in sample order (errScattered), it is run again with refs set,
// to record every block's place.
func (r *Reader) scanMetadata(refs bool) error {
	le := binary.LittleEndian
	start := int64(r.hdr.MetadataOffset)
	end := start + int64(r.hdr.MetadataSize)
	n := r.Len()
	br := bufio.NewReaderSize(io.NewSectionReader(r.ra, start, end-start), 64<<10)
	seen := make([]uint64, (n+63)/64)
	groups := (n + metaGroupLen - 1) / metaGroupLen
	if !refs {
		r.metaGroup = make([]int64, 0, groups+1)
	}
	prev := int64(-1)
	var bh [MetaBlockLen]byte
	for pos := start; pos < end; {
		if end-pos < MetaBlockLen {
			return r.fail(ErrCorrupt, -1, pos, "%d bytes left in the metadata section, too few for a block header", end-pos)
		}
		if k, err := io.ReadFull(br, bh[:]); err != nil {
			return r.readErr(pos+int64(k), err)
		}
		si, size, res := le.Uint64(bh[:]), le.Uint32(bh[8:]), le.Uint16(bh[14:])
		switch {
		case si >= uint64(n):
			return r.fail(ErrCorrupt, -1, pos, "metadata block for sample %d, but the file has %d samples", si, n)
		case res != 0:
			return r.fail(ErrCorrupt, int(si), pos+14, "metadata block's reserved field is %#04x, not zero", res)
		case int64(size) > end-pos-MetaBlockLen:
			return r.fail(ErrCorrupt, int(si), pos+8, "metadata block of %d bytes at %d runs past the end of the metadata section at %d", size, pos+MetaBlockLen, end)
		case r.hasMeta[si/64]&(1<<(si%64)) == 0:
			return r.fail(ErrCorrupt, int(si), pos, "metadata block for a sample without the has-metadata flag")
		}
		switch {
		case refs:
			r.meta = append(r.meta, metaRef{off: pos + MetaBlockLen, size: size, sample: uint32(si), typ: le.Uint16(bh[12:])})
		case int64(si) < prev:
			r.metaGroup = nil
			return errScattered
		default:
			// Groups up to this block's start here (those without blocks
			// too: they end where they start).
			for g := int64(len(r.metaGroup)); g*metaGroupLen <= int64(si); g++ {
				r.metaGroup = append(r.metaGroup, pos-start)
			}
		}
		prev = int64(si)
		seen[si/64] |= 1 << (si % 64)
		if k, err := br.Discard(int(size)); err != nil {
			return r.readErr(pos+MetaBlockLen+int64(k), err)
		}
		pos += MetaBlockLen + int64(size)
	}
	for i := range n {
		if r.hasMeta[i/64]&(1<<(i%64)) != 0 && seen[i/64]&(1<<(i%64)) == 0 {
			return r.fail(ErrCorrupt, i, int64(HeaderSizeV2+i*EntrySizeV2+21), "has-metadata flag, but no metadata block names the sample")
		}
	}
	if !refs {
		for len(r.metaGroup) <= groups {
			r.metaGroup = append(r.metaGroup, end-start)
		}
	}
	slices.SortStableFunc(r.meta, func(a, b metaRef) int { return cmp.Compare(a.sample, b.sample) })
	return nil
}

func (r *Reader) releaseTables() {
	r.index, r.metaGroup, r.meta, r.hasMeta = nil, nil, nil, nil
	r.winMu.Lock()
	r.windows, r.groups = [indexWindows]window{}, [indexWindows]window{}
	r.winMu.Unlock()
	for _, release := range r.release {
		release()
	}
	r.release = nil
}

// alloc returns n zeroed bytes for a table the reader keeps: outside the
// Go heap for a reader of a file (released by Close), so that a large
// index does not double the collector's goal.
func (r *Reader) alloc(n int) []byte {
	if r.f == nil {
		return make([]byte, n)
	}
	b, release := offheap.Alloc(n)
	r.release = append(r.release, release)
	return b
}

func (r *Reader) readErr(off int64, err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return r.fail(ErrTruncated, -1, off, "the file ends inside the metadata section")
	}
	return fmt.Errorf("%s: %w", r.path, err)
}

// Version is 1 or 2.
func (r *Reader) Version() int { return r.hdr.Version }

// Header returns the file's header.
func (r *Reader) Header() Header { return r.hdr }

// Len is the number of samples.
func (r *Reader) Len() int { return int(r.hdr.NumSamples) }

// Sample returns the index entry of sample i, with Meta nil. It panics if i
// is out of range, as indexing a slice does. Should the entry no longer
// read (the file shrank since Open), it has Offset -1 and sizes 0:
// ReadSample and the others then say why.
func (r *Reader) Sample(i int) Sample {
	if i < 0 || i >= r.Len() {
		panic(fmt.Sprintf("tbl: sample %d out of range [0, %d)", i, r.Len()))
	}
	if r.closed {
		panic("tbl: Sample of a closed reader")
	}
	s, err := r.entry(i)
	if err != nil {
		return Sample{Index: i, Offset: -1}
	}
	return s
}

// entry reads index entry i (in range), from the index in memory or
// from a window of entries read lately, read again if need be.
func (r *Reader) entry(i int) (Sample, error) {
	if r.index != nil {
		return decodeEntry(r.index[i*r.entLen:], r.hdr.Version, i), nil
	}
	lo := i / windowLen * windowLen
	r.winMu.Lock()
	defer r.winMu.Unlock()
	w := &r.windows[i/windowLen%indexWindows]
	if w.buf == nil || w.lo != lo {
		n := min(r.Len()-lo, windowLen) * r.entLen
		buf := grow(w.buf, n)
		w.buf = nil
		if err := r.readAt(buf, int64(headerLen(r.hdr.Version)+lo*r.entLen), i); err != nil {
			return Sample{}, err
		}
		w.lo, w.buf = lo, buf
	}
	return decodeEntry(w.buf[(i-lo)*r.entLen:], r.hdr.Version, i), nil
}

func (r *Reader) checkIndexArg(i int) error {
	if r.closed {
		return fmt.Errorf("%s: %w", r.path, os.ErrClosed)
	}
	if i < 0 || i >= r.Len() {
		return fmt.Errorf("%s: sample %d out of range [0, %d)", r.path, i, r.Len())
	}
	return nil
}

// Metadata reads the metadata entries of sample i, in file order; none for
// v1 files or samples without metadata.
func (r *Reader) Metadata(i int) ([]MetaEntry, error) {
	if err := r.checkIndexArg(i); err != nil {
		return nil, err
	}
	if r.metaGroup != nil {
		return r.metadataFrom(i)
	}
	lo := sort.Search(len(r.meta), func(k int) bool { return r.meta[k].sample >= uint32(i) })
	var out []MetaEntry
	for k := lo; k < len(r.meta) && r.meta[k].sample == uint32(i); k++ {
		m := r.meta[k]
		data := make([]byte, m.size)
		if err := r.readAt(data, m.off, i); err != nil {
			return nil, err
		}
		out = append(out, MetaEntry{Type: m.typ, Data: data})
	}
	return out, nil
}

// metadataFrom finds sample i's blocks in its group's (their place was
// found, and the blocks checked, by Open): from the group's bytes read
// lately, else read now; a group too large to read at once is walked a
// block at a time.
func (r *Reader) metadataFrom(i int) ([]MetaEntry, error) {
	g := i / metaGroupLen
	lo, hi := r.metaGroup[g], r.metaGroup[g+1]
	base := int64(r.hdr.MetadataOffset)
	if hi-lo > metaGroupMax {
		return r.walkMetadata(i, base+lo, base+hi)
	}
	r.winMu.Lock()
	defer r.winMu.Unlock()
	w := &r.groups[g%indexWindows]
	if w.buf == nil || w.lo != g {
		buf := grow(w.buf, int(hi-lo))
		w.buf = nil
		if err := r.readAt(buf, base+lo, i); err != nil {
			return nil, err
		}
		w.lo, w.buf = g, buf
	}
	le := binary.LittleEndian
	var out []MetaEntry
	for run := w.buf; len(run) > 0; {
		if len(run) < MetaBlockLen {
			return nil, r.changed(i)
		}
		si, size := le.Uint64(run), le.Uint32(run[8:])
		if uint64(size) > uint64(len(run)-MetaBlockLen) {
			return nil, r.changed(i)
		}
		if si > uint64(i) {
			break
		}
		if si == uint64(i) {
			out = append(out, MetaEntry{Type: le.Uint16(run[12:]), Data: bytes.Clone(run[MetaBlockLen : MetaBlockLen+size])})
		}
		run = run[MetaBlockLen+size:]
	}
	return out, nil
}

// walkMetadata finds sample i's blocks between from and to in the file,
// reading the blocks' headers one by one.
func (r *Reader) walkMetadata(i int, from, to int64) ([]MetaEntry, error) {
	le := binary.LittleEndian
	var out []MetaEntry
	var bh [MetaBlockLen]byte
	for pos := from; pos < to; {
		if to-pos < MetaBlockLen {
			return nil, r.changed(i)
		}
		if err := r.readAt(bh[:], pos, i); err != nil {
			return nil, err
		}
		si, size := le.Uint64(bh[:]), le.Uint32(bh[8:])
		if int64(size) > to-pos-MetaBlockLen {
			return nil, r.changed(i)
		}
		if si > uint64(i) {
			break
		}
		if si == uint64(i) {
			data := make([]byte, size)
			if err := r.readAt(data, pos+MetaBlockLen, i); err != nil {
				return nil, err
			}
			out = append(out, MetaEntry{Type: le.Uint16(bh[12:]), Data: data})
		}
		pos += MetaBlockLen + int64(size)
	}
	return out, nil
}

func (r *Reader) changed(i int) error {
	return r.fail(ErrCorrupt, i, -1, "the metadata section changed since the file was opened")
}

// scratch holds LZ4 blocks while they are decoded.
var scratch = sync.Pool{New: func() any { return new([]byte) }}

func grow(b []byte, n int) []byte {
	if cap(b) >= n {
		return b[:n]
	}
	return make([]byte, n)
}

// ReadSample returns the uncompressed bytes of sample i, in dst's storage
// when it is large enough. A compressed sample's LZ4 block must decode to
// exactly its uncompressed_size; in v2 files with checksums, the bytes must
// match the entry's CRC-16.
func (r *Reader) ReadSample(i int, dst []byte) ([]byte, error) {
	if err := r.checkIndexArg(i); err != nil {
		return nil, err
	}
	s, err := r.entry(i)
	if err != nil {
		return nil, err
	}
	buf := grow(dst, int(s.Size))
	if !s.Compressed {
		if err := r.readAt(buf, s.Offset, i); err != nil {
			return nil, err
		}
	} else {
		sp := scratch.Get().(*[]byte)
		defer scratch.Put(sp)
		*sp = grow(*sp, int(s.StoredSize))
		if err := r.readAt(*sp, s.Offset, i); err != nil {
			return nil, err
		}
		if err := r.decode(&s, *sp, buf); err != nil {
			return nil, err
		}
	}
	if err := r.checkCRC(&s, crc16Update(crc16Init, buf)); err != nil {
		return nil, err
	}
	return buf, nil
}

func (r *Reader) checksums() bool {
	return r.hdr.Version == 2 && r.hdr.Flags&FlagHasChecksums != 0
}

func (r *Reader) checkCRC(s *Sample, crc uint16) error {
	if r.checksums() && crc != s.CRC16 {
		return r.fail(ErrChecksum, s.Index, s.Offset, "CRC-16 of the %d uncompressed bytes is %#04x, the index says %#04x", s.Size, crc, s.CRC16)
	}
	return nil
}

// OpenSample returns a reader of sample i's uncompressed bytes. An
// uncompressed sample is streamed from the file, and its CRC-16 checked when
// the end is reached: the error then replaces io.EOF. A compressed sample
// is decoded in memory first, as ReadSample does.
func (r *Reader) OpenSample(i int) (io.Reader, error) {
	if err := r.checkIndexArg(i); err != nil {
		return nil, err
	}
	s, err := r.entry(i)
	if err != nil {
		return nil, err
	}
	if s.Compressed {
		b, err := r.ReadSample(i, nil)
		if err != nil {
			return nil, err
		}
		return bytes.NewReader(b), nil
	}
	return &sampleReader{r: r, s: s, sr: io.NewSectionReader(r.ra, s.Offset, int64(s.StoredSize)), crc: crc16Init}, nil
}

type sampleReader struct {
	r    *Reader
	s    Sample
	sr   *io.SectionReader
	crc  uint16
	read int64
	err  error
}

func (sr *sampleReader) Read(p []byte) (int, error) {
	if sr.err != nil {
		return 0, sr.err
	}
	n, err := sr.sr.Read(p)
	sr.crc = crc16Update(sr.crc, p[:n])
	sr.read += int64(n)
	if err == io.EOF {
		if sr.read < int64(sr.s.Size) {
			err = sr.r.fail(ErrTruncated, sr.s.Index, sr.s.Offset+sr.read, "the file ends %d bytes into the %d-byte sample", sr.read, sr.s.Size)
		} else if cerr := sr.r.checkCRC(&sr.s, sr.crc); cerr != nil {
			err = cerr
		}
	} else if err != nil {
		err = fmt.Errorf("%s: sample %d: %w", sr.r.path, sr.s.Index, err)
	}
	sr.err = err
	return n, err
}

// Verify is VerifyContext for a caller that has no context: it cannot be
// stopped before it is done.
func (r *Reader) Verify() error { return r.VerifyContext(context.Background()) }

// VerifyContext reads every sample and checks it as ReadSample does,
// returning the first error. Uncompressed samples are streamed through a
// fixed buffer, so memory stays flat whatever their size. It stops with
// ctx's error once ctx is done.
func (r *Reader) VerifyContext(ctx context.Context) error {
	buf := make([]byte, min(1<<20, r.dataEnd))
	var dec []byte
	for i := range r.Len() {
		if err := ctx.Err(); err != nil {
			return err
		}
		s, err := r.entry(i)
		if err != nil {
			return err
		}
		if s.Compressed {
			if dec, err = r.ReadSample(i, dec); err != nil {
				return err
			}
			continue
		}
		crc := uint16(crc16Init)
		for done := int64(0); done < int64(s.StoredSize); {
			if done > 0 && ctx.Err() != nil { // a large sample, read a MiB at a time
				return ctx.Err()
			}
			chunk := buf[:min(int64(len(buf)), int64(s.StoredSize)-done)]
			if err := r.readAt(chunk, s.Offset+done, i); err != nil {
				return err
			}
			crc = crc16Update(crc, chunk)
			done += int64(len(chunk))
		}
		if err := r.checkCRC(&s, crc); err != nil {
			return err
		}
	}
	return nil
}

// Close closes the file.
func (r *Reader) Close() error {
	if r.f == nil {
		return nil
	}
	err := r.f.Close()
	r.f, r.closed = nil, true
	// The tables go with the file: a use after Close finds them empty.
	r.releaseTables()
	return err
}

// File is the file the reader reads: where a sample is stored
// uncompressed, its bytes are StoredSize bytes at its Offset there.
func (r *Reader) File() *os.File {
	f, _ := r.ra.(*os.File)
	return f
}

// HasMetadata tells whether the file has a metadata section (v2 only).
func (r *Reader) HasMetadata() bool { return r.hdr.Flags&FlagHasMetadata != 0 }
