package dataset

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"
)

// shardCounts is a batchSource that counts the batches scanned, by shard.
type shardCounts struct {
	batchSource
	scanned [2]atomic.Int64
}

func (s *shardCounts) Scan(ctx context.Context, shard int, emit func([]Row) error) error {
	return s.batchSource.Scan(ctx, shard, func(rows []Row) error {
		s.scanned[shard].Add(1)
		return emit(rows)
	})
}

// compactSink keeps a batch's row count in Prep and says it holds `bytes`;
// its writer waits at shard 0's first batch until gate is closed.
type compactSink struct {
	gate    chan struct{}
	bytes   int64
	failAt  int
	rows    int
	sawRows bool
}

func (s *compactSink) Prepare(b *Batch) error { b.Prep = len(b.Rows); return nil }
func (s *compactSink) Write(b *Batch) error {
	if s.rows == 0 && s.gate != nil {
		<-s.gate
	}
	if s.failAt > 0 && s.rows == s.failAt {
		return errors.New("disk full")
	}
	s.sawRows = s.sawRows || b.Rows != nil
	s.rows += b.Prep.(int)
	return nil
}
func (s *compactSink) EndShard(int) error           { return nil }
func (s *compactSink) PreparedBytes(b *Batch) int64 { return s.bytes }

// waitFor polls cond for up to 10 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// TestCompactSinkScansAhead: while the writer is still at shard 0, the
// worker on shard 1 scans the whole shard when the sink's batches compact
// (it used to stop at the budget of a few batches, which kept the second
// core idle), and only as far as AheadMemory when that is small. Every
// batch is given back once, at Prepare, and Write sees no rows.
func TestCompactSinkScansAhead(t *testing.T) {
	const batches = 200
	for _, tc := range []struct {
		ahead    int64
		maxAhead int64 // of shard 1's batches scanned while the writer waits
	}{
		{ahead: 0, maxAhead: batches},
		{ahead: 10 * 100, maxAhead: 10 + batchesPerWorker*2 + 2},
	} {
		src := &shardCounts{batchSource: batchSource{n: 2, batches: batches}}
		sink := &compactSink{gate: make(chan struct{}), bytes: 100}
		done := make(chan error, 1)
		go func() { done <- Run(context.Background(), src, sink, Options{Workers: 2, AheadMemory: tc.ahead}) }()
		waitFor(t, "shard 0 scanned", func() bool { return src.scanned[0].Load() == batches })
		if tc.maxAhead == batches {
			waitFor(t, "shard 1 scanned ahead", func() bool { return src.scanned[1].Load() == batches })
		} else {
			time.Sleep(50 * time.Millisecond)
			if n := src.scanned[1].Load(); n > tc.maxAhead {
				t.Errorf("AheadMemory %d: %d batches of shard 1 scanned ahead, want at most %d", tc.ahead, n, tc.maxAhead)
			}
		}
		close(sink.gate)
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		if sink.rows != 2*batches || sink.sawRows || src.live.Load() != 0 {
			t.Errorf("AheadMemory %d: wrote %d rows (saw rows %v), %d batches not released", tc.ahead, sink.rows, sink.sawRows, src.live.Load())
		}
	}
}

// TestCompactSinkReleasesOnFailure: a run that fails releases every batch
// exactly once, compacted or not.
func TestCompactSinkReleasesOnFailure(t *testing.T) {
	for _, failAt := range []int{1, 7, 95} {
		src := &releaseCounter{batchSource: batchSource{n: 20, batches: 10}, released: map[string]int{}}
		if err := Run(context.Background(), src, &compactSink{bytes: 10, failAt: failAt}, Options{Workers: 2}); err == nil {
			t.Fatalf("fail at %d: Run succeeded", failAt)
		}
		if live := src.live.Load(); live != 0 {
			t.Errorf("fail at %d: %d batches never released", failAt, live)
		}
		for name, n := range src.released {
			if n != 1 {
				t.Errorf("fail at %d: batch %s released %d times", failAt, name, n)
			}
		}
	}
}
