package ratarmount

// Python's rules, as ratarmount's index inherits them from CPython 3
// (tarfile, posixpath, str, urllib.parse, base64, float.__repr__): each
// helper here reproduces one of them for the inputs this package meets.

import (
	"encoding/base64"
	"fmt"
	"math"
	"path"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/itarconv/itarconv/internal/human"
	"github.com/itarconv/itarconv/internal/pyutf8"
)

// splitName gives the (path, name) of a member's row: ratarmount's
// SQLiteIndex.normpath of "/" + name (Python's posixpath.normpath, which
// collapses "//", "." and ".." as path.Clean does for a rooted path), then
// split at the last "/". The root is ("", "").
func splitName(name string) (dir, base string) {
	if cleanRelative(name) { // path.Clean would give "/" + name: no copy
		i := strings.LastIndexByte(name, '/')
		if i < 0 {
			return "", name
		}
		return "/" + name[:i], name[i+1:]
	}
	clean := path.Clean("/" + name)
	if clean == "/" {
		return "", ""
	}
	i := strings.LastIndexByte(clean, '/')
	return clean[:i], clean[i+1:]
}

// cleanRelative tells whether name is a relative path already clean: no
// empty, "." or ".." element, no slash at either end (a dataset's names,
// mostly).
func cleanRelative(name string) bool {
	if name == "" || name[0] == '/' || name[len(name)-1] == '/' {
		return false
	}
	start := 0
	for i := 0; i <= len(name); i++ {
		if i < len(name) && name[i] != '/' {
			continue
		}
		if e := name[start:i]; e == "" || e == "." || e == ".." {
			return false
		}
		start = i + 1
	}
	return true
}

// escapeText is the text SQLite receives for a name. Python decodes a tar
// name as UTF-8 with surrogateescape, so that a byte that is not part of a
// valid UTF-8 sequence becomes a lone surrogate; sqlite3 cannot encode
// those, and ratarmount then stores the name re-decoded with
// backslashreplace: each such byte as the four characters \xNN (lowercase
// hex). Go's and Python's UTF-8 decoders reject the same sequences
// (overlong forms, surrogates, code points past U+10FFFF), so a byte is
// escaped here exactly when Python escapes it.
func escapeText(b string) string {
	if utf8.ValidString(b) {
		return b
	}
	var out strings.Builder
	out.Grow(len(b) + 8)
	for i := 0; i < len(b); {
		r, n := utf8.DecodeRuneInString(b[i:])
		if r == utf8.RuneError && n == 1 {
			fmt.Fprintf(&out, `\x%02x`, b[i])
			i++
			continue
		}
		out.WriteString(b[i : i+n])
		i += n
	}
	return out.String()
}

// unquote is Python's urllib.parse.unquote(s) (UTF-8, errors "replace"),
// which ratarmount applies to the key of a LIBARCHIVE.xattr.* record: each
// run of ASCII characters has its %XX escapes turned into bytes and is
// decoded; other characters are kept.
func unquote(s string) string {
	if !strings.Contains(s, "%") {
		return s
	}
	var out strings.Builder
	for len(s) > 0 {
		n := 0
		for n < len(s) && s[n] < 0x80 {
			n++
		}
		if n == 0 {
			for n < len(s) && s[n] >= 0x80 {
				n++
			}
			out.WriteString(s[:n])
			s = s[n:]
			continue
		}
		out.WriteString(pyutf8.DecodeReplace(unquoteBytes(s[:n])))
		s = s[n:]
	}
	return out.String()
}

// unquoteBytes is Python's urllib.parse.unquote_to_bytes: "%" and two hex
// digits make a byte, anything else stays as it is.
func unquoteBytes(s string) []byte {
	out := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		if s[i] == '%' && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]) {
			v, _ := strconv.ParseUint(s[i+1:i+3], 16, 8)
			out = append(out, byte(v))
			i += 2
			continue
		}
		out = append(out, s[i])
	}
	return out
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

// b64Unpadded matches the values decodeB64 takes: the base64 alphabet,
// padded or not (libarchive writes none).
var b64Unpadded = regexp.MustCompile(`^[A-Za-z0-9+/]*={0,2}$`)

// decodeB64 is ratarmount's decode_unpadded_base64: the value padded with
// "=" to a multiple of 4 characters, then base64-decoded. Values outside
// the plain alphabet, which Python decodes by its own lenient rules or
// rejects with an error that stops ratarmount, are refused.
func decodeB64(s string) ([]byte, error) {
	if !b64Unpadded.MatchString(s) {
		return nil, fmt.Errorf("base64 value %s has characters outside the base64 alphabet", human.Name(s))
	}
	s += strings.Repeat("=", (4-len(s)%4)%4)
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return nil, fmt.Errorf("base64 value %s: %v", human.Name(s), err)
	}
	return b, nil
}

var (
	pyIntSyntax   = regexp.MustCompile(`^[+-]?[0-9]+$`)
	pyFloatSyntax = regexp.MustCompile(`^[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?$`)
)

// paxInt is the value tarfile gives a pax uid, gid or size record: int(v),
// 0 when that raises ValueError (an empty value). Forms Python reads by
// rules of its own (spaces, "_" between digits, non-ASCII digits) are
// refused rather than guessed.
func paxInt(v string) (int64, error) {
	if v == "" {
		return 0, nil
	}
	if !pyIntSyntax.MatchString(v) {
		return 0, fmt.Errorf("%s is not a plain decimal integer", human.Name(v))
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%s: out of range", human.Name(v))
	}
	return n, nil
}

// paxFloat is the value tarfile gives a pax mtime record: float(v), 0 when
// that raises ValueError (an empty value). Go's ParseFloat rounds a
// decimal as Python's float() does (correctly). Infinities, NaN and
// Python-only spellings are refused.
func paxFloat(v string) (float64, error) {
	if v == "" {
		return 0, nil
	}
	if !pyFloatSyntax.MatchString(v) {
		return 0, fmt.Errorf("%s is not a plain decimal number", human.Name(v))
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil || math.IsInf(f, 0) {
		return 0, fmt.Errorf("%s: out of range", human.Name(v))
	}
	return f, nil
}

// octalDigits is the value of b when it is 1 to 21 octal digits and
// nothing else (21 digits fit in 63 bits).
func octalDigits(b []byte) (int64, bool) {
	if len(b) == 0 || len(b) > 21 {
		return 0, false
	}
	var v int64
	for _, c := range b {
		if c < '0' || c > '7' {
			return 0, false
		}
		v = v<<3 | int64(c-'0')
	}
	return v, true
}

// headerNumber is tarfile's nti: a numeric header field, GNU base-256 when
// its first byte is 0x80 or 0xff, else octal digits up to the first NUL
// with surrounding white space ignored.
func headerNumber(field []byte) (int64, error) {
	if len(field) > 0 && field[0] == 0xff {
		// Negative: -(256**(len-1) - n), the data bytes read as a two's
		// complement number, which -1 shifted in front of them gives.
		acc := int64(-1)
		for _, c := range field[1:] {
			if acc < math.MinInt64>>8 {
				return 0, fmt.Errorf("base-256 field %x: out of range", field)
			}
			acc = acc<<8 | int64(c)
		}
		return acc, nil
	}
	if len(field) > 0 && field[0] == 0x80 {
		var acc int64
		for _, c := range field[1:] {
			if acc > math.MaxInt64>>8 {
				return 0, fmt.Errorf("base-256 field %x: out of range", field)
			}
			acc = acc<<8 | int64(c)
		}
		return acc, nil
	}
	if v, ok := octalDigits(cString(field)); ok {
		return v, nil // the usual field: digits, then NULs
	}
	s := strings.Trim(string(cString(field)), " \t\n\r\v\f")
	if s == "" {
		return 0, nil
	}
	n, err := strconv.ParseInt(s, 8, 64)
	if err != nil {
		return 0, fmt.Errorf("field %s is not an octal number", human.Name(s))
	}
	return n, nil
}

// cString returns b up to its first NUL byte, as tarfile's nts does.
func cString(b []byte) []byte {
	for i, c := range b {
		if c == 0 {
			return b[:i]
		}
	}
	return b
}

// pyFloat is Python's repr of a float, which json.dumps writes: the
// shortest digits that read back as the same float (Go's 'e' format with
// precision -1 gives the same digits), positioned as Python does: plain
// with at least one digit after the point ("1577836800.0") when the
// decimal exponent is from -4 to 15, else in exponent form with a sign and
// two digits at least ("1e+16", "1.5e-05"). Non-finite values are
// json.dumps's NaN, Infinity and -Infinity.
func pyFloat(f float64) string {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	case f == 0:
		if math.Signbit(f) {
			return "-0.0"
		}
		return "0.0"
	}
	s := strconv.FormatFloat(f, 'e', -1, 64) // [-]d[.ddd]e±dd
	sign := ""
	if s[0] == '-' {
		sign, s = "-", s[1:]
	}
	mant, exp, _ := strings.Cut(s, "e")
	digits := strings.Replace(mant, ".", "", 1)
	e, _ := strconv.Atoi(exp)
	decpt := e + 1 // the value is 0.<digits> * 10**decpt
	switch {
	case decpt <= -4 || decpt > 16:
		m := digits[:1]
		if len(digits) > 1 {
			m += "." + digits[1:]
		}
		es := "+"
		if e < 0 {
			es, e = "-", -e
		}
		return fmt.Sprintf("%s%se%s%02d", sign, m, es, e)
	case decpt <= 0:
		return sign + "0." + strings.Repeat("0", -decpt) + digits
	case decpt >= len(digits):
		return sign + digits + strings.Repeat("0", decpt-len(digits)) + ".0"
	default:
		return sign + digits[:decpt] + "." + digits[decpt:]
	}
}
