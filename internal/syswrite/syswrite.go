package syswrite

import "os"

// MaxWrite is the most one write system call is given.
const MaxWrite = 256 << 10

// Next returns, in dst, the pieces the next vectored write takes: the
// first of pieces (at most maxIov) while they add up to MaxWrite, or the
// first MaxWrite bytes of the first piece where it is larger.
func Next(dst, pieces [][]byte, maxIov int) [][]byte {
	dst = dst[:0]
	total := 0
	for _, p := range pieces[:min(len(pieces), maxIov)] {
		if total+len(p) > MaxWrite {
			if total == 0 {
				dst = append(dst, p[:MaxWrite])
			}
			break
		}
		dst = append(dst, p)
		total += len(p)
	}
	return dst
}

// Advance drops from pieces the n bytes a vectored write took (whole
// pieces, then the start of one) and the empty pieces then in front.
func Advance(pieces [][]byte, n int) [][]byte {
	for n > 0 {
		if n < len(pieces[0]) {
			pieces[0] = pieces[0][n:]
			break
		}
		n -= len(pieces[0])
		pieces = pieces[1:]
	}
	for len(pieces) > 0 && len(pieces[0]) == 0 {
		pieces = pieces[1:]
	}
	return pieces
}

// Write writes p to f in calls of at most MaxWrite bytes.
func Write(f *os.File, p []byte) (int, error) {
	n := 0
	for len(p) > 0 {
		k, err := f.Write(p[:min(len(p), MaxWrite)])
		n += k
		if err != nil {
			return n, err
		}
		p = p[k:]
	}
	return n, nil
}

// WriteAt writes p to f at off in calls of at most MaxWrite bytes.
func WriteAt(f *os.File, p []byte, off int64) (int, error) {
	n := 0
	for len(p) > 0 {
		k, err := f.WriteAt(p[:min(len(p), MaxWrite)], off)
		n += k
		if err != nil {
			return n, err
		}
		p, off = p[k:], off+int64(k)
	}
	return n, nil
}

// File is an *os.File whose Write and WriteAt make calls of at most
// MaxWrite bytes, for writers that take an io.Writer or io.WriterAt.
type File struct{ *os.File }

func (f File) Write(p []byte) (int, error)              { return Write(f.File, p) }
func (f File) WriteAt(p []byte, off int64) (int, error) { return WriteAt(f.File, p, off) }
