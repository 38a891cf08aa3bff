package remote

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/itarconv/itarconv/remote/s3"
)

// A Client reads remote files: it holds the HTTP client that makes the
// requests, the bound on those in flight, the retry policy and the S3
// configurations loaded. Every file a Client opens shares its bound, so
// that one Client made for a run bounds the requests of all its shards
// together; two Clients share nothing.
//
// The caller makes one (the command line from --connections) and hands
// it to the library through the context (WithClient), as every remote
// operation takes the caller's context. Library code reads it with
// ClientFrom, which gives DefaultClient where the context carries none.
type Client struct {
	http    *http.Client
	conns   int
	retries int
	backoff time.Duration
	idle    time.Duration
	minRate int64
	limit   chan struct{} // a slot a request in flight
	noSign  bool

	// One S3 client for each AWS configuration the environment names:
	// loading one reads files and may ask a credential service, once.
	s3Mu sync.Mutex
	s3   map[string]*s3.Client
}

// NewClient makes a Client of the options, their zero fields taking the
// defaults.
func NewClient(o Options) *Client {
	c := &Client{
		conns:   cmpOr(o.Connections, DefaultConnections),
		retries: o.Retries,
		backoff: cmpOr(o.Backoff, 100*time.Millisecond),
		idle:    cmpOr(o.Idle, 30*time.Second),
		minRate: o.MinRate,
		noSign:  o.NoSign,
		s3:      map[string]*s3.Client{},
	}
	if c.retries == 0 {
		c.retries = 5
	}
	if c.minRate == 0 {
		c.minRate = DefaultMinRate
	}
	if o.Client == nil {
		c.http = newClient(c.conns)
	} else {
		// The caller's client, with credentials kept to their origin
		// on redirects.
		hc := *o.Client
		hc.CheckRedirect = keepAuthOnOrigin(hc.CheckRedirect)
		c.http = &hc
	}
	c.limit = make(chan struct{}, c.conns)
	return c
}

var defaultClient = sync.OnceValue(func() *Client { return NewClient(Options{}) })

// DefaultClient is the Client of library calls whose context carries
// none: the zero Options' (DefaultConnections requests in flight), made
// once. Nothing configures it; a caller that wants other settings makes
// its own Client.
func DefaultClient() *Client { return defaultClient() }

type clientKey struct{}

// WithClient gives a copy of ctx that carries c: what reads remote files
// under it uses c (ClientFrom).
func WithClient(ctx context.Context, c *Client) context.Context {
	return context.WithValue(ctx, clientKey{}, c)
}

// ClientFrom gives the Client ctx carries, or DefaultClient.
func ClientFrom(ctx context.Context) *Client {
	if c, _ := ctx.Value(clientKey{}).(*Client); c != nil {
		return c
	}
	return DefaultClient()
}

// Connections is the bound on c's requests in flight.
func (c *Client) Connections() int { return c.conns }

// Open opens the file at a URL: http(s):// or s3://bucket/key. It learns
// the size and ETag with one request.
//
// The requests for an http(s) URL are authenticated, without secrets in
// the URL, by the netrc file (NETRC, or ~/.netrc, as curl reads it: Basic
// for the URL's host) and by the header HeaderEnv holds; user info in
// the URL still authenticates (Basic). Messages name the URL as Redact
// gives it: never with user info, a signature or a token.
func (c *Client) Open(ctx context.Context, name string) (*File, error) {
	loc, err := c.locate(ctx, name)
	if err != nil {
		return nil, err
	}
	return open(ctx, name, loc, c, firstWindow)
}

// OpenKnown opens a file whose size (and ETag, "" when the server gives
// none) are already known, from an index's manifest: no request is made
// until the first read, and every read checks them, so that one member
// costs exactly one request.
func (c *Client) OpenKnown(ctx context.Context, name string, size int64, etag string) (*File, error) {
	loc, err := c.locate(ctx, name)
	if err != nil {
		return nil, err
	}
	return &File{ctx: ctx, name: Redact(name), loc: loc, size: size, etag: etag, c: c, known: true}, nil
}

// Stat gives the size and ETag of the file at a URL.
func (c *Client) Stat(ctx context.Context, name string) (size int64, etag string, err error) {
	loc, err := c.locate(ctx, name)
	if err != nil {
		return 0, "", err
	}
	f, err := open(ctx, name, loc, c, 1)
	if err != nil {
		return 0, "", err
	}
	return f.Size(), f.ETag(), nil
}

// StatAll gives the sizes and ETags of many files, their requests in
// flight together (as many as the connections allow): a run over
// thousands of shards must not wait a round trip for each in turn.
func (c *Client) StatAll(ctx context.Context, names []string) (sizes []int64, etags []string, err error) {
	sizes, etags = make([]int64, len(names)), make([]string, len(names))
	errs := make([]error, len(names))
	var wg sync.WaitGroup
	gate := make(chan struct{}, c.conns)
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
			sizes[i], etags[i], errs[i] = c.Stat(ctx, n)
		}()
	}
	wg.Wait()
	return sizes, etags, errors.Join(errs...)
}

// locate gives what addresses a URL's requests.
func (c *Client) locate(ctx context.Context, name string) (locator, error) {
	if strings.HasPrefix(name, "s3://") {
		return c.locateS3(ctx, name)
	}
	return locateHTTP(name)
}

// acquire takes a request slot, or gives up when ctx is done.
func (c *Client) acquire(ctx context.Context) error {
	select {
	case c.limit <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (c *Client) release() { <-c.limit }
