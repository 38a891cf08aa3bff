package wids

import (
	"cmp"
	"context"
	"crypto/md5"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"unicode/utf8"

	"github.com/itarconv/itarconv/internal/pathguard"
)

// DefaultName is the file widsindex create writes when given no --output.
const DefaultName = "shardindex.json"

// Kind and Version are the index's "__kind__" and "wids_version".
const (
	Kind    = "wids-shard-index-v1"
	Version = 1
)

var (
	// ErrFormat: bytes that are no index the loader reads.
	ErrFormat = errors.New("not a wids shard index")
	// ErrName: a member name the loader cannot read (it fails on the
	// shard): a name field that is not UTF-8, or a name with a dot and a
	// line break before its end.
	ErrName = errors.New("a tar member name wids cannot read")
	// ErrHeader: a header block the loader cannot read or reads otherwise
	// than the archive is laid out: a type flag or size field it cannot
	// decode, or a size field that is not the size of what follows the
	// block (a pax size record, a directory with a size, sparse extension
	// blocks).
	ErrHeader = errors.New("a tar header wids reads otherwise")
	// ErrEmpty: a file of no byte, which the loader cannot map into memory
	// (widsindex create fails on it).
	ErrEmpty = errors.New("an empty file: wids cannot map it")
	// ErrURL: a shard path the loader would not read back as that file
	// from a URL in the index.
	ErrURL = errors.New("a path wids would misread as a URL")
)

// Shard is one entry of the index's shard list.
type Shard struct {
	URL      string // relative to the index's directory (see URL), or absolute
	MD5Sum   string // lowercase hex MD5 of the file; "" leaves it out
	NSamples int
	FileSize int64 // negative leaves it out (the tool always writes it)
}

// Index is a shard index: its shards, and the name, base and description
// `widsindex create` writes after them when it has them ("" leaves each
// out).
type Index struct {
	Name string
	// Base is written by the tool's --base. The loader of the tool's
	// version reads it only in the indexes another index's "datasets"
	// names: an index's own shard URLs are resolved against its directory.
	Base   string
	Info   string // the tool's --info: the text of a file
	Shards []Shard
}

// New is the index widsindex create writes over shards given to it in
// their sorted order (as a shell glob lists them): its shards sorted by
// URL, named after the first one.
func New(shards []Shard) *Index {
	s := slices.Clone(shards)
	sortShards(s)
	ix := &Index{Shards: s}
	if len(s) > 0 {
		ix.Name = ShortName(s[0].URL)
	}
	return ix
}

// Bytes is the index as widsindex create writes it: JSON indented by two
// spaces, non-ASCII characters escaped (bytes that are not UTF-8 as the
// lone surrogates \udc80-\udcff, as Python reads them from a command
// line), no newline at the end. Shards are written in the tool's order,
// by URL (code point by code point), whatever their order in ix.
func (ix *Index) Bytes() []byte {
	shards := slices.Clone(ix.Shards)
	sortShards(shards)
	b := make([]byte, 0, 128+160*len(shards))
	b = append(b, "{\n  \"__kind__\": "...)
	b = appendString(b, Kind)
	b = append(b, ",\n  \"wids_version\": "...)
	b = strconv.AppendInt(b, Version, 10)
	b = append(b, ",\n  \"shardlist\": ["...)
	for i, s := range shards {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, "\n    {\n      \"url\": "...)
		b = appendString(b, s.URL)
		if s.MD5Sum != "" {
			b = append(b, ",\n      \"md5sum\": "...)
			b = appendString(b, s.MD5Sum)
		}
		b = append(b, ",\n      \"nsamples\": "...)
		b = strconv.AppendInt(b, int64(s.NSamples), 10)
		if s.FileSize >= 0 {
			b = append(b, ",\n      \"filesize\": "...)
			b = strconv.AppendInt(b, s.FileSize, 10)
		}
		b = append(b, "\n    }"...)
	}
	if len(shards) > 0 {
		b = append(b, "\n  "...)
	}
	b = append(b, ']')
	for _, f := range []struct{ key, value string }{{"name", ix.Name}, {"base", ix.Base}, {"info", ix.Info}} {
		if f.value != "" {
			b = append(b, ",\n  \""...)
			b = append(b, f.key...)
			b = append(b, "\": "...)
			b = appendString(b, f.value)
		}
	}
	return append(b, "\n}"...)
}

// FileMD5 is FileMD5Context without cancellation.
func FileMD5(path string) (string, error) {
	return FileMD5Context(context.Background(), path)
}

// FileMD5Context is the MD5 sum of the file at path, in the form of
// Shard.MD5Sum. Computing it reads every byte of the shard (the loader of
// the tool's version does not check it); it stops when ctx is cancelled.
// The file must be regular: a FIFO is refused (pathguard.ErrNotRegular),
// not waited on.
func FileMD5Context(ctx context.Context, path string) (string, error) {
	f, err := pathguard.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := md5.New()
	buf := make([]byte, 1<<20)
	for {
		if err := ctx.Err(); err != nil {
			return "", fmt.Errorf("md5 of %s: %w", path, err)
		}
		n, err := f.Read(buf)
		h.Write(buf[:n])
		if err == io.EOF {
			break
		}
		if err != nil {
			return "", fmt.Errorf("md5 of %s: %w", path, err)
		}
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// sortShards orders shards as the tool does: a stable sort by URL, the
// URLs compared as Python compares its strings.
func sortShards(s []Shard) {
	slices.SortStableFunc(s, func(a, b Shard) int { return comparePy(a.URL, b.URL) })
}

// pyRune decodes the first character of s as Python holds it: a byte that
// is not part of valid UTF-8 is the lone surrogate U+DC80+byte, as
// Python's surrogateescape decodes file names and command lines.
func pyRune(s string) (rune, int) {
	r, n := utf8.DecodeRuneInString(s)
	if r == utf8.RuneError && n == 1 {
		return 0xdc00 + rune(s[0]), 1
	}
	return r, n
}

// comparePy compares two strings code point by code point, as Python
// compares the strings it decoded them into. For valid UTF-8 that is the
// byte order; a byte that is not UTF-8 sorts as its surrogate.
func comparePy(a, b string) int {
	if utf8.ValidString(a) && utf8.ValidString(b) {
		return cmp.Compare(a, b)
	}
	for a != "" && b != "" {
		ra, na := pyRune(a)
		rb, nb := pyRune(b)
		if ra != rb {
			return cmp.Compare(ra, rb)
		}
		a, b = a[na:], b[nb:]
	}
	return cmp.Compare(len(a), len(b))
}

const hexDigits = "0123456789abcdef"

// appendString appends s as a JSON string the way Python's json module
// writes it with ensure_ascii: printable ASCII as it is (but for '"' and
// '\\'), the usual short escapes, and every other character as \uXXXX in
// lowercase hex, those past U+FFFF as a surrogate pair.
func appendString(b []byte, s string) []byte {
	b = append(b, '"')
	for s != "" {
		c := s[0]
		if c >= 0x20 && c < 0x7f && c != '"' && c != '\\' {
			b = append(b, c)
			s = s[1:]
			continue
		}
		r, n := pyRune(s)
		s = s[n:]
		switch r {
		case '"', '\\':
			b = append(b, '\\', byte(r))
		case '\n':
			b = append(b, '\\', 'n')
		case '\r':
			b = append(b, '\\', 'r')
		case '\t':
			b = append(b, '\\', 't')
		case '\b':
			b = append(b, '\\', 'b')
		case '\f':
			b = append(b, '\\', 'f')
		default:
			if r > 0xffff {
				r -= 0x10000
				b = appendU(b, 0xd800+(r>>10))
				r = 0xdc00 + r&0x3ff
			}
			b = appendU(b, r)
		}
	}
	return append(b, '"')
}

func appendU(b []byte, r rune) []byte {
	return append(b, '\\', 'u', hexDigits[r>>12&15], hexDigits[r>>8&15], hexDigits[r>>4&15], hexDigits[r&15])
}
