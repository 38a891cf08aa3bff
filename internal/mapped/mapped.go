package mapped

import (
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/debug"
	"unsafe"
)

// ErrUnsupported: this system, or this file, cannot be mapped; callers
// read the bytes instead.
var ErrUnsupported = errors.New("memory mapping not supported")

// ErrGone: a mapped file lost bytes after it was mapped.
var ErrGone = errors.New("mapped bytes are gone: the file shrank while it was read")

// readBelow is the size under which Map reads a region into memory
// rather than mapping it. A mapping costs a system call to make and one
// to undo, page faults, and, when undone, a flush of the address
// translations of every CPU the process ran on, which wakes those that
// are idle; a read costs a copy. BenchmarkRegion, one goroutine, each
// byte touched: 4 KiB mapped 7.3-7.6 us, read 2.6-4.6 us; 16 KiB 8.0-8.3
// against 5.4-7.4; 64 KiB 10.6-10.9 against 22-24. A conversion over
// shards of a few KiB maps one region a shard, and pays more than that
// bench shows for the flush: tar to TBL over 10,000 shards of 11 KiB ran
// a fifth faster with them read.
const readBelow = 32 << 10

// Region is part of a file mapped read-only, or, when small, read.
type Region struct {
	data    []byte
	base    int64  // the file offset of data[0]
	name    string // the file's, for Where
	read    bool   // data is a copy, not a mapping
	cleanup runtime.Cleanup
}

// Map maps the bytes [off, off+size) of f (size > 0). The mapping starts
// at the page holding off, so it may show a little more of the file.
// A region under readBelow is read instead: its bytes are those of the
// file at the call, and a file shorter than the region is ErrGone now.
func Map(f *os.File, off, size int64) (*Region, error) {
	if off < 0 || size <= 0 {
		return nil, fmt.Errorf("mapping %s: bytes %d to %d: not a region", f.Name(), off, off+size)
	}
	if size < readBelow {
		return readRegion(f, off, size)
	}
	return mapRegion(f, off, size)
}

// readRegion reads the bytes [off, off+size) of f into a Region.
func readRegion(f *os.File, off, size int64) (*Region, error) {
	data := make([]byte, size)
	if n, err := f.ReadAt(data, off); n < len(data) {
		if err == io.EOF {
			err = ErrGone
		}
		return nil, fmt.Errorf("reading %s: bytes %d to %d: %w", f.Name(), off, off+size, err)
	}
	return &Region{data: data, base: off, name: f.Name(), read: true}, nil
}

// mapRegion maps the bytes [off, off+size) of f.
func mapRegion(f *os.File, off, size int64) (*Region, error) {
	page := int64(os.Getpagesize())
	base := off / page * page
	data, err := mapFile(f, base, off+size-base)
	if err != nil {
		return nil, fmt.Errorf("mapping %s: bytes %d to %d: %w", f.Name(), off, off+size, err)
	}
	r := &Region{data: data, base: base, name: f.Name()}
	// A region dropped without Close (a conversion abandoned halfway) is
	// unmapped once unreachable; its bytes must not outlive it.
	r.cleanup = runtime.AddCleanup(r, func(data []byte) { unmapFile(data) }, data)
	return r, nil
}

// Bytes returns the file's bytes [off, off+n), which must lie in what Map
// was asked for. They stay valid until Close, as long as the Region is
// reachable.
func (r *Region) Bytes(off, n int64) []byte {
	i := off - r.base
	return r.data[i : i+n : i+n]
}

// Where tells whether b lies in the region's bytes and, if so, the mapped
// file's name and b's offset in it: where the bytes of a GoneError's
// piece came from.
func (r *Region) Where(b []byte) (name string, off int64, ok bool) {
	if r == nil || len(r.data) == 0 || len(b) == 0 {
		return "", 0, false
	}
	start := uintptr(unsafe.Pointer(unsafe.SliceData(r.data)))
	p := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	if p < start || p-start >= uintptr(len(r.data)) {
		return "", 0, false
	}
	return r.name, r.base + int64(p-start), true
}

// GoneError is ErrGone from WritePieces: a piece's bytes, mapped from a
// file cut short since, could not be written. Piece is that piece (nil
// when none faulted when read again), for the caller to tell, by the
// regions it mapped (Region.Where), which file lost it.
type GoneError struct {
	Output string // the file written
	Offset int64  // where in it the piece was to go
	Piece  []byte
}

func (e *GoneError) Error() string {
	return fmt.Sprintf("writing %s at offset %d: %v", e.Output, e.Offset, ErrGone)
}

func (e *GoneError) Unwrap() error { return ErrGone }

// Close unmaps the region; its bytes must not be used afterwards.
func (r *Region) Close() error {
	if r == nil || r.data == nil {
		return nil
	}
	if r.read {
		r.data = nil
		return nil
	}
	r.cleanup.Stop()
	err := unmapFile(r.data)
	r.data = nil
	return err
}

// Guard runs fn, turning a fault on mapped memory (a file cut short after
// it was mapped) into ErrGone instead of a crash. Only faults of the
// calling goroutine are caught.
func Guard(fn func() error) (err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			if _, fault := r.(interface{ Addr() uintptr }); !fault {
				panic(r)
			}
			err = ErrGone
		}
	}()
	return fn()
}
