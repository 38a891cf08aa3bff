package spool

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/itarconv/itarconv/remote"
	"github.com/itarconv/itarconv/testing/testutil"
)

// windowServer serves n shards of size bytes each (shard i's bytes start
// i*1000 bytes into one run of data), from a directory a test may change.
func windowServer(t *testing.T, n, size int) (urls []string, data []byte, dir string) {
	t.Helper()
	dir = t.TempDir()
	data = testutil.PlainData(size + n*1000)
	for i := range n {
		os.WriteFile(filepath.Join(dir, fmt.Sprintf("s%d.tar", i)), data[i*1000:i*1000+size], 0o644)
	}
	srv := httptest.NewServer(http.FileServer(http.Dir(dir)))
	t.Cleanup(srv.Close)
	for i := range n {
		urls = append(urls, fmt.Sprintf("%s/s%d.tar", srv.URL, i))
	}
	return urls, data, dir
}

// copiesOnDisk is the bytes the spool's copies take in dir now.
func copiesOnDisk(t *testing.T, dir string) (n int64) {
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if fi, err := e.Info(); err == nil && strings.Contains(e.Name(), ".plain.tar") {
			n += fi.Size()
		}
	}
	return n
}

// TestSpoolWindow: shards read in order and released as a conversion
// reads them never hold more than the window (and the shard being read)
// on disk; a shard removed for room, asked for again whole, is fetched
// anew with its bytes; fetches wait for room rather than run ahead.
func TestSpoolWindow(t *testing.T) {
	const shards, size = 8, 3 << 20
	urls, data, _ := windowServer(t, shards, size)
	ctx := remote.WithClient(context.Background(), remote.NewClient(remote.Options{Connections: 4}))
	out := t.TempDir()
	s := New(out, nil)
	defer s.Close()
	s.Window = 2 * size
	s.Prefetch(ctx, urls)
	// Nothing consumed yet: the fetches stop at the window, plus the
	// first shard (not released), whatever the time given them.
	time.Sleep(200 * time.Millisecond)
	if got := copiesOnDisk(t, out); got > 3*size {
		t.Errorf("before any read, %d bytes of copies on disk, want at most %d", got, 3*size)
	}
	for i, u := range urls {
		f, g, err := s.Open(ctx, u, false)
		if err != nil {
			t.Fatal(err)
		}
		if g == nil || g.Wait(ctx, g.Size()) != nil {
			t.Fatalf("%s: no growing copy (%v)", u, g)
		}
		got, _ := io.ReadAll(f)
		f.Close()
		if !bytes.Equal(got, data[i*1000:i*1000+size]) {
			t.Fatalf("%s: the copy differs", u)
		}
		if on := copiesOnDisk(t, out); on > 3*size {
			t.Errorf("reading shard %d: %d bytes of copies on disk, want at most %d", i, on, 3*size)
		}
		s.Release(u)
	}
	if peak := s.PeakDisk(); peak > 3*size || peak < size {
		t.Errorf("PeakDisk = %d, want between %d and %d", peak, size, 3*size)
	}
	// Shard 0 went for room: asked for whole, it comes again.
	f, _, err := s.Open(ctx, urls[0], true)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(f)
	f.Close()
	if !bytes.Equal(got, data[:size]) {
		t.Errorf("shard 0 fetched anew differs (%d bytes)", len(got))
	}
	s.Close()
	if left, _ := os.ReadDir(out); len(left) != 0 {
		t.Errorf("left after Close: %v", left)
	}
}

// TestSpoolWindowChanged: a shard removed for room and asked for again
// is fetched anew against the ETag first seen: a file changed on the
// server since is an error naming it (remote.ErrChanged), never its new
// bytes.
func TestSpoolWindowChanged(t *testing.T) {
	const size = 1 << 20
	urls, data, dir := windowServer(t, 3, size)
	out := t.TempDir()
	s := New(out, nil)
	defer s.Close()
	s.Window = size
	ctx := context.Background()
	s.Prefetch(ctx, urls)
	for _, u := range urls {
		f, g, err := s.Open(ctx, u, false)
		if err != nil {
			t.Fatal(err)
		}
		if err := g.Wait(ctx, g.Size()); err != nil {
			t.Fatal(err)
		}
		f.Close()
		s.Release(u)
	}
	// Another version of shard 0, of the same size, a second later.
	changed := bytes.Clone(data[:size])
	changed[size/2] ^= 1
	p := filepath.Join(dir, "s0.tar")
	os.WriteFile(p, changed, 0o644)
	later := time.Now().Add(2 * time.Second)
	os.Chtimes(p, later, later)
	_, _, err := s.Open(ctx, urls[0], true)
	if !errors.Is(err, remote.ErrChanged) || !strings.Contains(err.Error(), "s0.tar") {
		t.Fatalf("shard 0 changed, fetched anew: %v, want remote.ErrChanged naming it", err)
	}
}

// TestSpoolPrefetchAtEarlierShard: two workers' first scans start in
// either order. Shards 1 on prefetched first, shard 0 after: its copy
// still comes first, though the window is smaller than a shard and the
// copies of the later shards, not released, hold it (it came last and
// waited for ever on room they held). Close then returns, though the
// copies of shards 2 and 3 were left short (it waited for them for
// ever).
func TestSpoolPrefetchAtEarlierShard(t *testing.T) {
	const shards, size = 4, 1 << 20
	urls, data, _ := windowServer(t, shards, size)
	ctx := remote.WithClient(context.Background(), remote.NewClient(remote.Options{Connections: 2}))
	s := New(t.TempDir(), nil)
	defer s.Close()
	s.Window = size / 2
	s.PrefetchAt(ctx, urls[1:], 1)
	f1, g1, err := s.Open(ctx, urls[1], false) // a scan of shard 1, never released
	if err != nil {
		t.Fatal(err)
	}
	defer f1.Close()
	s.PrefetchAt(ctx, urls[:1], 0)
	f0, g0, err := s.Open(ctx, urls[0], false)
	if err != nil {
		t.Fatal(err)
	}
	defer f0.Close()
	wait, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	if err := g0.Wait(wait, g0.Size()); err != nil {
		t.Fatalf("shard 0's copy, asked for after shard 1's: %v", err)
	}
	got, _ := io.ReadAll(f0)
	if !bytes.Equal(got, data[:size]) {
		t.Errorf("shard 0's copy differs")
	}
	if err := g1.Wait(wait, g1.Size()); err != nil {
		t.Fatalf("shard 1's copy: %v", err)
	}
}

// TestFetchQueueWaitWakes: a fetch that waits for room before the queue
// has ever signalled (the first enqueue starts its fetchers before it
// signals) wakes at the next signal: it once waited on a nil channel,
// for ever, and a conversion from URLs stalled when all of them had.
func TestFetchQueueWaitWakes(t *testing.T) {
	dir := t.TempDir()
	copyOf := func(size int64) *growingCopy {
		f, err := os.CreateTemp(dir, "copy")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
		return &growingCopy{f: f, g: &Growth{path: f.Name(), size: size, changed: make(chan struct{})}, part: size, parts: 1, ahead: map[int64]bool{}}
	}
	first, second := copyOf(100), copyOf(100)
	first.handed = 1 // live, its one part handed out: it holds the room
	q := &fetchQueue{copies: []*growingCopy{first, second}, used: 100}
	got := make(chan *growingCopy, 1)
	go func() {
		c, _, _ := q.next(context.Background(), 150)
		got <- c
	}()
	time.Sleep(50 * time.Millisecond) // it waits: no room
	q.mu.Lock()
	first.mu.Lock()
	first.finished, first.released = true, true
	first.mu.Unlock()
	q.mu.Unlock()
	q.signal()
	select {
	case c := <-got:
		if c != second {
			t.Errorf("handed out %p, want the second copy %p", c, second)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a fetch that waited before the queue's first signal never woke")
	}
}
