package remote

import (
	"context"
	"errors"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/url"
	"path"
	"strings"
)

// ErrNoListing: an HTTP glob's directory has no listing the server gives
// (no index page, or not HTML).
var ErrNoListing = errors.New("the server gives no listing of the directory")

// maxListing bounds the bytes of a directory's listing page read: an
// autoindex of a million shards stays under it, and a server that sends
// without end is cut there.
const maxListing = 64 << 20

// HasHTTPGlob reports whether an http(s) URL's path holds glob wildcards
// (* or [...]); a ? starts its query, and is none.
func HasHTTPGlob(rawURL string) bool {
	p, _, _ := strings.Cut(rawURL, "?")
	p, _, _ = strings.Cut(p, "#")
	if i := strings.Index(p, "://"); i >= 0 {
		p = p[i+3:]
	}
	_, p, _ = strings.Cut(p, "/") // the host is no part of the pattern
	return strings.ContainsAny(p, "*[")
}

// globHTTP lists the files of an http(s) directory whose names match the
// pattern's last path segment (path.Match syntax: * and [...]; wildcards
// in any other segment are refused), from the listing page the server
// gives for the directory: an autoindex (nginx, Apache, lighttpd,
// Python's http.server, Go's http.FileServer), each file a link
// (<a href="NAME">) to a name in the directory itself. The URLs come back
// as the links give them, resolved against the directory.
func (c *Client) globHTTP(ctx context.Context, pattern string) ([]string, error) {
	u, err := url.Parse(pattern)
	if err != nil || u.Host == "" {
		return nil, fmt.Errorf("%s: not a URL", Redact(pattern))
	}
	dir, name := path.Split(u.Path)
	if strings.ContainsAny(dir, "*[") {
		return nil, fmt.Errorf("%s: an HTTP glob matches the names of one directory: wildcards go in the last part of the path only", Redact(pattern))
	}
	if _, err := path.Match(name, ""); err != nil {
		return nil, fmt.Errorf("%s: %w", Redact(pattern), err)
	}
	d := *u
	d.Path, d.RawPath, d.RawQuery, d.Fragment = dir, "", "", ""
	page, base, err := c.listing(ctx, d.String())
	if err != nil {
		return nil, err
	}
	var out []string
	seen := map[string]bool{}
	for _, href := range hrefs(page) {
		ref, err := url.Parse(href)
		if err != nil || ref.RawQuery != "" || ref.Fragment != "" {
			continue // sort links (?C=N;O=D), anchors
		}
		abs := base.ResolveReference(ref)
		file, ok := strings.CutPrefix(abs.Path, base.Path)
		if abs.Scheme != base.Scheme || abs.Host != base.Host || !ok || file == "" || strings.Contains(file, "/") {
			continue // elsewhere, the directory itself, or a subdirectory
		}
		if m, _ := path.Match(name, file); !m || seen[file] {
			continue
		}
		seen[file] = true
		abs.User = u.User // the pattern's user info authenticates its matches
		out = append(out, abs.String())
	}
	return out, nil
}

// listing GETs a directory's page, authenticated as its files are, and
// gives the page and the URL links resolve against (where redirects led).
func (c *Client) listing(ctx context.Context, dirURL string) ([]byte, *url.URL, error) {
	loc, err := locateHTTP(dirURL)
	if err != nil {
		return nil, nil, err
	}
	name := Redact(dirURL)
	if err := c.acquire(ctx); err != nil {
		return nil, nil, err
	}
	defer c.release()
	rctx := context.WithValue(ctx, authKey{}, loc.creds.headers())
	req, err := http.NewRequestWithContext(rctx, http.MethodGet, loc.u, nil)
	if err != nil {
		return nil, nil, transportError(err)
	}
	loc.creds.authorize(req.Header)
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: listing: %w", name, transportError(err))
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		err := fmt.Errorf("%s: listing: status %d %s", name, resp.StatusCode, http.StatusText(resp.StatusCode))
		if resp.StatusCode == http.StatusNotFound || resp.StatusCode == http.StatusForbidden {
			err = fmt.Errorf("%w: %w", err, ErrNoListing)
		}
		return nil, nil, err
	}
	if ct := resp.Header.Get("Content-Type"); !strings.Contains(ct, "html") {
		return nil, nil, fmt.Errorf("%s: listing: a page of type %q, not HTML: %w", name, ct, ErrNoListing)
	}
	page, err := io.ReadAll(io.LimitReader(resp.Body, maxListing+1))
	if err != nil {
		return nil, nil, fmt.Errorf("%s: listing: %w", name, transportError(err))
	}
	if len(page) > maxListing {
		return nil, nil, fmt.Errorf("%s: listing: more than %d bytes: %w", name, maxListing, ErrNoListing)
	}
	base := resp.Request.URL // after redirects ("/dir" to "/dir/")
	b := *base
	b.User = nil
	return page, &b, nil
}

// hrefs gives the values of a page's href attributes, in order, their
// character references decoded. It is no HTML parser: an autoindex is a
// list of <a href="..."> links, quoted with " or '.
func hrefs(page []byte) []string {
	var out []string
	s := string(page)
	for {
		i := indexFold(s, "href")
		if i < 0 {
			return out
		}
		s = s[i+4:]
		rest := strings.TrimLeft(s, " \t\r\n")
		if !strings.HasPrefix(rest, "=") {
			continue
		}
		rest = strings.TrimLeft(rest[1:], " \t\r\n")
		if rest == "" {
			return out
		}
		q := rest[0]
		var v string
		if q == '"' || q == '\'' {
			end := strings.IndexByte(rest[1:], q)
			if end < 0 {
				return out
			}
			v, s = rest[1:1+end], rest[2+end:]
		} else {
			end := strings.IndexAny(rest, " \t\r\n>")
			if end < 0 {
				end = len(rest)
			}
			v, s = rest[:end], rest[end:]
		}
		out = append(out, html.UnescapeString(v))
	}
}

// indexFold is strings.Index of an ASCII lower-case word, in any case.
func indexFold(s, word string) int {
	for i := 0; i+len(word) <= len(s); i++ {
		if strings.EqualFold(s[i:i+len(word)], word) {
			return i
		}
	}
	return -1
}
