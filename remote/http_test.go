package remote

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// serve starts the standard library's file server on loopback over a
// directory holding data as "shard.tar" (and an empty "empty.tar"), behind
// fault, which may break requests before they reach it.
func serve(t *testing.T, data []byte, fault func(w http.ResponseWriter, r *http.Request) bool) string {
	t.Helper()
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "shard.tar"), data, 0o644)
	os.WriteFile(filepath.Join(dir, "empty.tar"), nil, 0o644)
	files := http.FileServer(http.Dir(dir))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if fault != nil && fault(w, r) {
			return
		}
		files.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

func testData() []byte {
	b := make([]byte, 100_000)
	for i := range b {
		b[i] = byte(i*31 + i>>8)
	}
	return b
}

var fast = Options{Backoff: time.Millisecond}

func TestReadAt(t *testing.T) {
	data := testData()
	base := serve(t, data, nil)
	f, err := Open(context.Background(), base+"/shard.tar", fast)
	if err != nil {
		t.Fatal(err)
	}
	if f.Size() != int64(len(data)) {
		t.Fatalf("size %d, want %d", f.Size(), len(data))
	}
	for _, c := range []struct {
		off, n int64
		want   int
		eof    bool
	}{{0, 512, 512, false}, {99_488, 512, 512, false}, {99_900, 512, 100, true}, {100_000, 10, 0, true}, {12_345, 0, 0, false}} {
		p := make([]byte, c.n)
		n, err := f.ReadAt(p, c.off)
		if n != c.want || (err == io.EOF) != c.eof || (err != nil && err != io.EOF) {
			t.Errorf("ReadAt(%d bytes at %d) = %d, %v", c.n, c.off, n, err)
		}
		if !bytes.Equal(p[:n], data[c.off:c.off+int64(n)]) {
			t.Errorf("ReadAt(%d bytes at %d): other bytes", c.n, c.off)
		}
	}
	// One request to open, one a read: never the whole file.
	if reqs, got := f.Stats(); reqs != 4 || got != 1124 {
		t.Errorf("%d requests bringing %d bytes, want 4 and 1124", reqs, got)
	}
	empty, err := Open(context.Background(), base+"/empty.tar", fast)
	if err != nil {
		t.Fatalf("an empty file: %v", err)
	}
	if empty.Size() != 0 {
		t.Fatalf("an empty file of %d bytes", empty.Size())
	}
	if n, err := empty.ReadAt(make([]byte, 1), 0); n != 0 || err != io.EOF {
		t.Errorf("reading an empty file: %d, %v", n, err)
	}
	if _, err := Open(context.Background(), base+"/missing.tar", fast); err == nil || !strings.Contains(err.Error(), "404") {
		t.Errorf("a missing file: %v", err)
	}
}

// TestFaults: a server that fails some requests (503), cuts connections
// mid-body, or ignores ranges: the bytes come right after retries, or the
// read fails with an error naming the URL and offset; never wrong bytes.
func TestFaults(t *testing.T) {
	data := testData()
	var n atomic.Int64
	flaky := func(w http.ResponseWriter, r *http.Request) bool {
		if n.Add(1)%3 == 0 {
			http.Error(w, "busy", http.StatusServiceUnavailable)
			return true
		}
		return false
	}
	cut := func(w http.ResponseWriter, r *http.Request) bool {
		if n.Add(1)%2 == 0 && strings.HasPrefix(r.Header.Get("Range"), "bytes=1000-") {
			// Half the body, then the connection goes.
			w.Header().Set("Content-Range", "bytes 1000-1999/100000")
			w.Header().Set("Content-Length", "1000")
			w.WriteHeader(http.StatusPartialContent)
			w.Write(data[1000:1500])
			conn, _, _ := w.(http.Hijacker).Hijack()
			conn.Close()
			return true
		}
		return false
	}
	for name, fault := range map[string]func(http.ResponseWriter, *http.Request) bool{"503": flaky, "cut": cut} {
		t.Run(name, func(t *testing.T) {
			base := serve(t, data, fault)
			f, err := Open(context.Background(), base+"/shard.tar", fast)
			if err != nil {
				t.Fatal(err)
			}
			for off := int64(0); off < 5000; off += 1000 {
				p := make([]byte, 1000)
				if _, err := f.ReadAt(p, off); err != nil || !bytes.Equal(p, data[off:off+1000]) {
					t.Fatalf("at %d: %v", off, err)
				}
			}
		})
	}

	t.Run("always 503", func(t *testing.T) {
		var opened atomic.Bool
		base := serve(t, data, func(w http.ResponseWriter, r *http.Request) bool {
			if opened.Load() {
				http.Error(w, "busy", http.StatusServiceUnavailable)
				return true
			}
			return false
		})
		f, err := Open(context.Background(), base+"/shard.tar", Options{Backoff: time.Millisecond, Retries: 3})
		if err != nil {
			t.Fatal(err)
		}
		opened.Store(true)
		start := time.Now()
		_, err = f.ReadAt(make([]byte, 10), 4096)
		if !errors.Is(err, ErrRetriesExhausted) || !strings.Contains(err.Error(), base+"/shard.tar: byte 4096: 4 tries") {
			t.Errorf("a server that always fails: %v", err)
		}
		if time.Since(start) > 5*time.Second {
			t.Errorf("gave up after %v", time.Since(start))
		}
	})

	t.Run("no ranges", func(t *testing.T) {
		base := serve(t, data, func(w http.ResponseWriter, r *http.Request) bool {
			r.Header.Del("Range") // a server that sends the whole file
			return false
		})
		if _, err := Open(context.Background(), base+"/shard.tar", fast); !errors.Is(err, ErrNoRange) || !strings.Contains(err.Error(), "status 200") {
			t.Errorf("a server without ranges: %v", err)
		}
	})

	t.Run("changed", func(t *testing.T) {
		dir := t.TempDir()
		path := filepath.Join(dir, "shard.tar")
		os.WriteFile(path, data, 0o644)
		srv := httptest.NewServer(http.FileServer(http.Dir(dir)))
		defer srv.Close()
		f, err := Open(context.Background(), srv.URL+"/shard.tar", fast)
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(path, data[:50_000], 0o644)
		if _, err := f.ReadAt(make([]byte, 10), 0); !errors.Is(err, ErrChanged) {
			t.Errorf("a file that shrank: %v", err)
		}
	})
}

func FuzzContentRange(f *testing.F) {
	for _, s := range []string{"bytes 0-0/1", "bytes 10-19/*", "bytes 5-4/10", "bytes 0-9/5", "items 0-1/2", "bytes -1-2/3"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, h string) {
		start, end, total, err := contentRange(h)
		if err != nil {
			return
		}
		if start < 0 || end < start || (total >= 0 && end >= total) {
			t.Fatalf("%q: %d-%d/%d taken", h, start, end, total)
		}
	})
}
