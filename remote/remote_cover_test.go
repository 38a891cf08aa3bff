package remote

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// TestStatAndFileInfo: Stat and StatAll give each file's size and ETag
// (StatAll in the order asked, a missing file its error naming it); an
// opened file describes itself as a read-only regular file named by its
// URL's last element, with its Last-Modified time, and is Known after.
func TestStatAndFileInfo(t *testing.T) {
	when := time.Date(2024, 5, 6, 7, 8, 9, 0, time.UTC)
	files := map[string]string{"/d/a.tar": strings.Repeat("a", 1000), "/d/b.tar": "bb"}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, ok := files[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("ETag", `"`+r.URL.Path[3:4]+`-etag"`)
		http.ServeContent(w, r, r.URL.Path, when, bytes.NewReader([]byte(body)))
	}))
	defer srv.Close()
	ctx := context.Background()
	a, b := srv.URL+"/d/a.tar", srv.URL+"/d/b.tar"
	if !IsURL(a) || IsURL("/d/a.tar") || !IsURL("s3://bucket/k") || AnyURL([]string{"x.tar", "y.tar"}) || !AnyURL([]string{"x.tar", a}) {
		t.Error("IsURL or AnyURL")
	}
	size, etag, err := Stat(ctx, a, Options{})
	if err != nil || size != 1000 || etag != `"a-etag"` {
		t.Errorf("Stat: %d %q %v", size, etag, err)
	}
	sizes, etags, err := StatAll(ctx, []string{b, a}, Options{})
	if err != nil || sizes[0] != 2 || sizes[1] != 1000 || etags[0] != `"b-etag"` || etags[1] != `"a-etag"` {
		t.Errorf("StatAll: %v %v %v", sizes, etags, err)
	}
	if _, _, err := StatAll(ctx, []string{a, srv.URL + "/d/nosuch.tar"}, Options{}); err == nil || !strings.Contains(err.Error(), "nosuch.tar") {
		t.Errorf("StatAll with a missing file: %v", err)
	}
	canceled, cancel := context.WithCancel(ctx)
	cancel()
	if _, _, err := StatAll(canceled, []string{a, b}, Options{Connections: 1}); err == nil {
		t.Error("StatAll under a canceled context succeeded")
	}

	f, err := Open(ctx, a+"?x=1", Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fi := f.Stat()
	if fi.Name() != "a.tar" || fi.Size() != 1000 || fi.Mode() != 0o444 || fi.IsDir() || fi.Sys() != nil || !fi.ModTime().Equal(when) {
		t.Errorf("file info: %s %d %v %v %v", fi.Name(), fi.Size(), fi.Mode(), fi.IsDir(), fi.ModTime())
	}
	if size, etag, ok := Known(a + "?x=1"); !ok || size != 1000 || etag != `"a-etag"` {
		t.Errorf("Known after Open: %d %q %v", size, etag, ok)
	}
	if _, _, ok := Known(srv.URL + "/never/opened"); ok {
		t.Error("a file never opened is known")
	}
}
