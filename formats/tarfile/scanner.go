package tarfile

import (
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"strconv"
	"strings"

	"github.com/itarconv/itarconv/internal/pathguard"

	"github.com/itarconv/itarconv/internal/human"
)

// Type flags (the header's byte 156).
const (
	TypeReg           = '0'
	TypeRegA          = '\x00' // pre-POSIX regular file
	TypeLink          = '1'
	TypeSymlink       = '2'
	TypeChar          = '3'
	TypeBlock         = '4'
	TypeDir           = '5'
	TypeFifo          = '6'
	TypeCont          = '7' // contiguous file: a regular file to every reader
	TypeXHeader       = 'x'
	TypeXGlobalHeader = 'g'
	TypeGNUSparse     = 'S'
	TypeGNULongName   = 'L'
	TypeGNULongLink   = 'K'
)

// maxExtensionSize bounds the payload of a pax or long-name header, which is
// held in memory: 1 MiB, as Go's archive/tar allows.
const maxExtensionSize = 1 << 20

// PAXRecord is one "key=value" record of a pax extended header.
type PAXRecord struct {
	Key, Value string
}

// Member is one archive entry: what Scanner.Next returns and what
// Writer.Add and Writer.AddBytes take. The scanner fills every field; the
// writer reads the name, link name, type flag, size, mode, ids, time and pax
// records, and ignores the rest. In a member the scanner returns, the slices
// are valid until the next call to Next; the writer keeps no reference to
// them once Add or AddBytes returns.
type Member struct {
	Name     []byte // full name: pax path > GNU long name > ustar prefix + "/" + name
	Linkname []byte // link target of hard and symbolic links
	Typeflag byte   // '\x00' is reported as TypeReg, or TypeDir when the name ends in '/'
	Format   Format // dialect of the member's own header block (scanner only; the writer ignores it)

	// Offsets are filled by the scanner; the writer ignores them (Add
	// returns where it wrote the member as a Location).
	HeaderOffset int64 // offset of the member's own header block
	FirstOffset  int64 // offset of the first block of its chain (pax or long-name headers)
	DataOffset   int64 // offset of the payload
	Size         int64 // payload bytes stored at DataOffset (0 for links, dirs, devices)

	Mode, UID, GID int64 // Mode: permission bits
	ModTime        int64 // seconds since the epoch
	ModTimeNsec    int32 // nanoseconds, from a pax mtime record

	// PAX holds the member's own pax records, in order; nil without any.
	// The writer puts them in the member's pax header, the last record of
	// a key winning, as archive/tar does: records of the keys it writes
	// from header fields (path, linkpath, size, uid, gid, uname, gname,
	// mtime, atime, ctime) and GNU.sparse records are left out.
	PAX []PAXRecord

	Sparse   bool  // GNU or pax sparse file: the payload is not the file's bytes (scanner only)
	RealSize int64 // logical size of a sparse file (scanner only)

	// Block is the member's own header block as it lies in the archive
	// (scanner only; valid until the next call of Next): for loaders that
	// read its raw fields, such as the name field without the pax, GNU or
	// ustar-prefix name around it.
	Block []byte
}

// IsRegular reports whether the member is a plain file whose payload is its
// content: type '0', '\x00' or '7', and not sparse.
func (m *Member) IsRegular() bool {
	return (m.Typeflag == TypeReg || m.Typeflag == TypeCont) && !m.Sparse
}

// PAXValue returns the value of the member's last pax record with that key.
func (m *Member) PAXValue(key string) (string, bool) {
	for i := len(m.PAX) - 1; i >= 0; i-- {
		if m.PAX[i].Key == key {
			return m.PAX[i].Value, true
		}
	}
	return "", false
}

// Options tune a scan.
type Options struct {
	// IgnoreZeros skips zero blocks instead of stopping at the first one, so
	// that concatenated archives are read whole (GNU tar's --ignore-zeros).
	IgnoreZeros bool
	// HeaderBlocks reports every header block as a member, whatever its
	// type, with the 100-byte name field as its name and its size field as
	// its size, hopping from block to block by that size. This is how the
	// glzn indexer walks a tar; pax, long-name and sparse headers are not
	// interpreted.
	HeaderBlocks bool
	// Strategy chooses how header blocks are read.
	Strategy Strategy
}

// Scanner walks the headers of one tar archive.
type Scanner struct {
	src  *blockReader
	path string
	opts Options

	off     int64 // offset of the next header block
	started bool  // a non-zero header block has been read
	done    bool
	err     error

	m        Member
	name     []byte
	linkname []byte
	longName []byte
	longLink []byte
	hasLongN bool
	hasLongL bool
	pax      []PAXRecord
	hasPAX   bool
	global   []PAXRecord
	chain    int64 // first offset of the pending chain, or -1

	sparse      int    // sparse members seen
	sparseBlock []byte // a copy of the header block of an old GNU sparse member
}

// NewScanner scans the archive in r, which holds size bytes. path names it
// in errors.
func NewScanner(r io.ReaderAt, size int64, path string, opts Options) *Scanner {
	return &Scanner{
		src:   newBlockReader(r, size, opts.Strategy),
		path:  path,
		opts:  opts,
		chain: -1,
	}
}

// Global returns the records of the last pax global header read so far.
// They are reported, not applied: a global "path" would give every member the
// same name, and no common reader renames members by it.
func (s *Scanner) Global() []PAXRecord { return s.global }

// SparseCount is the number of sparse members seen so far.
func (s *Scanner) SparseCount() int { return s.sparse }

// Offset is the offset of the next header block to read; after io.EOF it is
// where the archive's content ends (its end-of-archive marker, or the file end).
func (s *Scanner) Offset() int64 { return s.off }

// ReadStats reports how many reads the scan issued and how many bytes they
// transferred.
func (s *Scanner) ReadStats() (reads, bytes int64) { return s.src.reads, s.src.bytes }

func (s *Scanner) fail(off int64, kind error, format string, args ...any) error {
	s.err = &Error{Path: s.path, Offset: off, Err: kind, Detail: fmt.Sprintf(format, args...)}
	return s.err
}

// block returns n bytes at off, or an ErrTruncated error for the header at
// hdr when the file ends before them.
func (s *Scanner) block(hdr, off, n int64, what string) ([]byte, error) {
	b, err := s.src.read(off, n)
	if err == nil {
		return b, nil
	}
	if errors.Is(err, io.ErrUnexpectedEOF) {
		return nil, s.fail(hdr, ErrTruncated, "%s of %d bytes at offset %d passes the end of the file (%d bytes)", what, n, off, s.src.size)
	}
	return nil, s.fail(hdr, err, "reading %s at offset %d", what, off)
}

func blocksFor(n int64) int64 { return (n + BlockSize - 1) / BlockSize * BlockSize }

// Next returns the next member, or io.EOF after the last one. After an error
// every later call returns the same error.
func (s *Scanner) Next() (*Member, error) {
	if s.err != nil {
		return nil, s.err
	}
	if s.done {
		return nil, io.EOF
	}
	for {
		off := s.off
		if off == s.src.size {
			// A file that ends on a block boundary without the end-of-archive
			// marker is complete; GNU tar and Go read it the same way. So is
			// a pax or long-name header with no member after it (Go ignores
			// it too): it names nothing.
			s.done = true
			return nil, io.EOF
		}
		if s.src.size-off < BlockSize {
			if off == 0 {
				// A compressed tar can be far shorter than one block (gzip
				// makes 45 bytes of an empty archive): tell it by its magic.
				if b, err := s.src.read(0, s.src.size); err == nil {
					if kind := compressedMagic(b); kind != "" {
						return nil, s.fail(0, ErrCompressed, "%s data", kind)
					}
				}
			}
			return nil, s.fail(off, ErrTruncated, "header block needs %d bytes, %d left", BlockSize, s.src.size-off)
		}
		blk, err := s.block(off, off, BlockSize, "header")
		if err != nil {
			return nil, err
		}
		if isZeroBlock(blk) {
			// An extended header cut off by the end of its archive names
			// nothing: it must not rename the next archive's first member.
			s.chain = -1
			s.hasPAX, s.hasLongN, s.hasLongL = false, false, false
			s.pax = s.pax[:0]
			if s.opts.IgnoreZeros {
				s.off += BlockSize
				continue
			}
			s.done = true
			return nil, io.EOF
		}
		if !checksumOK(blk) {
			return nil, s.badChecksum(off, blk)
		}
		s.started = true
		if s.opts.HeaderBlocks {
			return s.headerBlock(off, blk)
		}
		m, err := s.header(off, blk)
		if err != nil {
			return nil, err
		}
		if m != nil {
			return m, nil
		}
	}
}

func (s *Scanner) badChecksum(off int64, blk []byte) error {
	if off == 0 {
		if kind := compressedMagic(blk); kind != "" {
			return s.fail(0, ErrCompressed, "%s data", kind)
		}
		if !s.started {
			return s.fail(0, ErrNotTar, "the first block is not a tar header (bad checksum)")
		}
	}
	stored := strings.Trim(string(blk[offChksum:offChksum+8]), " \x00")
	u, _ := checksums(blk)
	return s.fail(off, ErrChecksum, "stored %q, computed %o", stored, u)
}

func (s *Scanner) numeric(off int64, blk []byte, field string, at, n int) (int64, error) {
	v, ok := parseNumeric(blk[at : at+n])
	if !ok {
		return 0, s.fail(off, ErrHeader, "%s field %q is not a number", field, strings.TrimRight(string(blk[at:at+n]), "\x00"))
	}
	return v, nil
}

// headerBlock reports one header block as it stands (Options.HeaderBlocks).
func (s *Scanner) headerBlock(off int64, blk []byte) (*Member, error) {
	size, err := s.numeric(off, blk, "size", offSize, 12)
	if err != nil {
		return nil, err
	}
	if size < 0 {
		return nil, s.fail(off, ErrHeader, "negative size %d", size)
	}
	m := &s.m
	*m = Member{
		Name:         append(s.name[:0], cString(blk[offName:offName+100])...),
		Linkname:     append(s.linkname[:0], cString(blk[offLinkname:offLinkname+100])...),
		Typeflag:     blk[offTypeflag],
		Format:       formatOf(blk),
		HeaderOffset: off,
		FirstOffset:  off,
		DataOffset:   off + BlockSize,
		Size:         size,
		Block:        blk,
	}
	s.name, s.linkname = m.Name, m.Linkname
	next := off + BlockSize + blocksFor(size)
	if next > s.src.size || next < 0 {
		return nil, s.fail(off, ErrTruncated, "payload of %d bytes at offset %d passes the end of the file (%d bytes)", size, off+BlockSize, s.src.size)
	}
	s.off = next
	s.src.observe(next - off)
	return m, nil
}

// header interprets one header block. It returns nil, nil for blocks that
// only extend the next member (pax 'x', GNU 'L' and 'K').
func (s *Scanner) header(off int64, blk []byte) (*Member, error) {
	typeflag := blk[offTypeflag]
	size, err := s.numeric(off, blk, "size", offSize, 12)
	if err != nil {
		return nil, err
	}
	if size < 0 {
		return nil, s.fail(off, ErrHeader, "negative size %d", size)
	}
	switch typeflag {
	case TypeXHeader, TypeXGlobalHeader, TypeGNULongName, TypeGNULongLink:
		if size > maxExtensionSize {
			return nil, s.fail(off, ErrHeader, "extended header of %d bytes (limit %d)", size, maxExtensionSize)
		}
		// Reading the data may refill the buffer that blk points into. The
		// name is a global header's name when it has no path record.
		hdrName := appendHeaderName(s.name[:0], blk, formatOf(blk))
		s.name = hdrName
		data, err := s.block(off, off+BlockSize, size, "extended header data")
		if err != nil {
			return nil, err
		}
		if typeflag != TypeXGlobalHeader && s.chain < 0 {
			s.chain = off
		}
		next := off + BlockSize + blocksFor(size)
		if next > s.src.size {
			return nil, s.fail(off, ErrTruncated, "padding of extended header passes the end of the file")
		}
		switch typeflag {
		case TypeXHeader:
			// A later 'x' header replaces an earlier one, as in Go and GNU tar.
			recs, ok := parsePAXRecords(data, s.pax[:0])
			if !ok {
				return nil, s.fail(off, ErrHeader, "malformed pax record")
			}
			s.pax, s.hasPAX = recs, true
		case TypeXGlobalHeader:
			recs, ok := parsePAXRecords(data, nil)
			if !ok {
				return nil, s.fail(off, ErrHeader, "malformed pax global record")
			}
			s.global = recs
			s.off = next
			return s.globalMember(off, hdrName, recs)
		case TypeGNULongName:
			s.longName, s.hasLongN = append(s.longName[:0], cString(data)...), true
		case TypeGNULongLink:
			s.longLink, s.hasLongL = append(s.longLink[:0], cString(data)...), true
		}
		s.off = next
		return nil, nil
	}
	return s.member(off, blk, typeflag, size)
}

// globalMember reports a pax global header as a member of type 'g', named by
// its own header (or its path record), as Go's archive/tar does.
func (s *Scanner) globalMember(off int64, name []byte, recs []PAXRecord) (*Member, error) {
	m := &s.m
	*m = Member{
		Name:         name,
		Typeflag:     TypeXGlobalHeader,
		Format:       FormatUSTAR,
		HeaderOffset: off,
		FirstOffset:  off,
		DataOffset:   off + BlockSize,
		PAX:          recs,
	}
	for _, r := range recs {
		if r.Key == "path" && r.Value != "" {
			m.Name = append(m.Name[:0], r.Value...)
		}
	}
	s.name = m.Name
	return m, nil
}

func isHeaderOnly(typeflag byte) bool {
	switch typeflag {
	case TypeLink, TypeSymlink, TypeChar, TypeBlock, TypeDir, TypeFifo:
		return true
	}
	return false
}

// appendHeaderName appends to dst the name a header block gives: its name
// field, after the directory prefix that ustar and star keep in a field of
// their own.
func appendHeaderName(dst, blk []byte, format Format) []byte {
	var prefix []byte
	switch format {
	case FormatUSTAR:
		prefix = cString(blk[offPrefix : offPrefix+155])
	case FormatSTAR:
		prefix = cString(blk[offPrefix : offPrefix+131])
	case FormatGNU:
		// Go before 1.8 wrote a ustar prefix into GNU headers, where GNU keeps
		// atime and ctime. Read it as a prefix only when those fields are not
		// numbers, as Go's archive/tar does.
		_, aok := parseNumeric(blk[offGNUAtime : offGNUAtime+12])
		_, cok := parseNumeric(blk[offGNUCtime : offGNUCtime+12])
		if (blk[offGNUAtime] != 0 && !aok) || (blk[offGNUCtime] != 0 && !cok) {
			if p := cString(blk[offPrefix : offPrefix+155]); isASCII(p) {
				prefix = p
			}
		}
	}
	if len(prefix) > 0 {
		dst = append(dst, prefix...)
		dst = append(dst, '/')
	}
	return append(dst, cString(blk[offName:offName+100])...)
}

// member builds the member whose own header block is blk at off, applying
// the pending pax and long-name headers.
func (s *Scanner) member(off int64, blk []byte, typeflag byte, size int64) (*Member, error) {
	format := formatOf(blk)
	m := &s.m
	*m = Member{
		Typeflag:     typeflag,
		Format:       format,
		HeaderOffset: off,
		FirstOffset:  off,
		DataOffset:   off + BlockSize,
		Block:        blk,
	}
	if s.chain >= 0 {
		m.FirstOffset = s.chain
	}
	if err := s.numbers(off, blk, m); err != nil {
		return nil, err
	}

	name := appendHeaderName(s.name[:0], blk, format)
	link := append(s.linkname[:0], cString(blk[offLinkname:offLinkname+100])...)
	if s.hasLongN && len(s.longName) > 0 {
		name = append(name[:0], s.longName...)
	}
	if s.hasLongL && len(s.longLink) > 0 {
		link = append(link[:0], s.longLink...)
	}
	var sp paxSparse
	if s.hasPAX {
		var err error
		if name, link, size, sp, err = s.applyPAX(off, m, name, link, size); err != nil {
			return nil, err
		}
	}
	if typeflag == TypeRegA {
		if len(name) > 0 && name[len(name)-1] == '/' {
			typeflag = TypeDir
		} else {
			typeflag = TypeReg
		}
		m.Typeflag = typeflag
	}
	m.Name, m.Linkname = name, link
	s.name, s.linkname = name, link

	if isHeaderOnly(typeflag) {
		size = 0
	}
	m.Size = size
	if err := s.sparseMember(off, blk, m, sp); err != nil {
		return nil, err
	}
	if err := s.pastPayload(off, m); err != nil {
		return nil, err
	}
	return m, nil
}

// numbers reads the header's numeric fields: mode, uid, gid, mtime.
func (s *Scanner) numbers(off int64, blk []byte, m *Member) error {
	// The usual shape of all four, read without the general path's calls.
	mode, ok1 := fixedOctal8(blk[offMode : offMode+8])
	uid, ok2 := fixedOctal8(blk[offUID : offUID+8])
	gid, ok3 := fixedOctal8(blk[offGID : offGID+8])
	mtime, ok4 := fixedOctal12(blk[offMtime : offMtime+12])
	if ok1 && ok2 && ok3 && ok4 {
		m.Mode, m.UID, m.GID, m.ModTime = mode, uid, gid, mtime
		return nil
	}
	var err error
	if m.Mode, err = s.numeric(off, blk, "mode", offMode, 8); err != nil {
		return err
	}
	if m.UID, err = s.numeric(off, blk, "uid", offUID, 8); err != nil {
		return err
	}
	if m.GID, err = s.numeric(off, blk, "gid", offGID, 8); err != nil {
		return err
	}
	m.ModTime, err = s.numeric(off, blk, "mtime", offMtime, 12)
	return err
}

// paxSparse is what a member's pax records say of a sparse file.
type paxSparse struct {
	sparse     bool   // a pax sparse format (0.0, 0.1 or 1.0)
	name, size string // GNU.sparse.name, GNU.sparse.size (or realsize)
}

// applyPAX lets the pax records before a member override its header (an
// empty value keeps the header's), and returns its name, link target,
// size and what they say of a sparse file.
func (s *Scanner) applyPAX(off int64, m *Member, name, link []byte, size int64) ([]byte, []byte, int64, paxSparse, error) {
	var sp paxSparse
	m.PAX = append([]PAXRecord(nil), s.pax...)
	for _, r := range s.pax {
		if r.Value == "" {
			continue
		}
		var perr error
		switch r.Key {
		case "path":
			name = append(name[:0], r.Value...)
		case "linkpath":
			link = append(link[:0], r.Value...)
		case "uid":
			m.UID, perr = strconv.ParseInt(r.Value, 10, 64)
		case "gid":
			m.GID, perr = strconv.ParseInt(r.Value, 10, 64)
		case "size":
			size, perr = strconv.ParseInt(r.Value, 10, 64)
			if perr == nil && size < 0 {
				perr = errors.New("negative")
			}
		case "mtime":
			sec, nsec, ok := parsePAXTime(r.Value)
			if !ok {
				perr = errors.New("bad time")
			}
			m.ModTime, m.ModTimeNsec = sec, nsec
		case "GNU.sparse.major", "GNU.sparse.minor", "GNU.sparse.map", "GNU.sparse.offset", "GNU.sparse.numbytes":
			sp.sparse = true
		case "GNU.sparse.name":
			sp.name = r.Value
		case "GNU.sparse.size":
			sp.size = r.Value
		case "GNU.sparse.realsize":
			if sp.size == "" {
				sp.size = r.Value
			}
		}
		if perr != nil {
			return nil, nil, 0, sp, s.fail(off, ErrHeader, "pax record %s=%s: %v", r.Key, human.Name(r.Value), perr)
		}
	}
	if major, ok := m.PAXValue("GNU.sparse.major"); ok {
		minor, _ := m.PAXValue("GNU.sparse.minor")
		// Only versions 0.0, 0.1 and 1.0 are sparse formats.
		sp.sparse = (major == "0" && (minor == "0" || minor == "1")) || (major == "1" && minor == "0")
	}
	return name, link, size, sp, nil
}

// sparseMember reads what makes m a sparse file: the old GNU sparse map's
// extension blocks, or the pax records' name and real size.
func (s *Scanner) sparseMember(off int64, blk []byte, m *Member, sp paxSparse) error {
	switch {
	case m.Typeflag == TypeGNUSparse:
		// Reading the sparse map's extension blocks may refill the buffer
		// that blk points into.
		s.sparseBlock = append(s.sparseBlock[:0], blk...)
		m.Block = s.sparseBlock
		if err := s.gnuSparse(off, blk, m); err != nil {
			return err
		}
	case sp.sparse && !isHeaderOnly(m.Typeflag):
		m.Sparse, m.RealSize = true, m.Size
		if sp.name != "" {
			m.Name = append(m.Name[:0], sp.name...)
			s.name = m.Name
		}
		if sp.size != "" {
			n, err := strconv.ParseInt(sp.size, 10, 64)
			if err != nil || n < 0 {
				return s.fail(off, ErrHeader, "pax sparse size %q", sp.size)
			}
			m.RealSize = n
		}
	}
	if m.Sparse {
		s.sparse++
	}
	return nil
}

// pastPayload checks that m's payload and padding lie within the file, and
// moves the scan past them.
func (s *Scanner) pastPayload(off int64, m *Member) error {
	next := m.DataOffset + blocksFor(m.Size)
	if m.DataOffset+m.Size > s.src.size || next < 0 {
		return s.fail(off, ErrTruncated, "payload of %d bytes at offset %d passes the end of the file (%d bytes)", m.Size, m.DataOffset, s.src.size)
	}
	if next > s.src.size {
		return s.fail(off, ErrTruncated, "padding after the payload passes the end of the file (%d bytes)", s.src.size)
	}
	s.src.observe(next - m.FirstOffset)
	s.off = next
	s.chain = -1
	s.hasPAX, s.hasLongN, s.hasLongL = false, false, false
	s.pax = s.pax[:0]
	return nil
}

// gnuSparse reads the old GNU sparse map's extension blocks so that the
// payload offset is known; the map itself is not needed.
func (s *Scanner) gnuSparse(off int64, blk []byte, m *Member) error {
	if m.Format != FormatGNU {
		return s.fail(off, ErrHeader, "sparse type flag 'S' in a %s header", m.Format)
	}
	real, ok := parseNumeric(blk[offGNURealSize : offGNURealSize+12])
	if !ok || real < 0 {
		return s.fail(off, ErrHeader, "sparse real size field is not a number")
	}
	m.Sparse, m.RealSize = true, real
	extended := blk[offGNUExtended] != 0
	for extended {
		ext, err := s.block(off, m.DataOffset, BlockSize, "sparse extension block")
		if err != nil {
			return err
		}
		extended = ext[504] != 0
		m.DataOffset += BlockSize
	}
	return nil
}

// File is a tar file on disk opened for scanning.
type File struct {
	*Scanner
	f      *os.File
	mapped []byte
}

// Open opens the tar file at path for scanning. With StrategyMmap the file
// is memory-mapped and headers are read in place.
func Open(path string, opts Options) (*File, error) {
	f, err := pathguard.Open(path)
	if errors.Is(err, pathguard.ErrNotRegular) {
		// Refused before opening: a FIFO would block the open forever.
		return nil, &Error{Path: path, Err: ErrNotTar, Detail: strings.TrimPrefix(err.Error(), path+": ")}
	}
	if err != nil {
		return nil, err
	}
	return OpenFile(f, path, opts)
}

// OpenFile is Open for a file the caller opened (named path in
// messages), which the File then owns: it is closed with the File, or
// here where OpenFile fails. A shard just opened for another reason (to
// tell whether it is compressed) is not opened again.
func OpenFile(f *os.File, path string, opts Options) (*File, error) {
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if !st.Mode().IsRegular() {
		f.Close()
		return nil, &Error{Path: path, Err: ErrNotTar, Detail: "not a regular file"}
	}
	file := &File{Scanner: NewScanner(fastReaderAt(f), st.Size(), path, opts), f: f}
	if opts.Strategy == StrategyMmap && st.Size() > 0 {
		m, err := mmapFile(f, st.Size())
		if err != nil {
			f.Close()
			return nil, &Error{Path: path, Err: err, Detail: "memory-mapping the file"}
		}
		file.mapped = m
		file.src.buf, file.src.bufOff, file.src.mapped = m, 0, true
	}
	return file, nil
}

// Next returns the next member, as Scanner.Next. On a mapped file, a fault
// (the file shrank while it was read) becomes an ErrTruncated error instead
// of a crash.
func (f *File) Next() (m *Member, err error) {
	if f.mapped == nil {
		return f.Scanner.Next()
	}
	old := debug.SetPanicOnFault(true)
	defer func() {
		debug.SetPanicOnFault(old)
		if r := recover(); r != nil {
			if _, ok := r.(interface{ Addr() uintptr }); !ok {
				panic(r)
			}
			m, err = nil, f.fail(f.off, ErrTruncated, "the file changed size while it was read")
		}
	}()
	return f.Scanner.Next()
}

// Close unmaps and closes the file.
// Size is the file's size, or -1 when it cannot be told.
func (f *File) Size() int64 {
	fi, err := f.f.Stat()
	if err != nil {
		return -1
	}
	return fi.Size()
}

func (f *File) Close() error {
	if f.mapped != nil {
		munmapFile(f.mapped)
		f.mapped = nil
		f.src.buf, f.src.mapped = nil, false
	}
	if f.f == nil {
		return nil // detached
	}
	return f.f.Close()
}

// Detach ends the scan and hands its file to the caller, who closes it
// (a reader of the members' payloads keeps it, rather than open the tar
// again); Close then closes nothing. Nothing may be read through f after.
func (f *File) Detach() *os.File {
	if f.mapped != nil {
		munmapFile(f.mapped)
		f.mapped = nil
		f.src.buf, f.src.mapped = nil, false
	}
	file := f.f
	f.f = nil
	return file
}

// Walk hands every member of the tar file at path to fn, in order, and
// returns where the archive's content ends (Scanner.Offset after the last
// member).
func Walk(path string, opts Options, fn func(*Member) error) (end int64, err error) {
	f, err := Open(path, opts)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	for {
		m, err := f.Next()
		if err == io.EOF {
			return f.Offset(), nil
		}
		if err != nil {
			return 0, err
		}
		if err := fn(m); err != nil {
			return 0, err
		}
	}
}
