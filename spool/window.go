package spool

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path"
	"slices"
	"sync"

	"github.com/itarconv/itarconv/formats/compressed"
	"github.com/itarconv/itarconv/internal/pathguard"
	"github.com/itarconv/itarconv/internal/safefile"
	"github.com/itarconv/itarconv/remote"
)

// copyPart is the share of a plain remote shard one request brings:
// large next to what a connection carries in a round trip (which it
// stays idle for between two parts), small enough that a copy grows from
// the front in steps a conversion can follow.
const copyPart = 8 << 20

// maxCopyPart bounds the parts of a spool with a large Window: a part
// four times copyPart idles a connection a quarter as often.
const maxCopyPart = 32 << 20

// DefaultWindow is the Window of the spools conversions read remote
// shards through: the copies of shards the conversion is done with go
// once newer ones need the room.
const DefaultWindow = 256 << 20

// partSize is the bytes one request of the spool's fetches brings: with
// a Window, about a quarter of its share for each connection, so that
// the parts in flight and those being read fit in it together.
func (s *Spool) partSize(conns int) int64 {
	if s.Window <= 0 {
		return copyPart
	}
	return min(max(s.Window/int64(2*max(conns, 1)), copyPart), maxCopyPart)
}

// Growth is how much of a copy is there. Bytes below what Wait returns
// are final.
type Growth struct {
	path string
	size int64

	mu      sync.Mutex
	filled  int64 // bytes from the front that are there
	done    bool
	err     error
	changed chan struct{} // closed, and replaced, at each change
}

// Size is the whole copy's size.
func (g *Growth) Size() int64 { return g.size }

// Wait returns once the copy's first n bytes are there (n is clamped to
// its size), or with the error that stopped the copy.
func (g *Growth) Wait(ctx context.Context, n int64) error {
	n = min(n, g.size)
	for {
		g.mu.Lock()
		filled, done, err, ch := g.filled, g.done, g.err, g.changed
		g.mu.Unlock()
		switch {
		case filled >= n:
			return nil
		case done && err != nil:
			return err
		case done:
			return fmt.Errorf("%s: the copy ended at %d bytes, not %d", g.path, filled, g.size)
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// set records the copy's state; filled never goes back (parts report
// their progress on their own goroutines).
func (g *Growth) set(filled int64, done bool, err error) {
	g.mu.Lock()
	g.filled, g.done, g.err = max(g.filled, filled), done, err
	close(g.changed)
	g.changed = make(chan struct{})
	g.mu.Unlock()
}

// growingCopy is one remote shard copied part by part. Nothing in it is
// sized from the size the server claims: parts are handed out by a
// counter, and only the parts written ahead of the first missing one
// are remembered. Its fields below mu are the fetch queue's, under the
// queue's lock.
type growingCopy struct {
	s     *Spool
	rf    *remote.File
	f     *os.File
	g     *Growth
	done  func(path string, err error) // told once: the whole copy, or why not
	part  int64
	parts int64
	order int // its shard's place in the fetch order (spoolEntry.order)

	mu       sync.Mutex
	ahead    map[int64]bool // parts written past next
	next     int64          // the first part not written
	err      error
	finished bool

	handed   int64 // the parts handed out to be fetched
	inflight int   // parts handed out, not yet written or failed
	// released: the scan that wanted the copy is done with it; it may go
	// once it is whole. urgent: someone waits for the whole copy (a
	// member read out of order, a second pass): its parts go first and
	// need no room. pinned: its path was given out (Plain), so it stays
	// until Close. evicted: removed for room.
	released, urgent, pinned, evicted bool
}

// ErrTooLarge: a remote shard claims more bytes than its copy could hold.
var ErrTooLarge = errors.New("claims more bytes than the disk holding its copy has free")

// createCopy creates the file a plain remote shard is copied into, once
// its claimed size is known to fit in the spool's directory: a server
// that claims 2^62 bytes is refused at once, naming its URL, rather than
// filling the disk.
func (s *Spool) createCopy(rf *remote.File) (*os.File, error) {
	if free, ok := freeSpace(s.dir()); ok && rf.Size() > 0 && uint64(rf.Size()) > free {
		return nil, fmt.Errorf("%s: %d bytes (Content-Range), %d free in %s: %w", rf.Name(), rf.Size(), free, s.dir(), ErrTooLarge)
	}
	f, err := os.CreateTemp(s.Dir, safefile.TempName(path.Base(rf.Name())+".plain.tar"))
	if err != nil {
		return nil, fmt.Errorf("%s: a copy in %s: %w", rf.Name(), s.dir(), err)
	}
	return f, nil
}

// newCopy prepares the copy of rf into f; the fetch queue makes it.
func (s *Spool) newCopy(ctx context.Context, rf *remote.File, f *os.File, done func(path string, err error)) *growingCopy {
	size := max(rf.Size(), 0)
	part := s.partSize(remote.ClientFrom(ctx).Connections())
	g := &Growth{path: f.Name(), size: size, changed: make(chan struct{})}
	return &growingCopy{s: s, rf: rf, f: f, g: g, done: done, part: part, parts: size/part + min(size%part, 1), ahead: map[int64]bool{}}
}

// partLen is the length of part k.
func (c *growingCopy) partLen(k int64) int64 { return min((k+1)*c.part, c.g.size) - k*c.part }

// wrote records part k written, or failed.
func (c *growingCopy) wrote(k int64, err error) {
	q := &c.s.q
	q.mu.Lock()
	c.inflight--
	inflight, handed := c.inflight, c.handed
	q.mu.Unlock()
	c.mu.Lock()
	if err != nil && c.err == nil {
		c.err = err
	}
	if err == nil {
		c.ahead[k] = true
		for c.ahead[c.next] {
			delete(c.ahead, c.next)
			c.next++
		}
	}
	filled, cerr := min(c.next*c.part, c.g.size), c.err
	last := inflight == 0 && (cerr != nil || handed == c.parts) && !c.finished
	c.finished = c.finished || last
	c.mu.Unlock()
	if last {
		c.finish()
	} else if cerr != nil {
		c.g.set(filled, true, cerr) // a scan waiting past it stops now
	} else {
		c.g.set(filled, false, nil)
	}
	q.signal()
}

// failed tells whether a part of the copy failed: no more are fetched.
func (c *growingCopy) failed() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err != nil
}

// finish puts the whole copy in place as Plain gives it.
func (c *growingCopy) finish() {
	c.mu.Lock()
	err := c.err
	c.mu.Unlock()
	p, err := c.s.keep(c.f, err)
	if err != nil {
		c.g.set(0, true, err)
	} else {
		c.g.set(c.g.size, true, nil)
	}
	c.done(p, err)
}

// whole tells whether the copy is complete and written (or failed).
func (c *growingCopy) whole() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.finished
}

// fetchQueue fetches the copies of plain remote shards part by part, in
// the order they were queued, on as many requests at once as there are
// connections, so that the link stays busy and the copies grow from the
// front, as a conversion reads them.
//
// With a Window, the copies on disk hold at most that many bytes, save
// the first copy not yet released (the one the conversion's writer is
// on, which must come whatever its size) and the copies someone waits
// for whole: a part past the window waits until a released copy can go.
// Released copies stay while there is room, for a second pass to read
// again; one removed is fetched anew if asked for again.
type fetchQueue struct {
	mu      sync.Mutex
	copies  []*growingCopy // not evicted, in fetch order
	used    int64          // bytes handed out of those copies
	peak    int64          // the most used has been
	running int            // fetching goroutines
	changed chan struct{}  // closed, and replaced, at each change
}

// signal wakes the fetchers waiting for room.
func (q *fetchQueue) signal() {
	q.mu.Lock()
	if q.changed != nil {
		close(q.changed)
	}
	q.changed = make(chan struct{})
	q.mu.Unlock()
}

// enqueue queues copies to fetch (first, when urgent) and starts
// fetchers, up to the connections of ctx's client.
func (s *Spool) enqueue(copies ...*growingCopy) {
	q := &s.q
	var empty []*growingCopy
	q.mu.Lock()
	ctx := s.fetchCtx
	for _, c := range copies {
		if c.parts == 0 {
			empty = append(empty, c)
			continue
		}
		// Urgent copies first, then by shard: a second pass's scans
		// may ask for their copies in any order.
		at := len(q.copies)
		for i, o := range q.copies {
			if c.urgent && !o.urgent || !o.urgent && o.order > c.order {
				at = i
				break
			}
		}
		q.copies = slices.Insert(q.copies, at, c)
	}
	start := min(remote.ClientFrom(ctx).Connections(), len(q.copies)*4) - q.running
	q.running += max(start, 0)
	q.mu.Unlock()
	for _, c := range empty {
		c.mu.Lock()
		c.finished = true
		c.mu.Unlock()
		c.finish() // an empty file: nothing to fetch
	}
	for range start {
		s.fetchers.Go(func() { s.fetchLoop(ctx) })
	}
	q.signal()
}

// fetchLoop fetches parts until none is left, or ctx ends.
func (s *Spool) fetchLoop(ctx context.Context) {
	buf := make([]byte, 256<<10)
	for {
		c, k, ok := s.q.next(ctx, s.Window)
		if !ok {
			return
		}
		c.wrote(k, c.fetchPart(ctx, k, buf))
	}
}

// next hands out the next part to fetch, waiting for room in the window;
// false once no part is left (the fetcher then ends), or ctx ends.
func (q *fetchQueue) next(ctx context.Context, window int64) (*growingCopy, int64, bool) {
	q.mu.Lock()
	for {
		c, k, wait := q.pick(window)
		if c != nil {
			q.mu.Unlock()
			return c, k, true
		}
		if !wait || ctx.Err() != nil {
			q.running--
			q.mu.Unlock()
			return nil, 0, false
		}
		if q.changed == nil {
			// No signal yet (the first enqueue starts its fetchers
			// before it signals): a nil channel would never wake.
			q.changed = make(chan struct{})
		}
		ch := q.changed
		q.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
		}
		q.mu.Lock()
	}
}

// pick hands out a part, under q.mu: of the first copy with parts left
// that fits in the window (removing released copies for room), else of
// an urgent copy or the first one not released, which need none. wait
// says that parts are left, waiting for room.
func (q *fetchQueue) pick(window int64) (c *growingCopy, k int64, wait bool) {
	firstLive := true // no unreleased copy before this one
	for _, c := range q.copies {
		free := c.urgent || (firstLive && !c.released) || window <= 0
		if !c.released && !c.urgent {
			firstLive = false
		}
		if c.handed == c.parts || c.failed() {
			continue
		}
		n := c.partLen(c.handed)
		if wait && !free {
			continue // earlier parts wait for room: only free ones pass
		}
		for window > 0 && q.used+n > window && q.evictOne() {
		}
		if !free && q.used+n > window {
			wait = true
			continue
		}
		q.used += n
		q.peak = max(q.peak, q.used)
		c.inflight++
		c.handed++
		return c, c.handed - 1, false
	}
	return nil, 0, wait
}

// evictOne removes the oldest copy that is released and whole and whose
// path no one was given, under q.mu; false if none.
func (q *fetchQueue) evictOne() bool {
	for i, c := range q.copies {
		if !c.released || c.pinned || c.inflight > 0 || !c.whole() {
			continue
		}
		q.copies = append(q.copies[:i], q.copies[i+1:]...)
		q.used -= c.handedBytes()
		c.evicted = true
		os.Remove(c.f.Name()) // readers that have it open still read it
		return true
	}
	return false
}

// handedBytes is the bytes of the parts handed out.
func (c *growingCopy) handedBytes() int64 { return min(c.handed*c.part, c.g.size) }

// fetchPart writes part k of the copy, in one request (resumed where a
// connection breaks).
func (c *growingCopy) fetchPart(ctx context.Context, k int64, buf []byte) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	rf := c.rf
	off := k * c.part
	end := min(off+c.part, rf.Size())
	r := rf.Range(off, end-off)
	defer r.Close()
	for pos := off; pos < end; {
		n := min(int64(len(buf)), end-pos)
		if _, err := r.ReadAt(buf[:n], pos); err != nil {
			return err
		}
		if _, err := c.f.WriteAt(buf[:n], pos); err != nil {
			return fmt.Errorf("%s: writing its copy %s at byte %d: %w", rf.Name(), c.f.Name(), pos, err)
		}
		pos += n
		c.progress(k, pos)
	}
	return nil
}

// progress records part k written up to end: when it is the first part
// not whole, a scan may read up to there now, not once the part is.
func (c *growingCopy) progress(k, end int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if k == c.next && c.err == nil {
		c.g.set(end, false, nil)
	}
}

// PeakDisk is the most bytes the copies of plain remote shards held on
// disk at once (parts being fetched included).
func (s *Spool) PeakDisk() int64 {
	if s == nil {
		return 0
	}
	s.q.mu.Lock()
	defer s.q.mu.Unlock()
	return s.q.peak
}

// Release tells the spool that the scan which asked for a remote
// shard's copy is done with it: with a Window, the copy may go once
// newer copies need its room (readers that have it open still read it).
// A shard asked for again later is fetched again, checked against the
// size and ETag its first opening saw.
func (s *Spool) Release(name string) {
	if s == nil {
		return
	}
	e := s.copyEntry(name)
	if e == nil {
		return
	}
	s.q.mu.Lock()
	e.cp.released = true
	s.q.mu.Unlock()
	s.q.signal()
}

// copyEntry is the entry of a shard the fetch queue copies, or nil.
func (s *Spool) copyEntry(name string) *spoolEntry {
	if s == nil {
		return nil
	}
	s.mu.Lock()
	e := s.entries[name]
	s.mu.Unlock()
	if e == nil {
		return nil
	}
	s.q.mu.Lock()
	defer s.q.mu.Unlock()
	if e.cp == nil {
		return nil
	}
	return e
}

// Open opens a shard's file as Partial names it: a remote shard's copy
// as it grows, with its Growth (bytes below Growth.Wait's answer are
// final); else the shard's plain file (Plain), the Growth nil. A copy
// removed for room is fetched anew. With whole, Open returns once the
// copy is whole: for reads anywhere in it, out of a scan's order. The
// caller closes the file.
func (s *Spool) Open(ctx context.Context, name string, whole bool) (*os.File, *Growth, error) {
	if e := s.copyEntry(name); e != nil {
		return s.openCopy(ctx, e, whole, false)
	}
	if f := s.openPlain(name); f != nil {
		return f, nil, nil
	}
	p, err := s.Plain(ctx, name)
	if err != nil {
		return nil, nil, err
	}
	f, err := pathguard.Open(p)
	if err != nil {
		return nil, nil, err // not a nil *os.File in an interface
	}
	return f, nil, nil
}

// openPlain opens a local shard the spool has not seen that is plain, as
// it is: its first bytes, read from the file opened, tell it is no
// compressed stream, where Plain would open it once more to tell (of
// thousands of small shards, each open counts). nil: anything else, for
// Plain to take.
func (s *Spool) openPlain(name string) *os.File {
	if s == nil || name == Stdin || remote.IsURL(name) {
		return nil
	}
	s.mu.Lock()
	_, seen := s.entries[name]
	s.mu.Unlock()
	if seen {
		return nil
	}
	f, err := pathguard.Open(name)
	if err != nil {
		return nil // Plain says why
	}
	if c, err := compressed.DetectReaderAt(f); err == nil && c == compressed.None {
		return f
	}
	f.Close()
	return nil
}

// openCopy opens the entry's current copy, fetched anew if it was
// removed; whole waits for all of it, pin keeps it until Close.
func (s *Spool) openCopy(ctx context.Context, e *spoolEntry, whole, pin bool) (*os.File, *Growth, error) {
	q := &s.q
	q.mu.Lock()
	c := e.cp
	if c.evicted || (c.failed() && c.released) {
		q.mu.Unlock()
		f, err := s.createCopy(c.rf)
		if err != nil {
			return nil, nil, err
		}
		n := s.newCopy(s.fetchCtx, c.rf, f, func(string, error) {})
		n.urgent, n.order = whole, c.order
		q.mu.Lock()
		if e.cp == c { // not replaced meanwhile by another caller
			e.cp = n
			q.mu.Unlock()
			s.enqueue(n)
			q.mu.Lock()
		} else {
			os.Remove(f.Name())
			f.Close()
		}
		c = e.cp
	}
	if whole && !c.whole() && !c.urgent {
		// Waited for whole: its parts go first.
		c.urgent = true
	}
	if !whole {
		// A scan reads it again (a second pass): it is live again, until
		// that scan releases it.
		c.released = false
	}
	c.pinned = c.pinned || pin
	// Opened under the queue's lock: the copy cannot be removed between
	// naming and opening it.
	f, err := os.Open(c.g.path)
	q.mu.Unlock()
	q.signal()
	if err != nil {
		if werr := c.g.Wait(ctx, c.g.Size()); werr != nil {
			return nil, nil, werr // the copy failed, and went: why it failed
		}
		return nil, nil, err
	}
	if whole {
		if err := c.g.Wait(ctx, c.g.Size()); err != nil {
			f.Close()
			return nil, nil, err
		}
		// Read out of order: the caller has it open, and the copy may go;
		// fetches waiting for room are told (nothing else may wake them).
		q.mu.Lock()
		c.released = c.released || c.urgent
		q.mu.Unlock()
		q.signal()
	}
	return f, c.g, nil
}

// startCopy creates the copy of a plain remote shard Prefetch grows.
func (s *Spool) startCopy(ctx context.Context, e *spoolEntry) (*growingCopy, error) {
	rf := e.opened
	f, err := s.createCopy(rf)
	if err != nil {
		return nil, err
	}
	c := s.newCopy(ctx, rf, f, func(p string, err error) {
		e.path, e.err = p, err
		close(e.done)
	})
	c.order = e.order
	s.q.mu.Lock()
	e.cp = c
	s.q.mu.Unlock()
	return c, nil
}
