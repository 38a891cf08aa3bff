package taridx

import (
	"bytes"
	"fmt"
	"io"
	"runtime"
	"strings"
	"unicode/utf8"

	"github.com/itarconv/itarconv/internal/offheap"
	"github.com/itarconv/itarconv/internal/pathguard"
)

// Index is a TARIDX file read into memory: its header, tables and rows (32
// bytes a row, decoded on access).
type Index struct {
	Path       string
	Header     Header
	Exts       []string // extension names by id
	CrashStems []string // crash stems; crash id i+1 is CrashStems[i]
	rows       []byte
}

// Len is the number of rows.
func (x *Index) Len() int { return len(x.rows) / RecordSize }

// Row returns row i.
func (x *Index) Row(i int) Row {
	r := DecodeRow(x.rows[i*RecordSize:])
	// The rows may live outside the heap, released once x is unreachable:
	// x must stay reachable until they are read.
	runtime.KeepAlive(x)
	return r
}

// ExtID returns the id of an extension, or -1.
func (x *Index) ExtID(ext string) int {
	for i, e := range x.Exts {
		if e == ext {
			return i
		}
	}
	return -1
}

// ReadFile reads and validates the TARIDX file at path. The rows are kept
// outside the Go heap where the system allows it (internal/offheap),
// released once the index is unreachable.
func ReadFile(path string) (*Index, error) {
	f, err := pathguard.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() || st.Size() > maxInt {
		// Not a file whose size tells what to read: read it to its end.
		data, err := io.ReadAll(f)
		if err != nil {
			return nil, fmt.Errorf("reading %s: %w", path, err)
		}
		return Parse(path, data)
	}
	data, release := offheap.Alloc(int(st.Size()))
	n, err := io.ReadFull(f, data)
	if err == nil {
		// The file grew since Stat: read what it holds now.
		var more []byte
		if more, err = io.ReadAll(f); err == nil && len(more) > 0 {
			all := append(append([]byte(nil), data...), more...)
			release()
			return Parse(path, all)
		}
	}
	if err != nil && err != io.ErrUnexpectedEOF {
		release()
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	x, err := Parse(path, data[:n])
	if err != nil {
		release()
		return nil, err
	}
	runtime.AddCleanup(x, func(f func()) { f() }, release)
	return x, nil
}

const maxInt = int64(^uint(0) >> 1)

// Read reads and validates a TARIDX file from r; name is used in errors.
func Read(name string, r io.Reader) (*Index, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	return Parse(name, data)
}

// Parse validates a whole TARIDX file held in data. It checks everything the
// format's reader requirements list, MUST and SHOULD alike: the magic, the
// version, the header and record sizes, the region offsets, the row count,
// the extension and crash-stem counts (blocks split on "\n" only, guided by
// the counts), that the tables are valid UTF-8 without duplicates, and that
// every row's extension and crash ids exist. The reserved bytes and unknown
// flag bits are ignored, as the format requires.
func Parse(name string, data []byte) (*Index, error) {
	h, err := checkHeader(name, data, uint64(len(data)))
	if err != nil {
		return nil, err
	}
	exts, crash, err := checkTables(name, h, data[HeaderSize:h.OffArr])
	if err != nil {
		return nil, err
	}
	x := &Index{Path: name, Header: h, Exts: exts, CrashStems: crash, rows: data[h.OffArr:]}
	for i, n := 0, x.Len(); i < n; i++ {
		if err := checkRow(name, h, i, x.Row(i)); err != nil {
			return nil, err
		}
	}
	return x, nil
}

// checkHeader decodes and checks the header at the start of data, the
// first bytes of a file of size bytes.
func checkHeader(name string, data []byte, size uint64) (Header, error) {
	fail := func(off int64, kind error, format string, args ...any) (Header, error) {
		return Header{}, &Error{Path: name, Offset: off, Err: kind, Detail: fmt.Sprintf(format, args...)}
	}
	if size < HeaderSize || len(data) < HeaderSize {
		return fail(0, ErrFormat, "file of %d bytes is shorter than the %d-byte header", size, HeaderSize)
	}
	if !bytes.Equal(data[:8], []byte(Magic+"\x00\x00")) {
		return fail(0, ErrFormat, "bad magic %q", data[:8])
	}
	h := decodeHeader(data)
	switch {
	case h.Major != Major:
		return fail(8, ErrVersion, "major version %d (this reader knows %d)", h.Major, Major)
	case h.HdrSize != HeaderSize:
		return fail(14, ErrFormat, "hdr_size %d, want %d", h.HdrSize, HeaderSize)
	case h.RecSize != RecordSize:
		return fail(12, ErrFormat, "rec_size %d, want %d", h.RecSize, RecordSize)
	case h.OffCrash < HeaderSize:
		return fail(40, ErrCorrupt, "off_crash %d is inside the header", h.OffCrash)
	case h.OffArr < h.OffCrash:
		return fail(48, ErrCorrupt, "off_arr %d is before off_crash %d", h.OffArr, h.OffCrash)
	case h.OffArr > size:
		return fail(48, ErrCorrupt, "off_arr %d is past the end of the file (%d bytes)", h.OffArr, size)
	case (size-h.OffArr)%RecordSize != 0:
		return fail(int64(h.OffArr), ErrCorrupt, "row region of %d bytes is not a whole number of %d-byte rows", size-h.OffArr, RecordSize)
	case (size-h.OffArr)/RecordSize != h.NRows:
		return fail(24, ErrCorrupt, "n_rows is %d but the file holds %d rows", h.NRows, (size-h.OffArr)/RecordSize)
	}
	return h, nil
}

// checkTables splits and checks the extension and crash-stem blocks,
// tables being the bytes from the header's end to the rows.
func checkTables(name string, h Header, tables []byte) (exts, crash []string, err error) {
	exts, err = splitBlock(tables[:h.OffCrash-HeaderSize], int(h.NExt))
	if err != nil {
		return nil, nil, &Error{Path: name, Offset: HeaderSize, Err: ErrCorrupt, Detail: fmt.Sprintf("extension block: n_ext is %d: %v", h.NExt, err)}
	}
	crash, err = splitBlock(tables[h.OffCrash-HeaderSize:], int(h.NCrash))
	if err != nil {
		return nil, nil, &Error{Path: name, Offset: int64(h.OffCrash), Err: ErrCorrupt, Detail: fmt.Sprintf("crash-stem block: n_crash is %d: %v", h.NCrash, err)}
	}
	return exts, crash, nil
}

// checkRow checks that row i's ids exist in the tables.
func checkRow(name string, h Header, i int, r Row) error {
	at := int64(h.OffArr) + int64(i)*RecordSize
	if uint32(r.ExtID) >= h.NExt {
		return &Error{Path: name, Offset: at + 18, Err: ErrCorrupt, Detail: fmt.Sprintf("row %d: extid %d, but n_ext is %d", i, r.ExtID, h.NExt)}
	}
	if r.CrashID > h.NCrash {
		return &Error{Path: name, Offset: at + 20, Err: ErrCorrupt, Detail: fmt.Sprintf("row %d: crashid %d, but n_crash is %d", i, r.CrashID, h.NCrash)}
	}
	return nil
}

// splitBlock splits a text block into exactly n newline-separated entries.
// n == 0 needs an empty block; a block "" with n == 1 is one empty entry.
func splitBlock(b []byte, n int) ([]string, error) {
	if !utf8.Valid(b) {
		return nil, fmt.Errorf("not valid UTF-8")
	}
	if n == 0 {
		if len(b) != 0 {
			return nil, fmt.Errorf("block of %d bytes for no entries", len(b))
		}
		return nil, nil
	}
	parts := strings.Split(string(b), "\n")
	if len(parts) != n {
		return nil, fmt.Errorf("block holds %d newline-separated entries", len(parts))
	}
	seen := make(map[string]bool, n)
	for _, p := range parts {
		if seen[p] {
			return nil, fmt.Errorf("entry %q appears twice", p)
		}
		seen[p] = true
	}
	return parts, nil
}
