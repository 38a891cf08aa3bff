package netproxy

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// upstream is the standard library's file server on loopback over a
// directory holding data as "shard.tar". It records the Host header of
// the last request and counts the requests it got.
type upstream struct {
	url   string
	hits  atomic.Int64
	mu    sync.Mutex
	host  string
	data  []byte
	files http.Handler
}

func startUpstream(t *testing.T, size int) *upstream {
	t.Helper()
	u := &upstream{data: make([]byte, size)}
	for i := range u.data {
		u.data[i] = byte(i*7 + i>>9)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "shard.tar"), u.data, 0o644); err != nil {
		t.Fatal(err)
	}
	u.files = http.FileServer(http.Dir(dir))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u.hits.Add(1)
		u.mu.Lock()
		u.host = r.Host
		u.mu.Unlock()
		u.files.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	u.url = srv.URL
	return u
}

func startProxy(t *testing.T, cfg Config) *Proxy {
	t.Helper()
	p, err := Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := p.Close(); err != nil {
			t.Error(err)
		}
	})
	return p
}

// client is a client of its own, without a proxy from the environment.
func client(t *testing.T) *http.Client {
	tr := &http.Transport{MaxIdleConnsPerHost: 16}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr}
}

// get fetches url with the Range header rng (none if ""), reading the
// whole body.
func get(t *testing.T, c *http.Client, url, rng string) (*http.Response, []byte, error) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if rng != "" {
		req.Header.Set("Range", rng)
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return resp, body, err
}

func TestRangeAndHost(t *testing.T) {
	up := startUpstream(t, 100_000)
	p := startProxy(t, Config{Upstream: up.url})
	c := client(t)
	for _, tc := range []struct {
		rng        string
		status     int
		start, end int // the bytes expected, data[start:end]
	}{
		{"", http.StatusOK, 0, 100_000},
		{"bytes=1000-1999", http.StatusPartialContent, 1000, 2000},
		{"bytes=99990-", http.StatusPartialContent, 99990, 100_000},
		{"bytes=-10", http.StatusPartialContent, 99990, 100_000},
	} {
		resp, body, err := get(t, c, p.URL()+"/shard.tar", tc.rng)
		if err != nil {
			t.Fatalf("range %q: %v", tc.rng, err)
		}
		if resp.StatusCode != tc.status || !bytes.Equal(body, up.data[tc.start:tc.end]) {
			t.Errorf("range %q: status %d, %d bytes; want %d, bytes [%d, %d)", tc.rng, resp.StatusCode, len(body), tc.status, tc.start, tc.end)
		}
	}
	up.mu.Lock()
	host := up.host
	up.mu.Unlock()
	if want := strings.TrimPrefix(p.URL(), "http://"); host != want {
		t.Errorf("upstream saw Host %q, want the proxy's %q", host, want)
	}
	// Four requests, one after another, on one kept-alive connection.
	st := p.Stats()
	if st.Requests != 4 || st.Connections != 1 || st.BytesToClient != 100_000+1000+10+10 {
		t.Errorf("stats %+v, want 4 requests on 1 connection, %d bytes", st, 100_000+1000+10+10)
	}
	p.ResetStats()
	if st := p.Stats(); st != (Stats{}) {
		t.Errorf("stats after reset: %+v", st)
	}
}

func TestDelay(t *testing.T) {
	up := startUpstream(t, 1000)
	const delay = 40 * time.Millisecond
	p := startProxy(t, Config{Upstream: up.url, Delay: delay})
	c := client(t)
	// The first request pays the handshake's round trip and its own; the
	// next, on the same connection, its own only.
	for i, want := range []time.Duration{2 * delay, delay} {
		t0 := time.Now()
		if _, _, err := get(t, c, p.URL()+"/shard.tar", "bytes=0-9"); err != nil {
			t.Fatal(err)
		}
		if took := time.Since(t0); took < want {
			t.Errorf("request %d took %v, want at least %v", i, took, want)
		}
	}
	// Parallel connections wait together, not one after another.
	const n = 6
	var wg sync.WaitGroup
	t0 := time.Now()
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := client(t)
			get(t, c, p.URL()+"/shard.tar", "")
		}()
	}
	wg.Wait()
	if took := time.Since(t0); took >= n*delay {
		t.Errorf("%d parallel requests on new connections took %v: the delays were serialized", n, took)
	}
	if st := p.Stats(); st.Connections != 1+n {
		t.Errorf("%d connections, want %d", st.Connections, 1+n)
	}
}

func TestBandwidth(t *testing.T) {
	const size = 4 << 20
	const rate = 20_000_000
	up := startUpstream(t, size)
	p := startProxy(t, Config{Upstream: up.url, BytesPerSecond: rate})
	c := client(t)
	t0 := time.Now()
	_, body, err := get(t, c, p.URL()+"/shard.tar", "")
	took := time.Since(t0)
	if err != nil || len(body) != size {
		t.Fatalf("%d bytes, %v", len(body), err)
	}
	// 0.21 s at the cap; a lower bound only, with room for the socket's
	// buffers and the pacer's credit.
	if want := time.Duration(float64(size) / rate * 0.8 * float64(time.Second)); took < want {
		t.Errorf("%d bytes at %d B/s took %v, want at least %v", size, rate, took, want)
	}
}

func TestFaults(t *testing.T) {
	const size = 100_000
	up := startUpstream(t, size)
	for _, tc := range []struct {
		name     string
		faults   Faults
		rng      string
		status   int
		body     int  // body bytes the client gets
		cut      bool // the body ends early, with an error
		upstream bool // the request reaches the upstream
		counts   FaultCounts
	}{
		{"503", Faults{Fail503: 1}, "", http.StatusServiceUnavailable, -1, false, false, FaultCounts{Fail503: 1}},
		{"429", Faults{Throttle429: 1}, "", http.StatusTooManyRequests, -1, false, false, FaultCounts{Throttle429: 1}},
		{"cut", Faults{CutBody: 1}, "", http.StatusOK, size / 2, true, true, FaultCounts{CutBody: 1}},
		{"cut range", Faults{CutBody: 1}, "bytes=100-1099", http.StatusPartialContent, 500, true, true, FaultCounts{CutBody: 1}},
		{"ignore range", Faults{IgnoreRange: true}, "bytes=100-1099", http.StatusOK, size, false, true, FaultCounts{IgnoreRange: 1}},
		{"none", Faults{}, "bytes=100-1099", http.StatusPartialContent, 1000, false, true, FaultCounts{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := startProxy(t, Config{Upstream: up.url, Faults: tc.faults})
			hits := up.hits.Load()
			resp, body, err := get(t, client(t), p.URL()+"/shard.tar", tc.rng)
			if resp.StatusCode != tc.status {
				t.Errorf("status %d, want %d", resp.StatusCode, tc.status)
			}
			if tc.status == http.StatusTooManyRequests && resp.Header.Get("Retry-After") != "0" {
				t.Errorf("Retry-After %q, want 0", resp.Header.Get("Retry-After"))
			}
			if tc.cut != (err != nil) || (tc.cut && !errors.Is(err, io.ErrUnexpectedEOF)) {
				t.Errorf("reading the body: %v, want a cut: %v", err, tc.cut)
			}
			if tc.body >= 0 && len(body) != tc.body {
				t.Errorf("%d body bytes, want %d", len(body), tc.body)
			}
			if reached := up.hits.Load() > hits; reached != tc.upstream {
				t.Errorf("reached the upstream: %v, want %v", reached, tc.upstream)
			}
			st := p.Stats()
			if st.Faults != tc.counts || st.Requests != 1 || st.BytesToClient != int64(len(body)) {
				t.Errorf("stats %+v, want faults %+v, 1 request, %d bytes", st, tc.counts, len(body))
			}
		})
	}
}

// statuses sends n requests one after another and lists the statuses.
func statuses(t *testing.T, f Faults, upURL string, n int) string {
	p := startProxy(t, Config{Upstream: upURL, Faults: f})
	c := client(t)
	var b strings.Builder
	for range n {
		resp, _, _ := get(t, c, p.URL()+"/shard.tar", "bytes=0-9")
		fmt.Fprintf(&b, "%d ", resp.StatusCode)
	}
	return b.String()
}

func TestSeed(t *testing.T) {
	up := startUpstream(t, 1000)
	f := Faults{Seed: 7, Fail503: 0.3, Throttle429: 0.3}
	a, b := statuses(t, f, up.url, 30), statuses(t, f, up.url, 30)
	if a != b {
		t.Errorf("the same seed gave\n%s\nand\n%s", a, b)
	}
	for _, s := range []string{"206", "503", "429"} {
		if !strings.Contains(a, s) {
			t.Errorf("no %s in %s", s, a)
		}
	}
	f.Seed = 8
	if c := statuses(t, f, up.url, 30); c == a {
		t.Errorf("seeds 7 and 8 gave the same statuses %s", a)
	}
}

func TestConfigErrors(t *testing.T) {
	for _, cfg := range []Config{
		{Upstream: "127.0.0.1:80"},
		{Upstream: "ftp://127.0.0.1"},
		{Upstream: "http://127.0.0.1", Faults: Faults{Fail503: 1.5}},
		{Upstream: "http://127.0.0.1", Faults: Faults{Fail503: 0.6, Throttle429: 0.6}},
		{Upstream: "http://127.0.0.1", Delay: -time.Second},
	} {
		if p, err := Start(cfg); err == nil {
			p.Close()
			t.Errorf("Start(%+v) did not fail", cfg)
		}
	}
}

// BenchmarkParallel reads through the cap on 16 connections at once and
// reports each one's rate: how close the pacing keeps to the cap, and
// (with -benchtime and a CPU profile) what it costs.
//
//	go test -run X -bench Parallel -benchtime 3x ./testing/netproxy
func BenchmarkParallel(b *testing.B) {
	const size, conns, rate = 32 << 20, 16, 50_000_000
	dir := b.TempDir()
	f, err := os.Create(filepath.Join(dir, "big"))
	if err != nil {
		b.Fatal(err)
	}
	f.Truncate(size)
	f.Close()
	srv := httptest.NewServer(http.FileServer(http.Dir(dir)))
	defer srv.Close()
	p, err := Start(Config{Upstream: srv.URL, BytesPerSecond: rate})
	if err != nil {
		b.Fatal(err)
	}
	defer p.Close()
	for b.Loop() {
		var wg sync.WaitGroup
		t0 := time.Now()
		for range conns {
			wg.Add(1)
			go func() {
				defer wg.Done()
				tr := &http.Transport{}
				defer tr.CloseIdleConnections()
				resp, err := (&http.Client{Transport: tr}).Get(p.URL() + "/big")
				if err != nil {
					b.Error(err)
					return
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}()
		}
		wg.Wait()
		b.ReportMetric(float64(size)/time.Since(t0).Seconds()/1e6, "MB/s/conn")
	}
}
