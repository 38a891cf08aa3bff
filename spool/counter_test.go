package spool

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/itarconv/itarconv/testing/testutil"
)

// TestInputCounter: the decompressions under a context carrying a counter
// add to it the compressed bytes they read, local and remote, all of
// them; a plain shard is not read by the spool, and adds nothing.
func TestInputCounter(t *testing.T) {
	dir := t.TempDir()
	data := testutil.PlainData(1 << 20)
	gz := testutil.CompressWith(t, "gzip", data)
	os.WriteFile(filepath.Join(dir, "a.tar.gz"), gz, 0o644)
	os.WriteFile(filepath.Join(dir, "b.tar"), data, 0o644)
	srv := httptest.NewServer(http.FileServer(http.Dir(dir)))
	defer srv.Close()

	var n atomic.Int64
	ctx := WithInputCounter(context.Background(), &n)
	s := New(t.TempDir(), nil)
	defer s.Close()
	for _, shard := range []string{filepath.Join(dir, "a.tar.gz"), filepath.Join(dir, "b.tar"), srv.URL + "/a.tar.gz"} {
		if _, err := s.Plain(ctx, shard); err != nil {
			t.Fatal(err)
		}
	}
	if got, want := n.Load(), 2*int64(len(gz)); got != want {
		t.Errorf("counted %d bytes, want %d (the compressed shard twice)", got, want)
	}
}
