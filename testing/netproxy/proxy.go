package netproxy

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"math/rand"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"sync"
	"sync/atomic"
	"time"
)

// Config shapes the link between the proxy's clients and the upstream.
type Config struct {
	// Upstream is the base URL of the real server, e.g.
	// "http://127.0.0.1:8080".
	Upstream string
	// Delay is one simulated round trip. It is added before each
	// response's headers, and once when a client connection is accepted
	// (its handshake).
	Delay time.Duration
	// BytesPerSecond caps the bytes each client connection is sent
	// (0: no cap).
	BytesPerSecond int64
	Faults         Faults
}

// Faults are the failures the proxy injects. Each request draws its fate
// from a generator seeded with Seed, so a run that sends the same
// requests in the same order meets the same faults.
type Faults struct {
	Seed int64
	// Fail503 is the fraction of requests answered 503 Service
	// Unavailable without reaching the upstream.
	Fail503 float64
	// Throttle429 is the fraction answered 429 Too Many Requests, with
	// Retry-After: 0.
	Throttle429 float64
	// CutBody is the fraction of responses whose connection is closed
	// after about half of the body was sent.
	CutBody float64
	// IgnoreRange drops the Range header, so that the upstream answers
	// with the whole file.
	IgnoreRange bool
}

// Stats count what went through the proxy since it started or since the
// last ResetStats.
type Stats struct {
	Requests      int64 // requests received, faulted ones included
	Connections   int64 // client connections accepted
	BytesToClient int64 // response body bytes sent to clients
	Faults        FaultCounts
}

// FaultCounts count the faults injected, by kind.
type FaultCounts struct {
	Fail503     int64
	Throttle429 int64
	CutBody     int64 // bodies cut short
	IgnoreRange int64 // requests whose Range header was dropped
}

// Proxy is a running proxy. Close stops it.
type Proxy struct {
	cfg   Config
	ln    net.Listener
	srv   *http.Server
	rp    *httputil.ReverseProxy
	trans *http.Transport
	done  chan struct{}

	mu  sync.Mutex // guards rng
	rng *rand.Rand

	requests, conns, bytes     atomic.Int64
	f503, f429, fCut, fNoRange atomic.Int64
}

// copyBufSize is the size of the buffers bodies are copied through: large
// enough that a fast link costs few system calls, and the unit the
// bandwidth cap paces.
const copyBufSize = 64 << 10

// Start starts a proxy for cfg on 127.0.0.1, on a port of its own.
func Start(cfg Config) (*Proxy, error) {
	up, err := url.Parse(cfg.Upstream)
	if err != nil {
		return nil, fmt.Errorf("netproxy: upstream: %w", err)
	}
	if (up.Scheme != "http" && up.Scheme != "https") || up.Host == "" {
		return nil, fmt.Errorf("netproxy: upstream %q is not an http(s) URL", cfg.Upstream)
	}
	if err := cfg.check(); err != nil {
		return nil, fmt.Errorf("netproxy: %w", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("netproxy: %w", err)
	}
	p := &Proxy{
		cfg:  cfg,
		rng:  rand.New(rand.NewSource(cfg.Faults.Seed)),
		done: make(chan struct{}),
		// Its own transport: the default one would take a proxy from
		// the environment, keep only two idle connections to the
		// upstream (each parallel client beyond would open and close
		// one per request), and ask for gzip, changing the bodies.
		trans: &http.Transport{
			DialContext:         (&net.Dialer{Timeout: 10 * time.Second}).DialContext,
			MaxIdleConns:        256,
			MaxIdleConnsPerHost: 256,
			IdleConnTimeout:     90 * time.Second,
			DisableCompression:  true,
			WriteBufferSize:     copyBufSize,
			ReadBufferSize:      copyBufSize,
		},
	}
	quiet := log.New(io.Discard, "", 0)
	p.rp = &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(up)
			// SetURL makes the upstream's host the Host header; a
			// signature over the client's host would then fail.
			pr.Out.Host = pr.In.Host
			if cfg.Faults.IgnoreRange && pr.Out.Header.Get("Range") != "" {
				pr.Out.Header.Del("Range")
				pr.Out.Header.Del("If-Range")
				p.fNoRange.Add(1)
			}
		},
		Transport:      p.trans,
		BufferPool:     bufPool{},
		ErrorLog:       quiet,
		ModifyResponse: p.maybeCut,
	}
	p.srv = &http.Server{
		Handler:           p,
		ErrorLog:          quiet,
		ReadHeaderTimeout: time.Minute,
	}
	p.ln = &listener{Listener: ln, p: p}
	go func() {
		defer close(p.done)
		p.srv.Serve(p.ln)
	}()
	return p, nil
}

func (c Config) check() error {
	f := c.Faults
	for _, v := range []float64{f.Fail503, f.Throttle429, f.CutBody} {
		if v < 0 || v > 1 {
			return fmt.Errorf("fault fraction %v is not in [0, 1]", v)
		}
	}
	if f.Fail503+f.Throttle429 > 1 {
		return fmt.Errorf("fault fractions 503 (%v) and 429 (%v) add up to more than 1", f.Fail503, f.Throttle429)
	}
	if c.Delay < 0 || c.BytesPerSecond < 0 {
		return errors.New("negative delay or bandwidth")
	}
	return nil
}

// URL is the proxy's base URL, "http://127.0.0.1:PORT".
func (p *Proxy) URL() string { return "http://" + p.ln.Addr().String() }

// Stats are the counts so far.
func (p *Proxy) Stats() Stats {
	return Stats{
		Requests:      p.requests.Load(),
		Connections:   p.conns.Load(),
		BytesToClient: p.bytes.Load(),
		Faults: FaultCounts{
			Fail503:     p.f503.Load(),
			Throttle429: p.f429.Load(),
			CutBody:     p.fCut.Load(),
			IgnoreRange: p.fNoRange.Load(),
		},
	}
}

// ResetStats sets every count to zero: a bench reads the counts of one
// run at a time.
func (p *Proxy) ResetStats() {
	for _, c := range []*atomic.Int64{&p.requests, &p.conns, &p.bytes, &p.f503, &p.f429, &p.fCut, &p.fNoRange} {
		c.Store(0)
	}
}

// Close stops the proxy: its listener and every connection, to clients
// and to the upstream.
func (p *Proxy) Close() error {
	err := p.srv.Close()
	<-p.done
	p.trans.CloseIdleConnections()
	if err != nil {
		return fmt.Errorf("netproxy: close: %w", err)
	}
	return nil
}

// cutKey is the context key under which a request carries the writer of
// its response, when that response is to be cut.
type cutKey struct{}

func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p.requests.Add(1)
	// Two draws for every request, whatever the fractions, so that the
	// sequence of fates depends on the seed and the order of requests
	// alone.
	p.mu.Lock()
	status, cut := p.rng.Float64(), p.rng.Float64()
	p.mu.Unlock()

	if p.cfg.Delay > 0 {
		t := time.NewTimer(p.cfg.Delay)
		select {
		case <-t.C:
		case <-r.Context().Done():
			t.Stop()
			return
		}
	}
	cw := &countingWriter{ResponseWriter: w, n: &p.bytes}
	f := p.cfg.Faults
	switch {
	case status < f.Fail503:
		p.f503.Add(1)
		http.Error(cw, "netproxy: injected 503", http.StatusServiceUnavailable)
		return
	case status < f.Fail503+f.Throttle429:
		p.f429.Add(1)
		cw.Header().Set("Retry-After", "0")
		http.Error(cw, "netproxy: injected 429", http.StatusTooManyRequests)
		return
	}
	if cut < f.CutBody && r.Method != http.MethodHead {
		r = r.WithContext(context.WithValue(r.Context(), cutKey{}, http.ResponseWriter(cw)))
	}
	p.rp.ServeHTTP(cw, r)
}

// maybeCut arranges for a response chosen to be cut to end after half of
// its body. Only a body of known length can be cut at its half; a
// response without one is left whole and not counted.
func (p *Proxy) maybeCut(resp *http.Response) error {
	w, ok := resp.Request.Context().Value(cutKey{}).(http.ResponseWriter)
	if !ok || resp.ContentLength <= 0 {
		return nil
	}
	resp.Body = &cutBody{ReadCloser: resp.Body, left: resp.ContentLength / 2, w: w, p: p}
	return nil
}

// errCut ends a body cut short. The reverse proxy then aborts the
// handler (http.ErrAbortHandler), which closes the client's connection
// in the middle of the body it announced.
var errCut = errors.New("netproxy: body cut")

// cutBody passes on the first left bytes of a body, then fails.
type cutBody struct {
	io.ReadCloser
	left int64
	w    http.ResponseWriter
	p    *Proxy
}

func (c *cutBody) Read(b []byte) (int, error) {
	if c.left <= 0 {
		// What was written may still sit in the server's buffers, which
		// an aborted handler drops: flush it, so that the client gets
		// exactly the half.
		http.NewResponseController(c.w).Flush()
		c.p.fCut.Add(1)
		return 0, errCut
	}
	if int64(len(b)) > c.left {
		b = b[:c.left]
	}
	n, err := c.ReadCloser.Read(b)
	c.left -= int64(n)
	return n, err
}

// countingWriter counts the body bytes written to a client. They are
// counted before they are written (and a short write's rest taken back):
// counted after, a client that has read the whole body could ask for the
// count before the write that brought it had returned.
type countingWriter struct {
	http.ResponseWriter
	n *atomic.Int64
}

func (c *countingWriter) Write(b []byte) (int, error) {
	c.n.Add(int64(len(b)))
	n, err := c.ResponseWriter.Write(b)
	if n < len(b) {
		c.n.Add(int64(n - len(b)))
	}
	return n, err
}

// Unwrap lets http.ResponseController reach the server's writer (the
// reverse proxy flushes through it).
func (c *countingWriter) Unwrap() http.ResponseWriter { return c.ResponseWriter }

// bufPool lends the reverse proxy its copy buffers.
type bufPool struct{}

var bufs = sync.Pool{New: func() any { return make([]byte, copyBufSize) }}

func (bufPool) Get() []byte  { return bufs.Get().([]byte) }
func (bufPool) Put(b []byte) { bufs.Put(b) }

// listener shapes every connection it accepts.
type listener struct {
	net.Listener
	p *Proxy
}

func (l *listener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	l.p.conns.Add(1)
	return &shapedConn{Conn: c, delay: l.p.cfg.Delay, pace: newPacer(l.p.cfg.BytesPerSecond)}, nil
}

// shapedConn is a client connection: its first read waits one round trip
// (the handshake, paid in the connection's own goroutine, so that
// connections accepted together wait together, not one after another),
// and its writes are paced to the bandwidth cap.
type shapedConn struct {
	net.Conn
	delay     time.Duration
	handshake sync.Once
	pace      *pacer
}

func (c *shapedConn) Read(b []byte) (int, error) {
	c.handshake.Do(func() { time.Sleep(c.delay) })
	return c.Conn.Read(b)
}

func (c *shapedConn) Write(b []byte) (int, error) {
	if c.pace == nil {
		return c.Conn.Write(b)
	}
	var done int
	for len(b) > 0 {
		n := min(len(b), copyBufSize)
		m, err := c.Conn.Write(b[:n])
		done += m
		if err != nil {
			return done, err
		}
		c.pace.sent(m)
		b = b[n:]
	}
	return done, nil
}
