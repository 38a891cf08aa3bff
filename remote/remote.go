package remote

import (
	"context"
	"errors"
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
	// Client makes the requests (default: a client of its own, keeping
	// up to Connections connections per host alive).
	Client *http.Client
	// Connections bounds the requests in flight across every file opened
	// with the same Client (default DefaultConnections). A streamed
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
	// NoSign reads S3 objects with unsigned requests (public buckets), as
	// the AWS CLI's --no-sign-request does. Without it requests are
	// unsigned when s3.NoSignEnv (AWS_NO_SIGN_REQUEST) is set, or when no
	// AWS credentials are found.
	NoSign bool
}

// ConnectionsOrDefault is the bound on requests in flight that o gives:
// its own, or DefaultConnections.
func (o Options) ConnectionsOrDefault() int {
	return cmpOr(o.Connections, DefaultConnections)
}

// cmpOr is v, or def when v is not positive.
func cmpOr[T int | int64 | time.Duration](v, def T) T {
	if v <= 0 {
		return def
	}
	return v
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

// Open opens the file at a URL with a Client made from opts, or, when
// opts is the zero value, with the client ctx carries (ClientFrom). A
// Client's Open is the same, with the bound shared by every file it
// opens.
func Open(ctx context.Context, name string, opts Options) (*File, error) {
	return opts.client(ctx).Open(ctx, name)
}

// OpenKnown is Open of a file whose size and ETag are known (see
// Client.OpenKnown).
func OpenKnown(ctx context.Context, name string, size int64, etag string, opts Options) (*File, error) {
	return opts.client(ctx).OpenKnown(ctx, name, size, etag)
}

// Stat gives the size and ETag of the file at a URL (see Open for the
// client it uses).
func Stat(ctx context.Context, name string, opts Options) (size int64, etag string, err error) {
	return opts.client(ctx).Stat(ctx, name)
}

// client is the Client that opts make: ctx's when opts is the zero
// value, else a new one, whose bound is that call's alone.
func (o Options) client(ctx context.Context) *Client {
	if o == (Options{}) {
		return ClientFrom(ctx)
	}
	return NewClient(o)
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

// A locator gives the URL a request goes to: the user's own, less its
// user info (*userURL, which authenticates its requests), or, for S3, a
// presigned one, made again when it expires or is refused (*presigned).
type locator interface {
	url(ctx context.Context, renew bool) (string, error)
}

// StatAll is Client.StatAll with the client Open would use.
func StatAll(ctx context.Context, names []string, opts Options) (sizes []int64, etags []string, err error) {
	return opts.client(ctx).StatAll(ctx, names)
}
