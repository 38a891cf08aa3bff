package pyutf8

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"os/exec"
	"strings"
	"testing"
	"unicode/utf8"
)

// The expected values were computed with CPython 3.11:
// bytes.fromhex(in).decode("utf-8", "replace"). They are the cases the two
// copies this package replaces (taridx.DecodeName, ratarmount's
// decodeReplace) were tested with.
var decodeTests = []struct {
	in   string // hex
	want string
}{
	{"", ""},
	{"616263", "abc"},
	{"e697", "\ufffd"},                       // a 3-byte character cut after 2 bytes
	{"e6972e6a7067", "\ufffd.jpg"},           // ... before a dot
	{"fffe", "\ufffd\ufffd"},                 // never valid: one each
	{"eda080", "\ufffd\ufffd\ufffd"},         // surrogate: ed takes only 80..9f
	{"edbfbf", "\ufffd\ufffd\ufffd"},         // surrogate
	{"ed9fbf", "\ud7ff"},                     // the last character before them
	{"c0af", "\ufffd\ufffd"},                 // overlong '/'
	{"c1bf", "\ufffd\ufffd"},                 // overlong
	{"e080", "\ufffd\ufffd"},                 // e0 takes only a0..bf
	{"e0a0", "\ufffd"},                       // valid prefix, cut
	{"e080af", "\ufffd\ufffd\ufffd"},         // overlong 3-byte
	{"f09f98", "\ufffd"},                     // a 4-byte character cut after 3 bytes
	{"f09f982e", "\ufffd."},                  // ... before a dot
	{"f08f8080", "\ufffd\ufffd\ufffd\ufffd"}, // f0 takes only 90..bf
	{"f0908080", "\U00010000"},               // the first 4-byte character
	{"f490", "\ufffd\ufffd"},                 // f4 takes only 80..8f
	{"f4908080", "\ufffd\ufffd\ufffd\ufffd"}, // past U+10FFFF
	{"f48fbfbf", "\U0010ffff"},               // U+10FFFF
	{"f5808080", "\ufffd\ufffd\ufffd\ufffd"}, // f5..ff never start a character
	{"f8", "\ufffd"},
	{"80", "\ufffd"},                     // lone continuation byte
	{"8080", "\ufffd\ufffd"},             // one each
	{"c2", "\ufffd"},                     // cut at the end
	{"61e6", "a\ufffd"},                  // cut at the end
	{"61f09f", "a\ufffd"},                // cut at the end
	{"61e69762", "a\ufffdb"},             // cut before ASCII
	{"e697e697a5", "\ufffd\u65e5"},       // cut before a whole character
	{"e6e697a5", "\ufffd\u65e5"},         // cut after 1 byte
	{"c280", "\u0080"},                   // U+0080
	{"efbfbd", "\ufffd"},                 // a real U+FFFD
	{"e697a5", "\u65e5"},                 // valid
	{"00", "\x00"},                       // NUL is valid
	{"7f80c3", "\x7f\ufffd\ufffd"},       // DEL, lone continuation, cut
	{"f09f98e697a5", "\ufffd\u65e5"},     // 3 of 4 bytes, then a character
	{"f0e697a5", "\ufffd\u65e5"},         // 1 of 4 bytes, then a character
	{"e6bf", "\ufffd"},                   // 2 of 3 bytes at the end
	{"ee80", "\ufffd"},                   // private use, cut
	{"efbf", "\ufffd"},                   // cut
	{"dfbf", "\u07ff"},                   // last 2-byte character
	{"6162e697a5e697", "ab\u65e5\ufffd"}, // cut at the end of a long name
	{"c3a92fe6", "\u00e9/\ufffd"},        // after a slash
	{"c3", "\ufffd"},
	{"c3c3a9", "\ufffd\u00e9"},         // cut by the start of another
	{"e1808080", "\u1000\ufffd"},       // valid, then a lone continuation
	{"f1808080f1", "\U00040000\ufffd"}, // valid 4-byte, then cut
	{"fe2e4a5047", "\ufffd.JPG"},       // case is the caller's business
	{"7e2f2e2f404c6f6e674c696e6b", "~/./@LongLink"},
	{"e28261", "\ufffda"},          // urllib.parse.unquote("%E2%82a")
	{"e282e282ac", "\ufffd\u20ac"}, // a cut sequence, then a valid one
	{"ed", "\ufffd"},               // a surrogate's lead alone
	{"eda0", "\ufffd\ufffd"},       // ... with a second byte it refuses
	{"f4", "\ufffd"},               // a lead that takes 80..8f, cut
	{"f48f", "\ufffd"},
	{"f48fbf", "\ufffd"},
	{"c2c2", "\ufffd\ufffd"},
	{"ff", "\ufffd"},
}

func TestDecodeReplace(t *testing.T) {
	for _, tt := range decodeTests {
		in, err := hex.DecodeString(tt.in)
		if err != nil {
			t.Fatal(err)
		}
		if got := DecodeReplace(in); got != tt.want {
			t.Errorf("DecodeReplace(%s) = %+q, want %+q", tt.in, got, tt.want)
		}
		if got := DecodeReplaceString(string(in)); got != tt.want {
			t.Errorf("DecodeReplaceString(%s) = %+q, want %+q", tt.in, got, tt.want)
		}
	}
}

func TestDecodeReplaceValidUnchanged(t *testing.T) {
	for _, s := range []string{"", "a.jpg", "日本.JPG", "\U0010ffff", "\x00\x7f", "a\ufffdb"} {
		if got := DecodeReplace([]byte(s)); got != s {
			t.Errorf("DecodeReplace(%q) = %q", s, got)
		}
	}
}

// TestDecodeReplaceReference compares DecodeReplace with reference, built
// another way, on every string of up to 2 bytes and on 3- and 4-byte
// strings made of the bytes where the rules change.
func TestDecodeReplaceReference(t *testing.T) {
	for _, b := range probes() {
		if got, want := DecodeReplace(b), reference(b); got != want {
			t.Errorf("DecodeReplace(%x) = %+q, reference %+q", b, got, want)
		}
	}
}

// TestDecodeReplacePython compares DecodeReplace with python3 itself on the
// same strings, when python3 is installed.
func TestDecodeReplacePython(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 not found")
	}
	in := probes()
	var hexes strings.Builder
	for _, b := range in {
		hexes.WriteString(hex.EncodeToString(b))
		hexes.WriteByte('\n')
	}
	const script = `import sys
for line in sys.stdin:
    sys.stdout.write(bytes.fromhex(line.strip()).decode("utf-8", "replace").encode("utf-8").hex() + "\n")
`
	cmd := exec.CommandContext(t.Context(), py, "-c", script)
	cmd.Stdin = strings.NewReader(hexes.String())
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("python3: %v", err)
	}
	sc := bufio.NewScanner(bytes.NewReader(out))
	n := 0
	for ; sc.Scan(); n++ {
		if n >= len(in) {
			t.Fatalf("python3 gave more than %d lines", len(in))
		}
		want, err := hex.DecodeString(sc.Text())
		if err != nil {
			t.Fatalf("python3 line %d: %v", n+1, err)
		}
		if got := DecodeReplace(in[n]); got != string(want) {
			t.Errorf("DecodeReplace(%x) = %+q, python3 %+q", in[n], got, want)
		}
	}
	if n != len(in) {
		t.Fatalf("python3 gave %d lines for %d strings", n, len(in))
	}
}

func FuzzDecodeReplace(f *testing.F) {
	for _, tt := range decodeTests {
		b, _ := hex.DecodeString(tt.in)
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		got := DecodeReplace(b)
		if !utf8.ValidString(got) {
			t.Fatalf("DecodeReplace(%x) = %+q is not valid UTF-8", b, got)
		}
		if utf8.Valid(b) && got != string(b) {
			t.Fatalf("DecodeReplace(%x) changed valid UTF-8", b)
		}
		if want := reference(b); got != want {
			t.Fatalf("DecodeReplace(%x) = %+q, reference %+q", b, got, want)
		}
	})
}

// probes are every string of up to 2 bytes, and the 3- and 4-byte strings
// of bytes at the edges of UTF-8's ranges.
func probes() [][]byte {
	var out [][]byte
	out = append(out, []byte{})
	for a := range 256 {
		out = append(out, []byte{byte(a)})
		for b := range 256 {
			out = append(out, []byte{byte(a), byte(b)})
		}
	}
	lead := []byte{0x41, 0x80, 0xC0, 0xC1, 0xC2, 0xDF, 0xE0, 0xE1, 0xEC, 0xED, 0xEE, 0xEF, 0xF0, 0xF1, 0xF3, 0xF4, 0xF5, 0xFF}
	next := []byte{0x00, 0x41, 0x7F, 0x80, 0x8F, 0x90, 0x9F, 0xA0, 0xBF, 0xC0, 0xC2, 0xE0, 0xF0, 0xFF}
	for _, a := range lead {
		for _, b := range next {
			for _, c := range next {
				out = append(out, []byte{a, b, c})
				for _, d := range next {
					out = append(out, []byte{a, b, c, d})
				}
			}
		}
	}
	return out
}

// reference decodes as Python does, by another road: at each invalid
// position it replaces the longest run of bytes (at most 3) that some
// continuation bytes would still complete into a valid character, which
// Go's validator judges. A prefix of a character can always be completed
// either with 80s or with BFs (the bounds of every continuation byte but
// the second, whose narrower ranges contain 80 or BF).
func reference(b []byte) string {
	var sb strings.Builder
	for i := 0; i < len(b); {
		r, n := utf8.DecodeRune(b[i:])
		if r != utf8.RuneError || n > 1 {
			sb.Write(b[i : i+n])
			i += n
			continue
		}
		k := 1
		for m := 2; m <= 3 && i+m <= len(b); m++ {
			if completable(b[i : i+m]) {
				k = m
			} else {
				break
			}
		}
		sb.WriteRune(utf8.RuneError)
		i += k
	}
	return sb.String()
}

// completable reports whether p is a proper prefix of a valid UTF-8
// character.
func completable(p []byte) bool {
	size := 0
	switch c := p[0]; {
	case c&0xE0 == 0xC0:
		size = 2
	case c&0xF0 == 0xE0:
		size = 3
	case c&0xF8 == 0xF0:
		size = 4
	}
	if len(p) >= size {
		return false
	}
	for _, fill := range []byte{0x80, 0xBF} {
		q := append([]byte(nil), p...)
		for len(q) < size {
			q = append(q, fill)
		}
		if utf8.FullRune(q) {
			if r, n := utf8.DecodeRune(q); r != utf8.RuneError && n == size {
				return true
			}
		}
	}
	return false
}
