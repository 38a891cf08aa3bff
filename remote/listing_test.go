package remote

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestHrefs: the links of autoindex pages as nginx and Apache write them:
// quoted either way, in any case, character references decoded, in
// order.
func TestHrefs(t *testing.T) {
	for _, c := range []struct {
		page string
		want []string
	}{
		{"nginx.html", []string{"../", "sub/", "train-000000.tar", "train-000001.tar", "train%20b-000002.tar", "val-000000.tar"}},
		{"apache.html", []string{"?C=N;O=D", "?C=M;O=A", "?C=S;O=A", "/", "train-000000.tar", "train-000001.tar", "train&x-000002.tar", "http://elsewhere.example/train-000009.tar"}},
	} {
		page, err := os.ReadFile(filepath.Join("testdata", "listings", c.page))
		if err != nil {
			t.Fatal(err)
		}
		if got := hrefs(page); !slices.Equal(got, c.want) {
			t.Errorf("%s: hrefs %q, want %q", c.page, got, c.want)
		}
	}
}

func FuzzHrefs(f *testing.F) {
	for _, n := range []string{"nginx.html", "apache.html"} {
		b, _ := os.ReadFile(filepath.Join("testdata", "listings", n))
		f.Add(b)
	}
	f.Add([]byte(`<a href=`))
	f.Add([]byte(`href="x`))
	f.Fuzz(func(t *testing.T, page []byte) {
		for _, h := range hrefs(page) {
			if len(h) > len(page) {
				t.Fatalf("an href of %d bytes from a page of %d", len(h), len(page))
			}
		}
	})
}

// TestGlobHTTP: an http(s) URL's glob lists the directory's files from
// the page its server gives: nginx's and Apache's autoindex (served as
// they write them), Go's http.FileServer and Python's http.server over
// real files. Only the directory's own files match, not its
// subdirectories, its parent, sort links or other hosts; a listing the
// server does not give, or a wildcard outside the last segment, is an
// error.
func TestGlobHTTP(t *testing.T) {
	ctx := context.Background()
	c := NewClient(Options{})
	pages := http.NewServeMux()
	for _, n := range []string{"nginx", "apache"} {
		page, _ := os.ReadFile(filepath.Join("testdata", "listings", n+".html"))
		pages.HandleFunc("/"+n+"/data/", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			w.Write(page)
		})
	}
	pages.HandleFunc("/json/", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`[{"name":"train-0.tar"}]`))
	})
	srv := httptest.NewServer(pages)
	defer srv.Close()
	for _, tc := range []struct {
		pattern string
		want    []string
	}{
		{"/nginx/data/train*.tar", []string{"/nginx/data/train-000000.tar", "/nginx/data/train-000001.tar", "/nginx/data/train%20b-000002.tar"}},
		{"/nginx/data/train-00000[1].tar", []string{"/nginx/data/train-000001.tar"}},
		{"/apache/data/train*", []string{"/apache/data/train-000000.tar", "/apache/data/train-000001.tar", "/apache/data/train&x-000002.tar"}},
		{"/nginx/data/test-*.tar", nil},
	} {
		got, err := c.Glob(ctx, srv.URL+tc.pattern)
		var want []string
		for _, w := range tc.want {
			want = append(want, srv.URL+w)
		}
		if err != nil || !slices.Equal(got, want) {
			t.Errorf("Glob(%s) = %q, %v; want %q", tc.pattern, got, err, want)
		}
	}
	for _, tc := range []struct{ pattern, msg string }{
		{"/nginx/*/train-0.tar", "last part"},
		{"/missing/train-*.tar", "no listing"},
		{"/json/train-*.tar", "not HTML"},
	} {
		_, err := c.Glob(ctx, srv.URL+tc.pattern)
		if err == nil || !strings.Contains(err.Error(), tc.msg) || !strings.Contains(err.Error(), srv.URL) {
			t.Errorf("Glob(%s): %v, want an error naming it and saying %q", tc.pattern, err, tc.msg)
		}
		if tc.msg != "last part" && !errors.Is(err, ErrNoListing) {
			t.Errorf("Glob(%s): %v, want ErrNoListing", tc.pattern, err)
		}
	}

	// Real files, listed by real servers.
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "d", "sub"), 0o755)
	for _, n := range []string{"d/train-0.tar", "d/train-1.tar", "d/val-0.tar", "d/sub/train-2.tar", "d/.train-3.tar"} {
		os.WriteFile(filepath.Join(dir, n), []byte("x"), 0o644)
	}
	goSrv := httptest.NewServer(http.FileServer(http.Dir(dir)))
	defer goSrv.Close()
	servers := map[string]string{"Go": goSrv.URL}
	if py := pythonServer(t, dir); py != "" {
		servers["Python"] = py
	}
	for name, base := range servers {
		got, err := c.Glob(ctx, base+"/d/train-*.tar")
		want := []string{base + "/d/train-0.tar", base + "/d/train-1.tar"}
		if err != nil || !slices.Equal(got, want) {
			t.Errorf("%s's server: Glob = %q, %v; want %q", name, got, err, want)
		}
	}
}

// pythonServer serves dir with Python's http.server on loopback until the
// test ends, and gives its URL; "" (the test skipping that server) where
// there is no python3, which CI installs.
func pythonServer(t *testing.T, dir string) string {
	py, err := exec.LookPath("python3")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("python3 is not installed")
		}
		t.Log("no python3: Python's http.server not tried")
		return ""
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	cmd := exec.Command(py, "-m", "http.server", "--bind", "127.0.0.1", "--directory", dir, fmt.Sprint(port))
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	u := fmt.Sprintf("http://127.0.0.1:%d", port)
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if resp, err := http.Get(u + "/"); err == nil {
			resp.Body.Close()
			return u
		}
	}
	t.Fatalf("python3 -m http.server on port %d did not answer", port)
	return ""
}
