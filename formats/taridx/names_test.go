package taridx

import (
	"encoding/hex"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"
)

// TestDecodeNameConformance decodes the raw name field of every row glzn
// indexed and splits it: stem and extension must be glzn's.
func TestDecodeNameConformance(t *testing.T) {
	root, cases := conformanceRoot(t)
	invalid := 0
	for _, name := range cases {
		c := loadCase(t, root, name)
		for fold, f := range c.Folds {
			for i, d := range f.RowsDebug {
				raw, err := hex.DecodeString(d.NameFieldHex)
				if err != nil {
					t.Fatalf("%s/%s row %d: %v", name, fold, i, err)
				}
				got := DecodeName(raw)
				if got != d.NameField {
					t.Errorf("%s/%s row %d: DecodeName(%x) = %q, want %q", name, fold, i, raw, got, d.NameField)
				}
				stem, ext := SplitName(got, StemBasename)
				if stem != d.Stem || ext != d.Ext {
					t.Errorf("%s/%s row %d: SplitName(%q) = (%q, %q), want (%q, %q)", name, fold, i, got, stem, ext, d.Stem, d.Ext)
				}
				if !utf8.Valid(raw) {
					invalid++
					if name != "invalid_utf8_names" {
						t.Logf("%s/%s row %d: invalid UTF-8 name %x", name, fold, i, raw)
					}
				}
			}
		}
	}
	// invalid_utf8_names: e6 97, e6, ff fe, ed a0 80, c0 af, f0 9f 98 and
	// a character cut at byte 100.
	if invalid < 7 {
		t.Errorf("only %d invalid UTF-8 names checked", invalid)
	}
}

// TestDecodeName: a few of glzn's cases (Python's decode "replace"); the
// decoder's own tests, against CPython, are in internal/pyutf8.
func TestDecodeName(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"e6972e6a7067", "\ufffd.jpg"},   // a 3-byte character cut after 2 bytes: one U+FFFD
		{"eda080", "\ufffd\ufffd\ufffd"}, // a surrogate: three
		{"f09f982e", "\ufffd."},          // a 4-byte character cut after 3 bytes
	} {
		in, err := hex.DecodeString(tt.in)
		if err != nil {
			t.Fatal(err)
		}
		if got := DecodeName(in); got != tt.want {
			t.Errorf("DecodeName(%s) = %+q, want %+q", tt.in, got, tt.want)
		}
	}
}

func TestDecodeNameValidUnchanged(t *testing.T) {
	for _, s := range []string{"", "a.jpg", "日本.JPG", "\U0010ffff", "\x00\x7f", "a\ufffdb"} {
		if got := DecodeName([]byte(s)); got != s {
			t.Errorf("DecodeName(%q) = %q", s, got)
		}
	}
}

func TestSplitName(t *testing.T) {
	tests := []struct {
		name      string
		mode      StemMode
		stem, ext string
	}{
		{"a/b.c.jpg", StemBasename, "b", "c.jpg"},
		{".hidden", StemBasename, "", "hidden"},
		{"x..y", StemBasename, "x", ".y"},
		{"IMG_01.JPG", StemBasename, "IMG_01", "jpg"},
		{"IMG_01.Cls", StemBasename, "IMG_01", "cls"},
		{"noext", StemBasename, "noext", ""},
		{"trailingdot.", StemBasename, "trailingdot", ""},
		{"d.x/y.jpg", StemBasename, "y", "jpg"},
		{"dir/sub/k.seg16.png", StemBasename, "k", "seg16.png"},
		{"my file.jpg", StemBasename, "my file", "jpg"},
		{"spaced.a b", StemBasename, "spaced", "a b"},
		{"MiXeD.JSON", StemBasename, "MiXeD", "json"},
		{"a.\u00c0B", StemBasename, "a", "\u00e0b"},
		{"a.\u0130", StemBasename, "a", "i\u0307"},
		{"", StemBasename, "", ""},
		{"/", StemBasename, "", ""},
		{"dir/", StemBasename, "", ""},
		{"././@LongLink", StemBasename, "@LongLink", ""},
		{"\ufffd.jpg", StemBasename, "\ufffd", "jpg"},

		{"a/b.c.jpg", StemPath, "a/b", "c.jpg"},
		{"d.x/y.JPG", StemPath, "d.x/y", "jpg"},
		{"dir/sub/k.seg16.png", StemPath, "dir/sub/k", "seg16.png"},
		{"./s0001.cls", StemPath, "./s0001", "cls"},
		{"noext", StemPath, "noext", ""},
		{"dir/.hidden", StemPath, "dir/", "hidden"},
		{"dir/", StemPath, "dir/", ""},
		{"IMG_01.JPG", StemPath, "IMG_01", "jpg"},
	}
	for _, tt := range tests {
		stem, ext := SplitName(tt.name, tt.mode)
		if stem != tt.stem || ext != tt.ext {
			t.Errorf("SplitName(%q, %d) = (%q, %q), want (%q, %q)", tt.name, tt.mode, stem, ext, tt.stem, tt.ext)
		}
	}
}

// The expected values were computed with CPython 3.11's str.lower.
func TestPyLower(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", ""},
		{"JPG", "jpg"},
		{"jpg", "jpg"},
		{"Seg16.PNG", "seg16.png"},
		{"\u0130", "i\u0307"}, // İ: two code points
		{"a\u0130b", "ai\u0307b"},
		{"\u0391\u03a3", "\u03b1\u03c2"},             // ΑΣ: final sigma
		{"\u03a3", "\u03c3"},                         // alone: not final
		{"\u0391\u03a3\u0391", "\u03b1\u03c3\u03b1"}, // inside a word
		{"\u0391\u03a3\u03a3", "\u03b1\u03c3\u03c2"}, // only the last
		{"A\u03a3", "a\u03c2"},                       // after a Latin letter
		{"\u0391\u03a31", "\u03b1\u03c21"},           // a digit is not cased
		{"\u0391\u03a3 \u0392", "\u03b1\u03c2 \u03b2"},
		{"\u03a3.\u0391\u03a3", "\u03c3.\u03b1\u03c2"},
		{"JPG.\u0391\u03a3", "jpg.\u03b1\u03c2"},
		{"\u0391\u03a3.JPG", "\u03b1\u03c3.jpg"}, // "." is case-ignorable
		{"\u0391'\u03a3", "\u03b1'\u03c2"},       // so is "'"
		{"\u0391\u2019\u03a3", "\u03b1\u2019\u03c2"},
		{"\u0391\u03a3'", "\u03b1\u03c2'"},
		{"\u0391\u03a3'\u0391", "\u03b1\u03c3'\u03b1"},
		{"\u0391\u03a3\u00ad\u0392", "\u03b1\u03c3\u00ad\u03b2"}, // soft hyphen (Cf)
		{"\u0391\u03a3\u0301", "\u03b1\u03c2\u0301"},             // combining accent (Mn)
		{"\u0391\u0387\u03a3", "\u03b1\u0387\u03c2"},             // ano teleia: Word_Break MidLetter
		{"\u0391\u03a3\u0387\u0392", "\u03b1\u03c3\u0387\u03b2"},
		{"\u00aa\u03a3", "\u00aa\u03c2"}, // ª is cased (Other_Lowercase)
		{"\u2160\u03a3", "\u2170\u03c2"}, // Ⅰ is cased (Other_Uppercase)
		{"\u03a3\u2160", "\u03c3\u2170"},
		{"\u24b6\u03a3", "\u24d0\u03c2"}, // Ⓐ is cased (Other_Uppercase)
		{"\u1fba", "\u1f70"},
		{"\u01c5", "\u01c6"}, // title case letter
		{"\u1e9e", "\u00df"}, // capital sharp s
		{"\u212a", "k"},      // Kelvin sign
	}
	for _, tt := range tests {
		if got := pyLower(tt.in); got != tt.want {
			t.Errorf("pyLower(%+q) = %+q, want %+q", tt.in, got, tt.want)
		}
	}
}

// pySpace is every code point Python's str.split() splits on (CPython
// 3.11: len(("a" + chr(c) + "b").split()) == 2).
var pySpace = []rune{
	0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x1c, 0x1d, 0x1e, 0x1f, 0x20, 0x85, 0xa0,
	0x1680, 0x2000, 0x2001, 0x2002, 0x2003, 0x2004, 0x2005, 0x2006, 0x2007,
	0x2008, 0x2009, 0x200a, 0x2028, 0x2029, 0x202f, 0x205f, 0x3000,
}

func TestHasPySpace(t *testing.T) {
	tests := []struct {
		in   string
		want bool
	}{
		{"", false},
		{"jpg", false},
		{"a b", true},
		{"\x1c", true},
		{"seg\x1f16", true},
		{"\u00a0", true},
		{"x\u3000", true},
		{"\t", true},
		{"\u200b", false}, // zero width space is not white space
		{"\u180e", false}, // no longer white space since Unicode 6.3
		{"\ufeff", false},
		{"\x1b", false},
		{"_", false},
		{"\ufffd", false},
	}
	for _, tt := range tests {
		if got := HasPySpace(tt.in); got != tt.want {
			t.Errorf("HasPySpace(%+q) = %v, want %v", tt.in, got, tt.want)
		}
	}
	space := make(map[rune]bool)
	for _, r := range pySpace {
		space[r] = true
	}
	for r := rune(0); r <= utf8.MaxRune; r++ {
		if !utf8.ValidRune(r) {
			continue
		}
		if got := HasPySpace("a" + string(r) + "b"); got != space[r] {
			t.Errorf("HasPySpace(%U) = %v, want %v", r, got, space[r])
		}
	}
}

func TestKeyHash(t *testing.T) {
	tests := []struct {
		stem string
		want uint64
	}{
		{"", 0xef46db3751d8e999}, // xxh64 of nothing, seed 0
		{"a", 0xd24ec4f1a98c6e5b},
		{"b", 0x78452aa11af39f9b},
		{"c", 0xa3dad144c40657ed},
	}
	for _, tt := range tests {
		if got := KeyHash(tt.stem); got != tt.want {
			t.Errorf("KeyHash(%q) = %016x, want %016x", tt.stem, got, tt.want)
		}
	}
}

func ExampleSplitName() {
	name := DecodeName([]byte("shard/IMG_\xe6\x97.Seg16.PNG"))
	stem, ext := SplitName(name, StemBasename)
	fmt.Printf("%+q %+q\n", stem, ext)
	stem, _ = SplitName(name, StemPath)
	fmt.Printf("%+q %v\n", stem, strings.HasPrefix(stem, "shard/"))
	// Output:
	// "IMG_\ufffd" "seg16.png"
	// "shard/IMG_\ufffd" true
}
