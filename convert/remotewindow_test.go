package convert

import (
	"archive/tar"
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/itarconv/itarconv/partition"

	"github.com/itarconv/itarconv/spool"
)

// windowShards writes shards of 40 files of 20 KiB each (about 820 KiB a
// shard) into dir: shard 4 holds a hard link to a file of shard 0, and
// shard 5 a file of the same path as one of shard 1.
func windowShards(t *testing.T, dir string, n int) (paths []string, shardSize int64) {
	t.Helper()
	for s := range n {
		var ms []member
		for i := range 40 {
			body := bytes.Repeat([]byte(fmt.Sprintf("%d/%d.", s, i)), 20<<10/6)
			ms = append(ms, member{name: fmt.Sprintf("s%d/f%02d.jpg", s, i), body: string(body), typ: tar.TypeReg, mode: 0o644})
		}
		switch s {
		case 4:
			ms = append(ms, member{name: "s4/link.jpg", link: "s0/f03.jpg", typ: tar.TypeLink})
		case 5:
			ms = append(ms, member{name: "s1/f07.jpg", body: "the last one", typ: tar.TypeReg, mode: 0o644})
		}
		p := filepath.Join(dir, fmt.Sprintf("train_%04d.tar", s))
		writeTar(t, p, ms)
		st, _ := os.Stat(p)
		shardSize = max(shardSize, st.Size())
		paths = append(paths, p)
	}
	return paths, shardSize
}

// TestConvertURLsWindow: tar shards from URLs into Barecat (two passes:
// --on-duplicate last) and TBL (a header pass, then the copy) stream
// through a window of the spool smaller than one shard: the outputs are
// those of the same shards as local files, byte for byte (a hard link
// to an earlier shard's file, whose copy went for room, is fetched
// again), and the disk never held the whole dataset.
func TestConvertURLsWindow(t *testing.T) {
	const n = 6
	src := t.TempDir()
	local, shardSize := windowShards(t, src, n)
	srv := httptest.NewServer(http.FileServer(http.Dir(src)))
	defer srv.Close()
	var urls []string
	for _, p := range local {
		urls = append(urls, srv.URL+"/"+filepath.Base(p))
	}
	window := shardSize / 2
	ctx := context.Background()
	// The window, the shard being written, a link's target fetched
	// again, and the last shard of the first pass, kept for the second.
	bound := window + 3*shardSize

	t.Run("barecat", func(t *testing.T) {
		dir := t.TempDir()
		want := filepath.Join(dir, "local.barecat")
		if _, err := TarToBarecat(ctx, local, want, BarecatOptions{OnDuplicate: DuplicateLast, Workers: 2}); err != nil {
			t.Fatal(err)
		}
		out := filepath.Join(dir, "remote", "x.barecat")
		os.MkdirAll(filepath.Dir(out), 0o755)
		sp := spool.New(filepath.Dir(out), nil)
		sp.Window = window
		st, err := TarToBarecat(ctx, urls, out, BarecatOptions{OnDuplicate: DuplicateLast, Workers: 2, Spool: sp})
		peak := sp.PeakDisk()
		sp.Close()
		if err != nil {
			t.Fatal(err)
		}
		if st.Hardlinks != 1 || st.Duplicates != 1 {
			t.Errorf("stats %+v", st)
		}
		for i := range st.Shards {
			a, _ := os.ReadFile(fmt.Sprintf("%s-shard-%05d", want, i))
			b, _ := os.ReadFile(fmt.Sprintf("%s-shard-%05d", out, i))
			if len(a) == 0 || !bytes.Equal(a, b) {
				t.Errorf("shard %d from URLs differs from the local one (%d, %d bytes)", i, len(b), len(a))
			}
		}
		if peak <= 0 || peak > bound || peak >= n*shardSize {
			t.Errorf("copies held %d bytes on disk at most, want at most %d (the dataset: %d)", peak, bound, n*shardSize)
		}
		if left, _ := filepath.Glob(filepath.Join(filepath.Dir(out), "*.plain.tar*")); len(left) != 0 {
			t.Errorf("copies left: %v", left)
		}
	})

	t.Run("tbl", func(t *testing.T) {
		dir := t.TempDir()
		want := filepath.Join(dir, "local.tbl")
		if _, err := TarToTBL(ctx, local, want, TBLOptions{Workers: 2}); err != nil {
			t.Fatal(err)
		}
		out := filepath.Join(dir, "remote.tbl")
		sp := spool.New(dir, nil)
		sp.Window = window
		_, err := TarToTBL(ctx, urls, out, TBLOptions{Workers: 2, Spool: sp})
		peak := sp.PeakDisk()
		sp.Close()
		if err != nil {
			t.Fatal(err)
		}
		a, _ := os.ReadFile(want)
		b, _ := os.ReadFile(out)
		if len(a) == 0 || !bytes.Equal(a, b) {
			t.Errorf("TBL from URLs differs from the local one (%d, %d bytes)", len(b), len(a))
		}
		if peak <= 0 || peak > bound || peak >= n*shardSize {
			t.Errorf("copies held %d bytes on disk at most, want at most %d (the dataset: %d)", peak, bound, n*shardSize)
		}
	})
}

// TestPartitionedConvertURLs: tar shards given as URLs convert as tasks
// of a partitioned run (each task streams its share of the shards), and
// the merge gives what one run over the local files gives: the same TBL
// bytes, the same Barecat files.
func TestPartitionedConvertURLs(t *testing.T) {
	src, want := coverFold(t, 5)
	files := http.FileServer(http.Dir(src))
	var mu sync.Mutex
	asked := map[string]int{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		asked[r.URL.Path]++
		mu.Unlock()
		files.ServeHTTP(w, r)
	}))
	defer srv.Close()
	urls := shardURLs(srv.URL, 5)
	ctx := context.Background()
	out := t.TempDir()
	one := oneTBL(t, src, out)
	merged := filepath.Join(out, "merged.tbl")
	_, ranges := partitioned(t, urls, merged, ConvertOptions{}, 3)
	if fmt.Sprint(ranges[0][0], ranges[2][1]) != "0 5" || ranges[0][1] != ranges[1][0] || ranges[1][1] != ranges[2][0] {
		t.Errorf("task ranges %v do not cover shards 0 to 5 once, in order", ranges)
	}
	a, _ := os.ReadFile(one)
	b, _ := os.ReadFile(merged)
	if len(a) == 0 || !bytes.Equal(a, b) {
		t.Errorf("TBL merged from tasks over URLs (%d bytes) differs from one run's (%d bytes)", len(b), len(a))
	}
	// A task reads its own shards only (the sizes that share them out
	// aside: one request each).
	mu.Lock()
	clear(asked)
	mu.Unlock()
	fresh := make([]string, len(urls)) // not seen yet by this process: stat'ed anew
	for i, u := range urls {
		fresh[i] = u + "?fresh"
	}
	lo, hi, _, err := ConvertPart(ctx, fresh, filepath.Join(out, "x.barecat"), ConvertOptions{To: "barecat"}, partition.Task{K: 0, N: 2}, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for s := hi; s < 5; s++ {
		if n := asked[fmt.Sprintf("/train_%04d.tar", s)]; n > 1 {
			t.Errorf("task 0 (shards %d-%d) asked %d times for shard %d", lo, hi-1, n, s)
		}
	}
	bc := filepath.Join(out, "merged.barecat")
	partitioned(t, urls, bc, ConvertOptions{To: "barecat"}, 2)
	sameFiles(t, "Barecat merged from tasks over URLs", coverRead(t, "barecat", bc), want)
	if left, _ := filepath.Glob(filepath.Join(out, "*.plain.tar*")); len(left) != 0 {
		t.Errorf("copies left: %v", left)
	}
}

// TestConvertURLsWindowOption: Convert takes ConvertOptions.Window for
// the copies of remote shards, on every path: a pair of its own (tar to
// TBL) and the registry's (tar shards written anew into shards of a
// size), each streaming through a window of one byte (only the shard
// being written on disk) into what the local shards give.
func TestConvertURLsWindowOption(t *testing.T) {
	src, want := coverFold(t, 4)
	srv := httptest.NewServer(http.FileServer(http.Dir(src)))
	defer srv.Close()
	urls := shardURLs(srv.URL, 4)
	ctx := context.Background()
	out := t.TempDir()
	one := oneTBL(t, src, out)
	got := filepath.Join(out, "urls.tbl")
	if _, err := Convert(ctx, urls, got, ConvertOptions{Window: 1, Workers: 2}); err != nil {
		t.Fatal(err)
	}
	a, _ := os.ReadFile(one)
	b, _ := os.ReadFile(got)
	if len(a) == 0 || !bytes.Equal(a, b) {
		t.Errorf("TBL from URLs through a window of one byte (%d bytes) differs from the local one (%d bytes)", len(b), len(a))
	}
	fold := filepath.Join(out, "fold")
	if _, err := Convert(ctx, urls, fold, ConvertOptions{To: "tar", ShardSize: 4096, Window: 1, Workers: 2}); err != nil {
		t.Fatal(err)
	}
	sameFiles(t, "fold from URLs", coverRead(t, "tar", fold), want)
}

// shardURLs are the URLs of a served fold's n shards, train_0000.tar on.
func shardURLs(base string, n int) []string {
	var urls []string
	for s := range n {
		urls = append(urls, fmt.Sprintf("%s/train_%04d.tar", base, s))
	}
	return urls
}

// oneTBL converts the local fold src into out/one.tbl, as one run does,
// and returns its path: what conversions over URLs must give.
func oneTBL(t *testing.T, src, out string) string {
	t.Helper()
	one := filepath.Join(out, "one.tbl")
	if _, err := Convert(context.Background(), []string{src}, one, ConvertOptions{}); err != nil {
		t.Fatal(err)
	}
	return one
}
