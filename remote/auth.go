package remote

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
)

// HeaderEnv names the environment variable that holds one header line,
// "Name: value", added to every http(s) request made for a user's URL:
// "Authorization: Bearer TOKEN" keeps a token out of the URLs that
// messages and indexes show.
const HeaderEnv = "ITARCONV_HTTP_HEADER"

// NetrcEnv names the environment variable that names the netrc file to
// read instead of ~/.netrc, as curl's.
const NetrcEnv = "NETRC"

// ErrAuthConfig: the netrc file or HeaderEnv cannot be read. Its
// messages never quote a password or a header's value.
var ErrAuthConfig = errors.New("bad authentication settings")

// credentials are what authenticates the requests for one URL: Basic
// from its user info or the netrc file, and HeaderEnv's header. Their
// values never reach a message.
type credentials struct {
	user, pass  string
	basic       bool
	name, value string // HeaderEnv's header, if set
}

// headers are the names of the headers authorize sets.
func (c *credentials) headers() []string {
	var names []string
	if c.basic {
		names = append(names, "Authorization")
	}
	if c.name != "" {
		names = append(names, c.name)
	}
	return names
}

// authorize adds the credentials to a request's header.
func (c *credentials) authorize(h http.Header) {
	if c.basic {
		r := http.Request{Header: h}
		r.SetBasicAuth(c.user, c.pass)
	}
	if c.name != "" {
		h.Set(c.name, c.value) // it wins over Basic when it is Authorization
	}
}

// userURL is a user's http(s) URL, its user info taken out and kept as
// credentials with those of the netrc file and HeaderEnv.
type userURL struct {
	u     string
	creds credentials
}

func (u *userURL) url(context.Context, bool) (string, error) { return u.u, nil }

// locateHTTP parses an http(s) URL and finds its credentials.
func locateHTTP(name string) (*userURL, error) {
	u, err := url.Parse(name)
	if err != nil || u.Host == "" {
		return nil, fmt.Errorf("%s: not a URL", Redact(name))
	}
	loc := &userURL{}
	if u.User != nil {
		loc.creds.user = u.User.Username()
		loc.creds.pass, loc.creds.basic = u.User.Password()
		u.User = nil
	}
	if !loc.creds.basic {
		// No password in the URL: the netrc file's for the host (and
		// the URL's login, when it names one), as curl does.
		login, pass, ok, err := netrcFor(u.Hostname(), loc.creds.user)
		if err != nil {
			return nil, err
		}
		if ok {
			loc.creds.user, loc.creds.pass, loc.creds.basic = login, pass, true
		} else if loc.creds.user != "" {
			loc.creds.basic = true // a user without a password
		}
	}
	if loc.creds.name, loc.creds.value, err = headerFromEnv(); err != nil {
		return nil, err
	}
	loc.u = u.String()
	return loc, nil
}

// headerFromEnv reads HeaderEnv: one "Name: value" line, or nothing.
func headerFromEnv() (name, value string, err error) {
	line := os.Getenv(HeaderEnv)
	if line == "" {
		return "", "", nil
	}
	name, value, ok := strings.Cut(line, ":")
	name, value = strings.TrimSpace(name), strings.TrimSpace(value)
	if !ok || !validHeaderName(name) || strings.ContainsAny(value, "\r\n\x00") {
		// The value is not quoted: it is the secret.
		return "", "", fmt.Errorf("%s: want one header line \"Name: value\": %w", HeaderEnv, ErrAuthConfig)
	}
	return http.CanonicalHeaderKey(name), value, nil
}

func validHeaderName(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if r >= 0x7f || r <= ' ' || strings.ContainsRune("\"(),/:;<=>?@[\\]{}", r) {
			return false
		}
	}
	return true
}

// netrcFor finds the login and password the netrc file gives for host:
// the first machine entry of that host (and of that login, when one is
// given), else the default entry. No file is no credentials.
func netrcFor(host, login string) (user, pass string, ok bool, err error) {
	path := os.Getenv(NetrcEnv)
	if path == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", "", false, nil
		}
		path = filepath.Join(home, ".netrc")
	}
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return "", "", false, nil
	}
	if err != nil {
		return "", "", false, fmt.Errorf("netrc: %w: %w", err, ErrAuthConfig)
	}
	entries, err := parseNetrc(string(data))
	if err != nil {
		return "", "", false, fmt.Errorf("netrc %s: %w: %w", path, err, ErrAuthConfig)
	}
	// A machine's entry first, wherever the default one stands.
	for _, def := range []bool{false, true} {
		for _, e := range entries {
			if e.def == def && (def || strings.EqualFold(e.machine, host)) && (login == "" || e.login == login) && e.hasPass {
				return e.login, e.password, true, nil
			}
		}
	}
	return "", "", false, nil
}

type netrcEntry struct {
	machine         string
	def             bool // the default entry: any machine
	login, password string
	hasPass         bool
}

// parseNetrc reads a netrc file as curl does: whitespace-separated
// tokens, machine, default, login, password, account and macdef (whose
// macro runs to the next blank line); a token may be double-quoted, with
// \" \\ \n \r \t escapes; # starts a comment. Its errors never quote a
// token, which may be a password.
//
// It is written here rather than taken from a package: the Go netrc
// packages there are (bgentry/go-netrc, fhs/go-netrc, jdx/go-netrc) were
// last changed years ago and do not read curl's double-quoted tokens, so a
// password with a space in it, valid for curl, would not be read the same.
func parseNetrc(s string) ([]netrcEntry, error) {
	l := &netrcLexer{s: s, line: 1}
	var entries []netrcEntry
	var cur *netrcEntry
	for {
		tok, ok, err := l.next()
		if err != nil || !ok {
			return entries, err
		}
		switch tok {
		case "machine", "default":
			entries = append(entries, netrcEntry{def: tok == "default"})
			cur = &entries[len(entries)-1]
			if tok == "machine" {
				if cur.machine, ok, err = l.next(); err != nil || !ok {
					return nil, errors.Join(err, fmt.Errorf("line %d: machine without a name", l.line))
				}
			}
		case "login", "password", "account":
			v, ok, err := l.next()
			if err != nil || !ok {
				return nil, errors.Join(err, fmt.Errorf("line %d: %s without a value", l.line, tok))
			}
			if cur == nil {
				return nil, fmt.Errorf("line %d: %s before any machine", l.line, tok)
			}
			switch tok {
			case "login":
				cur.login = v
			case "password":
				cur.password, cur.hasPass = v, true
			}
		case "macdef":
			l.skipMacro()
			cur = nil
		default:
			return nil, fmt.Errorf("line %d: unknown keyword", l.line)
		}
	}
}

// netrcLexer splits a netrc file into tokens, counting lines so that an
// error can say where it is without quoting what it read.
type netrcLexer struct {
	s    string // what is left to read
	line int    // the line s starts on
}

// next gives the next token, ok false at the end of the file.
func (l *netrcLexer) next() (tok string, ok bool, err error) {
	if !l.skipBlank() {
		return "", false, nil
	}
	if l.s[0] == '"' {
		return l.quoted()
	}
	i := strings.IndexAny(l.s, " \t\r\n")
	if i < 0 {
		i = len(l.s)
	}
	tok, l.s = l.s[:i], l.s[i:]
	return tok, true, nil
}

// skipBlank moves past whitespace and comments (# to the end of the
// line), and reports whether a token follows.
func (l *netrcLexer) skipBlank() bool {
	for {
		for l.s != "" && strings.ContainsRune(" \t\r\n", rune(l.s[0])) {
			if l.s[0] == '\n' {
				l.line++
			}
			l.s = l.s[1:]
		}
		if l.s == "" {
			return false
		}
		if l.s[0] != '#' {
			return true
		}
		if i := strings.IndexByte(l.s, '\n'); i >= 0 {
			l.s = l.s[i:]
		} else {
			l.s = ""
		}
	}
}

// quoted reads the double-quoted token l.s starts with, as curl does: \n,
// \r and \t are control characters, a backslash keeps any other byte as
// it is, and the token must end on its line.
func (l *netrcLexer) quoted() (string, bool, error) {
	s := l.s
	var b strings.Builder
	for i := 1; i < len(s); i++ {
		switch c := s[i]; c {
		case '"':
			l.s = s[i+1:]
			return b.String(), true, nil
		case '\\':
			i++
			if i == len(s) {
				break
			}
			switch s[i] {
			case 'n':
				b.WriteByte('\n')
			case 'r':
				b.WriteByte('\r')
			case 't':
				b.WriteByte('\t')
			default:
				b.WriteByte(s[i])
			}
		case '\n':
			return "", false, fmt.Errorf("line %d: a quoted token runs past the end of its line", l.line)
		default:
			b.WriteByte(c)
		}
	}
	return "", false, fmt.Errorf("line %d: a quoted token is not closed", l.line)
}

// skipMacro skips a macdef's name and its lines, which run to the next
// blank line: they are commands for ftp, not credentials.
func (l *netrcLexer) skipMacro() {
	if i := strings.Index(l.s, "\n\n"); i >= 0 {
		l.line += strings.Count(l.s[:i], "\n")
		l.s = l.s[i:]
	} else {
		l.s = ""
	}
}

// authKey is the context key of the headers a request carries that hold
// credentials: dropped on a redirect to another origin.
type authKey struct{}

// keepAuthOnOrigin wraps a client's redirect policy: a redirect to
// another scheme, host or port loses the request's credentials (Go's
// client keeps them for the same host on another port, and for
// subdomains, and would keep any header but Authorization).
func keepAuthOnOrigin(next func(*http.Request, []*http.Request) error) func(*http.Request, []*http.Request) error {
	return func(req *http.Request, via []*http.Request) error {
		first := via[0].URL
		if req.URL.Scheme != first.Scheme || req.URL.Host != first.Host {
			if names, _ := req.Context().Value(authKey{}).([]string); names != nil {
				for _, n := range names {
					req.Header.Del(n)
				}
			}
		}
		if next != nil {
			return next(req, via)
		}
		if len(via) >= 10 {
			return errors.New("stopped after 10 redirects")
		}
		return nil
	}
}
