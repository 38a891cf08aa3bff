package wids

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"slices"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/itarconv/itarconv/internal/human"
)

// Parse reads an index. It takes what the loader takes from an index of
// shards, and refuses (ErrFormat, naming the field) what the loader
// refuses: no "wids_version" 1, no shard list or an empty one, a shard
// without a "url" string or a "nsamples" count. It is stricter where the
// loader would take a value it then misuses or that the tool never
// writes: counts and sizes must be whole numbers, not negative; strings
// must be strings; "md5sum" must be 32 lowercase hex digits; "__kind__",
// when present, must be the tool's. An index of other indexes
// ("datasets") is refused: its shards are not in it. Other keys are passed
// over, as the loader passes them over. Shards keep their order in b; a
// missing "filesize" is -1.
//
// Strings are decoded as the loader's Python holds them and its file
// system calls encode them: the escapes \udc80 to \udcff are the bytes
// 0x80 to 0xff that are not UTF-8 in a file name; other lone surrogates
// are refused.
func Parse(b []byte) (*Index, error) {
	b = bytes.TrimPrefix(b, []byte("\xef\xbb\xbf")) // the loader reads a BOM too
	if !utf8.Valid(b) {
		return nil, fmt.Errorf("%w: not UTF-8", ErrFormat)
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(b, &top); err != nil || top == nil {
		return nil, fmt.Errorf("%w: not a JSON object: %v", ErrFormat, err)
	}
	if raw, ok := top["__kind__"]; ok {
		kind, err := jsonString(raw)
		if err != nil || kind != Kind {
			return nil, fmt.Errorf("%w: __kind__ %s, not %q", ErrFormat, raw, Kind)
		}
	}
	raw, ok := top["wids_version"]
	if !ok {
		return nil, fmt.Errorf("%w: no wids_version", ErrFormat)
	}
	if v, err := jsonInt(raw); err != nil || v != Version {
		return nil, fmt.Errorf("%w: wids_version %s, not %d", ErrFormat, raw, Version)
	}
	if _, ok := top["datasets"]; ok {
		return nil, fmt.Errorf("%w: datasets: an index of other indexes, not read here", ErrFormat)
	}
	ix := &Index{}
	for _, f := range []struct {
		key string
		dst *string
	}{{"name", &ix.Name}, {"base", &ix.Base}, {"info", &ix.Info}} {
		if raw, ok := top[f.key]; ok {
			s, err := jsonString(raw)
			if err != nil {
				return nil, fmt.Errorf("%w: %s: %v", ErrFormat, f.key, err)
			}
			*f.dst = s
		}
	}
	if _, ok := top["shardlist"]; !ok {
		return nil, fmt.Errorf("%w: no shardlist", ErrFormat)
	}
	var list []json.RawMessage
	if err := json.Unmarshal(top["shardlist"], &list); err != nil {
		return nil, fmt.Errorf("%w: shardlist is not a list", ErrFormat)
	}
	if len(list) == 0 {
		return nil, fmt.Errorf("%w: no shard in shardlist", ErrFormat)
	}
	ix.Shards = make([]Shard, len(list))
	for i, raw := range list {
		if err := parseShard(raw, &ix.Shards[i]); err != nil {
			return nil, fmt.Errorf("%w: shardlist[%d]: %v", ErrFormat, i, err)
		}
	}
	return ix, nil
}

func parseShard(raw json.RawMessage, s *Shard) error {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil || m == nil {
		return fmt.Errorf("%s is not an object", raw)
	}
	var err error
	if _, ok := m["url"]; !ok {
		return fmt.Errorf("no url")
	}
	if s.URL, err = jsonString(m["url"]); err != nil || s.URL == "" {
		return fmt.Errorf("url %s: not a file name: %v", m["url"], err)
	}
	if _, ok := m["nsamples"]; !ok {
		return fmt.Errorf("no nsamples")
	}
	n, err := jsonInt(m["nsamples"])
	if err != nil || n < 0 || int64(int(n)) != n {
		return fmt.Errorf("nsamples %s: not a count", m["nsamples"])
	}
	s.NSamples = int(n)
	s.FileSize = -1
	if raw, ok := m["filesize"]; ok {
		if s.FileSize, err = jsonInt(raw); err != nil || s.FileSize < 0 {
			return fmt.Errorf("filesize %s: not a size", raw)
		}
	}
	if raw, ok := m["md5sum"]; ok {
		if s.MD5Sum, err = jsonString(raw); err != nil || !isMD5(s.MD5Sum) {
			return fmt.Errorf("md5sum %s: not 32 lowercase hex digits", raw)
		}
	}
	return nil
}

func isMD5(s string) bool {
	if len(s) != 32 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// jsonInt reads a JSON number without fraction or exponent (Python reads
// those as floats).
func jsonInt(raw json.RawMessage) (int64, error) {
	if bytes.ContainsAny(raw, ".eE") {
		return 0, fmt.Errorf("%s is not a whole number", raw)
	}
	return strconv.ParseInt(string(raw), 10, 64)
}

// jsonString decodes a JSON string (well-formed, as json.Unmarshal found
// it) into the bytes the loader's file system calls make of it.
func jsonString(raw json.RawMessage) (string, error) {
	if len(raw) < 2 || raw[0] != '"' {
		return "", fmt.Errorf("%s is not a string", raw)
	}
	raw = raw[1 : len(raw)-1]
	out := make([]byte, 0, len(raw))
	var escAt []int // the bytes of out that came from surrogate escapes
	for len(raw) > 0 {
		c := raw[0]
		if c != '\\' {
			out = append(out, c)
			raw = raw[1:]
			continue
		}
		e := raw[1]
		raw = raw[2:]
		switch e {
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			r := hex4(raw)
			raw = raw[4:]
			switch {
			case utf16.IsSurrogate(r) && r < 0xdc00 && len(raw) >= 6 && raw[0] == '\\' && raw[1] == 'u':
				r2 := hex4(raw[2:])
				if r2 < 0xdc00 || r2 > 0xdfff {
					return "", fmt.Errorf("lone surrogate \\u%04x", r)
				}
				out = utf8.AppendRune(out, utf16.DecodeRune(r, r2))
				raw = raw[6:]
			case r >= 0xdc80 && r <= 0xdcff:
				escAt = append(escAt, len(out))
				out = append(out, byte(r-0xdc00))
			case utf16.IsSurrogate(r):
				return "", fmt.Errorf("lone surrogate \\u%04x", r)
			default:
				out = utf8.AppendRune(out, r)
			}
		default: // '"', '\\', '/'
			out = append(out, e)
		}
	}
	if len(escAt) > 0 {
		esc := make([]bool, len(out))
		for _, i := range escAt {
			esc[i] = true
		}
		if !escapesOnly(out, esc) {
			return "", fmt.Errorf("escaped bytes that make UTF-8 characters")
		}
	}
	return string(out), nil
}

// escapesOnly reports whether every byte of s that came from a surrogate
// escape (marked in esc) is one that is not part of UTF-8 in s: Python
// decodes such a file name back into the same escapes. Escapes joined into
// a character (\udcc3\udca9 are the bytes of "é") are a name Python
// would hold otherwise, and that the tool never writes.
func escapesOnly(s []byte, esc []bool) bool {
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRune(s[i:])
		if !(r == utf8.RuneError && n == 1) && slices.Contains(esc[i:i+n], true) {
			return false
		}
		i += n
	}
	return true
}

func hex4(b []byte) rune {
	v, _ := strconv.ParseUint(string(b[:4]), 16, 32)
	return rune(v)
}

// ErrDuplicate: an index lists one shard twice. The loader takes such an
// index and serves the shard's samples twice, under two ranges of sample
// numbers: no index the tool writes does (its shards are the files given).
var ErrDuplicate = errors.New("a shard listed twice")

// Duplicate finds the first shard listed twice in shards: its URL and its
// two places in the list (first < second). Two URLs are one shard when
// they are the same once cleaned ("a.tar" and "./a.tar"; a URL with a
// scheme is compared as it is). It takes linear time.
func Duplicate(shards []Shard) (url string, first, second int, ok bool) {
	seen := make(map[string]int, len(shards))
	for i, s := range shards {
		k := s.URL
		if !strings.Contains(k, "://") {
			k = path.Clean(k)
		}
		if j, dup := seen[k]; dup {
			return s.URL, j, i, true
		}
		seen[k] = i
	}
	return "", 0, 0, false
}

// CheckDuplicates is Duplicate as an error: ErrDuplicate naming the shard
// and its places in the shard list, or nil.
func (ix *Index) CheckDuplicates() error {
	url, first, second, ok := Duplicate(ix.Shards)
	if !ok {
		return nil
	}
	return fmt.Errorf("%w: %s at shardlist[%d] and shardlist[%d]", ErrDuplicate, human.Name(url), first, second)
}
