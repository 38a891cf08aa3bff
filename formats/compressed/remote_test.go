package compressed

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
)

// TestSpoolRemote: remote shards, plain and compressed, copied once each
// beside the output; Prefetch copies them in their order, fetchAhead at a
// time.
func TestSpoolRemote(t *testing.T) {
	dir := t.TempDir()
	data := plainData(3 << 20)
	names := []string{"s0.tar", "s1.tar", "s2.tar", "s3.tar", "s4.tar", "s5.tar.gz"}
	for i, n := range names[:5] {
		os.WriteFile(filepath.Join(dir, n), data[i*1000:], 0o644)
	}
	os.WriteFile(filepath.Join(dir, names[5]), compressWith(t, "gzip", data), 0o644)
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
	out := t.TempDir()
	s := NewSpool(out, nil)
	s.Prefetch(context.Background(), urls)
	// Asked for in reverse: each waits for its copy, made in order.
	for i := len(urls) - 1; i >= 0; i-- {
		p, err := s.Plain(context.Background(), urls[i])
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
	if s.Codec(urls[5]) != Gzip || s.Codec(urls[0]) != None {
		t.Errorf("codecs %q %q", s.Codec(urls[5]), s.Codec(urls[0]))
	}
	for k, p := range opened {
		// fetchAhead at a time: shard k starts once the shards before
		// k-fetchAhead+1 have.
		if i := slices.Index(names, strings.TrimPrefix(p, "/")); i < k-fetchAhead+1 {
			t.Errorf("shard %d was the %dth to start: %v", i, k, opened)
		}
	}
	s.Close()
	if left, _ := os.ReadDir(out); len(left) != 0 {
		t.Errorf("left after Close: %v", left)
	}
}
