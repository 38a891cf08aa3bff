// Package remote reads shards where they live: a file on an HTTP(S)
// server, read by ranges, each request retried alone when the server
// fails it for a while, so that a reader of headers never downloads a
// whole shard.
package remote

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// ErrNoRange: the server answered a range request with something else
// than that range (the whole file, or other bytes).
var ErrNoRange = errors.New("the server does not honour range requests")

// ErrChanged: the file changed on the server since it was opened (its
// ETag, or its size, is no longer the one first seen).
var ErrChanged = errors.New("the file changed on the server")

// ErrRetriesExhausted: a request still failed after every retry.
var ErrRetriesExhausted = errors.New("the server kept failing")

// IsURL tells whether s names a file on a server rather than a path.
func IsURL(s string) bool {
	return strings.HasPrefix(s, "http://") || strings.HasPrefix(s, "https://")
}

// Options tune how files are read.
type Options struct {
	// Client makes the requests (default: http.DefaultClient).
	Client *http.Client
	// Retries is how many times a failed request is tried again: on a
	// 5xx or 429 answer, or a connection that breaks (default 5).
	Retries int
	// Backoff is the wait before the first retry, doubled at each next
	// one (default 100 ms).
	Backoff time.Duration
}

func (o Options) withDefaults() Options {
	if o.Client == nil {
		o.Client = http.DefaultClient
	}
	if o.Retries == 0 {
		o.Retries = 5
	}
	if o.Backoff == 0 {
		o.Backoff = 100 * time.Millisecond
	}
	return o
}

// File is a file on an HTTP server, read by ranges (io.ReaderAt).
type File struct {
	ctx  context.Context
	url  string
	size int64
	etag string
	opts Options

	requests, bytes atomic.Int64
}

// Open finds the size (and ETag, where the server gives one) of the file
// at url, with one request.
func Open(ctx context.Context, url string, opts Options) (*File, error) {
	f := &File{ctx: ctx, url: url, opts: opts.withDefaults()}
	// A range request for the first byte tells the size in Content-Range,
	// and that the server honours ranges at all.
	err := f.retry(0, func() (bool, error) {
		resp, err := f.get(0, 1, "")
		if err != nil {
			return true, err
		}
		defer resp.Body.Close()
		switch {
		case resp.StatusCode == http.StatusRequestedRangeNotSatisfiable:
			f.size = 0 // an empty file has no first byte
			f.etag = resp.Header.Get("ETag")
			return false, nil
		case resp.StatusCode == http.StatusOK && resp.ContentLength == 0:
			f.size = 0 // the whole of an empty file: no range to give
			f.etag = resp.Header.Get("ETag")
			return false, nil
		case resp.StatusCode == http.StatusOK:
			return false, fmt.Errorf("%s: answered a range request with the whole file (status 200): %w", url, ErrNoRange)
		case resp.StatusCode != http.StatusPartialContent:
			return retryable(resp.StatusCode), statusError(url, 0, resp)
		}
		start, _, total, err := contentRange(resp.Header.Get("Content-Range"))
		if err != nil || start != 0 || total < 0 {
			return false, fmt.Errorf("%s: Content-Range %q: %w", url, resp.Header.Get("Content-Range"), ErrNoRange)
		}
		f.size, f.etag = total, resp.Header.Get("ETag")
		_, err = io.Copy(io.Discard, resp.Body)
		return err != nil, err
	})
	if err != nil {
		return nil, err
	}
	return f, nil
}

// URL is the file's address.
func (f *File) URL() string { return f.url }

// Size is the file's size when it was opened.
func (f *File) Size() int64 { return f.size }

// ETag is the file's ETag when it was opened, or "" when the server gives
// none.
func (f *File) ETag() string { return f.etag }

// Stats are the requests made and the payload bytes they brought.
func (f *File) Stats() (requests, bytes int64) { return f.requests.Load(), f.bytes.Load() }

// ReadAt reads len(p) bytes at off with one range request, retried alone
// when the server fails it; fewer, with io.EOF, past the end of the file.
func (f *File) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, fmt.Errorf("%s: negative offset %d", f.url, off)
	}
	if off >= f.size {
		return 0, io.EOF
	}
	want := int64(len(p))
	short := false
	if off+want > f.size {
		want, short = f.size-off, true
	}
	if want == 0 {
		return 0, nil
	}
	var n int
	err := f.retry(off, func() (bool, error) {
		resp, err := f.get(off, want, f.etag)
		if err != nil {
			return true, err
		}
		defer resp.Body.Close()
		switch {
		case resp.StatusCode == http.StatusPreconditionFailed:
			return false, fmt.Errorf("%s: %w (ETag %s)", f.url, ErrChanged, f.etag)
		case resp.StatusCode == http.StatusOK:
			return false, fmt.Errorf("%s: byte %d: answered a range request with the whole file (status 200): %w", f.url, off, ErrNoRange)
		case resp.StatusCode != http.StatusPartialContent:
			return retryable(resp.StatusCode), statusError(f.url, off, resp)
		}
		start, end, total, err := contentRange(resp.Header.Get("Content-Range"))
		switch {
		case err != nil || start != off || end != off+want-1:
			return false, fmt.Errorf("%s: byte %d: asked for %d bytes, got Content-Range %q: %w", f.url, off, want, resp.Header.Get("Content-Range"), ErrNoRange)
		case total >= 0 && total != f.size:
			return false, fmt.Errorf("%s: %d bytes now, %d when opened: %w", f.url, total, f.size, ErrChanged)
		}
		n, err = io.ReadFull(resp.Body, p[:want])
		f.bytes.Add(int64(n))
		if err != nil {
			// A connection cut mid-body: the whole range again.
			return true, fmt.Errorf("%s: byte %d: %d of %d bytes: %w", f.url, off, n, want, err)
		}
		return false, nil
	})
	if err != nil {
		return 0, err
	}
	if short {
		return n, io.EOF
	}
	return n, nil
}

// get asks for n bytes at off.
func (f *File) get(off, n int64, etag string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(f.ctx, http.MethodGet, f.url, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Range", fmt.Sprintf("bytes=%d-%d", off, off+n-1))
	if etag != "" {
		req.Header.Set("If-Match", etag)
	}
	f.requests.Add(1)
	return f.opts.Client.Do(req)
}

// retry runs try until it succeeds, fails for good (again false), or the
// retries run out; waits double between tries.
func (f *File) retry(off int64, try func() (again bool, err error)) error {
	wait := f.opts.Backoff
	var err error
	for attempt := 0; ; attempt++ {
		var again bool
		again, err = try()
		if err == nil || !again || f.ctx.Err() != nil {
			break
		}
		if attempt == f.opts.Retries {
			return fmt.Errorf("%s: byte %d: %d tries: %w: %w", f.url, off, attempt+1, ErrRetriesExhausted, err)
		}
		select {
		case <-time.After(wait):
		case <-f.ctx.Done():
			return f.ctx.Err()
		}
		wait *= 2
	}
	if err != nil && f.ctx.Err() != nil {
		return f.ctx.Err()
	}
	return err
}

// retryable tells whether a status may pass: the server busy or failing
// for a while, or throttling.
func retryable(status int) bool {
	return status >= 500 || status == http.StatusTooManyRequests
}

func statusError(url string, off int64, resp *http.Response) error {
	return fmt.Errorf("%s: byte %d: %s", url, off, resp.Status)
}

// contentRange reads "bytes START-END/TOTAL" (TOTAL -1 for "*").
func contentRange(h string) (start, end, total int64, err error) {
	rest, ok := strings.CutPrefix(h, "bytes ")
	if !ok {
		return 0, 0, 0, fmt.Errorf("no byte range")
	}
	span, size, ok := strings.Cut(rest, "/")
	if !ok {
		return 0, 0, 0, fmt.Errorf("no total")
	}
	a, b, ok := strings.Cut(span, "-")
	if !ok {
		return 0, 0, 0, fmt.Errorf("no range")
	}
	if start, err = strconv.ParseInt(a, 10, 64); err != nil {
		return 0, 0, 0, err
	}
	if end, err = strconv.ParseInt(b, 10, 64); err != nil {
		return 0, 0, 0, err
	}
	total = -1
	if size != "*" {
		if total, err = strconv.ParseInt(size, 10, 64); err != nil {
			return 0, 0, 0, err
		}
	}
	if start < 0 || end < start || (total >= 0 && end >= total) {
		return 0, 0, 0, fmt.Errorf("range %d-%d of %d", start, end, total)
	}
	return start, end, total, nil
}
