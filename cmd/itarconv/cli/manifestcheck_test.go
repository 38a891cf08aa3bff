package cli

import (
	"crypto/sha256"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// etagServer serves dir with an ETag of each file's content, as S3 and
// most servers give one.
func etagServer(t *testing.T, dir string) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p := filepath.Join(dir, filepath.Base(r.URL.Path))
		b, err := os.ReadFile(p)
		if err != nil {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("ETag", fmt.Sprintf(`"%x"`, sha256.Sum256(b)))
		st, _ := os.Stat(p)
		http.ServeContent(w, r, p, st.ModTime(), strings.NewReader(string(b)))
	}))
	t.Cleanup(srv.Close)
	return srv
}

// TestConvertChecksManifest: converting an index whose shard changed since
// it was indexed (a local shard of another size, a remote one with another
// ETag) is refused as stale, exit 1, naming the shard and writing nothing,
// as ls, cat and verify refuse it; before, it converted the new bytes with
// exit 0.
func TestConvertChecksManifest(t *testing.T) {
	dir := t.TempDir()
	shards := makeShards(t, dir, 5, 7)
	if code, _, stderr := run(t, "index", "-q", dir); code != 0 {
		t.Fatalf("index: exit %d: %s", code, stderr)
	}
	idx, _ := filepath.Glob(filepath.Join(dir, "*.taridx"))
	if len(idx) != 1 {
		t.Fatalf("indexes: %v", idx)
	}
	replaced := makeShards(t, t.TempDir(), 9)
	b, _ := os.ReadFile(replaced[0])
	os.WriteFile(shards[1], b, 0o644)
	out := filepath.Join(t.TempDir(), "x.tbl")
	code, _, stderr := run(t, "convert", "-q", idx[0], out)
	if code != ExitData || !strings.Contains(stderr, filepath.Base(shards[1])) || !strings.Contains(stderr, "when indexed") {
		t.Errorf("local shard replaced: exit %d, %q", code, stderr)
	}
	if _, err := os.Stat(out); err == nil {
		t.Errorf("%s written from a stale index", out)
	}

	// Remote: the same size, other bytes: only the ETag tells.
	rdir := t.TempDir()
	rshards := makeShards(t, rdir, 5, 7)
	srv := etagServer(t, rdir)
	var urls []string
	for _, p := range rshards {
		urls = append(urls, srv.URL+"/"+filepath.Base(p))
	}
	ridx := filepath.Join(t.TempDir(), "r.taridx")
	if code, _, stderr := run(t, append([]string{"index", "-q", "-o", ridx}, urls...)...); code != 0 {
		t.Fatalf("index over URLs: exit %d: %s", code, stderr)
	}
	b, _ = os.ReadFile(rshards[0])
	b[len(b)-1025] ^= 1 // a payload byte of the last member
	os.WriteFile(rshards[0], b, 0o644)
	code, _, stderr = run(t, "convert", "-q", ridx, out)
	if code != ExitData || !strings.Contains(stderr, "ETag") || !strings.Contains(stderr, urls[0]) {
		t.Errorf("remote shard changed: exit %d, %q", code, stderr)
	}
	if _, err := os.Stat(out); err == nil {
		t.Errorf("%s written from a stale index", out)
	}
}

// TestHugeClaimConvert: a server claiming 2^62 bytes in Content-Range
// fails `convert` with exit 1, one line naming the URL, and nothing left
// beside the output (before: "runtime: out of memory", a stack trace,
// exit 2 and temporaries left).
func TestHugeClaimConvert(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var a, b int64
		if _, err := fmt.Sscanf(r.Header.Get("Range"), "bytes=%d-%d", &a, &b); err != nil || b < a || b-a > 1<<16 {
			b = a + 1<<16
		}
		w.Header().Set("Content-Range", fmt.Sprintf("bytes %d-%d/%d", a, b, int64(1)<<62))
		w.Header().Set("Content-Length", fmt.Sprint(b-a+1))
		w.WriteHeader(http.StatusPartialContent)
		w.Write(make([]byte, b-a+1))
	}))
	t.Cleanup(srv.Close)
	out := t.TempDir()
	code, _, stderr := run(t, "convert", "-q", srv.URL+"/huge.tar", filepath.Join(out, "x.tbl"))
	if code != ExitData || !strings.Contains(stderr, srv.URL+"/huge.tar") || strings.Count(stderr, "\n") != 1 || strings.Contains(stderr, "goroutine") {
		t.Errorf("exit %d: %q", code, stderr)
	}
	if left, _ := os.ReadDir(out); len(left) != 0 {
		t.Errorf("left beside the output: %v", left)
	}
}
