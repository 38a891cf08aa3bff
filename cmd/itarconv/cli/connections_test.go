package cli

import (
	"maps"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"
)

// TestConnectionsBoundTheRun: --connections bounds the requests in flight
// across all the shards of a run, through every command that reads them
// (index, verify --data, convert): the run's client reaches the library.
func TestConnectionsBoundTheRun(t *testing.T) {
	dir := t.TempDir()
	local := makeShards(t, dir, 20, 20, 20, 20, 20, 20)
	var mu sync.Mutex
	inFlight, most := 0, 0
	files := http.FileServer(http.Dir(dir))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		inFlight++
		most = max(most, inFlight)
		mu.Unlock()
		time.Sleep(2 * time.Millisecond) // long enough for requests to overlap if let
		// The answer is made, and the request counted out, before a
		// byte of it is sent: the client cannot have its slot back
		// before.
		rec := httptest.NewRecorder()
		files.ServeHTTP(rec, r)
		mu.Lock()
		inFlight--
		mu.Unlock()
		maps.Copy(w.Header(), rec.Header())
		w.WriteHeader(rec.Code)
		w.Write(rec.Body.Bytes())
	}))
	defer srv.Close()
	var urls []string
	for _, p := range local {
		urls = append(urls, srv.URL+"/"+filepath.Base(p))
	}
	for _, bound := range []int{1, 2} {
		out := t.TempDir()
		conns := "--connections=" + strconv.Itoa(bound)
		for _, args := range [][]string{
			append([]string{"index", "-q", conns, "--workers", "6", "--out-dir", out}, urls...),
			{"verify", "-q", conns, "--data", filepath.Join(out, "data.taridx")},
			append([]string{"convert", "-q", conns}, append(urls, filepath.Join(out, "x.tbl"))...),
		} {
			mu.Lock()
			most = 0
			mu.Unlock()
			if code, stdout, stderr := run(t, args...); code != 0 {
				t.Fatalf("%s: %d %s %s", args[0], code, stdout, stderr)
			}
			mu.Lock()
			if most > bound {
				t.Errorf("%s %s: %d requests in flight at once", args[0], conns, most)
			}
			mu.Unlock()
		}
	}
}
