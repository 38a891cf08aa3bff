package ratarmount

import (
	"database/sql"
	"encoding/json"
	"math"
	"math/rand/v2"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestPyFloat: repr() of these floats, as CPython 3.11 prints them.
func TestPyFloat(t *testing.T) {
	for _, tt := range []struct {
		bits uint64
		repr string
	}{
		{0x3fb999999999999a, "0.1"},
		{0x4341c37937e08000, "1e+16"},
		{0x430c6bf526340000, "1000000000000000.0"},
		{0x4341c37937e07fff, "9999999999999998.0"},
		{0x3ee4f8b588e368f1, "1e-05"},
		{0x3f1a36e2eb1c432d, "0.0001"},
		{0x3f202e4b6ce5dc68, "0.00012345"},
		{0x437b69b4ba630f35, "1.2345678901234568e+17"},
		{0x7e41eb2d66005835, "1.5e+300"},
		{0x0000000000000001, "5e-324"},
		{0x41dac17c57938cf4, "1795551582.305478"},
		{0x8000000000000000, "-0.0"},
		{0x0000000000000000, "0.0"},
		{0x4480f0cf064dd592, "1e+22"},
		{0x4340000000000001, "9007199254740994.0"},
		{0x43118b54f22aeb03, "1234567890123456.8"},
		{0xbff8000000000000, "-1.5"},
		{0x41d782f84007e6b7, "1577836800.1234567"},
		{0x4059000000000000, "100.0"},
		{0x54b249ad2594c37d, "1e+100"},
		{0x3df12e0be826d695, "2.5e-10"},
		{0x3fd3333333333334, "0.30000000000000004"},
		{0x7fefffffffffffff, "1.7976931348623157e+308"},
		{0x7ff0000000000000, "Infinity"},
		{0xfff0000000000000, "-Infinity"},
		{0x7ff8000000000001, "NaN"},
	} {
		if got := pyFloat(math.Float64frombits(tt.bits)); got != tt.repr {
			t.Errorf("pyFloat(%#x) = %s, want %s", tt.bits, got, tt.repr)
		}
	}
}

// TestStatTimeOracle: the st_atime, st_ctime and st_mtime ratarmount
// wrote in the testdata indexes are, as text, what statTime and pyFloat
// make of the st_*_ns integers beside them: the float conversion CPython's
// os.stat does and the repr json.dumps writes.
func TestStatTimeOracle(t *testing.T) {
	n := 0
	for _, shard := range shards(t) {
		ix := IndexPath(shard)
		db, err := sql.Open("sqlite", "file:"+ix+"?mode=ro")
		if err != nil {
			t.Fatal(err)
		}
		var s string
		err = db.QueryRow(`SELECT value FROM metadata WHERE key = 'tarstats'`).Scan(&s)
		db.Close()
		if err != nil {
			continue // no index for this shard
		}
		dec := json.NewDecoder(strings.NewReader(s))
		dec.UseNumber()
		var m map[string]json.Number
		if err := dec.Decode(&m); err != nil {
			t.Fatal(err)
		}
		for _, k := range []string{"st_atime", "st_ctime", "st_mtime"} {
			ns, err := strconv.ParseInt(string(m[k+"_ns"]), 10, 64)
			if err != nil {
				t.Fatalf("%s: %s_ns %q", ix, k, m[k+"_ns"])
			}
			if got := pyFloat(statTime(ns/1e9, ns%1e9)); got != string(m[k]) {
				t.Errorf("%s: %s from %d ns is %s, ratarmount wrote %s", ix, k, ns, got, m[k])
			}
			n++
		}
	}
	if n < 28*3 {
		t.Errorf("only %d times compared", n)
	}
}

func TestSplitName(t *testing.T) {
	for _, tt := range []struct{ name, dir, base string }{
		{"a.jpg", "", "a.jpg"},
		{"a/b/c.jpg", "/a/b", "c.jpg"},
		{"./", "", ""},
		{".", "", ""},
		{"", "", ""},
		{"/", "", ""},
		{"dir/", "", "dir"},
		{"./dot/./slash//name.txt", "/dot/slash", "name.txt"},
		{"../../etc/passwd", "/etc", "passwd"},
		{"/abs/path", "/abs", "path"},
		{"a/../b", "", "b"},
		{"//two", "", "two"},
		{"...", "", "..."},
	} {
		if d, b := splitName(tt.name); d != tt.dir || b != tt.base {
			t.Errorf("splitName(%q) = %q, %q; want %q, %q", tt.name, d, b, tt.dir, tt.base)
		}
	}
}

func TestEscapeText(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"plain", "plain"},
		{"café", "café"},
		{"bad\xff.txt", `bad\xff.txt`},
		{"d\xe9r", `d\xe9r`},
		{"trunc\xe2\x82.txt", `trunc\xe2\x82.txt`},
		{"\xed\xa0\x80", `\xed\xa0\x80`},         // an encoded surrogate
		{"\xc0\xaf", `\xc0\xaf`},                 // overlong "/"
		{"\xf4\x90\x80\x80", `\xf4\x90\x80\x80`}, // past U+10FFFF
		{"\xe2\x82\xe2\x82\xac", `\xe2\x82€`},
		{"\xef\xbf\xbd", "\ufffd"}, // U+FFFD itself is valid
	} {
		if got := escapeText(tt.in); got != tt.want {
			t.Errorf("escapeText(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// TestUnquote: urllib.parse.unquote's results, from CPython 3.11.
func TestUnquote(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"user.comment", "user.comment"},
		{"user.%41b", "user.Ab"},
		{"a%3Db%25", "a=b%"},
		{"%zz%4", "%zz%4"},
		{"%C3%A9", "é"},
		{"%C3", "\ufffd"},
		{"%E2%82a", "\ufffda"},              // one U+FFFD for the truncated sequence
		{"%E2%82%E2%82%AC", "\ufffd€"},      // then a valid one
		{"%ff%fe", "\ufffd\ufffd"},          // two invalid start bytes
		{"%ED%A0%80", "\ufffd\ufffd\ufffd"}, // a surrogate: ED, then A0 and 80 alone
		{"é%41", "éA"},
		{"%C3é", "\ufffdé"}, // the escape and the character are separate runs
	} {
		if got := unquote(tt.in); got != tt.want {
			t.Errorf("unquote(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestDecodeB64(t *testing.T) {
	for _, tt := range []struct {
		in, want string
		ok       bool
	}{
		{"aGVsbG8", "hello", true},
		{"aGVsbG8=", "hello", true},
		{"d29ybGQ=", "world", true},
		{"", "", true},
		{"YQ", "a", true},
		{"Y", "", false},        // Python: "number of data characters cannot be 1 more than a multiple of 4"
		{"aGVs bG8", "", false}, // Python: "Incorrect padding"
		{"aGVs\nbG8", "", false},
		{"a-_b", "", false}, // the URL-safe alphabet: Python too
	} {
		got, err := decodeB64(tt.in)
		if (err == nil) != tt.ok || (tt.ok && string(got) != tt.want) {
			t.Errorf("decodeB64(%q) = %q, %v", tt.in, got, err)
		}
	}
}

func TestHeaderNumber(t *testing.T) {
	for _, tt := range []struct {
		field string
		want  int64
		ok    bool
	}{
		{"0000644\x00", 0o644, true},
		{"    644 ", 0o644, true},
		{"\x00\x00\x00\x00", 0, true},
		{"00000000012\x00", 10, true},
		{"0100644\x00", 0o100644, true},
		{"\x80\x00\x00\x00\x00\x00\x01\x00", 256, true},
		{"\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff", -1, true},
		{"\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xfe\x00", -512, true},
		{"\xff\x00\x00\x00\x00\x00\x00\x01", 1 - 1<<56, true},
		{"12a\x00", 0, false},
		{"8\x00", 0, false},
	} {
		got, err := headerNumber([]byte(tt.field))
		if (err == nil) != tt.ok || got != tt.want {
			t.Errorf("headerNumber(%q) = %d, %v; want %d", tt.field, got, err, tt.want)
		}
	}
}

func TestPaxNumbers(t *testing.T) {
	for _, tt := range []struct {
		v    string
		want float64
		ok   bool
	}{
		{"", 0, true}, {"1577836800", 1577836800, true}, {"1577836800.5", 1577836800.5, true},
		{"-1.5", -1.5, true}, {".5", 0.5, true}, {"1e3", 1000, true},
		{"inf", 0, false}, {"nan", 0, false}, {"1_0", 0, false}, {" 1", 0, false}, {"0x10", 0, false},
	} {
		got, err := paxFloat(tt.v)
		if (err == nil) != tt.ok || got != tt.want {
			t.Errorf("paxFloat(%q) = %v, %v", tt.v, got, err)
		}
	}
	for _, tt := range []struct {
		v    string
		want int64
		ok   bool
	}{
		{"", 0, true}, {"42", 42, true}, {"+7", 7, true}, {"-3", -3, true}, {"3000000000", 3000000000, true},
		{"1.5", 0, false}, {"99999999999999999999", 0, false}, {"1_000", 0, false},
	} {
		got, err := paxInt(tt.v)
		if (err == nil) != tt.ok || got != tt.want {
			t.Errorf("paxInt(%q) = %v, %v", tt.v, got, err)
		}
	}
}

func TestIndexPath(t *testing.T) {
	if got := IndexPath(filepath.Join("d", "train_0000.tar")); got != filepath.Join("d", "train_0000.tar.index.sqlite") {
		t.Errorf("IndexPath = %s", got)
	}
}

// TestSplitNameClean: names split without path.Clean (already clean and
// relative) split as path.Clean("/" + name) splits them, over names made
// of the elements that matter ("", ".", "..", a dot inside a name) and
// slashes anywhere.
func TestSplitNameClean(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	elems := []string{"", ".", "..", "a", "b.jpg", ".hidden", "x..y", "…"}
	fast := 0
	for range 20000 {
		var b strings.Builder
		for k := rng.IntN(5); k >= 0; k-- {
			b.WriteString(elems[rng.IntN(len(elems))])
			if k > 0 || rng.IntN(4) == 0 {
				b.WriteByte('/')
			}
		}
		name := b.String()
		if rng.IntN(5) == 0 {
			name = "/" + name
		}
		clean := path.Clean("/" + name)
		wantDir, wantBase := "", ""
		if clean != "/" {
			i := strings.LastIndexByte(clean, '/')
			wantDir, wantBase = clean[:i], clean[i+1:]
		}
		if cleanRelative(name) {
			fast++
		}
		if dir, base := splitName(name); dir != wantDir || base != wantBase {
			t.Fatalf("splitName(%q) = %q, %q; want %q, %q", name, dir, base, wantDir, wantBase)
		}
	}
	if fast < 2000 {
		t.Fatalf("only %d names took the path without path.Clean", fast)
	}
}
