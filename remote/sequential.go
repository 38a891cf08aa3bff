package remote

import (
	"fmt"
	"io"
	"sync/atomic"
	"time"
)

// Link estimates, shared by every file of the process: the shortest time
// to a response's first byte seen (a round trip, with the server's own
// delay), and the rate a streamed region came at. Together they say how
// many bytes the link carries in one round trip: a gap smaller than that
// is cheaper to read through than to cross with a new request.
var (
	linkRTT  atomic.Int64 // nanoseconds; 0 until a response came
	linkRate atomic.Int64 // bytes per second; 0 until a stream was timed
)

// assumedRate is the rate of one connection before any was measured: an
// object store's per-connection cap, about.
const assumedRate = 50 << 20

func noteRTT(d time.Duration) {
	for {
		old := linkRTT.Load()
		if old != 0 && old <= int64(d) {
			return
		}
		if linkRTT.CompareAndSwap(old, int64(d)) {
			return
		}
	}
}

func noteRate(bytes int64, d time.Duration) {
	if bytes < 4<<20 || d <= 0 {
		return // too short to tell the rate from the latency
	}
	rate := int64(float64(bytes) / d.Seconds())
	if old := linkRate.Load(); old != 0 {
		rate = old + (rate-old)/4
	}
	linkRate.Store(rate)
}

const (
	// minSkip and maxSkip bound the gap a stream reads through: below
	// minSkip a new request never pays, whatever the estimates say; above
	// maxSkip a stream would read too much for a wrong estimate.
	minSkip = 256 << 10
	maxSkip = 64 << 20
	// firstWindow is the first request's size: cheap next to a round
	// trip, and enough to see whether members are small.
	firstWindow = 64 << 10
	// jumpWindow is the size of a request that lands on a header past a
	// large payload: the header, and pax or long-name records with the
	// header after them, in one round trip.
	jumpWindow = 16 << 10
)

// skipBytes is the gap to read through rather than cross with a new
// request: what the link carries in one round trip. Until a round trip
// was timed, it assumes 20 ms: a scan then seeks first, and streams
// once the round trips it times say that streaming is cheaper.
func skipBytes() int64 {
	rtt := time.Duration(linkRTT.Load())
	if rtt == 0 {
		rtt = 20 * time.Millisecond
	}
	rate := linkRate.Load()
	if rate == 0 {
		rate = assumedRate
	}
	return min(max(int64(rtt.Seconds()*float64(rate)), minSkip), maxSkip)
}

// Sequential reads a file from front to back, as a scan of its headers
// does, planning its requests from the gaps between the reads it is
// asked for: while they are small it streams the rest of the file in one
// request and reads through them (every byte would be fetched anyway, and
// a request per header would cost a round trip each); past a payload
// larger than skipBytes it closes the stream and fetches a small window
// at the next header instead. A stream cut mid-way resumes where it was
// cut, not from the start. Reads backwards work, at the cost of a
// request.
type Sequential struct {
	f     *File
	limit int64 // where streams end: the file's end, or the range's

	stream      *body
	pos         int64 // the stream's next byte
	opened      time.Time
	streamed    int64 // bytes the stream gave, to time the link
	streamFirst bool  // the first read opens a stream

	win    []byte // the last window fetched by itself
	winOff int64
	last   int64 // where the last read ended: the next gap starts there

	// The file's last bytes, fetched beside the first window past a large
	// payload: a scan that seeks ends there (the end-of-archive blocks),
	// and one round trip is saved of the few it takes.
	tail      []byte
	tailOff   int64
	tailErr   error
	tailReady chan struct{} // closed when tail (or tailErr) is there
}

// Sequential returns a planned reader of f. With stream, the first read
// already opens a stream (a whole-file copy); otherwise it fetches a
// window and decides from what comes next.
func (f *File) Sequential(stream bool) *Sequential {
	return &Sequential{f: f, limit: f.size, streamFirst: stream}
}

// ReadAt reads len(p) bytes at off (fewer, with io.EOF, at the end).
func (s *Sequential) ReadAt(p []byte, off int64) (int, error) {
	size := s.f.size
	if off < 0 {
		return 0, fmt.Errorf("%s: negative offset %d", s.f.name, off)
	}
	if off >= size {
		return 0, io.EOF
	}
	n := min(int64(len(p)), size-off)
	var err error
	if s.tailReady != nil && off >= s.tailOff {
		<-s.tailReady
		if s.tailErr != nil {
			return 0, s.tailErr
		}
		copy(p, s.tail[off-s.tailOff:])
		s.last = off + n
		if n < int64(len(p)) {
			return int(n), io.EOF
		}
		return int(n), nil
	}
	switch {
	case off >= s.winOff && off+n <= s.winOff+int64(len(s.win)):
		copy(p, s.win[off-s.winOff:])
	case off+n <= int64(len(s.f.head)):
		copy(p, s.f.head[off:]) // brought by the request that opened the file
	case s.stream != nil && off >= s.pos && off-s.pos <= 2*skipBytes():
		// Twice the gap that starts a stream keeps one going: sizes near
		// the threshold would otherwise switch at every member, and each
		// switch costs a connection.
		err = s.fromStream(p[:n], off)
	default:
		gap := off - s.last
		near := s.last > 0 && gap >= 0 && gap <= skipBytes()
		if s.stream != nil {
			s.closeStream()
		}
		if near || (s.last == 0 && s.streamFirst) {
			err = s.fromStream(p[:n], off)
			break
		}
		err = s.window(p[:n], off)
	}
	if err != nil {
		return 0, err
	}
	s.last = off + n
	if n < int64(len(p)) {
		return int(n), io.EOF
	}
	return int(n), nil
}

// window fetches the bytes at off with a request of their own, and keeps
// what else it brought for the reads that follow.
func (s *Sequential) window(p []byte, off int64) error {
	want := int64(jumpWindow)
	if s.last == 0 && s.win == nil && s.f.head == nil {
		want = firstWindow
	}
	want = min(max(want, int64(len(p))), s.f.size-off)
	if s.tailReady == nil && s.f.size-(off+want) > 2*jumpWindow {
		s.fetchTail()
	}
	if int64(cap(s.win)) < want {
		s.win = make([]byte, want)
	}
	s.win = s.win[:want]
	s.winOff = off
	if _, err := s.f.ReadAt(s.win, off); err != nil && err != io.EOF {
		s.win = s.win[:0]
		return err
	}
	copy(p, s.win)
	return nil
}

// fetchTail fetches the file's last jumpWindow bytes on a request of its
// own, beside the reads that go on.
func (s *Sequential) fetchTail() {
	s.tailOff = s.f.size - jumpWindow
	s.tailReady = make(chan struct{})
	go func() {
		defer close(s.tailReady)
		s.tail = make([]byte, jumpWindow)
		if _, err := s.f.ReadAt(s.tail, s.tailOff); err != nil && err != io.EOF {
			s.tailErr = err
		}
	}()
}

// fromStream reads p at off from the stream, opening it (again) at off
// when there is none, and resuming it where it broke.
func (s *Sequential) fromStream(p []byte, off int64) error {
	f := s.f
	return f.retry(off, func() (bool, error) {
		if s.stream == nil {
			if off >= s.limit {
				return false, fmt.Errorf("%s: byte %d: past the range read, which ends at %d", f.name, off, s.limit)
			}
			b, err := f.openRange(off, s.limit-off)
			if err != nil {
				return b == nil && again(err), err
			}
			s.stream, s.pos, s.opened, s.streamed = b, off, time.Now(), 0
		}
		if skip := off - s.pos; skip > 0 {
			k, err := io.CopyN(io.Discard, s.stream, skip)
			s.pos += k
			s.streamed += k
			if err != nil {
				return s.broken(err)
			}
		}
		for len(p) > 0 {
			k, err := io.ReadFull(s.stream, p)
			s.pos += int64(k)
			s.streamed += int64(k)
			off += int64(k)
			p = p[k:]
			if err != nil {
				return s.broken(err)
			}
		}
		return false, nil
	})
}

// broken drops a stream that failed; the retry opens another where it
// stopped.
func (s *Sequential) broken(err error) (bool, error) {
	err = fmt.Errorf("%s: byte %d: %w", s.f.name, s.pos, bodyError(s.stream, err))
	s.stream.Close()
	s.stream = nil
	return true, err
}

func (s *Sequential) closeStream() {
	noteRate(s.streamed, time.Since(s.opened))
	s.stream.Close()
	s.stream = nil
}

// Close ends the stream, if one is open, and waits for the tail's
// request.
func (s *Sequential) Close() error {
	if s.tailReady != nil {
		<-s.tailReady
	}
	if s.stream != nil {
		s.closeStream()
	}
	return nil
}

// Range reads the n bytes at off, in one request (resumed where a
// connection breaks), through ReadAt calls in order: one member, its
// header and payload, read as it is written out.
func (f *File) Range(off, n int64) *Sequential {
	return &Sequential{f: f, limit: min(off+n, f.size), streamFirst: true}
}

// Reader reads the whole file in order, in one stream (resumed where a
// connection breaks): a copy of it.
func (f *File) Reader() io.ReadCloser {
	return &reader{s: f.Sequential(true)}
}

type reader struct {
	s   *Sequential
	off int64
}

func (r *reader) Read(p []byte) (int, error) {
	n, err := r.s.ReadAt(p, r.off)
	r.off += int64(n)
	if err == io.EOF && n > 0 {
		err = nil
	}
	return n, err
}

func (r *reader) Close() error { return r.s.Close() }

// Head is the file's first bytes, as the request that opened it brought
// them (nil for a file opened with OpenKnown).
func (f *File) Head() []byte { return f.head }
