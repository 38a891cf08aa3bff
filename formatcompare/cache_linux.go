//go:build linux

package formatcompare

import (
	"fmt"
	"os"
	"unsafe"

	"golang.org/x/sys/unix"
)

// dropPages writes back and evicts the page-cache pages of every file
// (posix_fadvise POSIX_FADV_DONTNEED after fsync: dirty pages cannot be
// dropped), then counts with mincore the bytes still resident. The kernel
// may keep pages another process maps, and some file systems (tmpfs) keep
// everything: the count tells.
func dropPages(paths []string) (resident int64, err error) {
	seen := map[string]bool{}
	for _, p := range paths {
		if seen[p] {
			continue
		}
		seen[p] = true
		n, err := dropFile(p)
		if err != nil {
			return 0, err
		}
		resident += n
	}
	return resident, nil
}

func dropFile(p string) (int64, error) {
	f, err := os.Open(p)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	fd := int(f.Fd())
	if err := unix.Fsync(fd); err != nil {
		return 0, fmt.Errorf("%s: fsync: %w", p, err)
	}
	if err := unix.Fadvise(fd, 0, 0, unix.FADV_DONTNEED); err != nil {
		return 0, fmt.Errorf("%s: posix_fadvise(DONTNEED): %w", p, err)
	}
	st, err := f.Stat()
	if err != nil || st.Size() == 0 {
		return 0, err
	}
	m, err := unix.Mmap(fd, 0, int(st.Size()), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		return 0, fmt.Errorf("%s: mmap to count resident pages: %w", p, err)
	}
	defer unix.Munmap(m)
	page := int64(os.Getpagesize())
	vec := make([]byte, (st.Size()+page-1)/page)
	if _, _, errno := unix.Syscall(unix.SYS_MINCORE, uintptr(unsafe.Pointer(&m[0])), uintptr(len(m)), uintptr(unsafe.Pointer(&vec[0]))); errno != 0 {
		return 0, fmt.Errorf("%s: mincore: %w", p, errno)
	}
	var n int64
	for _, v := range vec {
		if v&1 != 0 {
			n += page
		}
	}
	return min(n, st.Size()), nil
}

// syncFiles fsyncs the files, so that writeback of one build does not
// run into the timing of the next.
func syncFiles(paths []string) {
	for _, p := range paths {
		if f, err := os.Open(p); err == nil {
			unix.Fsync(int(f.Fd()))
			f.Close()
		}
	}
}

// probe tells whether a file's pages are in the page cache, through its
// own mapping of each file: made without touching a page, so that asking
// brings nothing in.
type probe struct {
	maps map[string][]byte
	vec  []byte
}

func newProbe() *probe { return &probe{maps: map[string][]byte{}} }

// resident tells whether any page of the bytes [off, off+size) of the
// file is in the page cache.
func (p *probe) resident(path string, off, size int64) (bool, error) {
	m, ok := p.maps[path]
	if !ok {
		f, err := os.Open(path)
		if err != nil {
			return false, err
		}
		st, err := f.Stat()
		if err == nil && st.Size() > 0 {
			m, err = unix.Mmap(int(f.Fd()), 0, int(st.Size()), unix.PROT_READ, unix.MAP_SHARED)
		}
		f.Close()
		if err != nil {
			return false, fmt.Errorf("%s: mmap to check resident pages: %w", path, err)
		}
		p.maps[path] = m
	}
	if size <= 0 || off < 0 || off+size > int64(len(m)) {
		return false, nil
	}
	page := int64(os.Getpagesize())
	lo := off / page * page
	hi := off + size
	n := (hi - lo + page - 1) / page
	if int64(cap(p.vec)) < n {
		p.vec = make([]byte, n)
	}
	vec := p.vec[:n]
	if _, _, errno := unix.Syscall(unix.SYS_MINCORE, uintptr(unsafe.Pointer(&m[lo])), uintptr(hi-lo), uintptr(unsafe.Pointer(&vec[0]))); errno != 0 {
		return false, fmt.Errorf("%s: offset %d: mincore: %w", path, off, errno)
	}
	for _, v := range vec {
		if v&1 != 0 {
			return true, nil
		}
	}
	return false, nil
}

func (p *probe) close() {
	for _, m := range p.maps {
		unix.Munmap(m)
	}
}
