package wids

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/itarconv/itarconv/formats/tarfile"
	"github.com/itarconv/itarconv/internal/safefile"
)

// Header block fields the loader reads.
const (
	offName     = 0
	lenName     = 100
	offSize     = 124
	lenSize     = 12
	offTypeflag = 156
)

// paxHeaderName is a name the loader passes over, whatever the entry's
// type (Python's tarfile names its pax headers so).
const paxHeaderName = "././@PaxHeader"

// Counter counts a shard's samples as the wids loader counts them when it
// opens the shard, from the shard's members in tar order. The loader does
// not read tar the way tar readers do; it hops from header block to header
// block by each block's own size field and reads each block alone:
//
//   - A member's name is its header's raw 100-byte name field with the NUL
//     bytes at both ends stripped: a GNU long name, a pax path or a ustar
//     prefix is not seen, bytes after a NUL inside the field are kept, and
//     the whole field must be UTF-8 (else the loader fails: ErrName).
//   - Only type flags '0' and NUL are files, and the name "././@PaxHeader"
//     is none ('7', contiguous files, are not samples to it).
//   - Names are collected as keys of a dictionary: a repeated name is
//     dropped, wherever it repeats (see Repeated).
//   - A sample is a run of consecutive names with the same key: the name up
//     to the first dot after the last '/' that a dot follows ("d.x/y.jpg"
//     has key "d.x/y", "a.b/c" key "a", ".hidden" key ""). Names without a
//     dot are passed over; a line break is ErrName but at a name's end.
//   - The walk ends at a header whose size field is all NUL bytes (as an
//     end-of-archive block is).
//
// Where the loader's walk would leave the archive's structure (a size
// field that is not the size of what follows the header, such as a pax
// size record's member), Add fails with ErrHeader: the count the loader
// would make there is of bytes that are no headers. Every error of a
// Counter means that the loader cannot read the shard's samples.
//
// The zero Counter is ready. It keeps the names of the samples' members
// (not payloads), and a set of them only once member keys stop increasing,
// so that a shard in key order is counted without a lookup per member.
type Counter struct {
	// Memory bounds the names kept in memory, in bytes (0: no bound):
	// past it, the chunks of names before the current sample's go to a
	// temporary file in TempDir ("" the system's temporary directory),
	// unlinked as soon as it is made and closed by Release. They are
	// read again only if keys stop increasing (the set of names then
	// holds them all).
	Memory  int
	TempDir string
	spill   *os.File
	spilled []extent // chunks 0 to len(spilled)-1 of names, in spill
	spillAt int64
	held    int // bytes of names in memory

	err     error
	stopped bool  // the loader's walk ended at a size field of NULs
	next    int64 // where the next member's chain must begin
	lost    bool  // next is unknown: a pax global header came last
	n       int   // samples
	started bool  // a sample has begun
	key     []byte
	// names holds every name counted, while each sample's key is greater
	// than the one before: no name can then have repeated outside its own
	// sample, whose run names begin at runAt. They lie in chunks, each
	// after its length (a uvarint): bytes, not strings, for the garbage
	// collector has nothing to follow in them. seen replaces them at the
	// first key that is not (or a sample of many members).
	names    [][]byte // chunks from len(spilled) on
	nnames   int
	run      int    // names of the current sample
	runAt    [2]int // the chunk (counted from the first, spilled or not) and offset of its first
	seen     map[string]struct{}
	plain    map[string]struct{} // the names without a dot
	repeated bool
	chunk    strings.Builder // holds the names' bytes
}

// Add takes the next member of the shard, as the tar scanner reports it
// (pax global headers and sparse members included; or every header block,
// with tarfile.Options.HeaderBlocks): its own header block and where it
// lies. After an error it returns that error again.
func (c *Counter) Add(m *tarfile.Member) error {
	if c.err != nil || c.stopped {
		return c.err
	}
	if err := c.add(m); err != nil {
		c.err = fmt.Errorf("member at offset %d: %w", m.HeaderOffset, err)
	}
	return c.err
}

func (c *Counter) add(m *tarfile.Member) error {
	if !c.lost && m.FirstOffset != c.next {
		return fmt.Errorf("%w: its headers begin at offset %d, the loader reads a header at %d", ErrHeader, m.FirstOffset, c.next)
	}
	blk := m.Block
	if blk == nil {
		// A pax global header, reported without its block: the loader
		// passes over its type; its own size field gives the next offset,
		// which the member does not report.
		c.lost = true
		return nil
	}
	if len(blk) < tarfile.BlockSize {
		return fmt.Errorf("%w: a header block of %d bytes", ErrHeader, len(blk))
	}
	c.lost = false
	field := blk[offName : offName+lenName]
	if !utf8.Valid(field) {
		return fmt.Errorf("%w: name field %q is not UTF-8", ErrName, bytes.TrimRight(field, "\x00"))
	}
	tf := blk[offTypeflag]
	if tf >= utf8.RuneSelf {
		return fmt.Errorf("%w: type flag %#x is not ASCII", ErrHeader, tf)
	}
	size := blk[offSize : offSize+lenSize]
	name := stripNUL(field)
	isFile := len(name) > 0 && string(name) != paxHeaderName && (tf == tarfile.TypeReg || tf == tarfile.TypeRegA)
	if isFile {
		// The loader reads a file's size from the field's first 11 bytes.
		if _, ok := pyOctal(size[:lenSize-1]); !ok {
			return fmt.Errorf("%w: size field %q", ErrHeader, size)
		}
	}
	digits := stripNUL(size)
	if len(digits) == 0 {
		c.stopped = true // and isFile is false: its size would not parse
		return nil
	}
	v, ok := pyOctal(digits)
	if !ok {
		return fmt.Errorf("%w: size field %q", ErrHeader, size)
	}
	hop := m.HeaderOffset + tarfile.BlockSize + blocks(v)
	c.next = m.DataOffset + blocks(m.Size)
	if hop != c.next {
		return fmt.Errorf("%w: by its size field (%d) the loader reads the next header at offset %d; it is at %d", ErrHeader, v, hop, c.next)
	}
	if isFile {
		return c.file(name)
	}
	return nil
}

// maxRun bounds the names of one sample looked through for a repeat
// before the names are put in a set.
const maxRun = 64

// file takes the name of a file the loader lists.
func (c *Counter) file(name []byte) error {
	k, ok, err := sampleKey(name)
	if err != nil {
		return err
	}
	if !ok {
		// No part of a sample, but of the loader's list of files.
		if _, dup := c.plain[string(name)]; dup {
			c.repeated = true
		} else {
			if c.plain == nil {
				c.plain = map[string]struct{}{}
			}
			c.plain[c.intern(name)] = struct{}{}
		}
		return nil
	}
	newRun := !c.started || string(k) != string(c.key)
	if c.seen == nil && c.started && (bytes.Compare(k, c.key) < 0 || !newRun && c.run >= maxRun) {
		c.seen = make(map[string]struct{}, 2*c.nnames)
		c.eachName([2]int{}, func(b []byte) bool {
			c.seen[c.intern(b)] = struct{}{}
			return true
		})
		if c.err != nil {
			return c.err
		}
		c.names, c.nnames = nil, 0
		c.closeSpill()
	}
	if c.seen != nil {
		if _, dup := c.seen[string(name)]; dup {
			c.repeated = true
			return nil
		}
	} else if !newRun {
		// Keys have only increased: a name can have come before only in
		// this sample.
		dup := false
		c.eachName(c.runAt, func(b []byte) bool {
			dup = string(b) == string(name)
			return !dup
		})
		if dup {
			c.repeated = true
			return nil
		}
	}
	if c.seen != nil {
		c.seen[c.intern(name)] = struct{}{}
	} else {
		at := c.keepName(name)
		if newRun {
			c.runAt, c.run = at, 0
		}
		c.run++
		c.nnames++
	}
	if newRun {
		c.n++
		c.started = true
		c.key = append(c.key[:0], k...)
	}
	return nil
}

// keepName adds name to names and gives where it begins (chunk, offset).
// Chunks double from 64 KiB to 1 MiB and are never moved.
//
// Past Memory, the chunks before the current sample's go to the spill
// file.
func (c *Counter) keepName(name []byte) [2]int {
	need := binary.MaxVarintLen64 + len(name)
	n := len(c.names)
	if n == 0 || cap(c.names[n-1])-len(c.names[n-1]) < need {
		if c.Memory > 0 && c.held >= c.Memory {
			c.spillNames()
			n = len(c.names)
		}
		size := 64 << 10
		if n > 0 {
			size = min(2*cap(c.names[n-1]), 1<<20)
		}
		if c.Memory > 0 {
			size = min(size, max(c.Memory, 4<<10))
		}
		c.names = append(c.names, make([]byte, 0, max(size, need)))
		n++
	}
	ch := c.names[n-1]
	at := [2]int{len(c.spilled) + n - 1, len(ch)}
	c.names[n-1] = append(binary.AppendUvarint(ch, uint64(len(name))), name...)
	c.held += len(c.names[n-1]) - at[1]
	return at
}

// spillNames writes the chunks of names before the current sample's to
// the spill file. An error is the counter's.
func (c *Counter) spillNames() {
	keep := c.runAt[0] - len(c.spilled) // the current sample's chunk
	if !c.started || keep <= 0 {
		return
	}
	if c.spill == nil {
		f, err := safefile.Scratch(c.TempDir, "wids-names")
		if err != nil {
			c.err = fmt.Errorf("wids: names past %d bytes: %w", c.Memory, err)
			return
		}
		c.spill = f
	}
	for _, ch := range c.names[:keep] {
		if _, err := c.spill.WriteAt(ch, c.spillAt); err != nil {
			c.err = fmt.Errorf("wids: names past %d bytes, %s at %d: %w", c.Memory, c.spill.Name(), c.spillAt, err)
			return
		}
		c.spilled = append(c.spilled, extent{c.spillAt, int64(len(ch))})
		c.spillAt += int64(len(ch))
		c.held -= len(ch)
	}
	c.names = append(c.names[:0], c.names[keep:]...)
}

// Release lets the names go and closes the spill file, if any: the count
// is done (Samples and Repeated still answer).
func (c *Counter) Release() {
	c.closeSpill()
	c.names, c.seen, c.plain, c.chunk = nil, nil, nil, strings.Builder{}
}

func (c *Counter) closeSpill() {
	c.spilled, c.spillAt, c.held = nil, 0, 0
	if c.spill != nil {
		c.spill.Close()
		os.Remove(c.spill.Name()) // where it could not be removed while open
		c.spill = nil
	}
}

// extent is a chunk of names in the spill file.
type extent struct{ off, size int64 }

// eachName calls f with each name kept from from (chunk, offset) on, in
// order, until f says false.
func (c *Counter) eachName(from [2]int, f func(name []byte) bool) {
	var buf []byte
	for ci := from[0]; ci < len(c.spilled)+len(c.names); ci++ {
		var ch []byte
		if ci < len(c.spilled) {
			x := c.spilled[ci]
			buf = slices.Grow(buf[:0], int(x.size))[:x.size]
			if _, err := c.spill.ReadAt(buf, x.off); err != nil {
				c.err = fmt.Errorf("wids: names in %s at %d: %w", c.spill.Name(), x.off, err)
				return
			}
			ch = buf
		} else {
			ch = c.names[ci-len(c.spilled)]
		}
		off := 0
		if ci == from[0] {
			off = from[1]
		}
		for off < len(ch) {
			l, k := binary.Uvarint(ch[off:])
			b := ch[off+k : off+k+int(l)]
			off += k + int(l)
			if !f(b) {
				return
			}
		}
	}
}

// Repeated reports whether a file name came again in the shard. The
// loader counts the name once, but reads a sample's members by their
// position among all the shard's files: after a repeat it takes members
// from the wrong places (the members of one sample split over two, the
// shard's last files out of reach).
func (c *Counter) Repeated() bool { return c.repeated }

// intern copies b into the names' storage, which grows by chunks that are
// never moved, so the strings made of them stay valid.
func (c *Counter) intern(b []byte) string {
	if c.chunk.Cap()-c.chunk.Len() < len(b) {
		c.chunk = strings.Builder{}
		c.chunk.Grow(max(64<<10, len(b)))
	}
	start := c.chunk.Len()
	c.chunk.Write(b)
	return c.chunk.String()[start:]
}

// Samples is the number of samples the loader counts in the shard, once
// every member is added. fileSize is the shard's size: the loader cannot
// open a file of no byte (ErrEmpty).
func (c *Counter) Samples(fileSize int64) (int, error) {
	if c.err != nil {
		return 0, c.err
	}
	if fileSize == 0 {
		return 0, ErrEmpty
	}
	return c.n, nil
}

func blocks(n int64) int64 {
	return (n + tarfile.BlockSize - 1) / tarfile.BlockSize * tarfile.BlockSize
}

// stripNUL strips the NUL bytes at both ends of b, as Python's
// strip("\x00") does. Fields are mostly a string and NUL padding: one
// search and a check of the padding word by word.
func stripNUL(b []byte) []byte {
	i := bytes.IndexByte(b, 0)
	if i < 0 {
		return b
	}
	if i > 0 && allZero(b[i:]) {
		return b[:i]
	}
	for len(b) > 0 && b[0] == 0 {
		b = b[1:]
	}
	for len(b) > 0 && b[len(b)-1] == 0 {
		b = b[:len(b)-1]
	}
	return b
}

func allZero(b []byte) bool {
	for ; len(b) >= 8; b = b[8:] {
		if binary.LittleEndian.Uint64(b) != 0 {
			return false
		}
	}
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

// pyOctal reads an octal number as Python's int(s, 8) does for the size
// fields tar writers write: digits with whitespace around them. What else
// Python would take (a sign, underscores, a "0o" prefix) is refused: the
// tar scanner takes none of it either.
func pyOctal(s []byte) (int64, bool) {
	for len(s) > 0 && isPySpace(s[0]) {
		s = s[1:]
	}
	for len(s) > 0 && isPySpace(s[len(s)-1]) {
		s = s[:len(s)-1]
	}
	if len(s) == 0 || len(s) > 20 {
		return 0, false
	}
	var v int64
	for _, c := range s {
		if c < '0' || c > '7' {
			return 0, false
		}
		v = v<<3 | int64(c-'0')
	}
	return v, true
}

// isPySpace reports whether Python's int() skips c as whitespace.
func isPySpace(c byte) bool {
	return c == ' ' || c >= '\t' && c <= '\r' || c >= 0x1c && c <= 0x1f
}
