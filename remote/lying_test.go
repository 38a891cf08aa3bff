package remote

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// lyingServer answers every range request with 206 from its current
// version of the file, ignoring If-Match, as some servers do.
type lyingServer struct {
	mu      sync.Mutex
	data    []byte
	etag    string // "" sends none
	modTime time.Time
	total   string // Content-Range's total when set, else the size
	length  string // Content-Length when set
	cutAt   int64  // a response starting at 0 is cut after this many bytes (0: never)
	drip    time.Duration
}

func (s *lyingServer) set(fn func(s *lyingServer)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	fn(s)
}

func (s *lyingServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	data, etag, mod, total, length, cut, drip := s.data, s.etag, s.modTime, s.total, s.length, s.cutAt, s.drip
	s.mu.Unlock()
	var a, b int64
	if _, err := fmt.Sscanf(r.Header.Get("Range"), "bytes=%d-%d", &a, &b); err != nil || a >= int64(len(data)) {
		w.WriteHeader(http.StatusRequestedRangeNotSatisfiable)
		return
	}
	b = min(b, int64(len(data))-1)
	if total == "" {
		total = fmt.Sprint(len(data))
	}
	if length == "" {
		length = fmt.Sprint(b - a + 1)
	}
	h := w.Header()
	h.Set("Content-Range", fmt.Sprintf("bytes %d-%d/%s", a, b, total))
	h.Set("Content-Length", length)
	if etag != "" {
		h.Set("ETag", etag)
	}
	if !mod.IsZero() {
		h.Set("Last-Modified", mod.UTC().Format(http.TimeFormat))
	}
	w.WriteHeader(http.StatusPartialContent)
	body := data[a : b+1]
	switch {
	case drip > 0:
		for i := range body {
			if _, err := w.Write(body[i : i+1]); err != nil {
				return
			}
			w.(http.Flusher).Flush()
			select {
			case <-time.After(drip):
			case <-r.Context().Done():
				return
			}
		}
	case cut > 0 && a == 0:
		w.Write(body[:cut])
		w.(http.Flusher).Flush()
		conn, _, _ := w.(http.Hijacker).Hijack()
		conn.Close()
	default:
		w.Write(body)
	}
}

func startLying(t *testing.T, s *lyingServer) string {
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	return srv.URL + "/shard.tar"
}

// TestChangedIgnoringIfMatch: a server that ignores If-Match and answers
// 206 from another version of the file (another ETag; or, with no ETag,
// another Last-Modified, also when it stops sending an ETag) is refused with ErrChanged naming the URL, by
// ranged reads, streams, member ranges and resumed streams alike: never
// the other version's bytes.
func TestChangedIgnoringIfMatch(t *testing.T) {
	data := testData()
	other := bytes.Repeat([]byte{'X'}, len(data))
	t0 := time.Unix(1.7e9, 0)
	reads := map[string]func(f *File) error{
		"ReadAt": func(f *File) error {
			_, err := f.ReadAt(make([]byte, 1000), 4000)
			return err
		},
		"stream": func(f *File) error {
			_, err := io.ReadAll(f.Reader())
			return err
		},
		"Range": func(f *File) error {
			r := f.Range(70_000, 20_000)
			defer r.Close()
			_, err := r.ReadAt(make([]byte, 20_000), 70_000)
			return err
		},
	}
	// "ETag dropped": the server gave an ETag, then gives none.
	for _, version := range []string{"ETag", "Last-Modified", "ETag dropped"} {
		for name, read := range reads {
			t.Run(version+"/"+name, func(t *testing.T) {
				s := &lyingServer{data: data, modTime: t0}
				if version != "Last-Modified" {
					s.etag = `"v1"`
				}
				u := startLying(t, s)
				f, err := Open(context.Background(), u, fast)
				if err != nil {
					t.Fatal(err)
				}
				if name == "ReadAt" && version == "Last-Modified" {
					// A file opened from an index, whose version the
					// first read learns.
					f, _ = OpenKnown(context.Background(), u, int64(len(data)), "", fast)
					if err := read(f); err != nil {
						t.Fatal(err)
					}
				}
				s.set(func(s *lyingServer) {
					s.data, s.modTime = other, t0.Add(time.Hour)
					switch version {
					case "ETag":
						s.etag = `"v2"`
					case "ETag dropped":
						s.etag = ""
					}
				})
				if err := read(f); !errors.Is(err, ErrChanged) || !strings.Contains(err.Error(), u) {
					t.Errorf("another version: %v", err)
				}
			})
		}
	}

	// A stream cut mid-way resumes on the other version: refused.
	t.Run("resumed", func(t *testing.T) {
		s := &lyingServer{data: data, etag: `"v1"`, cutAt: 30_000}
		u := startLying(t, s)
		f, err := OpenKnown(context.Background(), u, int64(len(data)), `"v1"`, fast)
		if err != nil {
			t.Fatal(err)
		}
		r := f.Range(0, int64(len(data)))
		defer r.Close()
		if _, err := r.ReadAt(make([]byte, 20_000), 0); err != nil {
			t.Fatal(err)
		}
		s.set(func(s *lyingServer) { s.data, s.etag = other, `"v2"` })
		if _, err := r.ReadAt(make([]byte, 20_000), 20_000); !errors.Is(err, ErrChanged) {
			t.Errorf("a stream resumed on another version: %v", err)
		}
	})
}

// TestBadClaims: a size no file has, or a Content-Length that is not its
// range's, is an error naming the URL; nothing is sized from it.
func TestBadClaims(t *testing.T) {
	data := testData()
	for _, c := range []struct {
		name          string
		total, length string
	}{
		{"total 2^62", "4611686018427387904", ""},
		{"negative total", "-5", ""},
		{"total inside the range", "10", ""},
		{"Content-Length of another range", "", "99"},
	} {
		t.Run(c.name, func(t *testing.T) {
			u := startLying(t, &lyingServer{data: data, total: c.total, length: c.length})
			_, err := Open(context.Background(), u, fast)
			if !errors.Is(err, ErrNoRange) || !strings.Contains(err.Error(), u) {
				t.Errorf("%v", err)
			}
		})
	}
}

// TestDrip: a server that sends a byte at a time, each well within Idle,
// is abandoned once its rate over Idle is under MinRate, retried, and
// given up on with an error naming the URL.
func TestDrip(t *testing.T) {
	data := testData()
	u := startLying(t, &lyingServer{data: data, drip: 20 * time.Millisecond})
	// The deadline bounds the old behaviour: a wait of half an hour.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	f, err := OpenKnown(ctx, u, int64(len(data)), "", Options{Backoff: time.Millisecond, Retries: 1, Idle: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, err = f.ReadAt(make([]byte, 90_000), 0)
	if !errors.Is(err, ErrStalled) || !errors.Is(err, ErrRetriesExhausted) || !strings.Contains(err.Error(), u) {
		t.Errorf("a dripping server: %v", err)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("gave up after %v", d)
	}
}

// TestCancelDuringBackoff: a read waiting to retry stops as soon as its
// context is cancelled, with an error naming the URL.
func TestCancelDuringBackoff(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "busy", http.StatusServiceUnavailable)
	}))
	defer srv.Close()
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(200*time.Millisecond, cancel)
	start := time.Now()
	_, err := Open(ctx, srv.URL+"/shard.tar", Options{Backoff: time.Minute})
	if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), srv.URL+"/shard.tar") {
		t.Errorf("cancelled while waiting to retry: %v", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("stopped after %v", d)
	}
}
