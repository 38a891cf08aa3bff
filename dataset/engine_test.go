package dataset

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// countSource makes n shards of rows named "<shard>-<i>".
type countSource struct {
	n, rows int
	active  atomic.Int64 // shards scanned but not yet written
	peak    atomic.Int64
}

func (c *countSource) NumShards() int         { return c.n }
func (c *countSource) ShardName(s int) string { return fmt.Sprint(s) }
func (c *countSource) Scan(ctx context.Context, shard int, emit func([]Row) error) error {
	if v := c.active.Add(1); v > c.peak.Load() {
		c.peak.Store(v)
	}
	rows := make([]Row, c.rows)
	for i := range rows {
		rows[i].Name = []byte(fmt.Sprintf("%d-%d", shard, i))
	}
	return emit(rows)
}

type orderSink struct {
	src  *countSource
	seen []string
}

func (o *orderSink) Prepare(*Batch) error { return nil }
func (o *orderSink) Write(b *Batch) error {
	time.Sleep(100 * time.Microsecond) // a slow writer: workers could run ahead
	for _, r := range b.Rows {
		o.seen = append(o.seen, string(r.Name))
	}
	return nil
}
func (o *orderSink) EndShard(int) error { o.src.active.Add(-1); return nil }

// TestRunOrderAndWindow: rows arrive in dataset order whatever the workers
// do, and workers never hold more than 2 x workers shards the writer has
// not finished.
func TestRunOrderAndWindow(t *testing.T) {
	src := &countSource{n: 200, rows: 3}
	sink := &orderSink{src: src}
	if err := Run(context.Background(), src, sink, Options{Workers: 3}); err != nil {
		t.Fatal(err)
	}
	if len(sink.seen) != 600 || sink.seen[0] != "0-0" || sink.seen[599] != "199-2" || sink.seen[301] != "100-1" {
		t.Fatalf("rows out of order: %d rows, %q ... %q", len(sink.seen), sink.seen[0], sink.seen[len(sink.seen)-1])
	}
	if p := src.peak.Load(); p > 6+1 {
		t.Errorf("%d shards in flight, want at most 2 x 3 workers", p)
	}
}

// TestRunCanceled: a canceled context stops Run with its error, never a hang.
func TestRunCanceled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	done := make(chan error, 1)
	go func() {
		done <- Run(ctx, &countSource{n: 5, rows: 1}, &orderSink{src: &countSource{}}, Options{Workers: 2})
	}()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("got %v, want context.Canceled", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Run hangs on a canceled context")
	}
}

// batchSource makes n shards of `batches` one-row batches, counting the
// batches scanned and not yet written.
type batchSource struct {
	n, batches int
	live, peak atomic.Int64
}

func (c *batchSource) NumShards() int         { return c.n }
func (c *batchSource) ShardName(s int) string { return fmt.Sprint(s) }
func (c *batchSource) Scan(ctx context.Context, shard int, emit func([]Row) error) error {
	for i := range c.batches {
		if v := c.live.Add(1); v > c.peak.Load() {
			c.peak.Store(v)
		}
		if err := emit([]Row{{Name: []byte(fmt.Sprintf("%d-%d", shard, i))}}); err != nil {
			return err
		}
	}
	return nil
}
func (c *batchSource) Release(*Batch) { c.live.Add(-1) }

type slowSink struct{ rows int }

func (s *slowSink) Prepare(*Batch) error { return nil }
func (s *slowSink) Write(b *Batch) error {
	for start := time.Now(); time.Since(start) < 20*time.Microsecond; {
	} // slower than the workers, who could otherwise run ahead
	s.rows += len(b.Rows)
	return nil
}
func (s *slowSink) EndShard(int) error { return nil }

// TestRunBoundsBatchesInFlight: however many shards the window lets the
// workers scan, the batches scanned and not yet written stay within the
// budget, plus the one the shard being written may overdraw and one per
// worker waiting for room.
func TestRunBoundsBatchesInFlight(t *testing.T) {
	for _, shards := range []int{1, 3, 20} {
		const workers = 2
		src := &batchSource{n: shards, batches: 30}
		sink := &slowSink{}
		if err := Run(context.Background(), src, sink, Options{Workers: workers}); err != nil {
			t.Fatal(err)
		}
		if sink.rows != shards*30 || src.live.Load() != 0 {
			t.Fatalf("%d shards: wrote %d rows, %d batches not released", shards, sink.rows, src.live.Load())
		}
		if limit := int64(batchesPerWorker*workers + 1 + workers); src.peak.Load() > limit {
			t.Errorf("%d shards: %d batches in flight, want at most %d", shards, src.peak.Load(), limit)
		}
	}
}

// releaseCounter is a batchSource that counts each batch's releases.
type releaseCounter struct {
	batchSource
	mu       sync.Mutex
	released map[string]int
}

func (c *releaseCounter) Release(b *Batch) {
	c.batchSource.Release(b)
	c.mu.Lock()
	c.released[string(b.Rows[0].Name)]++
	c.mu.Unlock()
}

type failingSink struct {
	slowSink
	failAt int
	cancel func()
}

func (s *failingSink) Write(b *Batch) error {
	if s.rows == s.failAt {
		if s.cancel != nil {
			s.cancel()
			return nil
		}
		return errors.New("disk full")
	}
	return s.slowSink.Write(b)
}

// TestRunReleasesOnFailure: when a run stops early (the sink fails, or the
// context is canceled), every batch scanned is released exactly once,
// written or not, by the time Run returns.
func TestRunReleasesOnFailure(t *testing.T) {
	for _, cancelRun := range []bool{false, true} {
		for _, failAt := range []int{0, 7, 95} {
			src := &releaseCounter{batchSource: batchSource{n: 20, batches: 10}, released: map[string]int{}}
			ctx, cancel := context.WithCancel(context.Background())
			sink := &failingSink{failAt: failAt}
			if cancelRun {
				sink.cancel = cancel
			}
			err := Run(ctx, src, sink, Options{Workers: 2})
			cancel()
			if err == nil {
				t.Fatalf("cancel %v, fail at %d: Run succeeded", cancelRun, failAt)
			}
			if live := src.live.Load(); live != 0 {
				t.Errorf("cancel %v, fail at %d: %d batches scanned and never released", cancelRun, failAt, live)
			}
			for name, n := range src.released {
				if n != 1 {
					t.Errorf("cancel %v, fail at %d: batch %s released %d times", cancelRun, failAt, name, n)
				}
			}
		}
	}
}

type panicSource struct{ countSource }

func (p *panicSource) Scan(ctx context.Context, shard int, emit func([]Row) error) error {
	if shard == 3 {
		var rows []Row
		_ = rows[shard] // a bug in a format: index out of range
	}
	return p.countSource.Scan(ctx, shard, emit)
}

type panicSink struct{ orderSink }

func (p *panicSink) Prepare(b *Batch) error {
	if b.Shard == 2 {
		panic("bad prepare")
	}
	return nil
}

// TestRunRecoversPanics: a panic in a source's Scan or a sink's Prepare, on
// a worker, fails the run with a PanicError carrying its stack, instead of
// killing the process.
func TestRunRecoversPanics(t *testing.T) {
	src := &panicSource{countSource{n: 6, rows: 2}}
	err := Run(context.Background(), src, &orderSink{src: &src.countSource}, Options{Workers: 2})
	var pe PanicError
	if !errors.As(err, &pe) || !strings.Contains(err.Error(), "index out of range") || !strings.Contains(string(pe.Stack), "panicSource") {
		t.Errorf("Scan panic: got %v", err)
	}
	src2 := &countSource{n: 6, rows: 2}
	err = Run(context.Background(), src2, &panicSink{orderSink{src: src2}}, Options{Workers: 2})
	if !errors.As(err, &pe) || pe.Value != "bad prepare" {
		t.Errorf("Prepare panic: got %v", err)
	}
}

// emptySource has n shards of one row each, made without allocating.
type emptySource struct{ n int }

func (e emptySource) NumShards() int       { return e.n }
func (e emptySource) ShardName(int) string { return "" }
func (e emptySource) Scan(_ context.Context, _ int, emit func([]Row) error) error {
	return emit(make([]Row, 1))
}

// heapSink samples the live heap every 50k shards.
type heapSink struct{ peak uint64 }

func (h *heapSink) Prepare(*Batch) error { return nil }
func (h *heapSink) Write(*Batch) error   { return nil }
func (h *heapSink) EndShard(shard int) error {
	if shard%50_000 == 25_000 {
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		h.peak = max(h.peak, ms.HeapAlloc)
	}
	return nil
}

// TestRunMemoryFlatInShards: a source of many small shards (a Barecat's
// chunks) costs no memory a shard: the queues and counts of shards exist
// only while they are in flight. Before, 200k shards held about 30 MB.
func TestRunMemoryFlatInShards(t *testing.T) {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	base := ms.HeapAlloc
	sink := &heapSink{}
	if err := Run(context.Background(), emptySource{200_000}, sink, Options{Workers: 2}); err != nil {
		t.Fatal(err)
	}
	if grown := int64(sink.peak) - int64(base); grown > 4<<20 {
		t.Errorf("the live heap grew by %d bytes for 200k shards", grown)
	}
}
