package shardset

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// TestResolveHTTPGlob: an http(s) URL's glob expands to the matching
// files of the directory its server lists, in natural order (shard-9
// before shard-10), braces first; a glob matching nothing is ErrNoMatch.
func TestResolveHTTPGlob(t *testing.T) {
	dir := t.TempDir()
	for _, d := range []string{"a", "b"} {
		os.MkdirAll(filepath.Join(dir, d), 0o755)
		for _, n := range []string{"shard-9.tar", "shard-10.tar", "shard-1.tar", "other.tar"} {
			os.WriteFile(filepath.Join(dir, d, n), []byte("x"), 0o644)
		}
	}
	srv := httptest.NewServer(http.FileServer(http.Dir(dir)))
	defer srv.Close()
	got, err := ResolveContext(context.Background(), []string{srv.URL + "/{a,b}/shard-*.tar", srv.URL + "/a/other.tar?x=1"})
	want := []string{srv.URL + "/a/shard-1.tar", srv.URL + "/a/shard-9.tar", srv.URL + "/a/shard-10.tar",
		srv.URL + "/b/shard-1.tar", srv.URL + "/b/shard-9.tar", srv.URL + "/b/shard-10.tar", srv.URL + "/a/other.tar?x=1"}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("Resolve = %q, %v; want %q", got, err, want)
	}
	if _, err := ResolveContext(context.Background(), []string{srv.URL + "/a/val-*.tar"}); !errors.Is(err, ErrNoMatch) {
		t.Errorf("a glob matching nothing: %v, want ErrNoMatch", err)
	}
}
