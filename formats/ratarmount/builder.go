package ratarmount

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
	"unsafe"

	"github.com/itarconv/itarconv/formats/sqlitefile"
	"github.com/itarconv/itarconv/formats/tarfile"
	"github.com/itarconv/itarconv/internal/human"
	"github.com/itarconv/itarconv/internal/safefile"
)

// Builder gathers the rows of one archive's index from the archive's
// members, handed to Add in archive order as tarfile's scanner reports
// them (default Options: ratarmount stops at the first zero block too).
// It keeps what the index holds, never a payload.
//
// ratarmount reads the archive with Python's tarfile, and every row field
// is what tarfile reports for the member: Add takes the scanner's member
// and its raw header block and computes those fields by tarfile's rules,
// which differ from the scanner's here and there (see Add).
type Builder struct {
	// Archive, when set, is the archive whose members are added. It is
	// read for one thing only: the map at the start of the payload of a
	// GNU pax 1.0 sparse member, which tarfile, and so ratarmount, counts
	// into the member's data offset. Without it such a member is
	// ErrUnsupported.
	Archive io.ReaderAt
	// Memory bounds the rows kept in memory, in bytes (0: no bound): past
	// it, chunks of rows go to a temporary file in TempDir ("" the
	// system's temporary directory; beside the index, on its file
	// system), unlinked as soon as it is made so that nothing is left of
	// it however the run ends, and closed by Release.
	Memory  int
	TempDir string
	// KeysMemory bounds the keys of the files table's index that WriteTo
	// keeps in memory, in bytes (0: no bound): past it (as the rows' sizes
	// tell), they are built again from the rows, twice, as the index is
	// written, and kept nowhere, which takes more time.
	KeysMemory int

	rows    [][]byte // encoded, in chunks: see appendRow
	held    int      // bytes of rows in memory
	spill   *os.File // the chunks of rows before those in rows, if any
	spilled []extent // where they lie in spill, in order
	spillAt int64    // spill's size
	free    []byte   // a chunk written to spill, for the next one
	scratch []byte   // a row being encoded
	nrows   int
	xattrs  []xattrRow
	keyIDs  map[string]int64 // xattrkeys: name -> id, ids from 1 in order of appearance
	keys    []string
	global  paxDict                // the pax global records read so far
	parents map[dirEntry]dirOrigin // ratarmount's parentfolders: first member below each
	dirs    map[dirEntry]bool      // rows whose mode has the directory bit
	lastDir string                 // the path of the last row (its parents are known)
	err     error
}

// row is one member's row of table files (istar, isgenerated and
// recursiondepth are always 0).
type row struct {
	dir, name, linkname  string
	offsetHeader, offset int64
	size                 int64
	mtime                float64
	mode                 int64
	typ                  byte
	uid, gid             int64
	sparse               bool
}

type dirEntry struct{ dir, name string }

// extent is a chunk of rows in the spill file.
type extent struct{ off, size int64 }

type dirOrigin struct{ offsetHeader, offset int64 }

type xattrRow struct {
	offsetHeader, keyID int64
	value               []byte
}

// Mode bits ratarmount adds to a member's permission bits (Python's stat
// module constants), and the mode of the rows it generates for parent
// directories.
const (
	modeDir       = 0o040000
	modeReg       = 0o100000
	modeSymlink   = 0o120000
	modeChar      = 0o020000
	modeFifo      = 0o010000
	generatedMode = 0o555 | modeDir
	generatedType = 5 // int(tarfile.DIRTYPE): an INTEGER, not a BLOB
)

// Add takes the next member of the archive. Pax global headers (type 'g')
// are not rows; their records apply to the members after them, as in
// Python's tarfile.
//
// A member's fields follow tarfile, not the scanner, where the two differ:
// the type flag as stored ('\x00' stays '\x00'; a '\x00' member whose
// 100-byte name field ends in "/" is a directory), a name from the ustar
// prefix field whatever the header's magic, pax records with empty values
// (path "" is the root, uid "" is 0), the size field of links and
// directories, pax global records.
//
// Add returns an error wrapping ErrUnsupported for a member whose row
// cannot be computed so: a GNU incremental archive (type 'D': ratarmount
// then strips name prefixes after reading the headers again), a Solaris
// 'X' header (which tarfile applies to the next member), pax records after
// which tarfile reads the next header elsewhere than the scanner (a size
// record that disagrees with the payload, a sparse member with a size
// record), sparse records in a global header, a GNU pax 1.0 sparse member
// without Builder.Archive, values Python would reject or read by rules of
// its own. After an error, Add and WriteTo return that error.
func (b *Builder) Add(m *tarfile.Member) error {
	if b.err != nil {
		return b.err
	}
	if err := b.add(m); err != nil {
		b.err = fmt.Errorf("member %s at offset %d: %w", human.NameBytes(m.Name), m.HeaderOffset, err)
		return b.err
	}
	return nil
}

// Err is the error of an earlier Add, if any.
func (b *Builder) Err() error { return b.err }

// Len is the number of member rows so far.
func (b *Builder) Len() int { return b.nrows }

func unsupported(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrUnsupported, fmt.Sprintf(format, args...))
}

// Offsets of header fields.
const (
	offName     = 0
	offSize     = 124
	offTypeflag = 156
	offLinkname = 157
	offPrefix   = 345
	endPrefix   = 500
)

func (b *Builder) add(m *tarfile.Member) error {
	if m.Typeflag == tarfile.TypeXGlobalHeader {
		return b.addGlobal(m)
	}
	blk := m.Block
	if len(blk) < tarfile.BlockSize {
		return unsupported("no header block (a scan with Options.HeaderBlocks?)")
	}
	raw := blk[offTypeflag]
	if err := refuseType(raw); err != nil {
		return err
	}
	hasX := m.PAX != nil
	eff := b.effective(m, raw)
	typ := raw
	if raw == tarfile.TypeRegA && bytes.HasSuffix(cString(blk[offName:offName+100]), []byte("/")) {
		typ = tarfile.TypeDir
	}
	name, link := memberNames(m, raw, hasX, eff)
	mtime, uid, gid, err := paxOwnerTime(m, eff)
	if err != nil {
		return err
	}
	size, err := b.size(m, blk, raw, typ, hasX, eff)
	if err != nil {
		return err
	}
	sparse, offset, err := b.sparse(m, raw, hasX, eff)
	if err != nil {
		return err
	}
	if err := b.addXattrs(m.FirstOffset, eff); err != nil {
		return err
	}

	dir, base := splitName(name)
	b.keep(row{
		dir:          escapeText(dir),
		name:         escapeText(base),
		linkname:     escapeText(link),
		offsetHeader: m.FirstOffset,
		offset:       offset,
		size:         size,
		mtime:        mtime,
		mode:         fullMode(m.Mode, typ),
		typ:          typ,
		uid:          uid,
		gid:          gid,
		sparse:       sparse,
	})
	return nil
}

// addGlobal keeps the records of a pax global header, which apply to the
// members after it.
func (b *Builder) addGlobal(m *tarfile.Member) error {
	for _, r := range m.PAX {
		if strings.HasPrefix(r.Key, "GNU.sparse.") {
			// tarfile reads the member after a global header as sparse
			// by the global records.
			return unsupported("pax global header record %s", r.Key)
		}
		b.global.set(r.Key, r.Value)
	}
	return nil
}

// refuseType refuses the type flags whose members tarfile, and so
// ratarmount, reads by rules this builder does not follow, and extension
// headers a scan should not list as members.
func refuseType(raw byte) error {
	switch raw {
	case 'D':
		return unsupported("GNU incremental archive (type 'D'): ratarmount rewrites its names from the raw headers")
	case 'X':
		return unsupported("Solaris extended header (type 'X'), which Python's tarfile applies to the next member")
	case tarfile.TypeXHeader, tarfile.TypeXGlobalHeader, tarfile.TypeGNULongName, tarfile.TypeGNULongLink:
		return unsupported("extension header of type %q listed as a member (a scan with Options.HeaderBlocks?)", raw)
	}
	return nil
}

// effective is the pax records that reach the member in tarfile: with an
// 'x' header, the global records overlaid with its own; without, the
// global ones, except for an old GNU sparse member, which tarfile builds
// without them.
func (b *Builder) effective(m *tarfile.Member, raw byte) paxDict {
	if (m.PAX == nil && raw == tarfile.TypeGNUSparse) || len(b.global)+len(m.PAX) == 0 {
		return nil
	}
	eff := slices.Clone(b.global)
	for _, r := range m.PAX {
		eff.set(r.Key, r.Value)
	}
	return eff
}

// memberNames are the member's name and link target as tarfile gives them.
// tarfile applies, in turn: the header's name (after the ustar prefix
// field when that is not empty), the global records, a GNU long name, then
// (for a member with an 'x' header) the 'x' records overlaid on the global
// ones. Its path and GNU.sparse.name records both set the name; the later
// in record order wins.
func memberNames(m *tarfile.Member, raw byte, hasX bool, eff paxDict) (name, link string) {
	blk := m.Block
	nameField := cString(blk[offName : offName+100])
	headerName := string(nameField)
	if raw != tarfile.TypeGNULongName && raw != tarfile.TypeGNULongLink && raw != tarfile.TypeGNUSparse {
		if p := cString(blk[offPrefix:endPrefix]); len(p) > 0 {
			headerName = string(p) + "/" + headerName
		}
	}
	long := !fromHeader(m.Name, nameField, blk)
	name = headerName
	if long {
		name = string(m.Name)
	}
	if v, ok := eff.last("path", "GNU.sparse.name"); ok && (hasX || !long) {
		name = v
	}
	linkField := cString(blk[offLinkname : offLinkname+100])
	link = string(m.Linkname) // the header's, or a GNU long link
	if v, ok := eff.get("linkpath"); ok && (hasX || bytes.Equal(m.Linkname, linkField)) {
		link = v
	}
	return name, link
}

// paxOwnerTime is the member's mtime, uid and gid: the scanner's are the
// header's unless the member's own records set them, and then eff does
// too.
func paxOwnerTime(m *tarfile.Member, eff paxDict) (mtime float64, uid, gid int64, err error) {
	mtime, uid, gid = float64(m.ModTime), m.UID, m.GID
	if v, ok := eff.get("mtime"); ok {
		if mtime, err = paxFloat(v); err != nil {
			return 0, 0, 0, unsupported("pax mtime: %v", err)
		}
	}
	if v, ok := eff.get("uid"); ok {
		if uid, err = paxInt(v); err != nil {
			return 0, 0, 0, unsupported("pax uid: %v", err)
		}
	}
	if v, ok := eff.get("gid"); ok {
		if gid, err = paxInt(v); err != nil {
			return 0, 0, 0, unsupported("pax gid: %v", err)
		}
	}
	return mtime, uid, gid, nil
}

// keep appends a member's row and notes what the rows of its parent
// directories, which ratarmount generates, need: which paths are
// directories already, and the first member below each.
func (b *Builder) keep(r row) {
	b.appendRow(r)
	if r.mode&modeDir != 0 {
		if b.dirs == nil {
			b.dirs = make(map[dirEntry]bool)
		}
		b.dirs[dirEntry{r.dir, r.name}] = true
	}
	if r.dir != b.lastDir {
		b.addParents(r.dir, r.offsetHeader, r.offset)
		b.lastDir = r.dir
	}
}

// maxRowChunk is the largest chunk of Builder.rows: chunks double from
// 64 KiB to it.
const maxRowChunk = 1 << 20

// appendRow keeps a member's row, encoded (see encodeRow) at the end of
// the last chunk of rows. Chunks are never copied once written: one slice
// grown by append would copy its rows at every growth, and for a large
// archive allocate some five times the memory it ends up holding, fresh
// pages each time; that cost more than the scan of the headers itself.
// Encoded, a row takes its names and some 20 bytes, no pointer for the
// garbage collector to follow, where a row struct took 120 bytes and
// three strings.
//
// A chunk starts with a row that says its directory (decodeRow reads a
// chunk on its own), and past Memory the chunks before the last are
// written to the spill file.
func (b *Builder) appendRow(r row) {
	e := encodeRow(b.scratch[:0], &r, r.dir == b.lastDir && b.nrows > 0)
	n := len(b.rows)
	if n == 0 || cap(b.rows[n-1])-len(b.rows[n-1]) < len(e) {
		if n > 0 && b.Memory > 0 && b.held >= b.Memory {
			b.spillRows()
			n = len(b.rows)
		}
		size := 64 << 10
		if n > 0 {
			size = min(2*cap(b.rows[n-1]), maxRowChunk)
		} else if len(b.spilled) > 0 {
			size = maxRowChunk
		}
		if b.Memory > 0 {
			size = min(size, max(b.Memory, 4<<10))
		}
		e = encodeRow(e[:0], &r, false)
		if cap(b.free) >= max(size, len(e)) {
			b.rows = append(b.rows, b.free[:0])
			b.free = nil
		} else {
			b.rows = append(b.rows, make([]byte, 0, max(size, len(e))))
		}
		n++
	}
	b.scratch = e
	b.rows[n-1] = append(b.rows[n-1], e...)
	b.held += len(e)
	b.nrows++
}

// spillRows writes the chunks of rows in memory to the spill file, and
// keeps the last one's memory for the next chunk. An error is the
// builder's.
func (b *Builder) spillRows() {
	if b.spill == nil {
		f, err := safefile.Scratch(b.TempDir, "ratarmount-rows")
		if err != nil {
			b.err = fmt.Errorf("rows past %d bytes: %w", b.Memory, err)
			return
		}
		b.spill = f
	}
	for _, c := range b.rows {
		if _, err := b.spill.WriteAt(c, b.spillAt); err != nil {
			b.err = fmt.Errorf("rows past %d bytes, %s at %d: %w", b.Memory, b.spill.Name(), b.spillAt, err)
			return
		}
		b.spilled = append(b.spilled, extent{b.spillAt, int64(len(c))})
		b.spillAt += int64(len(c))
	}
	b.free = b.rows[len(b.rows)-1]
	clear(b.rows)
	b.rows, b.held = b.rows[:0], 0
}

// eachChunk calls fn with each chunk of rows, in order: those in the
// spill file read into a buffer of its own (calls may run at once).
func (b *Builder) eachChunk(fn func(chunk []byte) error) error {
	var buf []byte
	for _, x := range b.spilled {
		if int64(cap(buf)) < x.size {
			buf = make([]byte, x.size)
		}
		buf = buf[:x.size]
		if _, err := b.spill.ReadAt(buf, x.off); err != nil {
			return fmt.Errorf("rows in %s at %d: %w", b.spill.Name(), x.off, err)
		}
		if err := fn(buf); err != nil {
			return err
		}
	}
	for _, c := range b.rows {
		if err := fn(c); err != nil {
			return err
		}
	}
	return nil
}

// Release closes the spill file, if any; the builder is not to be used
// after.
func (b *Builder) Release() {
	if b.spill != nil {
		b.spill.Close()
		os.Remove(b.spill.Name()) // where it could not be removed while open
		b.spill = nil
	}
	b.rows, b.spilled, b.free = nil, nil, nil
}

// encodeRow appends r to e: its directory (its length plus 1, or 0 for
// sameDir, the directory of the row before), name and link name, each
// after its length, then its numbers (varints; mtime's 8 bytes), its type
// and whether it is sparse.
func encodeRow(e []byte, r *row, sameDir bool) []byte {
	if sameDir {
		e = append(e, 0)
	} else {
		e = binary.AppendUvarint(e, uint64(len(r.dir))+1)
		e = append(e, r.dir...)
	}
	e = binary.AppendUvarint(e, uint64(len(r.name)))
	e = append(e, r.name...)
	e = binary.AppendUvarint(e, uint64(len(r.linkname)))
	e = append(e, r.linkname...)
	e = binary.AppendVarint(e, r.offsetHeader)
	e = binary.AppendVarint(e, r.offset)
	e = binary.AppendVarint(e, r.size)
	e = binary.LittleEndian.AppendUint64(e, math.Float64bits(r.mtime))
	e = binary.AppendVarint(e, r.mode)
	e = append(e, r.typ)
	e = binary.AppendVarint(e, r.uid)
	e = binary.AppendVarint(e, r.gid)
	return append(e, boolByte(r.sparse))
}

func boolByte(b bool) byte {
	if b {
		return 1
	}
	return 0
}

// decodeRow reads the row at the start of p, written by encodeRow after
// a row of directory dir, into r, and gives the rest of p. r's strings lie
// in p: they are valid as long as p is.
func decodeRow(p []byte, r *row, dir string) []byte {
	text := func() string {
		n, k := binary.Uvarint(p)
		s := bytesString(p[k : k+int(n)])
		p = p[k+int(n):]
		return s
	}
	num := func() int64 {
		v, k := binary.Varint(p)
		p = p[k:]
		return v
	}
	if p[0] == 0 {
		r.dir = dir
		p = p[1:]
	} else {
		n, k := binary.Uvarint(p)
		r.dir = bytesString(p[k : k+int(n)-1])
		p = p[k+int(n)-1:]
	}
	r.name = text()
	r.linkname = text()
	r.offsetHeader = num()
	r.offset = num()
	r.size = num()
	r.mtime = math.Float64frombits(binary.LittleEndian.Uint64(p))
	p = p[8:]
	r.mode = num()
	r.typ = p[0]
	p = p[1:]
	r.uid = num()
	r.gid = num()
	r.sparse = p[0] != 0
	return p[1:]
}

// decodeKey is decodeRow for the columns of the files index only: the
// row's directory, name and header offset; the rest of the row is passed
// over.
func decodeKey(p []byte, dir string) (rest []byte, d, name string, offsetHeader int64) {
	if p[0] == 0 {
		d = dir
		p = p[1:]
	} else {
		n, k := binary.Uvarint(p)
		d = bytesString(p[k : k+int(n)-1])
		p = p[k+int(n)-1:]
	}
	n, k := binary.Uvarint(p)
	name = bytesString(p[k : k+int(n)])
	p = p[k+int(n):]
	n, k = binary.Uvarint(p) // linkname
	p = p[k+int(n):]
	offsetHeader, k = binary.Varint(p)
	p = skipVarints(p[k:], 2)           // offset, size
	p = skipVarints(p[8:], 1)           // mtime, mode
	p = skipVarints(p[1:], 2)           // type, uid, gid
	return p[1:], d, name, offsetHeader // sparse
}

// skipVarints passes over n varints at the start of p.
func skipVarints(p []byte, n int) []byte {
	for i := 0; n > 0; i++ {
		if p[i] < 0x80 {
			n--
			if n == 0 {
				return p[i+1:]
			}
		}
	}
	return p
}

// bytesString is b as a string, without a copy: the rows' text, handed
// to a writer that copies it.
func bytesString(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(&b[0], len(b))
}

// fromHeader tells whether the scanner took name from the header block
// (its name field, after a ustar prefix) rather than from a GNU long name.
// It is called only where no pax record named the member.
func fromHeader(name, nameField, blk []byte) bool {
	if bytes.Equal(name, nameField) {
		return true
	}
	n := len(name) - len(nameField) - 1
	return n > 0 && bytes.HasSuffix(name, nameField) && name[n] == '/' &&
		bytes.HasPrefix(blk[offPrefix:], name[:n])
}

// fullMode is ratarmount's _tar_info_full_mode: the mode field with the
// file-type bits of the types tarfile tests for (none for hard links and
// block devices).
func fullMode(mode int64, typ byte) int64 {
	switch typ {
	case tarfile.TypeDir:
		return mode | modeDir
	case tarfile.TypeReg, tarfile.TypeRegA, tarfile.TypeCont, tarfile.TypeGNUSparse, 'D':
		return mode | modeReg
	case tarfile.TypeSymlink:
		return mode | modeSymlink
	case tarfile.TypeChar:
		return mode | modeChar
	case tarfile.TypeFifo:
		return mode | modeFifo
	}
	return mode
}

// isRegular and supported are tarfile's REGULAR_TYPES and SUPPORTED_TYPES:
// tarfile skips the payload of the former and of types not in the latter.
func isRegular(typ byte) bool {
	switch typ {
	case tarfile.TypeReg, tarfile.TypeRegA, tarfile.TypeCont, tarfile.TypeGNUSparse:
		return true
	}
	return false
}

func supported(typ byte) bool {
	switch typ {
	case tarfile.TypeLink, tarfile.TypeSymlink, tarfile.TypeDir, tarfile.TypeFifo, tarfile.TypeChar,
		tarfile.TypeBlock, tarfile.TypeGNULongName, tarfile.TypeGNULongLink:
		return true
	}
	return isRegular(typ)
}

// size is the size tarfile reports, and ratarmount stores: the size field
// (of any type; the scanner counts no payload for links and directories),
// the real size of an old GNU sparse member, then the pax size,
// GNU.sparse.size and GNU.sparse.realsize records in record order.
func (b *Builder) size(m *tarfile.Member, blk []byte, raw, typ byte, hasX bool, eff paxDict) (int64, error) {
	size, err := headerNumber(blk[offSize : offSize+12])
	if err != nil {
		return 0, unsupported("size %v", err)
	}
	if raw == tarfile.TypeGNUSparse {
		size = m.RealSize
	}
	hasSize := false
	for _, r := range eff {
		switch r.Key {
		case "size":
			hasSize = true
			if size, err = paxInt(r.Value); err != nil {
				return 0, unsupported("pax size: %v", err)
			}
		case "GNU.sparse.size", "GNU.sparse.realsize":
			if size, err = sparseInt(r); err != nil {
				return 0, err
			}
		}
	}
	if size < 0 {
		return 0, unsupported("negative size %d", size)
	}
	// With a size record, tarfile finds the next header after this size
	// rounded up to blocks; the scanner, after the payload it counted.
	if hasX && hasSize && (isRegular(typ) || !supported(typ)) && blocks(size) != blocks(m.Size) {
		return 0, unsupported("pax size %d: Python's tarfile reads the next header after %d bytes of payload, not %d", size, blocks(size), blocks(m.Size))
	}
	// ratarmount's own correction for a sparse member with a size record.
	if hasSize {
		for _, k := range []string{"GNU.sparse.size", "GNU.sparse.realsize"} {
			if v, ok := eff.get(k); ok {
				if size, err = sparseInt(tarfile.PAXRecord{Key: k, Value: v}); err != nil {
					return 0, err
				}
			}
		}
	}
	return size, nil
}

func blocks(n int64) int64 {
	return (n + tarfile.BlockSize - 1) / tarfile.BlockSize * tarfile.BlockSize
}

// sparseInt reads a GNU.sparse.* number as tarfile does, with int(); an
// error there stops Python's tarfile, so ratarmount has no index.
func sparseInt(r tarfile.PAXRecord) (int64, error) {
	if r.Value == "" {
		return 0, unsupported("empty pax %s record", r.Key)
	}
	n, err := paxInt(r.Value)
	if err != nil {
		return 0, unsupported("pax %s: %v", r.Key, err)
	}
	return n, nil
}

// sparse tells whether tarfile reads the member as sparse, and where its
// data starts for ratarmount: after the header, or, for a GNU pax 1.0
// sparse member, after the sparse map at the start of the payload.
func (b *Builder) sparse(m *tarfile.Member, raw byte, hasX bool, eff paxDict) (bool, int64, error) {
	if raw == tarfile.TypeGNUSparse {
		return true, m.DataOffset, nil // after the extension blocks, as tarfile
	}
	if m.DataOffset != m.HeaderOffset+tarfile.BlockSize {
		return false, 0, unsupported("payload at %d, not right after the header at %d", m.DataOffset, m.HeaderOffset)
	}
	if !hasX {
		return false, m.DataOffset, nil
	}
	major, _ := eff.get("GNU.sparse.major")
	minor, _ := eff.get("GNU.sparse.minor")
	if v, ok := eff.get("GNU.sparse.map"); ok { // format 0.1
		for _, s := range strings.Split(v, ",") {
			if _, err := sparseInt(tarfile.PAXRecord{Key: "GNU.sparse.map", Value: s}); err != nil {
				return false, 0, err
			}
		}
		return true, m.DataOffset, nil
	}
	if _, ok := eff.get("GNU.sparse.size"); ok { // format 0.0
		for _, r := range m.PAX {
			if r.Key == "GNU.sparse.offset" || r.Key == "GNU.sparse.numbytes" {
				if _, err := sparseInt(r); err != nil {
					return false, 0, err
				}
			}
		}
		return true, m.DataOffset, nil
	}
	if major == "1" && minor == "0" {
		off, err := b.sparseMapEnd(m)
		if err != nil {
			return false, 0, err
		}
		return true, off, nil
	}
	return false, m.DataOffset, nil
}

// sparseMapEnd reads a GNU pax 1.0 sparse map as tarfile does: the number
// of entries, then twice that many numbers, each line ended by "\n", read
// block by block until the last line is complete. The data starts at the
// next block.
func (b *Builder) sparseMapEnd(m *tarfile.Member) (int64, error) {
	if b.Archive == nil {
		return 0, unsupported("GNU pax 1.0 sparse member: its data offset needs the map at the start of its payload (Builder.Archive)")
	}
	limit := blocks(m.Size) / tarfile.BlockSize
	var buf []byte
	read := func() error {
		n := int64(len(buf)) / tarfile.BlockSize
		if n >= limit {
			return unsupported("GNU pax 1.0 sparse map longer than the payload")
		}
		blk := make([]byte, tarfile.BlockSize)
		if _, err := b.Archive.ReadAt(blk, m.DataOffset+n*tarfile.BlockSize); err != nil {
			return fmt.Errorf("reading the sparse map at offset %d: %w", m.DataOffset+n*tarfile.BlockSize, err)
		}
		buf = append(buf, blk...)
		return nil
	}
	if err := read(); err != nil {
		return 0, err
	}
	pos := 0
	line := func() (string, error) {
		for {
			if i := bytes.IndexByte(buf[pos:], '\n'); i >= 0 {
				s := string(buf[pos : pos+i])
				pos += i + 1
				return s, nil
			}
			if err := read(); err != nil {
				return "", err
			}
		}
	}
	// The first line must be in the first block: tarfile splits it without
	// reading on.
	if bytes.IndexByte(buf, '\n') < 0 {
		return 0, unsupported("GNU pax 1.0 sparse map without a line in its first block")
	}
	s, _ := line()
	fields, err := strconv.ParseInt(s, 10, 64)
	if err != nil || !pyIntSyntax.MatchString(s) {
		return 0, unsupported("GNU pax 1.0 sparse map count %s", human.Name(s))
	}
	for i := int64(0); i < 2*fields; i++ {
		s, err := line()
		if err != nil {
			return 0, err
		}
		if !pyIntSyntax.MatchString(s) {
			return 0, unsupported("GNU pax 1.0 sparse map number %s", human.Name(s))
		}
	}
	return m.DataOffset + int64(len(buf)), nil
}

// addXattrs records the member's extended attributes as ratarmount reads
// them from the pax records that reach it: SCHILY.xattr.<key> with the
// value's bytes, then LIBARCHIVE.xattr.<url-quoted key> with a base64
// value, which replaces a SCHILY value of the same key in place.
func (b *Builder) addXattrs(offsetHeader int64, eff paxDict) error {
	const schily, libarchive = "SCHILY.xattr.", "LIBARCHIVE.xattr."
	var attrs paxDict
	for _, r := range eff {
		if strings.HasPrefix(r.Key, schily) {
			attrs = append(attrs, tarfile.PAXRecord{Key: r.Key[len(schily):], Value: r.Value})
		}
	}
	for _, r := range eff {
		if strings.HasPrefix(r.Key, libarchive) {
			v, err := decodeB64(r.Value)
			if err != nil {
				return unsupported("pax %s: %v", r.Key, err)
			}
			attrs.set(unquote(r.Key[len(libarchive):]), string(v))
		}
	}
	for _, a := range attrs {
		if !utf8.ValidString(a.Key) {
			// Python's sqlite3 cannot store it: ratarmount stops.
			return unsupported("extended attribute name %s is not UTF-8", human.Name(a.Key))
		}
		id, ok := b.keyIDs[a.Key]
		if !ok {
			if b.keyIDs == nil {
				b.keyIDs = make(map[string]int64)
			}
			b.keys = append(b.keys, a.Key)
			id = int64(len(b.keys))
			b.keyIDs[a.Key] = id
		}
		b.xattrs = append(b.xattrs, xattrRow{offsetHeader: offsetHeader, keyID: id, value: []byte(a.Value)})
	}
	return nil
}

// addParents records the directories above a row whose path is dir
// ("/a/b": ("", "a") and ("/a", "b")) with the row's offsets, unless an
// earlier row recorded them: ratarmount's INSERT OR IGNORE into
// parentfolders keeps the first.
func (b *Builder) addParents(dir string, offsetHeader, offset int64) {
	for start := 0; start < len(dir); {
		end := strings.IndexByte(dir[start+1:], '/')
		if end < 0 {
			end = len(dir)
		} else {
			end += start + 1
		}
		k := dirEntry{dir[:start], dir[start+1 : end]}
		if _, ok := b.parents[k]; !ok {
			if b.parents == nil {
				b.parents = make(map[dirEntry]dirOrigin)
			}
			b.parents[k] = dirOrigin{offsetHeader, offset}
		}
		start = end
	}
}

// generated lists the parent directories that no row with the directory
// bit provides, sorted by (path, name) as SQLite's ORDER BY sorts text:
// bytewise.
func (b *Builder) generated() []dirEntry {
	var out []dirEntry
	for k := range b.parents {
		if !b.dirs[k] {
			out = append(out, k)
		}
	}
	slices.SortFunc(out, func(x, y dirEntry) int {
		if c := strings.Compare(x.dir, y.dir); c != 0 {
			return c
		}
		return strings.Compare(x.name, y.name)
	})
	return out
}

// tables hands fn the rows of the index, table by table (files, xattrkeys,
// xattrsdata, versions, metadata), each table's rows in the order of their
// rowids, each as the values of the table's columns in the storage class
// SQLite stores for them, the columns' affinities applied (a writer of
// pages applies none): TEXT for the text columns, INTEGER for the integer
// and BOOL (NUMERIC) columns, REAL for mtime (REAL affinity: an integral
// mtime too), BLOB for a member's type (the flag byte, which Python binds
// as bytes; a generated row has the INTEGER 5) and for an xattr's value,
// and xattrkeys' id, the rowid, as an INTEGER. row and the bytes it refers
// to are valid only during the call. This is everything a writer needs
// besides Schema and tableKeys.
func (b *Builder) tables(archive os.FileInfo, fn func(table string, row []sqlitefile.Value) error) error {
	if b.err != nil {
		return b.err
	}
	if b.nrows == 0 {
		return ErrEmpty
	}
	var (
		vals [15]sqlitefile.Value // files has 15 columns
	)
	err := b.memberRows(func(row []sqlitefile.Value) error { return fn(TableFiles, row) })
	if err != nil {
		return err
	}
	if err := b.generatedRows(func(row []sqlitefile.Value) error { return fn(TableFiles, row) }); err != nil {
		return err
	}
	for i, k := range b.keys {
		vals[0], vals[1] = sqlitefile.Int(int64(i+1)), sqlitefile.Text(k)
		if err := fn(TableXattrKeys, vals[:2]); err != nil {
			return err
		}
	}
	for _, x := range b.xattrs {
		vals[0], vals[1], vals[2] = sqlitefile.Int(x.offsetHeader), sqlitefile.Int(x.keyID), sqlitefile.Blob(x.value)
		if err := fn(TableXattrsData, vals[:3]); err != nil {
			return err
		}
	}
	for _, v := range []struct {
		name, version       string
		major, minor, patch int64
	}{{"ratarmount", ToolVersion, 0, 11, 1}, {"index", IndexVersion, 0, 7, 0}} {
		vals[0], vals[1] = sqlitefile.Text(v.name), sqlitefile.Text(v.version)
		vals[2], vals[3], vals[4] = sqlitefile.Int(v.major), sqlitefile.Int(v.minor), sqlitefile.Int(v.patch)
		if err := fn(TableVersions, vals[:5]); err != nil {
			return err
		}
	}
	for _, kv := range [][2]string{
		{"tarstats", tarStatsJSON(archive)},
		{"arguments", Arguments},
		{"backendName", BackendName},
		{"isGnuIncremental", "0"},
	} {
		vals[0], vals[1] = sqlitefile.Text(kv[0]), sqlitefile.Text(kv[1])
		if err := fn(TableMetadata, vals[:2]); err != nil {
			return err
		}
	}
	return nil
}

// generatedRows hands fn the rows of table files that ratarmount
// generates for parent directories, after the members' (see tables).
func (b *Builder) generatedRows(fn func(row []sqlitefile.Value) error) error {
	var vals [15]sqlitefile.Value
	zero := sqlitefile.Int(0)
	for _, g := range b.generated() {
		o := b.parents[g]
		vals = [15]sqlitefile.Value{
			sqlitefile.Text(g.dir), sqlitefile.Text(g.name), sqlitefile.Int(o.offsetHeader),
			sqlitefile.Int(o.offset), zero, sqlitefile.Real(0),
			sqlitefile.Int(generatedMode), sqlitefile.Int(generatedType), sqlitefile.Text(""),
			zero, zero, zero, zero,
			zero, zero,
		}
		if err := fn(vals[:]); err != nil {
			return err
		}
	}
	return nil
}

// memberRows hands fn the members' rows of table files, as tables does.
// Calls may run at once.
func (b *Builder) memberRows(fn func(row []sqlitefile.Value) error) error {
	var (
		vals [15]sqlitefile.Value // files has 15 columns
		typ  [1]byte
		zero = sqlitefile.Int(0)
		r    row
	)
	return b.eachChunk(func(chunk []byte) error {
		for p := chunk; len(p) > 0; {
			p = decodeRow(p, &r, r.dir)
			typ[0] = r.typ
			vals = [15]sqlitefile.Value{
				sqlitefile.Text(r.dir), sqlitefile.Text(r.name), sqlitefile.Int(r.offsetHeader),
				sqlitefile.Int(r.offset), sqlitefile.Int(r.size), sqlitefile.Real(r.mtime),
				sqlitefile.Int(r.mode), sqlitefile.Blob(typ[:]), sqlitefile.Text(r.linkname),
				sqlitefile.Int(r.uid), sqlitefile.Int(r.gid), zero, sqlitefile.Int(boolInt(r.sparse)),
				zero, zero,
			}
			if err := fn(vals[:]); err != nil {
				return err
			}
		}
		return nil
	})
}

func boolInt(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// paxDict is a Python dict of pax records: keys in the order of their
// first record, each with its last value.
type paxDict []tarfile.PAXRecord

func (d *paxDict) set(k, v string) {
	for i := range *d {
		if (*d)[i].Key == k {
			(*d)[i].Value = v
			return
		}
	}
	*d = append(*d, tarfile.PAXRecord{Key: k, Value: v})
}

func (d paxDict) get(k string) (string, bool) {
	for _, r := range d {
		if r.Key == k {
			return r.Value, true
		}
	}
	return "", false
}

// last is the value of whichever of the keys comes last in the dict.
func (d paxDict) last(keys ...string) (v string, ok bool) {
	for _, r := range d {
		if slices.Contains(keys, r.Key) {
			v, ok = r.Value, true
		}
	}
	return v, ok
}
