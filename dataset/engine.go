package dataset

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/debug"
	"sync"
	"sync/atomic"
)

// Kind is what a row is.
type Kind uint8

const (
	KindFile     Kind = iota // a regular file: its payload is its content
	KindDir                  // a directory
	KindSymlink              // a symbolic link (Linkname)
	KindHardlink             // a hard link to an earlier file (Linkname)
	KindOther                // devices, fifos, format-specific records
)

func (k Kind) String() string {
	return [...]string{"file", "dir", "symlink", "hardlink", "other"}[k]
}

// Row is one entry of a dataset in the intermediate model.
type Row struct {
	Name     []byte // path inside the dataset, raw bytes as stored
	Linkname []byte // link target, for links
	Kind     Kind
	Type     byte // the source format's own type code (tar typeflag, ...)

	Size        int64 // payload bytes
	Mode        int64 // permission bits
	UID, GID    int64
	ModTime     int64 // seconds since the epoch
	ModTimeNsec int32

	// Where the row lives in its source, for sources that can be addressed
	// in place: the data file holding it (tar shard, Barecat shard, ...),
	// the offset of its record there (a tar header) and of its payload.
	// Offset is -1 when the source has no records.
	DataFile   int
	Offset     int64
	DataOffset int64

	// Checksum is the payload's CRC-32C where the source stores one
	// (Barecat); a reader of the payload checks it.
	Checksum    uint32
	HasChecksum bool

	// Inline is the payload itself, for rows a source makes rather than
	// finds (a cell's NPY arrays, a sample's metadata JSON): small, built
	// on the workers, and used instead of PayloadSource.OpenPayload.
	Inline []byte
}

// Batch is a run of consecutive rows of one shard.
type Batch struct {
	Shard int
	Rows  []Row
	// Prep holds what the sink's Prepare computed for these rows.
	Prep any
	// Bytes is the sum of the rows' payload sizes.
	Bytes int64
}

// Source is a dataset to read. Scan is called from several goroutines at
// once, each with a different shard.
type Source interface {
	NumShards() int
	ShardName(shard int) string
	// Scan reads one shard and hands its rows, in order, to emit in batches.
	// The rows (and their byte slices) belong to the batch afterwards.
	Scan(ctx context.Context, shard int, emit func(rows []Row) error) error
}

// PayloadSource is a Source whose rows carry bytes. OpenPayload is called
// from the writing goroutine, in dataset order; a reader that checks an
// integrity code returns a mismatch as its error at the end.
type PayloadSource interface {
	Source
	OpenPayload(r *Row) (io.Reader, error)
}

// FileRegions is a PayloadSource whose rows' bytes may lie as they are
// in a file: PayloadFile gives the file and the offset, or ok false. A
// sink may then have the kernel copy them (copy_file_range) instead of
// reading them; the source has checked them (Row.Inline holds the same
// bytes, mapped, for the sink's own checksums), and the file stays open
// until the source's Close.
type FileRegions interface {
	PayloadFile(r *Row) (f *os.File, off int64, ok bool)
}

// ShardFiles is a Source whose shards are files holding their rows'
// payloads as they are, Size bytes at Row.DataOffset (tar shards).
// ShardFile opens a shard's file for reading, from any goroutine; the
// caller closes it. A sink may so map a batch's payloads in place
// (internal/mapped) rather than have each read through OpenPayload; the
// file's Name names the shard in messages.
type ShardFiles interface {
	ShardFile(shard int) (*os.File, error)
}

// Releaser is a Source whose batches hold something to give back once
// they are written, such as pages of a mapped file. Run calls Release after
// the sink's Write of each batch, from the writing goroutine.
type Releaser interface {
	Release(b *Batch)
}

// Sink consumes a dataset.
type Sink interface {
	// Prepare does per-row work that needs no order (parsing names,
	// hashing) on the worker that scanned the batch, in parallel.
	Prepare(b *Batch) error
	// Write receives every batch in dataset order from one goroutine. It
	// keeps no reference to the rows' byte slices after it returns.
	Write(b *Batch) error
	// EndShard follows the last batch of each shard, in order, including
	// shards without rows.
	EndShard(shard int) error
}

// CompactSink is a Sink whose Write needs only what Prepare left in
// Batch.Prep, not the rows (an index: a few bytes a row, encoded).
// PreparedBytes, called once Prepare has returned, gives the bytes Prep
// holds, or -1 when the batch still needs its rows. Run then gives the
// rows back at once (Releaser) and counts the batch by those bytes instead
// of as a batch of rows: workers so scan shards far ahead of the writer,
// which writes in shard order, without holding their rows. Write sees such
// a batch with Rows nil.
type CompactSink interface {
	Sink
	PreparedBytes(b *Batch) int64
}

// Options tune Run.
type Options struct {
	// Workers is the number of shards scanned at once (default: all cores).
	Workers int
	// Progress, if set, is called from the ordered writer after each batch.
	Progress func(p Progress)
	// AheadMemory bounds the bytes of prepared batches of a CompactSink
	// waiting for the writer (default 4 MiB a worker, at most 256 MiB):
	// what lets every worker scan a shard of its own while the writer is
	// still on an earlier one.
	AheadMemory int64
}

// Progress is reported as rows reach the sink.
type Progress struct {
	ShardsDone, Shards int
	Rows               int64
	// Bytes is the sum of the rows' payload sizes: not what was read of
	// the source (headers, padding and compression are not counted).
	Bytes int64
	// ShardOffset is how far into the shard being written (the shard
	// numbered ShardsDone) its rows go: where the last row written ends
	// (Row.DataOffset + Size), for rows that lie in their shard's file
	// (Row.Offset >= 0); 0 at a shard's start and for rows that do not.
	// A compressed shard's offsets are those of its decompressed bytes.
	// With the shards' sizes it tells the bytes of input consumed.
	ShardOffset int64
}

// queueDepth bounds the batches waiting per shard, and batchesPerWorker
// those scanned and not yet written in all: memory stays at about
// workers x batchesPerWorker batches (plus one) whatever the dataset's size
// and its number of shards.
const (
	queueDepth       = 8
	batchesPerWorker = 4
	// compactQueueDepth is queueDepth for a CompactSink's batches, which
	// the budget bounds by their bytes instead: a shard's batches wait in
	// its queue until the writer reaches it.
	compactQueueDepth = 4096
	// aheadPerWorker is the default AheadMemory a worker: enough for a
	// worker to scan 130k members ahead of the writer, and
	// small beside what a run keeps of every member, so that peak memory
	// stays flat in the number of members.
	aheadPerWorker = 4 << 20
	maxAhead       = 256 << 20
)

// budget counts the batches in flight: scanned and not yet written. When
// none is left, the shard being written may still add one if it has none
// in flight, so that the writer never waits on a worker that waits on it.
type budget struct {
	mu      sync.Mutex
	cond    sync.Cond
	free    int
	reserve int           // places only the head may take
	head    int           // the shard being written
	live    map[int]int32 // batches in flight, by shard (none: absent)
	done    bool
	// compact counts the bytes of compact batches (CompactSink) in
	// flight, which hold no place; shards ahead of the head wait while it
	// is past compactLimit.
	compact, compactLimit int64
}

func newBudget(ctx context.Context, n int, ahead int64) *budget {
	b := &budget{free: n, reserve: max(1, n/4), live: map[int]int32{}, compactLimit: ahead}
	b.cond.L = &b.mu
	context.AfterFunc(ctx, func() {
		b.mu.Lock()
		b.done = true
		b.cond.Broadcast()
		b.mu.Unlock()
	})
	return b
}

// take waits for room for one more batch of shard; it reports whether the
// batch counts against the budget (false: the head shard overdrew, or the
// run is over). Shards ahead of the head leave it a reserve: the head's
// batches, which the writer waits for, keep flowing while the others fill
// their queues.
func (b *budget) take(shard int) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	for !b.done {
		if shard == b.head {
			if b.free > 0 || b.live[shard] == 0 {
				break
			}
		} else if b.free > b.reserve && b.compact < b.compactLimit {
			break
		}
		b.cond.Wait()
	}
	b.live[shard]++
	if b.free > 0 {
		b.free--
		return true
	}
	return false
}

// give returns a written batch's place, or its compact bytes.
func (b *budget) give(shard int, counted bool, compact int64) {
	b.mu.Lock()
	if b.live[shard]--; b.live[shard] == 0 {
		delete(b.live, shard)
	}
	if counted {
		b.free++
	}
	b.compact -= compact
	b.cond.Broadcast()
	b.mu.Unlock()
}

// compacted turns a prepared batch's place into its compact bytes.
func (b *budget) compacted(counted bool, compact int64) {
	b.mu.Lock()
	if counted {
		b.free++
	}
	b.compact += compact
	b.cond.Broadcast()
	b.mu.Unlock()
}

// writing moves the head to shard.
func (b *budget) writing(shard int) {
	b.mu.Lock()
	b.head = shard
	b.cond.Broadcast()
	b.mu.Unlock()
}

// result is a batch on its way to the writer. Prepare runs on the
// preparing goroutines, not on the scanning worker: a shard's batches are
// prepared in parallel while the writer waits for them in order (ready is
// closed when prepErr and the batch's Prep are set).
type result struct {
	batch   *Batch
	err     error // the scan failed
	ready   chan struct{}
	prepErr error
	counted bool  // against the budget
	rows    int   // the batch's rows (Rows is nil once compacted)
	compact int64 // the compact batch's bytes, counted by the budget
	// end is where the batch's last row ends in its shard's file
	// (Progress.ShardOffset), or -1; taken as it is scanned, since its
	// rows may be given back before it is written.
	end int64
}

// Run reads every shard of src and feeds its rows to sink in order. Shards
// are scanned by opts.Workers goroutines taking shards in increasing order;
// the calling goroutine writes. The first error stops the run and is returned.
func Run(ctx context.Context, src Source, sink Sink, opts Options) error {
	n := src.NumShards()
	workers := opts.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	if workers > n {
		workers = n
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	r := &run{ctx: ctx, cancel: cancel, src: src, sink: sink, n: n, release: func(*Batch) {}}
	if rel, ok := src.(Releaser); ok {
		r.release = rel.Release
	}
	r.queues = map[int]chan *result{}
	r.depth = queueDepth
	if cs, ok := sink.(CompactSink); ok {
		r.compact, r.depth = cs, compactQueueDepth
	}
	// Preparing goroutines: Prepare may be most of the work (reading and
	// checksumming payloads), and one shard's batches should use every core.
	r.prep = make(chan *result, workers*queueDepth)
	for range max(workers, 1) {
		r.prepWG.Add(1)
		go func() { defer r.prepWG.Done(); r.prepareLoop() }()
	}
	// A worker starts a shard only while fewer than 2 x workers shards are
	// started and not yet written: with small shards (chunks of a source),
	// the per-shard queues alone would let workers run ahead of the writer
	// and hold the whole dataset. The lowest unwritten shard always holds a
	// ticket, so the writer never waits on a worker that waits on it.
	r.tickets = make(chan struct{}, 2*workers)
	ahead := opts.AheadMemory
	if ahead <= 0 {
		ahead = min(int64(workers)*aheadPerWorker, maxAhead)
	}
	r.inFlight = newBudget(ctx, batchesPerWorker*workers, ahead)
	for range workers {
		r.workers.Add(1)
		go r.scanShards()
	}
	defer r.stop()
	return r.write(opts.Progress)
}

// run is one Run: its workers, their queues and the writer's place.
type run struct {
	ctx     context.Context
	cancel  context.CancelFunc
	src     Source
	sink    Sink
	n       int
	release func(*Batch)
	compact CompactSink // sink, when its batches compact
	depth   int         // of a shard's queue
	// queues hold each started and unwritten shard's batches, closed when
	// it is scanned: made when its worker or the writer first asks, gone
	// once it is written, so that a source of 10^7 shards (a Barecat's
	// chunks) costs no memory a shard.
	queuesMu sync.Mutex
	queues   map[int]chan *result
	prep     chan *result // batches for the preparing goroutines
	prepWG   sync.WaitGroup
	tickets  chan struct{} // one a shard started and not yet written
	inFlight *budget
	next     atomic.Int64 // the next shard a worker takes
	workers  sync.WaitGroup
	holding  *result // the batch the writer has taken from its queue
}

// scanShards is a worker: it takes the next shard while a ticket is free,
// until none is left or the run stops.
func (r *run) scanShards() {
	defer r.workers.Done()
	for {
		select {
		case r.tickets <- struct{}{}:
		case <-r.ctx.Done():
			return
		}
		shard := int(r.next.Add(1) - 1)
		if shard >= r.n {
			<-r.tickets
			return
		}
		scanShard(r.ctx, r.src, shard, r.queue(shard), r.prep, r.inFlight, r.release)
	}
}

// queue is shard's queue, made on first use.
func (r *run) queue(shard int) chan *result {
	r.queuesMu.Lock()
	defer r.queuesMu.Unlock()
	q, ok := r.queues[shard]
	if !ok {
		q = make(chan *result, r.depth)
		r.queues[shard] = q
	}
	return q
}

// written forgets shard's queue, drained and closed.
func (r *run) written(shard int) {
	r.queuesMu.Lock()
	delete(r.queues, shard)
	r.queuesMu.Unlock()
}

// write is the writer: every shard's batches, in order, to the sink.
func (r *run) write(progress func(Progress)) error {
	var p Progress
	p.Shards = r.n
	for shard := 0; shard < r.n; shard++ {
		r.inFlight.writing(shard)
		if err := r.writeShard(shard, &p, progress); err != nil {
			return err
		}
		if err := r.ctx.Err(); err != nil {
			return err
		}
		r.written(shard)
		<-r.tickets // the shard is written: another may start
		if err := r.sink.EndShard(shard); err != nil {
			r.cancel()
			return err
		}
		p.ShardsDone++
		p.ShardOffset = 0
		if progress != nil {
			progress(p)
		}
	}
	return nil
}

// writeShard writes one shard's batches, each once it is prepared.
func (r *run) writeShard(shard int, p *Progress, progress func(Progress)) error {
	q := r.queue(shard)
	for {
		var res *result
		var more bool
		select {
		case res, more = <-q:
		case <-r.ctx.Done():
			// Workers stop taking shards once canceled: do not wait for
			// one that will never be scanned.
			return r.ctx.Err()
		}
		if !more {
			return nil
		}
		if res.err != nil {
			r.cancel()
			return res.err
		}
		r.holding = res
		select {
		case <-res.ready:
		case <-r.ctx.Done():
			return r.ctx.Err()
		}
		if res.prepErr != nil {
			r.cancel()
			return res.prepErr
		}
		if err := r.sink.Write(res.batch); err != nil {
			r.cancel()
			return err
		}
		r.holding = nil
		if res.compact < 0 {
			r.release(res.batch)
		}
		r.inFlight.give(shard, res.counted, max(res.compact, 0))
		p.Rows += int64(res.rows)
		p.Bytes += res.batch.Bytes
		p.ShardOffset = max(p.ShardOffset, res.end)
		if progress != nil {
			progress(*p)
		}
	}
}

// stop ends the run: it stops the workers, releases the batches scanned and
// never written (once prepared: nothing touches them then), and only then
// stops the preparing goroutines.
func (r *run) stop() {
	r.cancel()
	r.workers.Wait()
	if r.holding != nil {
		<-r.holding.ready
		r.releaseUnwritten(r.holding)
	}
	// The workers are done: no queue is made any more.
	for _, q := range r.queues {
		for drained := false; !drained; {
			select {
			case res, ok := <-q:
				if !ok {
					drained = true
				} else if res.batch != nil {
					<-res.ready
					r.releaseUnwritten(res)
				}
			default: // a shard never started
				drained = true
			}
		}
	}
	close(r.prep)
	r.prepWG.Wait()
}

// releaseUnwritten gives back a prepared batch that will not be written,
// unless it was given back when it compacted.
func (r *run) releaseUnwritten(res *result) {
	if res.compact < 0 {
		r.release(res.batch)
	}
}

var errCanceled = errors.New("canceled")

// PanicError is a panic in a source's Scan or a sink's Prepare, recovered
// on the worker that ran it and returned by Run as its error, so that a bug
// in one format fails the run (its outputs removed by the caller) instead
// of killing the process with a stack trace.
type PanicError struct {
	Value any    // what was passed to panic
	Stack []byte // the goroutine's stack where it panicked
}

func (p PanicError) Error() string { return fmt.Sprintf("internal error: %v", p.Value) }

// recoverInto turns a panic into a PanicError stored in *err.
func recoverInto(err *error) {
	if v := recover(); v != nil {
		*err = PanicError{Value: v, Stack: debug.Stack()}
	}
}

// scanShard runs on a worker: it scans one shard, prepares each batch and
// queues it for the writer. The queue is closed when the shard is done.
func scanShard(ctx context.Context, src Source, shard int, q chan<- *result, prep chan<- *result, inFlight *budget, release func(*Batch)) {
	defer close(q)
	send := func(r *result) error {
		select {
		case q <- r:
			return nil
		case <-ctx.Done():
			return errCanceled
		}
	}
	err := scanRecovered(ctx, src, shard, func(rows []Row) error {
		if len(rows) == 0 {
			return nil
		}
		b := &Batch{Shard: shard, Rows: rows}
		for i := range rows {
			b.Bytes += rows[i].Size
		}
		r := &result{batch: b, ready: make(chan struct{}), counted: inFlight.take(shard), rows: len(rows), compact: -1, end: -1}
		if last := &rows[len(rows)-1]; last.Offset >= 0 {
			r.end = last.DataOffset + last.Size
		}
		if ctx.Err() != nil {
			release(b)
			return errCanceled
		}
		select {
		case prep <- r:
		case <-ctx.Done():
			release(b)
			return errCanceled
		}
		if err := send(r); err != nil {
			<-r.ready // the preparing goroutines outlive the workers
			if r.compact < 0 {
				release(b)
			}
			return err
		}
		return nil
	})
	if err != nil && err != errCanceled && ctx.Err() == nil {
		send(&result{err: err})
	}
}

// scanRecovered is src.Scan with a panic made its error.
func scanRecovered(ctx context.Context, src Source, shard int, emit func([]Row) error) (err error) {
	defer recoverInto(&err)
	return src.Scan(ctx, shard, emit)
}

// prepareLoop runs the sink's Prepare on batches from any shard; a
// CompactSink's batch then gives its rows back, and its place in the
// budget for its compact bytes.
func (r *run) prepareLoop() {
	for res := range r.prep {
		res.prepErr = prepareRecovered(r.sink, res.batch)
		if res.prepErr == nil && r.compact != nil {
			if n := r.compact.PreparedBytes(res.batch); n >= 0 {
				r.release(res.batch)
				res.batch.Rows = nil
				r.inFlight.compacted(res.counted, n)
				res.counted, res.compact = false, n
			}
		}
		close(res.ready)
	}
}

func prepareRecovered(sink Sink, b *Batch) (err error) {
	defer recoverInto(&err)
	return sink.Prepare(b)
}
