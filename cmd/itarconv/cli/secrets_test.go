package cli

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestNoSecretInFiles: user info and signatures in shard URLs reach no
// file an index run writes, no message and no --json; a URL whose query
// carries a signature is refused for an index unless --store-signed-urls
// (before, `http://alice:PASSWORD@host/...` was stored and printed
// verbatim).
func TestNoSecretInFiles(t *testing.T) {
	dir := t.TempDir()
	shards := makeShards(t, dir, 4, 6)
	files := http.FileServer(http.Dir(dir))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if u, p, ok := r.BasicAuth(); !ok || u != "alice" || p != "PASSWORD" {
			w.Header().Set("WWW-Authenticate", `Basic realm="x"`)
			http.Error(w, "PASSWORD wrong", http.StatusUnauthorized)
			return
		}
		files.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	withUser := strings.Replace(srv.URL, "http://", "http://alice:PASSWORD@", 1)
	var urls, signed []string
	for _, p := range shards {
		urls = append(urls, withUser+"/"+filepath.Base(p))
		signed = append(signed, withUser+"/"+filepath.Base(p)+"?token=SECRETTOKEN")
	}
	out := t.TempDir()
	idx := filepath.Join(out, "r.taridx")
	code, stdout, stderr := run(t, append([]string{"index", "-q", "-o", idx}, signed...)...)
	if code != ExitUsage || !strings.Contains(stderr, "--store-signed-urls") || strings.Contains(stderr, "SECRETTOKEN") || strings.Contains(stderr, "PASSWORD") {
		t.Fatalf("a URL with a token: exit %d: %s", code, stderr)
	}
	code, stdout, stderr = run(t, append([]string{"index", "--json", "--store-signed-urls", "-o", idx}, signed...)...)
	if code != 0 {
		t.Fatalf("index --store-signed-urls: exit %d: %s", code, stderr)
	}
	if b, _ := os.ReadFile(idx + ".shards.json"); !strings.Contains(string(b), "SECRETTOKEN") {
		t.Errorf("--store-signed-urls: the manifest lacks the signed URL: %s", b)
	}
	os.Remove(idx)
	os.Remove(idx + ".shards.json")
	code, stdout2, stderr2 := run(t, append([]string{"index", "--json", "--format", "taridx,wids,energon", "--out-dir", out}, urls...)...)
	if code != 0 {
		t.Fatalf("index over URLs with user info: exit %d: %s", code, stderr2)
	}
	for _, text := range []string{stdout, stderr, stdout2, stderr2} {
		if strings.Contains(text, "PASSWORD") || strings.Contains(text, "alice") || strings.Contains(text, "SECRETTOKEN") {
			t.Errorf("a secret in the output: %s", text)
		}
	}
	// A task of a partitioned run keeps its inputs in its part's manifest.
	if code, _, stderr := run(t, append([]string{"index", "-q", "--task", "1/2", "-o", filepath.Join(out, "p.taridx")}, urls...)...); code != 0 {
		t.Fatalf("index --task over URLs with user info: exit %d: %s", code, stderr)
	}
	seen := 0
	filepath.Walk(out, func(p string, fi os.FileInfo, err error) error {
		if err != nil || fi.IsDir() {
			return nil
		}
		seen++
		b, _ := os.ReadFile(p)
		if strings.Contains(string(b), "PASSWORD") || strings.Contains(string(b), "alice") {
			t.Errorf("%s holds the user info", p)
		}
		return nil
	})
	if seen < 5 {
		t.Errorf("%d files written, want the index, its manifest, wids' and energon's", seen)
	}
	// A refused request: the message names the URL without its secrets.
	bad := strings.Replace(signed[0], "PASSWORD", "WRONGPASS", 1)
	code, _, stderr = run(t, "index", "-q", "--store-signed-urls", "-o", filepath.Join(t.TempDir(), "x.taridx"), bad)
	if code == 0 || strings.Contains(stderr, "WRONGPASS") || strings.Contains(stderr, "SECRETTOKEN") || !strings.Contains(stderr, "401") {
		t.Errorf("refused credentials: exit %d: %s", code, stderr)
	}
}
