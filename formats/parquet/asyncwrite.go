package parquet

import (
	"io"
	"sync"
)

// asyncWriter hands what it is given, in chunks, to a goroutine that
// writes them: the ordered writer encodes the next pages while the system
// copies the last ones into the page cache, on another core.
type asyncWriter struct {
	w    io.Writer
	cur  []byte
	work chan []byte
	free chan []byte
	done chan struct{}

	mu  sync.Mutex
	err error
}

const (
	asyncChunk  = 1 << 20
	asyncChunks = 4 // in flight, at most
)

func newAsyncWriter(w io.Writer) *asyncWriter {
	a := &asyncWriter{w: w, work: make(chan []byte, asyncChunks), free: make(chan []byte, asyncChunks), done: make(chan struct{})}
	for range asyncChunks {
		a.free <- make([]byte, 0, asyncChunk)
	}
	a.cur = <-a.free
	go a.run()
	return a
}

func (a *asyncWriter) run() {
	defer close(a.done)
	for b := range a.work {
		if a.failed() == nil {
			if _, err := a.w.Write(b); err != nil {
				a.mu.Lock()
				a.err = err
				a.mu.Unlock()
			}
		}
		a.free <- b[:0]
	}
}

func (a *asyncWriter) failed() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.err
}

func (a *asyncWriter) Write(p []byte) (int, error) {
	if err := a.failed(); err != nil {
		return 0, err
	}
	n := len(p)
	for len(p) > 0 {
		k := copy(a.cur[len(a.cur):cap(a.cur)], p)
		a.cur = a.cur[:len(a.cur)+k]
		p = p[k:]
		if len(a.cur) == cap(a.cur) {
			a.work <- a.cur
			a.cur = <-a.free
		}
	}
	return n, nil
}

// Close writes what is left and waits for every write; it returns the
// first write's error.
func (a *asyncWriter) Close() error {
	if a.cur == nil {
		return a.failed()
	}
	if len(a.cur) > 0 {
		a.work <- a.cur
	}
	a.cur = nil
	close(a.work)
	<-a.done
	return a.failed()
}
