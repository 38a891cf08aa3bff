package remote

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"
)

// ErrNoRange: the server answered a range request with something else
// than that range (the whole file, or other bytes).
var ErrNoRange = errors.New("the server does not honour range requests")

// ErrChanged: the file changed on the server since it was opened or
// indexed (its ETag, or its size, is no longer the one known).
var ErrChanged = errors.New("the file changed on the server")

// ErrRetriesExhausted: a request still failed after every retry.
var ErrRetriesExhausted = errors.New("the server kept failing")

// ErrStalled: a response stopped sending for longer than Options.Idle,
// or sent slower than Options.MinRate over that long.
var ErrStalled = errors.New("the server stopped sending")

// maxSize bounds the size a server may claim for a file (1 PiB): a claim
// above it is a lie, refused rather than believed.
const maxSize = 1 << 50

// DefaultMinRate is the slowest a response may send, averaged over
// Options.Idle, before it counts as stalled: 4 KiB/s, so that a server
// dripping a byte a second is abandoned, not waited on for days.
const DefaultMinRate = 4 << 10

// IsURL tells whether s names a remote file (http://, https:// or
// s3://) rather than a local path.
func IsURL(s string) bool {
	return strings.HasPrefix(s, "http://") || strings.HasPrefix(s, "https://") || strings.HasPrefix(s, "s3://")
}

// AnyURL tells whether any of names is a URL.
func AnyURL(names []string) bool {
	for _, n := range names {
		if IsURL(n) {
			return true
		}
	}
	return false
}

// DefaultConnections is the default bound on requests in flight: enough
// for a fast link made of connections each capped near 50 MB/s, as
// object stores cap them.
const DefaultConnections = 32

// Options tune how files are read. The zero value takes the defaults.
type Options struct {
	// Client makes the requests (default: one client for the process,
	// keeping up to Connections connections per host alive).
	Client *http.Client
	// Connections bounds the requests in flight across every file opened
	// with the same Options (default DefaultConnections). A streamed
	// region holds one while it is read.
	Connections int
	// Retries is how many times a failed request is tried again: on a
	// 5xx or 429 answer, or a connection that breaks or stalls (default 5).
	Retries int
	// Backoff is the wait before the first retry, doubled at each next
	// one (default 100 ms).
	Backoff time.Duration
	// Idle bounds how long a response may send nothing before it is
	// abandoned and retried (default 30 s): a read never hangs.
	Idle time.Duration
	// MinRate is the slowest a response may send, in bytes a second
	// averaged over each Idle of time spent waiting for its body, before
	// it is abandoned and retried as stalled (default DefaultMinRate;
	// negative: no floor).
	MinRate int64
}

var (
	configMu sync.Mutex
	defaults Options
	clients  = map[int]*http.Client{}
	limiters = map[int]chan struct{}{}
)

// Configure sets the options Open uses when given none (the CLI's
// --connections).
func Configure(o Options) {
	configMu.Lock()
	defaults = o
	configMu.Unlock()
}

// ConnectionsOrDefault is the bound on requests in flight that o gives:
// its own, Configure's, or DefaultConnections.
func (o Options) ConnectionsOrDefault() int {
	return o.resolve().Connections
}

// Defaults are the options Configure set.
func Defaults() Options {
	configMu.Lock()
	defer configMu.Unlock()
	return defaults
}

// resolved is Options with every default filled in, and the semaphore
// that bounds its requests.
type resolved struct {
	Options
	limit chan struct{}
}

func (o Options) resolve() resolved {
	if o == (Options{}) {
		o = Defaults()
	}
	if o.Connections <= 0 {
		o.Connections = DefaultConnections
	}
	if o.Retries == 0 {
		o.Retries = 5
	}
	if o.Backoff == 0 {
		o.Backoff = 100 * time.Millisecond
	}
	if o.Idle == 0 {
		o.Idle = 30 * time.Second
	}
	if o.MinRate == 0 {
		o.MinRate = DefaultMinRate
	}
	configMu.Lock()
	defer configMu.Unlock()
	if o.Client == nil {
		if clients[o.Connections] == nil {
			clients[o.Connections] = newClient(o.Connections)
		}
		o.Client = clients[o.Connections]
	} else {
		// The caller's client, with credentials kept to their origin
		// on redirects.
		c := *o.Client
		c.CheckRedirect = keepAuthOnOrigin(c.CheckRedirect)
		o.Client = &c
	}
	// Files opened with the same bound share it: the bound is on the
	// process's requests, not on each file's.
	if limiters[o.Connections] == nil {
		limiters[o.Connections] = make(chan struct{}, o.Connections)
	}
	return resolved{o, limiters[o.Connections]}
}

// newClient keeps up to conns connections per host alive (the standard
// transport keeps two, and would open a new connection, a round trip
// more, for most requests of a parallel scan).
func newClient(conns int) *http.Client {
	t := &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           (&net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          4 * conns,
		MaxIdleConnsPerHost:   conns,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   30 * time.Second,
		ResponseHeaderTimeout: 60 * time.Second,
		ExpectContinueTimeout: time.Second,
		// Ranges of tar shards do not compress; asking for gzip would
		// only make Content-Range refer to other bytes.
		DisableCompression: true,
	}
	return &http.Client{Transport: t, CheckRedirect: keepAuthOnOrigin(nil)}
}

// Open opens the file at a URL: http(s):// or s3://bucket/key. It learns
// the size and ETag with one request.
//
// The requests for an http(s) URL are authenticated, without secrets in
// the URL, by the netrc file (NETRC, or ~/.netrc, as curl reads it: Basic
// for the URL's host) and by the header HeaderEnv holds; user info in
// the URL still authenticates (Basic). Messages name the URL as Redact
// gives it: never with user info, a signature or a token.
func Open(ctx context.Context, name string, opts Options) (*File, error) {
	loc, err := locate(ctx, name, opts)
	if err != nil {
		return nil, err
	}
	return open(ctx, name, loc, opts.resolve(), firstWindow)
}

// OpenKnown opens a file whose size (and ETag, "" when the server gives
// none) are already known, from an index's manifest: no request is made
// until the first read, and every read checks them, so that one member
// costs exactly one request.
func OpenKnown(ctx context.Context, name string, size int64, etag string, opts Options) (*File, error) {
	loc, err := locate(ctx, name, opts)
	if err != nil {
		return nil, err
	}
	return &File{ctx: ctx, name: Redact(name), loc: loc, size: size, etag: etag, opts: opts.resolve(), known: true}, nil
}

// Stat gives the size and ETag of the file at a URL.
func Stat(ctx context.Context, name string, opts Options) (size int64, etag string, err error) {
	loc, err := locate(ctx, name, opts)
	if err != nil {
		return 0, "", err
	}
	f, err := open(ctx, name, loc, opts.resolve(), 1)
	if err != nil {
		return 0, "", err
	}
	return f.Size(), f.ETag(), nil
}

// seen keeps the size and ETag of every file opened, by URL: what a scan
// read is what its index's manifest records (Known), with no request more.
var seen sync.Map // string -> knownFile

type knownFile struct {
	size int64
	etag string
}

// Known gives the size and ETag of a file this process opened, as they
// were then.
func Known(name string) (size int64, etag string, ok bool) {
	v, ok := seen.Load(name)
	if !ok {
		return 0, "", false
	}
	k := v.(knownFile)
	return k.size, k.etag, true
}

// locate gives what addresses a URL's requests.
func locate(ctx context.Context, name string, opts Options) (locator, error) {
	if strings.HasPrefix(name, "s3://") {
		return locateS3(ctx, name, opts)
	}
	return locateHTTP(name)
}

// A locator gives the URL a request goes to: the user's own, less its
// user info (*userURL, which authenticates its requests), or, for S3, a
// presigned one, made again when it expires or is refused (*presigned).
type locator interface {
	url(ctx context.Context, renew bool) (string, error)
}

// StatAll gives the sizes and ETags of many files, their requests in
// flight together (as many as the connections allow): a run over
// thousands of shards must not wait a round trip for each in turn.
func StatAll(ctx context.Context, names []string, opts Options) (sizes []int64, etags []string, err error) {
	sizes, etags = make([]int64, len(names)), make([]string, len(names))
	errs := make([]error, len(names))
	o := opts.resolve()
	var wg sync.WaitGroup
	gate := make(chan struct{}, o.Connections)
	for i, n := range names {
		select {
		case gate <- struct{}{}:
		case <-ctx.Done():
			wg.Wait()
			return nil, nil, fmt.Errorf("%s: %w", Redact(n), context.Cause(ctx))
		}
		wg.Add(1)
		go func() {
			defer func() { <-gate; wg.Done() }()
			sizes[i], etags[i], errs[i] = Stat(ctx, n, opts)
		}()
	}
	wg.Wait()
	return sizes, etags, errors.Join(errs...)
}
