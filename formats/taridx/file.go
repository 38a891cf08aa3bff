package taridx

import (
	"fmt"
	"io"
	"os"
	"runtime"

	"github.com/itarconv/itarconv/internal/pathguard"
)

// File is a TARIDX file opened to read its rows a range at a time: its
// header and tables are read and checked at once, its rows when asked
// (ReadRows), so that a pass over 10^9 rows holds a buffer, not the rows.
// Its methods are safe for concurrent use.
type File struct {
	Path       string
	Header     Header
	Exts       []string
	CrashStems []string
	f          *os.File
}

// OpenFile opens the TARIDX file at path and checks all but its rows as
// Parse does; ReadRows checks the rows it reads. The file closes once
// the File is unreachable.
func OpenFile(path string) (*File, error) {
	f, err := pathguard.Open(path)
	if err != nil {
		return nil, err
	}
	x, err := openFile(path, f)
	if err != nil {
		f.Close()
		return nil, err
	}
	runtime.AddCleanup(x, func(f *os.File) { f.Close() }, f)
	return x, nil
}

func openFile(path string, f *os.File) (*File, error) {
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: not a regular file", path)
	}
	size := st.Size()
	head := make([]byte, min(size, HeaderSize))
	if _, err := f.ReadAt(head, 0); err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	h, err := checkHeader(path, head, uint64(size))
	if err != nil {
		return nil, err
	}
	// The tables lie within the file: their size is bounded by its own.
	tables := make([]byte, h.OffArr-HeaderSize)
	if _, err := f.ReadAt(tables, HeaderSize); err != nil && err != io.EOF {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	exts, crash, err := checkTables(path, h, tables)
	if err != nil {
		return nil, err
	}
	return &File{Path: path, Header: h, Exts: exts, CrashStems: crash, f: f}, nil
}

// Len is the number of rows.
func (x *File) Len() int { return int(x.Header.NRows) }

// ReadRows reads rows i, i+1, ... into dst (as many as it holds, up to
// the last row) and returns how many it read; a row whose ids point past
// the tables is an *Error.
func (x *File) ReadRows(i int, dst []Row, buf []byte) (int, error) {
	n := min(len(dst), x.Len()-i)
	if n <= 0 {
		return 0, nil
	}
	if cap(buf) < n*RecordSize {
		buf = make([]byte, n*RecordSize)
	}
	buf = buf[:n*RecordSize]
	off := int64(x.Header.OffArr) + int64(i)*RecordSize
	if _, err := x.f.ReadAt(buf, off); err != nil {
		return 0, fmt.Errorf("reading %s: offset %d: %w", x.Path, off, err)
	}
	runtime.KeepAlive(x)
	for k := range n {
		dst[k] = DecodeRow(buf[k*RecordSize:])
		if err := checkRow(x.Path, x.Header, i+k, dst[k]); err != nil {
			return 0, err
		}
	}
	return n, nil
}

// Close closes the file.
func (x *File) Close() error { return x.f.Close() }
