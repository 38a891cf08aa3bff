package pyutf8

import (
	"strings"
	"unicode/utf8"
)

// DecodeReplace is Python's b.decode("utf-8", "replace"). Valid UTF-8 comes
// back unchanged. Each maximal ill-formed subpart (a lead byte and the
// continuation bytes that could still have completed it, as Unicode's
// "U+FFFD substitution of maximal subparts" defines it) becomes one U+FFFD;
// so does each byte that can start no character. Go's utf8.DecodeRune and
// strings.ToValidUTF8 differ: for "\xe6\x97" (a 3-byte character cut after
// 2 bytes) Python gives one U+FFFD, DecodeRune two errors and ToValidUTF8
// one replacement for the whole run of invalid bytes.
func DecodeReplace(b []byte) string {
	if utf8.Valid(b) {
		return string(b)
	}
	var sb strings.Builder
	sb.Grow(len(b) + 8)
	for i := 0; i < len(b); {
		if b[i] < utf8.RuneSelf {
			sb.WriteByte(b[i])
			i++
			continue
		}
		n, ok := sequence(b[i:])
		if ok {
			sb.Write(b[i : i+n])
		} else {
			sb.WriteRune(utf8.RuneError)
		}
		i += n
	}
	return sb.String()
}

// DecodeReplaceString is DecodeReplace of a string's bytes.
func DecodeReplaceString(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	return DecodeReplace([]byte(s))
}

// sequence looks at the multi-byte sequence that starts b (b[0] >= 0x80).
// It returns the length of the whole character and true when b starts
// with a valid one, else the length of the maximal ill-formed subpart to
// replace (at least 1) and false.
func sequence(b []byte) (n int, ok bool) {
	var need int
	// The range of the second byte: narrower than 80..BF after E0 and F0
	// (which would make overlong forms), ED (surrogates) and F4 (past
	// U+10FFFF). Python stops the subpart at a second byte outside it.
	lo, hi := byte(0x80), byte(0xBF)
	switch c := b[0]; {
	case c >= 0xC2 && c <= 0xDF:
		need = 1
	case c == 0xE0:
		need, lo = 2, 0xA0
	case c == 0xED:
		need, hi = 2, 0x9F
	case c >= 0xE1 && c <= 0xEF:
		need = 2
	case c == 0xF0:
		need, lo = 3, 0x90
	case c == 0xF4:
		need, hi = 3, 0x8F
	case c >= 0xF1 && c <= 0xF3:
		need = 3
	default: // a continuation byte, C0, C1 (always overlong) or F5..FF
		return 1, false
	}
	for k := 1; k <= need; k++ {
		if k >= len(b) || b[k] < lo || b[k] > hi {
			return k, false
		}
		lo, hi = 0x80, 0xBF
	}
	return need + 1, true
}
