package remote

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"path"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// File is a remote file read by ranges (io.ReaderAt).
type File struct {
	ctx   context.Context
	name  string // the URL messages name: Redact's form of the one given
	loc   locator
	size  int64
	etag  string
	c     *Client
	known bool // size and ETag came from an index, not from the server
	// modTime is the server's Last-Modified, when it gives one: learnt
	// from the first response, which every later one must match when no
	// ETag tells the file's version.
	modMu   sync.Mutex
	modTime time.Time
	head    []byte // the file's first bytes, which the opening request brought

	requests, bytes atomic.Int64
}

// open asks for the first head bytes of the file (at least one): the
// answer's Content-Range tells the size, and that the server honours
// ranges at all; the bytes are kept, for a scan starts there.
func open(ctx context.Context, raw string, loc locator, c *Client, head int64) (*File, error) {
	name := Redact(raw)
	f := &File{ctx: ctx, name: name, loc: loc, c: c}
	head = max(head, 1)
	err := f.retry(0, func() (bool, error) {
		resp, err := f.get(f.ctx, 0, head, "")
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
			return false, fmt.Errorf("%s: answered a range request with the whole file (status 200): %w", name, ErrNoRange)
		case resp.StatusCode != http.StatusPartialContent:
			return retryable(resp.StatusCode), f.statusError(0, resp)
		}
		start, end, total, err := contentRange(resp.Header.Get("Content-Range"))
		if err != nil || start != 0 || total < 0 || end >= head || !lengthMatches(resp, start, end) {
			return false, fmt.Errorf("%s: byte 0: asked for %d bytes, got Content-Range %s, Content-Length %d: %w", name, head, quoteCut(resp.Header.Get("Content-Range")), resp.ContentLength, ErrNoRange)
		}
		if total > maxSize {
			return false, fmt.Errorf("%s: claims a size of %d bytes, more than any file read: %w", name, total, ErrNoRange)
		}
		f.size, f.etag = total, resp.Header.Get("ETag")
		f.modTime, _ = http.ParseTime(resp.Header.Get("Last-Modified"))
		f.head = make([]byte, end+1)
		if _, err = io.ReadFull(resp.Body, f.head); err != nil {
			f.head = nil
			return true, fmt.Errorf("%s: byte 0: %w", name, bodyError(resp.Body.(*body), err))
		}
		return false, nil
	})
	if err != nil {
		return nil, err
	}
	seen.Store(raw, knownFile{f.size, f.etag})
	return f, nil
}

// Name is the file's URL as messages name it: as given, less its user
// info and the values of query parameters that carry credentials
// (Redact).
func (f *File) Name() string { return f.name }

// Size is the file's size when it was opened (or as the index knew it).
func (f *File) Size() int64 { return f.size }

// ETag is the file's ETag when it was opened, or "" when the server gives
// none.
func (f *File) ETag() string { return f.etag }

// ModTime is the file's Last-Modified time as its server gave it when
// opened (zero when it gave none).
func (f *File) ModTime() time.Time {
	f.modMu.Lock()
	defer f.modMu.Unlock()
	return f.modTime
}

// Stat describes the file as a regular file of its size and
// modification time, named by its URL's last element: what a record of a
// file's stat (ratarmount's index) keeps of a remote one.
func (f *File) Stat() fs.FileInfo { return fileInfo{f} }

type fileInfo struct{ f *File }

func (i fileInfo) Name() string {
	p := i.f.name
	if j := strings.IndexAny(p, "?#"); j >= 0 {
		p = p[:j] // the query is not the file's name
	}
	return path.Base(p)
}
func (i fileInfo) Size() int64        { return i.f.size }
func (i fileInfo) Mode() fs.FileMode  { return 0o444 }
func (i fileInfo) ModTime() time.Time { return i.f.ModTime() }
func (i fileInfo) IsDir() bool        { return false }
func (i fileInfo) Sys() any           { return nil }

// Stats are the requests made for this file and the body bytes they
// brought, but for the opening request's (Head).
func (f *File) Stats() (requests, bytes int64) { return f.requests.Load(), f.bytes.Load() }

// Close releases nothing: a File holds no connection between reads. It
// is there so that a File stands where an *os.File did.
func (f *File) Close() error { return nil }

// ReadAt reads len(p) bytes at off with one range request, retried alone
// when the server fails it; fewer, with io.EOF, past the end of the file.
func (f *File) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, fmt.Errorf("%s: negative offset %d", f.name, off)
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
		body, err := f.openRange(off, want)
		if err != nil {
			return body == nil && again(err), err
		}
		defer body.Close()
		n, err = io.ReadFull(body, p[:want])
		if err != nil {
			// A connection cut mid-body: the whole range again.
			return true, fmt.Errorf("%s: byte %d: %d of %d bytes: %w", f.name, off, n, want, bodyError(body, err))
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

// errAgain marks an error of openRange that a retry may cure.
type errAgain struct{ error }

func (e errAgain) Unwrap() error { return e.error }

func again(err error) bool {
	var a errAgain
	return errors.As(err, &a)
}

// openRange asks for the n bytes at off and checks that the answer is
// exactly them, of the file first seen. Its errors say whether to retry
// (errAgain).
func (f *File) openRange(off, n int64) (*body, error) {
	resp, err := f.get(f.ctx, off, n, f.etag)
	if err != nil {
		return nil, errAgain{fmt.Errorf("%s: byte %d: %w", f.name, off, err)}
	}
	b := resp.Body.(*body)
	fail := func(err error) (*body, error) {
		b.Close()
		return nil, err
	}
	switch {
	case resp.StatusCode == http.StatusPreconditionFailed:
		return fail(fmt.Errorf("%s: %w (ETag %s)", f.name, ErrChanged, quoteCut(f.etag)))
	case resp.StatusCode == http.StatusRequestedRangeNotSatisfiable && f.known:
		return fail(fmt.Errorf("%s: byte %d: past the end, %d bytes when indexed: %w", f.name, off, f.size, ErrChanged))
	case resp.StatusCode == http.StatusOK:
		return fail(fmt.Errorf("%s: byte %d: answered a range request with the whole file (status 200): %w", f.name, off, ErrNoRange))
	case resp.StatusCode != http.StatusPartialContent:
		err := f.statusError(off, resp)
		if retryable(resp.StatusCode) {
			err = errAgain{err}
		}
		return fail(err)
	}
	start, end, total, err := contentRange(resp.Header.Get("Content-Range"))
	switch {
	case err != nil || start != off || end != off+n-1 || !lengthMatches(resp, start, end):
		return fail(fmt.Errorf("%s: byte %d: asked for %d bytes, got Content-Range %s, Content-Length %d: %w", f.name, off, n, quoteCut(resp.Header.Get("Content-Range")), resp.ContentLength, ErrNoRange))
	case total >= 0 && total != f.size:
		return fail(fmt.Errorf("%s: byte %d: %d bytes now, %d when %s: %w", f.name, off, total, f.size, f.seen(), ErrChanged))
	}
	if err := f.sameVersion(resp, off); err != nil {
		return fail(err)
	}
	b.file = f
	return b, nil
}

// sameVersion checks that a response is of the file first seen, whatever
// the server made of If-Match (some ignore it): its ETag, or, when either
// has none, its Last-Modified.
func (f *File) sameVersion(resp *http.Response, off int64) error {
	if etag := resp.Header.Get("ETag"); f.etag != "" && etag != "" {
		if strings.TrimPrefix(etag, "W/") != strings.TrimPrefix(f.etag, "W/") {
			return fmt.Errorf("%s: byte %d: ETag %s now, %s when %s: %w", f.name, off, quoteCut(etag), quoteCut(f.etag), f.seen(), ErrChanged)
		}
		return nil
	}
	mod, err := http.ParseTime(resp.Header.Get("Last-Modified"))
	if err != nil {
		return nil
	}
	f.modMu.Lock()
	defer f.modMu.Unlock()
	if f.modTime.IsZero() {
		f.modTime = mod
		return nil
	}
	if !mod.Equal(f.modTime) {
		return fmt.Errorf("%s: byte %d: modified %s now, %s when first read: %w", f.name, off, mod.UTC().Format(time.RFC3339), f.modTime.UTC().Format(time.RFC3339), ErrChanged)
	}
	return nil
}

// lengthMatches tells whether a response's Content-Length, when it
// gives one, is that of its Content-Range.
func lengthMatches(resp *http.Response, start, end int64) bool {
	return resp.ContentLength < 0 || resp.ContentLength == end-start+1
}

// quoteCut gives a header's value for a message, quoted when it holds
// more than printable ASCII, cut short: the server chose it, and may
// have chosen it long.
func quoteCut(s string) string {
	cut := ""
	if len(s) > 100 {
		s, cut = s[:100], fmt.Sprintf("... (%d bytes)", len(s))
	}
	for i := 0; i < len(s); i++ {
		if s[i] < ' ' || s[i] > '~' {
			return strconv.Quote(s) + cut
		}
	}
	return s + cut
}

func (f *File) seen() string {
	if f.known {
		return "indexed"
	}
	return "opened"
}

// get asks for n bytes at off, once a request slot is free. The
// response's body is a *body, which gives the slot back when closed.
func (f *File) get(ctx context.Context, off, n int64, etag string) (*http.Response, error) {
	if err := f.c.acquire(ctx); err != nil {
		return nil, err
	}
	release := f.c.release
	user, _ := f.loc.(*userURL)
	for renew := false; ; renew = true {
		target, err := f.loc.url(ctx, renew)
		if err != nil {
			release()
			return nil, err
		}
		rctx, cancel := context.WithCancelCause(ctx)
		if user != nil {
			rctx = context.WithValue(rctx, authKey{}, user.creds.headers())
		}
		// The round trip is timed from the request written to the first
		// byte of the answer, on connections kept alive only: a new
		// connection's setup is not the cost of the next request, and
		// some of it (a proxy's, a TLS session's) may come after the
		// request is written.
		var wrote atomic.Int64
		var reused atomic.Bool
		rctx = httptrace.WithClientTrace(rctx, &httptrace.ClientTrace{
			GotConn:      func(info httptrace.GotConnInfo) { reused.Store(info.Reused) },
			WroteRequest: func(httptrace.WroteRequestInfo) { wrote.Store(time.Now().UnixNano()) },
			GotFirstResponseByte: func() {
				if w := wrote.Load(); w != 0 && reused.Load() {
					noteRTT(time.Duration(time.Now().UnixNano() - w))
				}
			},
		})
		req, err := http.NewRequestWithContext(rctx, http.MethodGet, target, nil)
		if err != nil {
			cancel(nil)
			release()
			return nil, transportError(err)
		}
		req.Header.Set("Range", fmt.Sprintf("bytes=%d-%d", off, off+n-1))
		if etag != "" {
			req.Header.Set("If-Match", etag)
		}
		if user != nil {
			user.creds.authorize(req.Header)
		}
		f.requests.Add(1)
		b := &body{cancel: cancel, release: release, idle: f.c.idle, minRate: f.c.minRate}
		b.timer = time.AfterFunc(f.c.idle, b.stall)
		resp, err := f.c.http.Do(req)
		if err != nil {
			err = bodyError(b, transportError(err))
			cancel(nil)
			release()
			return nil, err
		}
		b.ReadCloser = resp.Body
		resp.Body = b
		// A presigned URL that expired (or whose credentials did) is
		// refused: sign again, once.
		if resp.StatusCode == http.StatusForbidden && !renew {
			if _, signed := f.loc.(*presigned); signed {
				resp.Body.Close()
				if err := f.c.acquire(ctx); err != nil {
					return nil, err
				}
				continue
			}
		}
		return resp, nil
	}
}

// transportError is a failed request's error without the URL that
// net/http puts in it (*url.Error): the caller names the file, and the
// URL may be a presigned one. What remains is redacted too, for what a
// server put in it (a Location header).
func transportError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	return redacted{err}
}

type redacted struct{ error }

func (r redacted) Error() string { return RedactText(r.error.Error()) }
func (r redacted) Unwrap() error { return r.error }

// body is a response's body that gives its request slot back when
// closed, and abandons the response when it sends nothing for idle, or
// less than minRate a second over idle of waiting for it.
type body struct {
	io.ReadCloser
	file    *File
	cancel  context.CancelCauseFunc
	release func()
	timer   *time.Timer
	idle    time.Duration
	closed  bool

	// The rate is measured over the time spent in Read, waiting for the
	// server: a reader that is slow itself does not make the server slow.
	minRate          int64
	winBytes         int64
	winWait          time.Duration
	stalled, tooSlow atomic.Bool
}

// stall abandons the response: it sent nothing for idle.
func (b *body) stall() {
	b.stalled.Store(true)
	b.cancel(ErrStalled)
}

func (b *body) Read(p []byte) (int, error) {
	b.timer.Reset(b.idle)
	start := time.Now()
	n, err := b.ReadCloser.Read(p)
	b.timer.Stop()
	if b.file != nil {
		b.file.bytes.Add(int64(n))
	}
	if err != nil || b.minRate < 0 {
		return n, err
	}
	b.winBytes += int64(n)
	b.winWait += time.Since(start)
	if b.winWait >= b.idle {
		if float64(b.winBytes) < float64(b.minRate)*b.winWait.Seconds() {
			b.tooSlow.Store(true)
			b.stall()
			return n, ErrStalled
		}
		b.winBytes, b.winWait = 0, 0
	}
	return n, nil
}

func (b *body) Close() error {
	if b.closed {
		return nil
	}
	b.closed = true
	b.timer.Stop()
	var err error
	if b.ReadCloser != nil {
		err = b.ReadCloser.Close()
	}
	b.cancel(nil)
	b.release()
	return err
}

// bodyError tells a stalled response from other failures.
func bodyError(b *body, err error) error {
	switch {
	case b == nil || !b.stalled.Load():
		return err
	case b.tooSlow.Load():
		return fmt.Errorf("under %d bytes/s for %v: %w", b.minRate, b.idle, ErrStalled)
	}
	return fmt.Errorf("nothing for %v: %w", b.idle, ErrStalled)
}

// retry runs try until it succeeds, fails for good (again false), or the
// retries run out; waits double between tries.
func (f *File) retry(off int64, try func() (again bool, err error)) error {
	wait := f.c.backoff
	var err error
	for attempt := 0; ; attempt++ {
		var again bool
		again, err = try()
		if err == nil || !again || f.ctx.Err() != nil {
			break
		}
		if attempt == f.c.retries {
			return fmt.Errorf("%s: byte %d: %d tries: %w: %w", f.name, off, attempt+1, ErrRetriesExhausted, err)
		}
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-f.ctx.Done():
			t.Stop()
			return f.cancelled(off)
		}
		wait *= 2
	}
	if err != nil && f.ctx.Err() != nil {
		return f.cancelled(off)
	}
	return err
}

// cancelled is the error of a read given up because its context was
// cancelled.
func (f *File) cancelled(off int64) error {
	return fmt.Errorf("%s: byte %d: %w", f.name, off, context.Cause(f.ctx))
}

// retryable tells whether a status may pass: the server busy or failing
// for a while, or throttling.
func retryable(status int) bool {
	return status >= 500 || status == http.StatusTooManyRequests
}

// statusError names a status by its code: the server's own reason
// phrase may say anything, a credential sent to it included.
func statusError(name string, off int64, resp *http.Response) error {
	return fmt.Errorf("%s: byte %d: status %d %s", name, off, resp.StatusCode, http.StatusText(resp.StatusCode))
}

// statusError is statusError of the file, and a refusal (401, 403)
// wraps fs.ErrPermission, saying so when the request went unsigned to S3
// (no credentials, or unsigned requests asked for).
func (f *File) statusError(off int64, resp *http.Response) error {
	err := statusError(f.name, off, resp)
	if resp.StatusCode != http.StatusForbidden && resp.StatusCode != http.StatusUnauthorized {
		return err
	}
	if p, ok := f.loc.(*presigned); ok && p.c.Unsigned() != "" {
		return fmt.Errorf("%w: the request was unsigned (%s), and the bucket is not public: %w", err, p.c.Unsigned(), fs.ErrPermission)
	}
	return fmt.Errorf("%w: %w", err, fs.ErrPermission)
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
	if start < 0 || end < start || (size != "*" && total <= end) {
		return 0, 0, 0, fmt.Errorf("range %d-%d of %d", start, end, total)
	}
	return start, end, total, nil
}
