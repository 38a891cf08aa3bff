package parquet

import (
	"io"
	"sync"

	pq "github.com/parquet-go/parquet-go"
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

// committer commits a file's row groups, in order, on a goroutine of its
// own: parquet-go holds a row group's pages in memory until it ends, and
// then copies them all out, so that with a single writer the file is
// idle while a group is encoded and the encoding waits while it is
// written. Two row groups take turns, one filled while the other is
// written: no more than two are held. The bytes are those of
// pq.Writer's own Flush (ConcurrentRowGroupWriter.Commit writes a group
// as it does).
type committer struct {
	work chan *pq.ConcurrentRowGroupWriter
	free chan *pq.ConcurrentRowGroupWriter
	done chan struct{}

	mu  sync.Mutex
	err error
}

func newCommitter(w *pq.Writer) *committer {
	c := &committer{work: make(chan *pq.ConcurrentRowGroupWriter, 2), free: make(chan *pq.ConcurrentRowGroupWriter, 2), done: make(chan struct{})}
	c.free <- w.BeginRowGroup()
	c.free <- w.BeginRowGroup()
	go c.run()
	return c
}

func (c *committer) run() {
	defer close(c.done)
	for rg := range c.work {
		if c.failed() == nil {
			if _, err := rg.Commit(); err != nil {
				c.mu.Lock()
				c.err = err
				c.mu.Unlock()
			}
		}
		c.free <- rg
	}
}

func (c *committer) failed() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// commit hands a filled row group over; it returns an earlier commit's
// error.
func (c *committer) commit(rg *pq.ConcurrentRowGroupWriter) error {
	if err := c.failed(); err != nil {
		return err
	}
	c.work <- rg
	return nil
}

// next is the row group to fill next, once it is free.
func (c *committer) next() *pq.ConcurrentRowGroupWriter { return <-c.free }

// close commits rg (if not nil) and waits for every commit; it returns
// the first commit's error. The file's writer may then be closed.
func (c *committer) close(rg *pq.ConcurrentRowGroupWriter) error {
	if rg != nil {
		c.commit(rg)
	}
	close(c.work)
	<-c.done
	return c.failed()
}
