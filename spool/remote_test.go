package spool

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/itarconv/itarconv/testing/testutil"

	"github.com/itarconv/itarconv/formats/compressed"
	"github.com/itarconv/itarconv/remote"
)

// TestSpoolRemote: remote shards, plain and compressed, copied once each
// beside the output; Prefetch copies the plain ones in their order, and
// Partial gives a copy as it grows.
func TestSpoolRemote(t *testing.T) {
	dir := t.TempDir()
	data := testutil.PlainData(3 << 20)
	names := []string{"s0.tar", "s1.tar", "s2.tar", "s3.tar", "s4.tar", "s5.tar.gz"}
	for i, n := range names[:5] {
		os.WriteFile(filepath.Join(dir, n), data[i*1000:], 0o644)
	}
	os.WriteFile(filepath.Join(dir, names[5]), testutil.CompressWith(t, "gzip", data), 0o644)
	var mu sync.Mutex
	var opened []string // the shards in the order their copies started
	files := http.FileServer(http.Dir(dir))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		// The opening requests (the first 64 KiB) all come at once; the
		// copies' requests come after, in order.
		if r.Header.Get("Range") != "bytes=0-65535" && !slices.Contains(opened, r.URL.Path) {
			opened = append(opened, r.URL.Path)
		}
		mu.Unlock()
		files.ServeHTTP(w, r)
	}))
	defer srv.Close()
	var urls []string
	for _, n := range names {
		urls = append(urls, srv.URL+"/"+n)
	}
	if need, err := Needed(urls[:1]); !need || err != nil {
		t.Errorf("Needed(a URL) = %v, %v", need, err)
	}
	// One request at a time: the parts come strictly in order.
	ctx := remote.WithClient(context.Background(), remote.NewClient(remote.Options{Connections: 1}))
	out := t.TempDir()
	s := New(out, nil)
	s.Prefetch(ctx, urls)
	// A plain shard's copy, as it grows; the compressed one has none.
	p, g, err := s.Partial(ctx, urls[1])
	if err != nil || g == nil || g.Size() != int64(len(data)-1000) {
		t.Fatalf("Partial: %v, %v", g, err)
	}
	if err := g.Wait(ctx, g.Size()); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(p); !bytes.Equal(b, data[1000:]) {
		t.Errorf("the grown copy differs")
	}
	if _, g, _ := s.Partial(ctx, urls[5]); g != nil {
		t.Errorf("a compressed shard grows a copy")
	}
	// Asked for in reverse: each waits for its copy, made in order.
	for i := len(urls) - 1; i >= 0; i-- {
		p, err := s.Plain(ctx, urls[i])
		if err != nil {
			t.Fatal(err)
		}
		want := data
		if i < 5 {
			want = data[i*1000:]
		}
		if b, _ := os.ReadFile(p); !bytes.Equal(b, want) || filepath.Dir(p) != out {
			t.Errorf("%s: not its bytes, in %s", urls[i], out)
		}
	}
	if s.Codec(urls[5]) != compressed.Gzip || s.Codec(urls[0]) != compressed.None {
		t.Errorf("codecs %q %q", s.Codec(urls[5]), s.Codec(urls[0]))
	}
	// The plain shards' copies start in their order (the compressed one
	// is streamed beside them).
	last := -1
	for _, p := range opened {
		if i := slices.Index(names, strings.TrimPrefix(p, "/")); i < 5 {
			if i < last {
				t.Errorf("the copies started in the order %v", opened)
			}
			last = i
		}
	}
	s.Close()
	if left, _ := os.ReadDir(out); len(left) != 0 {
		t.Errorf("left after Close: %v", left)
	}
}

// TestSpoolRemoteCut: a plain remote shard asked for without Prefetch is
// copied by parts on several connections, some of them cut mid-way by
// the server: the copy has every byte.
func TestSpoolRemoteCut(t *testing.T) {
	data := testutil.PlainData(20 << 20) // parts of 8 MiB: three
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "s.tar"), data, 0o644)
	files := http.FileServer(http.Dir(dir))
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1)%3 != 0 || r.Header.Get("Range") == "bytes=0-65535" {
			files.ServeHTTP(w, r)
			return
		}
		var a, b int64
		fmt.Sscanf(r.Header.Get("Range"), "bytes=%d-%d", &a, &b)
		w.Header().Set("Content-Range", fmt.Sprintf("bytes %d-%d/%d", a, b, len(data)))
		w.Header().Set("Content-Length", fmt.Sprint(b-a+1))
		w.WriteHeader(http.StatusPartialContent)
		w.Write(make([]byte, 1000)) // then the connection goes
		conn, _, _ := w.(http.Hijacker).Hijack()
		conn.Close()
	}))
	defer srv.Close()
	s := New(t.TempDir(), nil)
	defer s.Close()
	p, err := s.Plain(context.Background(), srv.URL+"/s.tar")
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(p); !bytes.Equal(got, data) {
		t.Fatalf("the copy differs (%d bytes, want %d)", len(got), len(data))
	}
}
