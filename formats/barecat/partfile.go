package barecat

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"hash/crc32"
	"io"
	"maps"
	"math"
	"slices"

	"github.com/itarconv/itarconv/internal/human"
)

// A part of a partitioned run (WritePart, MergeParts) is a directory:
//
//	shard-00000, shard-00001, ...  the part's files' bytes, in row order,
//	                               cut as WriteRows would cut them were
//	                               these rows the whole dataset
//	rows                           what each row contributes (partRowsName)
//
// The rows file is a stream of records, so that neither writing nor
// reading it holds the rows in memory:
//
//	"ITCBCPRT" uvarint(version)
//	'S'                               the next local shard starts
//	'F' flags path size crc mode uid gid mtime
//	'D' flags path mode uid gid mtime
//	'K' kind count                    rows of a kind WriteRows skips
//	'E' shardSize records files bytes shards {size}  the summary
//	crc32c                            of every byte before it, 4 bytes LE
//
// path and kind are a uvarint length and the bytes; size, records,
// files, bytes, shards, count and the shard sizes uvarints; mode, uid,
// gid, mtime (nanoseconds) and shardSize varints; crc 4 bytes LE; flags
// one byte, a bit for each of mode, uid, gid, mtime being set. Files are
// in their local shards in the order of their records, one after the
// other from offset 0.

const (
	partMagic     = "ITCBCPRT"
	partVersion   = 1
	partRowsName  = "rows"
	maxPartPath   = 1 << 20 // longer than any path a file system takes
	maxPartShards = maxShards
)

// ErrPart: a part of a partitioned run is missing, damaged, from another
// version of the part format, or does not fit the merge.
var ErrPart = errors.New("barecat: bad part")

// Record kinds.
const (
	recShard   = 'S'
	recFile    = 'F'
	recDir     = 'D'
	recSkipped = 'K'
	recEnd     = 'E'
)

// Flag bits: which metadata a record sets.
const (
	hasMode = 1 << iota
	hasUID
	hasGID
	hasMtime
)

// partShardName is local shard n of a part.
func partShardName(n int) string { return fmt.Sprintf("shard-%05d", n) }

// partRow is one record of a rows file.
type partRow struct {
	kind    byte
	path    string
	size    int64
	crc     uint32
	flags   byte
	mode    int64
	uid     int64
	gid     int64
	mtimeNs int64
	// For recSkipped: the row kind and how many (kind in path).
	count int64
}

// partSummary is a rows file's end record.
type partSummary struct {
	shardSize int64
	records   int64 // files and directories
	files     int64
	bytes     int64
	shards    []int64 // local shard sizes
	skipped   map[string]int64
}

// partWriter writes a rows file.
type partWriter struct {
	w   io.Writer
	bw  *bufio.Writer
	crc hash.Hash32
	buf []byte
	sum partSummary
	cur int // local shards started
}

func newPartWriter(w io.Writer, shardSize int64) *partWriter {
	h := crc32.New(castagnoli)
	pw := &partWriter{w: w, bw: bufio.NewWriterSize(io.MultiWriter(w, h), 256<<10), crc: h}
	pw.sum.shardSize = shardSize
	pw.sum.skipped = map[string]int64{}
	pw.buf = append(pw.buf, partMagic...)
	pw.buf = binary.AppendUvarint(pw.buf, partVersion)
	return pw
}

func (pw *partWriter) flushBuf() error {
	_, err := pw.bw.Write(pw.buf)
	pw.buf = pw.buf[:0]
	return err
}

func appendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

func metaFlags(hm, hu, hg, ht bool) byte {
	var f byte
	for i, ok := range []bool{hm, hu, hg, ht} {
		if ok {
			f |= 1 << i
		}
	}
	return f
}

// shard records that a local shard starts.
func (pw *partWriter) shard() error {
	pw.sum.shards = append(pw.sum.shards, 0)
	pw.cur++
	pw.buf = append(pw.buf, recShard)
	return pw.flushBuf()
}

// file records a file whose bytes follow the previous file's in the
// current local shard.
func (pw *partWriter) file(f File) error {
	pw.sum.records++
	pw.sum.files++
	pw.sum.bytes += f.Size
	pw.sum.shards[pw.cur-1] += f.Size
	b := append(pw.buf, recFile, metaFlags(f.HasMode, f.HasUID, f.HasGID, f.HasMtime))
	b = appendString(b, f.Path)
	b = binary.AppendUvarint(b, uint64(f.Size))
	b = binary.LittleEndian.AppendUint32(b, f.CRC32C)
	b = binary.AppendVarint(b, f.Mode)
	b = binary.AppendVarint(b, f.UID)
	b = binary.AppendVarint(b, f.GID)
	pw.buf = binary.AppendVarint(b, f.MtimeNs)
	return pw.flushBuf()
}

// dir records a directory row.
func (pw *partWriter) dir(d Dir) error {
	pw.sum.records++
	b := append(pw.buf, recDir, metaFlags(d.HasMode, d.HasUID, d.HasGID, d.HasMtime))
	b = appendString(b, d.Path)
	b = binary.AppendVarint(b, d.Mode)
	b = binary.AppendVarint(b, d.UID)
	b = binary.AppendVarint(b, d.GID)
	pw.buf = binary.AppendVarint(b, d.MtimeNs)
	return pw.flushBuf()
}

// close writes the skipped counts (in kind order, so that the file does
// not depend on map order), the summary and the checksum.
func (pw *partWriter) close() error {
	for _, k := range slices.Sorted(maps.Keys(pw.sum.skipped)) {
		pw.buf = append(pw.buf, recSkipped)
		pw.buf = appendString(pw.buf, k)
		pw.buf = binary.AppendUvarint(pw.buf, uint64(pw.sum.skipped[k]))
	}
	b := append(pw.buf, recEnd)
	b = binary.AppendVarint(b, pw.sum.shardSize)
	b = binary.AppendUvarint(b, uint64(pw.sum.records))
	b = binary.AppendUvarint(b, uint64(pw.sum.files))
	b = binary.AppendUvarint(b, uint64(pw.sum.bytes))
	b = binary.AppendUvarint(b, uint64(len(pw.sum.shards)))
	for _, s := range pw.sum.shards {
		b = binary.AppendUvarint(b, uint64(s))
	}
	pw.buf = b
	if err := pw.flushBuf(); err != nil {
		return err
	}
	if err := pw.bw.Flush(); err != nil {
		return err
	}
	// The checksum itself is not summed: written past the MultiWriter.
	var c [4]byte
	binary.LittleEndian.PutUint32(c[:], pw.crc.Sum32())
	_, err := pw.w.Write(c[:])
	return err
}

// partReader parses a rows file, checking every field as it goes: the
// file may be truncated, damaged, or another version's.
type partReader struct {
	in    consumed
	off   int64 // bytes read
	where string
	shard int   // local shards started
	fill  int64 // bytes of files in the current local shard
	n     partSummary
	done  bool
	sum   *partSummary // the end record, once read
	skip  map[string]int64
}

// consumed is a buffered reader that sums (CRC-32C) the bytes taken from
// it, not those it has read ahead.
type consumed struct {
	r        io.Reader
	buf      []byte
	pos, end int
	hashed   int // buf[:hashed] is in crc
	crc      uint32
	err      error
}

func (c *consumed) fill() error {
	c.crc = crc32.Update(c.crc, castagnoli, c.buf[c.hashed:c.pos])
	n := copy(c.buf, c.buf[c.pos:c.end])
	c.pos, c.end, c.hashed = 0, n, 0
	for c.end < len(c.buf) && c.err == nil {
		k, err := c.r.Read(c.buf[c.end:])
		c.end += k
		if err != nil {
			c.err = err
		}
		if k > 0 {
			break
		}
	}
	if c.pos == c.end {
		return c.err
	}
	return nil
}

func (c *consumed) ReadByte() (byte, error) {
	if c.pos == c.end {
		if err := c.fill(); err != nil {
			return 0, err
		}
	}
	c.pos++
	return c.buf[c.pos-1], nil
}

// read fills p.
func (c *consumed) read(p []byte) error {
	for len(p) > 0 {
		if c.pos == c.end {
			if err := c.fill(); err != nil {
				return noEOF(err)
			}
		}
		n := copy(p, c.buf[c.pos:c.end])
		c.pos += n
		p = p[n:]
	}
	return nil
}

// sum is the CRC-32C of every byte taken so far.
func (c *consumed) sum() uint32 {
	c.crc = crc32.Update(c.crc, castagnoli, c.buf[c.hashed:c.pos])
	c.hashed = c.pos
	return c.crc
}

// newPartReader reads a rows file from r; where names it in errors (the
// part directory and the file).
func newPartReader(r io.Reader, where string) (*partReader, error) {
	pr := &partReader{in: consumed{r: r, buf: make([]byte, 256<<10)}, where: where, skip: map[string]int64{}}
	var magic [len(partMagic)]byte
	if err := pr.in.read(magic[:]); err != nil {
		return nil, pr.errf("reading the header: %v", err)
	}
	pr.off += int64(len(magic))
	if string(magic[:]) != partMagic {
		return nil, pr.errAt(0, "not a Barecat part's rows file (magic %q)", magic[:])
	}
	v, err := pr.uvarint("the format version")
	if err != nil {
		return nil, err
	}
	if v != partVersion {
		return nil, pr.errAt(int64(len(magic)), "part format version %d; this build reads version %d", v, partVersion)
	}
	return pr, nil
}

func noEOF(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}

func (pr *partReader) errf(format string, args ...any) error {
	return pr.errAt(pr.off, format, args...)
}

func (pr *partReader) errAt(off int64, format string, args ...any) error {
	return fmt.Errorf("%s: byte %d: %s: %w", pr.where, off, fmt.Sprintf(format, args...), ErrPart)
}

func (pr *partReader) ReadByte() (byte, error) {
	b, err := pr.in.ReadByte()
	if err == nil {
		pr.off++
	}
	return b, err
}

func (pr *partReader) byte(what string) (byte, error) {
	c, err := pr.ReadByte()
	if err != nil {
		return 0, pr.errf("reading %s: %v", what, noEOF(err))
	}
	return c, nil
}

func (pr *partReader) uvarint(what string) (uint64, error) {
	at := pr.off
	v, err := pr.readUvarint()
	if err != nil {
		return 0, pr.errAt(at, "reading %s: %v", what, noEOF(err))
	}
	return v, nil
}

// readUvarint is binary.ReadUvarint, straight from the buffer where a
// whole varint is in it (the merge's hot path), else byte by byte.
func (pr *partReader) readUvarint() (uint64, error) {
	if c := &pr.in; c.end-c.pos >= binary.MaxVarintLen64 {
		if v, n := binary.Uvarint(c.buf[c.pos:c.end]); n > 0 {
			c.pos += n
			pr.off += int64(n)
			return v, nil
		}
	}
	return binary.ReadUvarint(pr)
}

// count is a uvarint that must fit an int64.
func (pr *partReader) count(what string) (int64, error) {
	at := pr.off
	v, err := pr.uvarint(what)
	if err == nil && v > math.MaxInt64 {
		err = pr.errAt(at, "%s %d out of range", what, v)
	}
	return int64(v), err
}

func (pr *partReader) varint(what string) (int64, error) {
	if c := &pr.in; c.end-c.pos >= binary.MaxVarintLen64 {
		if v, n := binary.Varint(c.buf[c.pos:c.end]); n > 0 {
			c.pos += n
			pr.off += int64(n)
			return v, nil
		}
	}
	at := pr.off
	v, err := binary.ReadVarint(pr)
	if err != nil {
		return 0, pr.errAt(at, "reading %s: %v", what, noEOF(err))
	}
	return v, nil
}

func (pr *partReader) bytes(p []byte, what string) error {
	if err := pr.in.read(p); err != nil {
		return pr.errf("reading %s: %v", what, err)
	}
	pr.off += int64(len(p))
	return nil
}

func (pr *partReader) string(what string) (string, error) {
	at := pr.off
	n, err := pr.readUvarint()
	if err != nil {
		return "", pr.errAt(at, "reading %s's length: %v", what, noEOF(err))
	}
	if n > maxPartPath {
		return "", pr.errAt(at, "%s of %d bytes", what, n)
	}
	if c := &pr.in; uint64(c.end-c.pos) >= n {
		// One allocation: the string, from the buffer.
		s := string(c.buf[c.pos : c.pos+int(n)])
		c.pos += int(n)
		pr.off += int64(n)
		return s, nil
	}
	b := make([]byte, n)
	if err := pr.bytes(b, what); err != nil {
		return "", err
	}
	return string(b), nil
}

// next returns the next file or directory record (recShard and
// recSkipped records are taken in stride), or io.EOF after the summary,
// once the summary agrees with the records and the checksum with the
// bytes. Files are placed in their local shards: next returns their
// shard and offset in it.
func (pr *partReader) next() (r partRow, shard int, off int64, err error) {
	for {
		if pr.done {
			return r, 0, 0, io.EOF
		}
		at := pr.off
		k, err := pr.byte("a record")
		if err != nil {
			return r, 0, 0, err
		}
		switch k {
		case recShard:
			if pr.shard >= maxPartShards {
				return r, 0, 0, pr.errAt(at, "more than %d local shards", maxPartShards)
			}
			pr.n.shards = append(pr.n.shards, 0)
			pr.shard++
			pr.fill = 0
		case recFile, recDir:
			r.kind = k
			if r.flags, err = pr.byte("flags"); err != nil {
				return r, 0, 0, err
			}
			if r.flags&^(hasMode|hasUID|hasGID|hasMtime) != 0 {
				return r, 0, 0, pr.errAt(at+1, "unknown flags %#x", r.flags)
			}
			if r.path, err = pr.string("path"); err != nil {
				return r, 0, 0, err
			}
			if k == recFile {
				if r.size, err = pr.count("size"); err != nil {
					return r, 0, 0, err
				}
				var c [4]byte
				if err := pr.bytes(c[:], "crc32c"); err != nil {
					return r, 0, 0, err
				}
				r.crc = binary.LittleEndian.Uint32(c[:])
			}
			// One by one: pointers to r's fields would move r to the heap.
			if r.mode, err = pr.varint("mode"); err != nil {
				return r, 0, 0, err
			}
			if r.uid, err = pr.varint("uid"); err != nil {
				return r, 0, 0, err
			}
			if r.gid, err = pr.varint("gid"); err != nil {
				return r, 0, 0, err
			}
			if r.mtimeNs, err = pr.varint("mtime"); err != nil {
				return r, 0, 0, err
			}
			pr.n.records++
			if k == recDir {
				return r, 0, 0, nil
			}
			if pr.shard == 0 {
				return r, 0, 0, pr.errAt(at, "file %s before any local shard", human.Name(r.path))
			}
			if r.size > math.MaxInt64-pr.fill || r.size > math.MaxInt64-pr.n.bytes {
				return r, 0, 0, pr.errAt(at, "file %s of %d bytes overflows its shard", human.Name(r.path), r.size)
			}
			off = pr.fill
			pr.fill += r.size
			pr.n.shards[pr.shard-1] += r.size
			pr.n.files++
			pr.n.bytes += r.size
			return r, pr.shard - 1, off, nil
		case recSkipped:
			kind, err := pr.string("row kind")
			if err != nil {
				return r, 0, 0, err
			}
			n, err := pr.count("count of " + kind)
			if err != nil {
				return r, 0, 0, err
			}
			if _, dup := pr.skip[kind]; dup || len(pr.skip) >= 64 {
				return r, 0, 0, pr.errAt(at, "skipped rows of kind %s listed twice (or too many kinds)", human.Name(kind))
			}
			pr.skip[kind] = n
		case recEnd:
			if err := pr.end(at); err != nil {
				return r, 0, 0, err
			}
			pr.done = true
		default:
			return r, 0, 0, pr.errAt(at, "unknown record %#x", k)
		}
	}
}

// end reads the summary, checks it against what the records said, then
// the checksum and the end of the file.
func (pr *partReader) end(at int64) error {
	var s partSummary
	var err error
	if s.shardSize, err = pr.varint("the shard size"); err != nil {
		return err
	}
	if s.records, err = pr.count("the record count"); err != nil {
		return err
	}
	if s.files, err = pr.count("the file count"); err != nil {
		return err
	}
	if s.bytes, err = pr.count("the byte count"); err != nil {
		return err
	}
	n, err := pr.count("the shard count")
	if err != nil {
		return err
	}
	if n != int64(len(pr.n.shards)) {
		return pr.errAt(at, "the summary says %d local shards, the records %d", n, len(pr.n.shards))
	}
	for i := range n {
		sz, err := pr.count("a shard size")
		if err != nil {
			return err
		}
		if sz != pr.n.shards[i] {
			return pr.errAt(at, "the summary says local shard %d has %d bytes, its files %d", i, sz, pr.n.shards[i])
		}
	}
	s.shards = pr.n.shards
	if s.records != pr.n.records || s.files != pr.n.files || s.bytes != pr.n.bytes {
		return pr.errAt(at, "the summary says %d rows, %d files, %d bytes; the records %d, %d, %d",
			s.records, s.files, s.bytes, pr.n.records, pr.n.files, pr.n.bytes)
	}
	want := pr.in.sum()
	var c [4]byte
	if err := pr.bytes(c[:], "the checksum"); err != nil {
		return err
	}
	if got := binary.LittleEndian.Uint32(c[:]); got != want {
		return pr.errAt(pr.off-4, "checksum %08x, the bytes before it give %08x: the file is damaged", got, want)
	}
	if _, err := pr.in.ReadByte(); err != io.EOF {
		return pr.errf("bytes after the end of the rows")
	}
	s.skipped = pr.skip
	pr.sum = &s
	return nil
}
