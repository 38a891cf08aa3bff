package remote

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
)

// ErrSecretInURL: a URL to be stored carries a credential in its query
// (a presigned URL's signature, a token).
var ErrSecretInURL = errors.New("the URL carries a signature or token")

// secretWords are what the name of a query parameter that carries a
// credential holds, lowercased: X-Amz-Signature, X-Amz-Credential,
// X-Amz-Security-Token, X-Goog-Signature, sig, access_token, api_key...
var secretWords = []string{"signature", "sig", "token", "credential", "password", "secret", "key", "auth"}

func secretParam(name string) bool {
	if n, err := url.QueryUnescape(name); err == nil {
		name = n
	}
	name = strings.ToLower(name)
	for _, w := range secretWords {
		if strings.Contains(name, w) {
			return true
		}
	}
	return false
}

// redactedMark replaces the value of a secret query parameter.
const redactedMark = "REDACTED"

// Redact returns a URL as it is safe to print: without its user info,
// and with the value of every query (or fragment) parameter that carries
// a credential replaced by REDACTED. The rest is kept as written. A
// string that is not a URL (a local path) is returned unchanged.
func Redact(rawURL string) string {
	scheme, rest, ok := strings.Cut(rawURL, "://")
	if !ok || !isScheme(scheme) {
		return rawURL
	}
	end := strings.IndexAny(rest, "/?#")
	if end < 0 {
		end = len(rest)
	}
	host := rest[:end]
	if i := strings.LastIndexByte(host, '@'); i >= 0 {
		host = host[i+1:]
	}
	tail := rest[end:]
	var b strings.Builder
	b.Grow(len(rawURL))
	b.WriteString(scheme)
	b.WriteString("://")
	b.WriteString(host)
	path, rest := tail, ""
	if i := strings.IndexAny(tail, "?#"); i >= 0 {
		path, rest = tail[:i], tail[i:]
	}
	b.WriteString(path)
	if q, ok := strings.CutPrefix(rest, "?"); ok {
		q, frag, hasFrag := strings.Cut(q, "#")
		b.WriteByte('?')
		b.WriteString(redactParams(q))
		rest = ""
		if hasFrag {
			rest = "#" + frag
		}
	}
	if frag, ok := strings.CutPrefix(rest, "#"); ok {
		// Tokens ride in fragments too (OAuth's #access_token=).
		b.WriteByte('#')
		b.WriteString(redactParams(frag))
	}
	return b.String()
}

func isScheme(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z':
		case i > 0 && (r >= '0' && r <= '9' || r == '+' || r == '-' || r == '.'):
		default:
			return false
		}
	}
	return true
}

// paramSeps separate parameters: '&', ';', and '&' as encoding/json
// escapes it, for a URL found in a JSON document.
var paramSeps = []string{"&", ";", `\u0026`}

// redactParams replaces the values of the secret parameters of a query
// string, keeping the rest byte for byte.
func redactParams(q string) string {
	var b strings.Builder
	for q != "" {
		end, sep := len(q), ""
		for _, s := range paramSeps {
			if i := strings.Index(q, s); i >= 0 && i < end {
				end, sep = i, s
			}
		}
		param := q[:end]
		if name, _, ok := strings.Cut(param, "="); ok && secretParam(name) {
			param = name + "=" + redactedMark
		}
		b.WriteString(param)
		b.WriteString(sep)
		q = q[min(end+len(sep), len(q)):]
	}
	return b.String()
}

// hasSecretParam tells whether a query string carries a credential.
func hasSecretParam(q string) bool {
	for _, param := range strings.FieldsFunc(q, func(r rune) bool { return r == '&' || r == ';' }) {
		if name, _, _ := strings.Cut(param, "="); secretParam(name) {
			return true
		}
	}
	return false
}

// RedactText passes every http:// or https:// URL found in free text (an
// error message, a JSON document) through Redact, and keeps the rest.
func RedactText(s string) string {
	if !strings.Contains(s, "://") {
		return s
	}
	var b strings.Builder
	for {
		i := indexURL(s)
		if i < 0 {
			if b.Len() == 0 {
				return s
			}
			b.WriteString(s)
			return b.String()
		}
		n := urlLen(s[i:])
		b.WriteString(s[:i])
		b.WriteString(Redact(s[i : i+n]))
		s = s[i+n:]
	}
}

// indexURL finds the next "http://" or "https://", in any case.
func indexURL(s string) int {
	for off := 0; ; {
		i := strings.Index(s[off:], "://")
		if i < 0 {
			return -1
		}
		i += off
		for _, sch := range []string{"http", "https"} {
			if i >= len(sch) && strings.EqualFold(s[i-len(sch):i], sch) {
				return i - len(sch)
			}
		}
		off = i + 3
	}
}

// urlLen is the length of the URL that starts s: up to a space, a quote
// or an angle bracket, the characters that end a URL in text.
func urlLen(s string) int {
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case ' ', '\t', '\n', '\r', '"', '\'', '<', '>', '`':
			return i
		case '\\':
			// An escaped quote ends it; \u0026 (an escaped '&') does not.
			if i+1 < len(s) && (s[i+1] == '"' || s[i+1] == '\'') {
				return i
			}
		}
	}
	return len(s)
}

// StoredURL is the form of a URL to write into a file that is kept (an
// index's manifest, a loader's index): without its user info, always.
// A URL whose query carries a credential (a presigned URL's signature, a
// token) is refused with an error wrapping ErrSecretInURL, unless
// keepQuerySecrets, when the query is kept as it is. A string that is not
// an http(s) URL is returned unchanged.
func StoredURL(rawURL string, keepQuerySecrets bool) (string, error) {
	scheme, rest, ok := strings.Cut(rawURL, "://")
	if !ok || !(strings.EqualFold(scheme, "http") || strings.EqualFold(scheme, "https")) {
		return rawURL, nil
	}
	end := strings.IndexAny(rest, "/?#")
	if end < 0 {
		end = len(rest)
	}
	if i := strings.LastIndexByte(rest[:end], '@'); i >= 0 {
		rest = rest[i+1:]
	}
	u := scheme + "://" + rest
	if _, q, ok := strings.Cut(rest, "?"); ok && !keepQuerySecrets {
		q, _, _ = strings.Cut(q, "#")
		if hasSecretParam(q) {
			return "", fmt.Errorf("%s: %w: it is not stored unless --store-signed-urls asks for it", Redact(u), ErrSecretInURL)
		}
	}
	return u, nil
}
