package remote

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"testing"
	"time"

	"github.com/itarconv/itarconv/testing/s3server"
)

// tarOf writes members of the given payload sizes.
func tarOf(t *testing.T, sizes ...int) []byte {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for i, n := range sizes {
		tw.WriteHeader(&tar.Header{Name: string(rune('a'+i%26)) + ".bin", Size: int64(n), Mode: 0o644})
		tw.Write(bytes.Repeat([]byte{byte(i)}, n))
	}
	tw.Close()
	return buf.Bytes()
}

// headers reads every header of a tar through r as a scan does: 512
// bytes at each header offset, payloads skipped.
func headers(t *testing.T, r io.ReaderAt, size int64) []int64 {
	t.Helper()
	var offs []int64
	for off := int64(0); off+512 <= size; {
		blk := make([]byte, 512)
		if _, err := r.ReadAt(blk, off); err != nil {
			t.Fatalf("header at %d: %v", off, err)
		}
		h, err := tar.NewReader(bytes.NewReader(append(blk, make([]byte, 1024)...))).Next()
		if err != nil {
			break // the end blocks
		}
		offs = append(offs, off)
		off += 512 + (h.Size+511)/512*512
	}
	return offs
}

// TestSequentialPlans: small members are streamed in one request after
// the opening one; large ones are crossed by a small request each, so
// that a scan reads a small share of the bytes.
func TestSequentialPlans(t *testing.T) {
	small := make([]int, 300)
	for i := range small {
		small[i] = 1000 + i*37%9000
	}
	large := []int{3 << 20, 5 << 20, 4 << 20, 6 << 20}
	for _, c := range []struct {
		name      string
		data      []byte
		requests  int64
		maxShare  float64
		wantCount int
	}{
		// The opening request (the first 64 KiB), then one stream.
		{"small members", tarOf(t, small...), 2, 1.01, 300},
		// Then a window at each header past the first, and at the end.
		{"large members", tarOf(t, large...), 5, 0.01, 4},
	} {
		t.Run(c.name, func(t *testing.T) {
			base := serve(t, c.data, nil)
			f, err := Open(context.Background(), base+"/shard.tar", fast)
			if err != nil {
				t.Fatal(err)
			}
			seq := f.Sequential(false)
			if got := len(headers(t, seq, f.Size())); got != c.wantCount {
				t.Fatalf("%d headers, want %d", got, c.wantCount)
			}
			seq.Close()
			reqs, got := f.Stats()
			got += firstWindow // the opening request's body: not in Stats
			if reqs != c.requests || float64(got) > c.maxShare*float64(len(c.data)) {
				t.Errorf("%d requests bringing %d of %d bytes", reqs, got, len(c.data))
			}
		})
	}
}

// TestRangeOneRequest: a member's bytes, through Range, take exactly one
// request of exactly its bytes, with the size and ETag known before.
func TestRangeOneRequest(t *testing.T) {
	data := testData()
	base := serve(t, data, nil)
	f, err := OpenKnown(context.Background(), base+"/shard.tar", int64(len(data)), "", fast)
	if err != nil {
		t.Fatal(err)
	}
	r := f.Range(5000, 20_000)
	got := make([]byte, 20_000)
	for off := int64(0); off < 20_000; off += 4096 {
		n := min(4096, 20_000-off)
		if _, err := r.ReadAt(got[off:off+n], 5000+off); err != nil {
			t.Fatal(err)
		}
	}
	r.Close()
	if !bytes.Equal(got, data[5000:25_000]) {
		t.Fatal("other bytes")
	}
	if reqs, n := f.Stats(); reqs != 1 || n != 20_000 {
		t.Errorf("%d requests, %d bytes; want 1 and 20000", reqs, n)
	}
	// The size the index knew is no longer the file's: no byte comes.
	stale, _ := OpenKnown(context.Background(), base+"/shard.tar", int64(len(data))+1, "", fast)
	if _, err := stale.ReadAt(make([]byte, 10), 0); !errors.Is(err, ErrChanged) {
		t.Errorf("a file of another size: %v", err)
	}
}

// TestStalled: a server that stops sending mid-body is abandoned after
// Options.Idle and retried; when it always stalls, the read fails naming
// the URL and offset, in bounded time.
func TestStalled(t *testing.T) {
	data := testData()
	release := make(chan struct{})
	defer close(release)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Range", "bytes 0-99999/100000")
		w.Header().Set("Content-Length", "100000")
		w.WriteHeader(http.StatusPartialContent)
		w.Write(data[:1000])
		w.(http.Flusher).Flush()
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	f, err := OpenKnown(context.Background(), srv.URL+"/x", int64(len(data)), "", Options{Backoff: time.Millisecond, Retries: 2, Idle: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, err = f.ReadAt(make([]byte, len(data)), 0)
	if !errors.Is(err, ErrRetriesExhausted) || !errors.Is(err, ErrStalled) {
		t.Errorf("a stalled server: %v", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("gave up after %v", d)
	}
}

// TestS3 reads objects of a real S3 server (versitygw): by presigned
// ranges, with their ETags, and found by globs over their keys.
func TestS3(t *testing.T) {
	dir := t.TempDir()
	data := testData()
	for _, name := range []string{"a/shard-1.tar", "a/shard-2.tar", "a/shard-10.tar", "a/other.bin", "b/shard-3.tar"} {
		os.MkdirAll(filepath.Join(dir, filepath.Dir(name)), 0o755)
		os.WriteFile(filepath.Join(dir, name), data, 0o644)
	}
	srv := s3server.Start(t, map[string]string{"bucket": dir})
	srv.SetEnv(t)
	ctx := context.Background()
	f, err := Open(ctx, "s3://bucket/a/shard-2.tar", fast)
	if err != nil {
		t.Fatal(err)
	}
	if f.Size() != int64(len(data)) || f.ETag() == "" {
		t.Fatalf("size %d, ETag %q", f.Size(), f.ETag())
	}
	p := make([]byte, 100)
	if _, err := f.ReadAt(p, 777); err != nil || !bytes.Equal(p, data[777:877]) {
		t.Fatalf("ReadAt: %v", err)
	}
	got, err := Glob(ctx, "s3://bucket/a/shard-*.tar")
	sort.Strings(got)
	want := []string{"s3://bucket/a/shard-1.tar", "s3://bucket/a/shard-10.tar", "s3://bucket/a/shard-2.tar"}
	if err != nil || len(got) != 3 || got[0] != want[0] || got[1] != want[1] || got[2] != want[2] {
		t.Errorf("Glob: %v, %v", got, err)
	}
	if _, err := Open(ctx, "s3://bucket/a/missing.tar", fast); err == nil {
		t.Error("a missing object opened")
	}
	// Another object now under the same key: its ETag differs.
	srv.Put(t, "bucket", "a/shard-2.tar", data[:50_000])
	if _, err := f.ReadAt(p, 0); !errors.Is(err, ErrChanged) {
		t.Errorf("a replaced object: %v", err)
	}
}
