package spool

import (
	"bufio"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/itarconv/itarconv/formats/compressed"
	"github.com/itarconv/itarconv/internal/atonce"
	"github.com/itarconv/itarconv/internal/pathguard"
	"github.com/itarconv/itarconv/internal/safefile"
	"github.com/itarconv/itarconv/internal/syswrite"
	"github.com/itarconv/itarconv/remote"
)

// Stdin is the shard name that stands for standard input.
const Stdin = "-"

// ErrEmptyStdin: standard input, given as a shard, held no byte.
var ErrEmptyStdin = errors.New("standard input is empty: no tar stream")

// Spool gives tar shards as plain tar files that can be mapped and read
// at any offset: a plain shard is itself; a compressed one, a URL (package
// remote; streamed in one request, resumed where a connection breaks), or
// standard input, is decompressed (package compressed) or copied the first
// time it is asked for, once,
// into a temporary file in Dir, and stays there until Close. Conversions
// that read tar shards in place (mapped, copied by the kernel, read twice)
// thus read compressed shards unchanged, and each shard is decompressed on
// the worker that scans it, in parallel with the others. A nil *Spool
// gives every shard as itself.
type Spool struct {
	Dir string
	// Durable copies are synced to disk, with an output's permissions
	// (0644), as soon as each is complete, on the goroutine that made it:
	// for copies that become outputs, their writeback then overlaps the
	// decompression of the others.
	Durable bool
	// Window bounds the bytes the copies of plain remote shards hold on
	// disk at once (DefaultWindow suits conversions): a copy goes once
	// its scan has released it (Release) and newer copies need the room,
	// and the fetches wait for room rather than run ahead. The copy of
	// the first shard not released, and copies someone waits for whole,
	// come whatever their size, and a copy kept from an earlier pass is
	// read again rather than fetched again: the disk holds at most the
	// window and about three of the largest shards. 0 keeps every copy
	// until Close, as the copies that become outputs must be.
	Window int64
	stdin  io.Reader

	mu      sync.Mutex
	entries map[string]*spoolEntry
	// prefetchCtx is Prefetch's; stop ends it (Close), which then waits
	// for the fetchers: every goroutine Prefetch starts, and Prefetch
	// itself.
	prefetchCtx context.Context
	stop        context.CancelFunc
	fetchers    sync.WaitGroup
	closed      bool // by Close: no copy starts after it
	// fetchCtx is what the fetch queue's requests run under: Prefetch's
	// context, or the first caller's, ended by Close.
	fetchCtx context.Context
	q        fetchQueue
}

// ErrClosed: a shard asked of a Spool after its Close.
var ErrClosed = errors.New("spool closed")

type spoolEntry struct {
	// done is closed once the copy is made, or has failed: codec, path
	// and err are final then. The copy's maker is whoever claimed it
	// first (started, under Spool.mu): Prefetch, or the first caller of
	// Plain; the others wait for done, or for their own context.
	done    chan struct{}
	started bool
	codec   compressed.Codec
	path    string
	err     error
	// opened is the remote file Prefetch opened ahead (or why not).
	opened  *remote.File
	openErr error
	// cp is set, before Prefetch returns, for a copy it grows from the
	// front: the entry's current copy (a new one once removed for
	// room), under the fetch queue's lock.
	cp *growingCopy
	// order is the entry's place among the spool's, as they were asked
	// for: its copies are fetched in that order.
	order int
}

// New makes a spool writing its copies into dir: the conversion's
// target directory, so that they live on the output's file system ("" is
// os.TempDir()). stdin is read for the shard named Stdin.
//
// Its copies are named as safefile names temporary files (its prefix,
// this process's id and host): a run killed before Close (SIGKILL, a
// power cut) leaves them, and the next spool in that directory removes
// those whose process, on this host, is gone.
func New(dir string, stdin io.Reader) *Spool {
	s := &Spool{Dir: dir, stdin: stdin, entries: map[string]*spoolEntry{}}
	safefile.SweepLeftovers(s.dir())
	return s
}

// dir is where the copies go.
func (s *Spool) dir() string { return cmp.Or(s.Dir, os.TempDir()) }

// Needed reports whether any shard is compressed, a URL or standard
// input: a conversion reading them needs a Spool. A local shard is told by
// its first bytes, an open each, atonce.Files at a time (on a cluster file
// system an open is a round trip; of 10^5 shards, in turn, minutes). The
// answer and the error are those of the first shard, in order, that
// decides: the same whichever open ends first.
func Needed(shards []string) (bool, error) {
	decided := make([]struct {
		need bool
		err  error
	}, len(shards))
	i := atonce.Each(len(shards), detectWidth, func(i int) bool {
		d := &decided[i]
		if p := shards[i]; p == Stdin || remote.IsURL(p) {
			d.need = true
		} else {
			var c compressed.Codec
			c, d.err = compressed.DetectFile(p)
			d.need = d.err == nil && c != compressed.None
		}
		return d.need || d.err != nil
	})
	if i < len(shards) {
		return decided[i].need, decided[i].err
	}
	return false, nil
}

// detectWidth is how many shards Needed opens at once (1 in the
// benchmark's baseline: one at a time, as before).
var detectWidth = atonce.Files

// claim gives path's entry, and whether the caller is the one to make
// its copy (the first to ask for it).
func (s *Spool) claim(path string) (e *spoolEntry, maker bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e = s.entries[path]
	if e == nil {
		e = &spoolEntry{done: make(chan struct{}), order: len(s.entries)}
		s.entries[path] = e
	}
	maker = !e.started
	e.started = true
	return e, maker
}

// Prefetch starts copying the remote shards among names, in their order.
// The plain ones are fetched in parts of copyPart bytes, taken in order
// (shard by shard, part by part) by as many requests at once as there are
// connections, so that the link stays busy and the copies grow from the
// front: Partial gives a copy as it grows, and a scan reads it as soon as
// the bytes it wants are there. Compressed ones are decompressed
// fetchAhead at a time. Plain of any of them waits for the whole copy. A
// conversion takes its shards in order: without this, the copies would
// come in whatever order the workers ask for them, and the one the writer
// needs next would often come last, with nothing to convert meanwhile.
// Close stops it.
func (s *Spool) Prefetch(ctx context.Context, names []string) {
	s.PrefetchAt(ctx, names, -1)
}

// PrefetchAt is Prefetch of names that are a list's shards from first on:
// their copies are fetched in the list's order (shard first+i at place
// first+i), also where a shard before first is asked for after them. A
// conversion's two workers start their first scans in either order: the
// shards prefetched from the second's, the first's shard came last, and
// the writer, which needs it first, waited on a window the others held.
// first < 0: in the order they are asked for, after those before.
func (s *Spool) PrefetchAt(ctx context.Context, names []string, first int) {
	if s == nil {
		return
	}
	type item struct {
		name string
		e    *spoolEntry
	}
	var queue []item
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	// Close waits for Prefetch, and for what it starts.
	s.fetchers.Add(1)
	defer s.fetchers.Done()
	if s.stop == nil {
		s.prefetchCtx, s.stop = context.WithCancel(context.WithoutCancel(ctx))
	}
	if s.fetchCtx == nil {
		s.fetchCtx = s.prefetchCtx
	}
	for i, n := range names {
		if !remote.IsURL(n) || s.entries[n] != nil {
			continue // local, or asked for already
		}
		order := len(s.entries)
		if first >= 0 {
			order = first + i
		}
		e := &spoolEntry{done: make(chan struct{}), started: true, order: order} // Prefetch makes it
		s.entries[n] = e
		queue = append(queue, item{n, e})
	}
	pctx := s.prefetchCtx
	s.mu.Unlock()
	// Every file is opened first, all at once: its opening request's
	// round trip is not then paid in turn, between two copies.
	var opening sync.WaitGroup
	for _, it := range queue {
		opening.Go(func() { it.e.opened, it.e.openErr = remote.ClientFrom(pctx).Open(pctx, it.name) })
	}
	opening.Wait()
	var plain []*growingCopy
	var others []item
	for _, it := range queue {
		if it.e.openErr != nil || compressed.Sniff(it.e.opened.Head()) != compressed.None {
			others = append(others, it)
			continue
		}
		c, err := s.startCopy(pctx, it.e)
		if err != nil {
			it.e.openErr = err
			others = append(others, it) // fails when asked for, naming it
			continue
		}
		plain = append(plain, c)
	}
	s.enqueue(plain...)
	var next atomic.Int64
	for range min(fetchAhead, len(others)) {
		s.fetchers.Go(func() {
			for {
				k := int(next.Add(1) - 1)
				if k >= len(others) {
					return
				}
				it := others[k]
				s.make(pctx, it.name, it.e)
			}
		})
	}
}

// Partial gives a shard's copy while Prefetch fetches it, with its
// Growth, which tells how much of it is there: bytes below Growth.Wait's
// answer are final. For any other shard it is Plain, and the Growth nil.
// With a Window, a released copy may go before the path is opened: Open
// opens it safely.
func (s *Spool) Partial(ctx context.Context, path string) (string, *Growth, error) {
	if s == nil {
		return path, nil, nil
	}
	f, g, err := s.Open(ctx, path, false)
	if err != nil {
		return "", nil, err
	}
	f.Close()
	if g == nil {
		return f.Name(), nil, nil
	}
	return g.path, g, nil
}

// Plain gives the path of a shard as a plain tar, decompressing it the
// first time. Callers on several goroutines may ask at once: one
// decompresses, with its ctx; the others wait for it, each until its own
// ctx ends.
func (s *Spool) Plain(ctx context.Context, path string) (string, error) {
	if s == nil {
		return path, nil
	}
	if e := s.copyEntry(path); e != nil {
		// Prefetch's copy, whole, kept until Close.
		f, g, err := s.openCopy(ctx, e, true, true)
		if err != nil {
			return "", err
		}
		f.Close()
		return g.path, nil
	}
	e, maker := s.claim(path)
	if maker {
		s.make(ctx, path, e)
		return e.path, e.err
	}
	select {
	case <-e.done:
		return e.path, e.err
	case <-ctx.Done():
		return "", ctx.Err()
	}
}

// make makes a shard's copy, for the entry's maker, and closes its done.
func (s *Spool) make(ctx context.Context, path string, e *spoolEntry) {
	defer close(e.done)
	s.mu.Lock()
	closed := s.closed
	s.mu.Unlock()
	if closed {
		e.err = fmt.Errorf("%s: %w", path, ErrClosed)
		return
	}
	if path != Stdin && !remote.IsURL(path) {
		if e.codec, e.err = compressed.DetectFile(path); e.err != nil || e.codec == compressed.None {
			e.path = path
			return
		}
	}
	e.path, e.err = s.decompress(ctx, path, e)
}

// Codec is the codec a shard was found in (None before its copy is
// made, or plain).
func (s *Spool) Codec(path string) compressed.Codec {
	if s == nil {
		return compressed.None
	}
	s.mu.Lock()
	e := s.entries[path]
	s.mu.Unlock()
	if e == nil {
		return compressed.None
	}
	select {
	case <-e.done:
		return e.codec
	default:
		return compressed.None
	}
}

func (s *Spool) decompress(ctx context.Context, name string, e *spoolEntry) (string, error) {
	var in io.Reader
	switch {
	case name == Stdin:
		r, done := contextReader(ctx, s.stdin)
		defer done()
		in = r
	case remote.IsURL(name):
		rf, err := e.opened, e.openErr
		if rf == nil && err == nil {
			rf, err = remote.ClientFrom(ctx).Open(ctx, name)
		}
		if err != nil {
			return "", err
		}
		if e.codec = compressed.Sniff(rf.Head()); e.codec == compressed.None {
			return s.fetch(ctx, e, rf)
		}
		r := rf.Reader()
		defer r.Close()
		in = r
	}
	counter := inputCounter(ctx)
	if in != nil && counter != nil {
		in = countingReader{in, counter}
	}
	base := filepath.Base(name)
	if name == Stdin {
		base = "stdin"
	}
	f, err := os.CreateTemp(s.Dir, safefile.TempName(base+".plain.tar"))
	if err != nil {
		return "", fmt.Errorf("%s: a decompressed copy in %s: %w", name, s.dir(), err)
	}
	w := &flushWriter{bufio.NewWriterSize(f, syswrite.MaxWrite), s.dir()}
	if in != nil {
		label := name
		if name == Stdin {
			label = "standard input"
		}
		var n int64
		e.codec, n, err = compressed.DecompressStream(ctx, label, in, w)
		if err == nil && n == 0 && e.codec == compressed.None {
			err = cmp.Or(ctx.Err(), ErrEmptyStdin)
		}
	} else if counter != nil {
		err = decompressCounted(ctx, name, w, counter)
	} else {
		_, _, err = compressed.DecompressFile(ctx, name, w)
	}
	if err == nil {
		err = w.Flush()
	}
	return s.keep(f, err)
}

// inputCounterKey carries the counter of WithInputCounter.
type inputCounterKey struct{}

// WithInputCounter returns ctx carrying n: the decompressions of the
// spools that ctx reaches add to n the compressed bytes they read, as
// they read them. A progress bar over the shards' sizes counts with it
// the bytes consumed of compressed shards, whose scans see only their
// decompressed copies.
func WithInputCounter(ctx context.Context, n *atomic.Int64) context.Context {
	return context.WithValue(ctx, inputCounterKey{}, n)
}

func inputCounter(ctx context.Context) *atomic.Int64 {
	n, _ := ctx.Value(inputCounterKey{}).(*atomic.Int64)
	return n
}

// countingReader adds what it reads to n.
type countingReader struct {
	r io.Reader
	n *atomic.Int64
}

func (c countingReader) Read(p []byte) (int, error) {
	k, err := c.r.Read(p)
	c.n.Add(int64(k))
	return k, err
}

// decompressCounted is compressed.DecompressFile with the compressed
// bytes read counted in n.
func decompressCounted(ctx context.Context, path string, w io.Writer, n *atomic.Int64) error {
	f, err := pathguard.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	head := make([]byte, compressed.HeadSize)
	k, _ := io.ReadFull(f, head)
	c := compressed.Sniff(head[:k])
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return err
	}
	_, err = compressed.Decompress(ctx, path, countingReader{f, n}, c, w)
	return err
}

// keep closes a copy once written (synced first when Durable) and gives
// its path; a copy that failed is removed.
func (s *Spool) keep(f *os.File, err error) (string, error) {
	if err == nil && s.Durable {
		if err = f.Chmod(0o644); err == nil {
			err = f.Sync()
		}
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(f.Name())
		return "", err
	}
	return f.Name(), nil
}

// fetchAhead is how many compressed remote shards Prefetch decompresses
// at once, each streamed on one connection.
const fetchAhead = 2

// fetch copies a plain remote shard into f, as Prefetch does (by parts,
// on every connection), for a shard asked for without it.
func (s *Spool) fetch(ctx context.Context, e *spoolEntry, rf *remote.File) (path string, err error) {
	f, err := s.createCopy(rf)
	if err != nil {
		return "", err
	}
	s.mu.Lock()
	if s.stop == nil {
		s.prefetchCtx, s.stop = context.WithCancel(context.WithoutCancel(ctx))
	}
	if s.fetchCtx == nil {
		s.fetchCtx = s.prefetchCtx
	}
	s.mu.Unlock()
	c := s.newCopy(ctx, rf, f, func(string, error) {})
	c.urgent, c.pinned = true, true
	c.order = e.order
	s.enqueue(c)
	if err := c.g.Wait(ctx, c.g.Size()); err != nil {
		return "", err
	}
	return c.g.path, nil
}

// contextReader reads r on a goroutine of its own, so that a canceled ctx
// ends at once a read that waits on a stream (a stalled pipe). done
// releases it; the goroutine ends with r's next read.
func contextReader(ctx context.Context, r io.Reader) (io.Reader, func()) {
	pr, pw := io.Pipe()
	go func() {
		_, err := io.Copy(pw, r)
		pw.CloseWithError(err)
	}()
	stop := context.AfterFunc(ctx, func() { pr.CloseWithError(ctx.Err()) })
	return pr, func() {
		stop()
		pr.Close()
	}
}

// Close removes every copy, made or being made, whatever became of it
// (a failed or canceled copy is removed as it fails): copies Prefetch
// makes are stopped and waited for; one a caller of Plain is making ends
// with that caller's context, and Close waits for it.
func (s *Spool) Close() error {
	if s == nil {
		return nil
	}
	s.mu.Lock()
	s.closed = true
	if s.stop != nil {
		s.stop() // copies in flight end at their next read
	}
	for path, e := range s.entries {
		if !e.started { // no copy starts after Close
			e.started = true
			e.err = fmt.Errorf("%s: %w", path, ErrClosed)
			close(e.done)
		}
	}
	entries := maps.Clone(s.entries)
	s.mu.Unlock()
	s.fetchers.Wait()
	s.q.mu.Lock()
	copies := s.q.copies
	s.q.copies = nil
	s.q.mu.Unlock()
	// A copy the stopped fetchers left short (a conversion that failed
	// before it read them all) ends now, as closed: who waits for it is
	// told, and the wait below for its entry returns.
	for _, c := range copies {
		c.mu.Lock()
		end := !c.finished
		c.finished = true
		if end && c.err == nil {
			c.err = ErrClosed
		}
		c.mu.Unlock()
		if end {
			c.finish()
		}
	}
	// Unlinking a large copy frees its pages, which takes a while: the
	// copies go side by side, as many at once as there are cores.
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	var wg sync.WaitGroup
	for path, e := range entries {
		<-e.done // a copy a caller of Plain is making ends with its context
		if e.path != "" && e.path != path {
			sem <- struct{}{}
			wg.Add(1)
			go func() {
				defer func() { <-sem; wg.Done() }()
				os.Remove(e.path)
			}()
		}
	}
	for _, c := range copies {
		if c.g.path != "" {
			sem <- struct{}{}
			wg.Go(func() {
				defer func() { <-sem }()
				os.Remove(c.g.path)
			})
		}
	}
	wg.Wait()
	return nil
}

// flushWriter names the directory when writing the copy fails (a full
// disk).
type flushWriter struct {
	*bufio.Writer
	dir string
}

func (w *flushWriter) Flush() error {
	if err := w.Writer.Flush(); err != nil {
		return fmt.Errorf("writing a decompressed copy in %s: %w", w.dir, err)
	}
	return nil
}
