package bench

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"sync"
)

// WalkHeaders is the reference floor of an index build: it hops from tar
// header to tar header of every shard, verifying each checksum and parsing
// its size, and does nothing else (no names, no rows, no output file). It
// handles plain ustar members only, which is all the generator writes.
//
// Shards are walked by workers goroutines. Where headers are far apart
// (stride of 4 KiB or more on average) each one costs one 512-byte
// positioned read; where they are close, the file is read in 256 KiB chunks.
// On the machine the benchmark was written on, these were the cheapest of
// pread 512 B / 4 KiB, chunked reads and mmap for datasets A and B
// respectively. It returns the number of members seen.
func WalkHeaders(paths []string, workers int) (int64, error) {
	var (
		mu    sync.Mutex
		total int64
		first error
		wg    sync.WaitGroup
	)
	next := make(chan string)
	for range max(workers, 1) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			buf := make([]byte, walkChunk)
			for p := range next {
				n, err := walkShard(p, buf)
				mu.Lock()
				total += n
				if err != nil && first == nil {
					first = err
				}
				mu.Unlock()
			}
		}()
	}
	for _, p := range paths {
		next <- p
	}
	close(next)
	wg.Wait()
	return total, first
}

const (
	walkChunk      = 256 << 10
	walkPreadAbove = 4 << 10
	blockSize      = 512
)

var errWalk = errors.New("not a plain ustar stream")

func walkShard(path string, buf []byte) (int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return 0, err
	}
	size := st.Size()

	// A first chunk tells the average stride, hence the read size.
	var (
		bufOff  int64
		bufLen  int
		members int64
		want    = len(buf)
	)
	read := func(off int64) ([]byte, error) {
		if off >= bufOff && off+blockSize <= bufOff+int64(bufLen) {
			return buf[off-bufOff : off-bufOff+blockSize], nil
		}
		n := int64(want)
		if rest := size - off; n > rest {
			n = rest
		}
		got, err := f.ReadAt(buf[:n], off)
		if got < blockSize {
			return nil, fmt.Errorf("%s: short read at %d: %v", path, off, err)
		}
		bufOff, bufLen = off, got
		return buf[:blockSize], nil
	}
	for off := int64(0); off+blockSize <= size; {
		h, err := read(off)
		if err != nil {
			return members, err
		}
		if h[0] == 0 {
			break // end-of-archive marker (the generator writes no empty names)
		}
		if !walkChecksumOK(h) {
			return members, fmt.Errorf("%s: bad header at %d: %w", path, off, errWalk)
		}
		n := walkOctal(h[124:136])
		if n < 0 {
			return members, fmt.Errorf("%s: bad size at %d: %w", path, off, errWalk)
		}
		members++
		off += blockSize + (n+blockSize-1)/blockSize*blockSize
		if members == 64 && off/members >= walkPreadAbove {
			want = blockSize
		}
	}
	return members, nil
}

// walkChecksumOK compares the stored checksum with the unsigned sum of the
// block, the checksum field counted as spaces. It adds eight bytes at a time
// in four 16-bit lanes, which cannot overflow over 512 bytes.
func walkChecksumOK(h []byte) bool {
	const lanes = 0x00ff00ff00ff00ff
	var acc uint64
	for i := 0; i < blockSize; i += 8 {
		w := binary.LittleEndian.Uint64(h[i:])
		acc += w&lanes + (w>>8)&lanes
	}
	sum := int64(acc&0xffff + acc>>16&0xffff + acc>>32&0xffff + acc>>48)
	for _, c := range h[148:156] {
		sum += int64(' ') - int64(c)
	}
	return walkOctal(h[148:156]) == sum
}

// walkOctal parses a NUL- or space-terminated octal field; -1 if invalid.
func walkOctal(b []byte) int64 {
	var x int64
	digits := 0
	for _, c := range b {
		switch {
		case c >= '0' && c <= '7':
			x = x<<3 | int64(c-'0')
			digits++
		case c == 0 || c == ' ':
			if digits > 0 {
				return x
			}
		default:
			return -1
		}
	}
	if digits == 0 {
		return -1
	}
	return x
}
