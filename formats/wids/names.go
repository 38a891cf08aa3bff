package wids

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strings"
	"unicode/utf8"
)

// ShortName is the name widsindex create gives an index when given no
// --name, from the first shard on its command line (as written there,
// directories included): the shard's path without its extension, cut into
// words of ASCII letters, digits and '_', words of digits only dropped,
// each word once, joined by '-'. "imagenet-train-000000.tar" gives
// "imagenet-train"; "0000.tar" gives "", and the tool then writes no name.
func ShortName(shardPath string) string {
	s := stripExt(shardPath)
	var words []string
	for s != "" {
		i := strings.IndexFunc(s, func(r rune) bool { return !isWordRune(r) })
		if i < 0 {
			i = len(s)
		}
		w := s[:i]
		s = strings.TrimLeftFunc(s[i:], func(r rune) bool { return !isWordRune(r) })
		if strings.Trim(w, "0123456789") == "" {
			continue // digits only, or empty
		}
		dup := false
		for _, x := range words {
			dup = dup || x == w
		}
		if !dup {
			words = append(words, w)
		}
	}
	return strings.Join(words, "-")
}

func isWordRune(r rune) bool {
	return r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z'
}

// stripExt drops the extension of a path's last element as the tool does
// (Python's os.path.splitext): from its last dot, unless only dots come
// before that dot in the element.
func stripExt(p string) string {
	dot := strings.LastIndexByte(p, '.')
	start := strings.LastIndexByte(p, '/') + 1
	if dot <= start || strings.Trim(p[start:dot], ".") == "" {
		return p
	}
	return p[:dot]
}

// URL is the URL of the shard at shardPath in an index written in
// indexDir: the shard's path relative to that directory, with slashes.
// The loader reads a URL through Python's urllib before it opens the file,
// and the default cache it copies shards into names them by their quoted
// URL: a path it would read otherwise is ErrURL. That is one with '?' or
// '#' (a query or fragment), ';' in its last element (parameters), a tab
// or line break (removed), a control character or space at its start
// (stripped), a first element that reads as a scheme ("c:x.tar"), or bytes
// that are not UTF-8 (which the cache cannot quote).
func URL(indexDir, shardPath string) (string, error) {
	dir, err := filepath.Abs(indexDir)
	if err != nil {
		return "", err
	}
	p, err := filepath.Abs(shardPath)
	if err != nil {
		return "", err
	}
	rel, err := filepath.Rel(dir, p)
	if err != nil {
		return "", fmt.Errorf("%s from %s: %w", shardPath, indexDir, err)
	}
	u := filepath.ToSlash(rel)
	if why := misread(u); why != "" {
		return "", fmt.Errorf("%w: %q: %s", ErrURL, u, why)
	}
	return u, nil
}

// misread says why the loader would not read the relative URL u as the
// path u, or "".
func misread(u string) string {
	switch {
	case !utf8.ValidString(u):
		return "not UTF-8"
	case strings.ContainsAny(u, "?#"):
		return "a query or fragment"
	case strings.ContainsAny(u, "\t\r\n"):
		return "a tab or line break"
	case u != "" && u[0] <= ' ':
		return "a control character or space at its start"
	case strings.IndexByte(u[strings.LastIndexByte(u, '/')+1:], ';') >= 0:
		return "parameters (';') in its last element"
	}
	if i := strings.IndexByte(u, ':'); i > 0 && isScheme(u[:i]) {
		return "a scheme"
	}
	return ""
}

// isScheme reports whether s reads as a URL scheme: an ASCII letter, then
// letters, digits, '+', '-' or '.'.
func isScheme(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		letter := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
		if !letter && (i == 0 || !(c >= '0' && c <= '9' || c == '+' || c == '-' || c == '.')) {
			return false
		}
	}
	return true
}

// sampleKey is the key of a member name the loader groups into samples:
// the name up to the first dot after the last '/' that a dot follows (so
// "a.b/c" has key "a", "d.x/y.jpg" key "d.x/y", ".hidden" key ""). ok is
// false for a name without a dot, which is no part of a sample. A line
// break is ErrName where the loader's pattern fails on it: anywhere but at
// the end of the name, where it is no part of the key.
func sampleKey(name []byte) (key []byte, ok bool, err error) {
	lastDot := bytes.LastIndexByte(name, '.')
	if lastDot < 0 {
		return nil, false, nil
	}
	if nl := bytes.IndexByte(name, '\n'); nl >= 0 && nl != len(name)-1 {
		return nil, false, fmt.Errorf("%w: %q: a line break inside", ErrName, name)
	}
	start := bytes.LastIndexByte(name[:lastDot], '/') + 1
	return name[:start+bytes.IndexByte(name[start:], '.')], true, nil
}
