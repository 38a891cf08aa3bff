package remote

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"
)

// TestClientsBoundApart: each Client bounds its own requests in flight,
// and no other's. Two clients of one connection each both get their
// request through (a bound kept by the process, per bound, would make
// the second wait for the first); a client of three has three in flight
// while another holds its one; a client of one never has two.
func TestClientsBoundApart(t *testing.T) {
	var mu sync.Mutex
	inFlight, most := map[string]int{}, map[string]int{}
	release := make(chan struct{})
	data := bytes.Repeat([]byte("x"), 100)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		who := r.URL.Path[1:2] // /a/..., /b/..., /c/...
		mu.Lock()
		inFlight[who]++
		most[who] = max(most[who], inFlight[who])
		mu.Unlock()
		if who != "b" {
			select {
			case <-release:
			case <-r.Context().Done():
			}
		}
		mu.Lock()
		inFlight[who]--
		mu.Unlock()
		http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(data))
	}))
	defer srv.Close()
	defer func() {
		select {
		case <-release:
		default:
			close(release)
		}
	}()
	waitFor := func(what string, ok func() bool) {
		t.Helper()
		for end := time.Now().Add(5 * time.Second); !ok(); time.Sleep(time.Millisecond) {
			if time.Now().After(end) {
				t.Fatalf("waited 5 s for %s", what)
			}
		}
	}
	seen := func(who string, n int) func() bool {
		return func() bool { mu.Lock(); defer mu.Unlock(); return inFlight[who] == n }
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	a, b, c := NewClient(Options{Connections: 1}), NewClient(Options{Connections: 1}), NewClient(Options{Connections: 3})
	if a.Connections() != 1 || c.Connections() != 3 || DefaultClient().Connections() != DefaultConnections {
		t.Fatalf("Connections: %d %d %d", a.Connections(), c.Connections(), DefaultClient().Connections())
	}

	var wg sync.WaitGroup
	open := func(cl *Client, name string) {
		wg.Go(func() {
			if _, err := cl.Open(ctx, srv.URL+name); err != nil {
				t.Errorf("%s: %v", name, err)
			}
		})
	}
	open(a, "/a/1")
	open(a, "/a/2")
	waitFor("a's first request", seen("a", 1))
	// a's one slot is taken: b's own is free.
	if _, err := b.Open(ctx, srv.URL+"/b/1"); err != nil {
		t.Fatalf("b, while a holds its slot: %v", err)
	}
	for _, n := range []string{"/c/1", "/c/2", "/c/3"} {
		open(c, n)
	}
	waitFor("c's three requests", seen("c", 3))
	close(release)
	wg.Wait()
	if most["a"] != 1 || most["c"] != 3 {
		t.Errorf("most in flight: a %d (bound 1), c %d (bound 3)", most["a"], most["c"])
	}
}

// TestClientFrom: a context carries the client its caller made; one that
// carries none gives the default, which Options{} also means.
func TestClientFrom(t *testing.T) {
	ctx := context.Background()
	mine := NewClient(Options{Connections: 2})
	if ClientFrom(ctx) != DefaultClient() || ClientFrom(WithClient(ctx, mine)) != mine {
		t.Error("ClientFrom")
	}
	if (Options{}).client(WithClient(ctx, mine)) != mine || (Options{Connections: 2}).client(ctx) == mine {
		t.Error("Options.client")
	}
}
