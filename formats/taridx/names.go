package taridx

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/cespare/xxhash/v2"

	"github.com/itarconv/itarconv/internal/pyutf8"
)

// DecodeName turns a member name's bytes into text the way glzn does
// (Python's bytes.decode("utf-8", "replace"), see pyutf8.DecodeReplace), so
// that stems, and therefore key hashes, agree with indexes glzn wrote.
func DecodeName(b []byte) string { return pyutf8.DecodeReplace(b) }

// StemMode chooses what part of a member name is its stem.
type StemMode uint8

const (
	// StemBasename: the basename before its first dot (glzn's rule).
	StemBasename StemMode = iota
	// StemPath: the whole name before the basename's first dot, directory
	// included, as WebDataset groups a sample's files.
	StemPath
)

// SplitName splits a decoded member name into stem and extension: the
// extension is what follows the basename's first dot, lowercased; a name
// without a dot has an empty extension. "a/b.c.jpg" -> ("b", "c.jpg").
func SplitName(name string, mode StemMode) (stem, ext string) {
	slash := strings.LastIndexByte(name, '/')
	base := name[slash+1:]
	dot := strings.IndexByte(base, '.')
	if dot < 0 {
		stem = base
	} else {
		stem, ext = base[:dot], pyLower(base[dot+1:])
	}
	if mode == StemPath {
		stem = name[:slash+1] + stem
	}
	return stem, ext
}

// pyLower lowercases like Python's str.lower: full case mapping, so U+0130
// becomes "i̇" and a word-final capital sigma becomes "ς".
func pyLower(s string) string {
	ascii := true
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= utf8.RuneSelf {
			ascii = false
			break
		}
	}
	if ascii {
		return strings.ToLower(s)
	}
	var sb strings.Builder
	rs := []rune(s)
	for i, r := range rs {
		switch r {
		case 0x130: // LATIN CAPITAL LETTER I WITH DOT ABOVE
			sb.WriteString("i\u0307")
		case 0x3a3: // GREEK CAPITAL LETTER SIGMA
			if finalSigma(rs, i) {
				sb.WriteRune(0x3c2)
			} else {
				sb.WriteRune(0x3c3)
			}
		default:
			sb.WriteRune(unicode.ToLower(r))
		}
	}
	return sb.String()
}

// finalSigma applies Unicode's Final_Sigma condition: a cased letter before
// the sigma and none after it, skipping case-ignorable characters.
func finalSigma(rs []rune, i int) bool {
	before := false
	for j := i - 1; j >= 0; j-- {
		if caseIgnorable(rs[j]) {
			continue
		}
		before = cased(rs[j])
		break
	}
	if !before {
		return false
	}
	for j := i + 1; j < len(rs); j++ {
		if caseIgnorable(rs[j]) {
			continue
		}
		return !cased(rs[j])
	}
	return true
}

// cased is Unicode's Cased property: Lu, Ll, Lt, Other_Lowercase (such as
// U+00AA) and Other_Uppercase (such as U+2160).
func cased(r rune) bool {
	return unicode.IsUpper(r) || unicode.IsLower(r) || unicode.IsTitle(r) ||
		unicode.In(r, unicode.Other_Lowercase, unicode.Other_Uppercase)
}

// caseIgnorable is Unicode's Case_Ignorable property: Mn, Me, Cf, Lm, Sk and
// the characters whose Word_Break is MidLetter, MidNumLet or Single_Quote.
func caseIgnorable(r rune) bool {
	switch r {
	case '\'', // Single_Quote
		':', 0xb7, 0x387, 0x55f, 0x5f4, 0x2027, 0xfe13, 0xfe55, 0xff1a, // MidLetter
		'.', 0x2018, 0x2019, 0x2024, 0xfe52, 0xff07, 0xff0e: // MidNumLet
		return true
	}
	return unicode.In(r, unicode.Mn, unicode.Me, unicode.Cf, unicode.Lm, unicode.Sk)
}

// HasPySpace reports whether s contains a character that Python's
// str.split() splits on. glzn's loader splits the extension block that way,
// so an index holding such an extension cannot be loaded by glzn.
func HasPySpace(s string) bool {
	for _, r := range s {
		if unicode.IsSpace(r) || (r >= 0x1c && r <= 0x1f) {
			return true
		}
	}
	return false
}

// ExtVerdict says whether a regular member gets a row in an index of the
// default mode, by its extension.
type ExtVerdict int

const (
	// ExtUsable: the member gets a row.
	ExtUsable ExtVerdict = iota
	// ExtMissing: the name has no extension, so no sample part to key.
	ExtMissing
	// ExtSpace: the extension holds white space, which glzn's loader
	// cannot read back from the extension block (see HasPySpace).
	ExtSpace
)

// JudgeExt applies the default mode's rule to an extension (as SplitName
// gives it): the one rule an indexer and a verifier of such an index share.
func JudgeExt(ext string) ExtVerdict {
	switch {
	case ext == "":
		return ExtMissing
	case HasPySpace(ext):
		return ExtSpace
	}
	return ExtUsable
}

// KeyHash is the row key of a stem: xxh64 of its UTF-8 bytes, seed 0.
func KeyHash(stem string) uint64 { return xxhash.Sum64String(stem) }
