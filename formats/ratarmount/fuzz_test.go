package ratarmount

import (
	"bytes"
	"errors"
	"io"
	"math"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/itarconv/itarconv/formats/tarfile"
)

// FuzzBuild scans arbitrary archives into a Builder and checks the rows it
// would write (without SQLite, which the oracle tests cover): text that
// SQLite takes as it is (valid UTF-8), paths as ratarmount normalizes
// them, a primary key (path, name, offsetheader) that holds, generated
// rows for parents only, and xattrs that point at member rows.
func FuzzBuild(f *testing.F) {
	for _, s := range shards(f) {
		data, err := os.ReadFile(s)
		if err != nil {
			f.Fatal(err)
		}
		if len(data) <= 32<<10 {
			f.Add(data)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		b := &Builder{Archive: bytes.NewReader(data)}
		s := tarfile.NewScanner(bytes.NewReader(data), int64(len(data)), "", tarfile.Options{})
		for {
			m, err := s.Next()
			if err != nil {
				if err != io.EOF {
					return
				}
				break
			}
			if err := b.Add(m); err != nil {
				if !errors.Is(err, ErrUnsupported) && !strings.Contains(err.Error(), "sparse map") {
					t.Fatalf("Add: %v", err)
				}
				return
			}
		}
		ix, err := b.Index(fakeInfo{size: int64(len(data))})
		if errors.Is(err, ErrEmpty) {
			if b.Len() != 0 {
				t.Fatalf("ErrEmpty with %d rows", b.Len())
			}
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		type key struct {
			path, name string
			oh         int64
		}
		seen := map[key]bool{}
		members := map[int64]bool{}
		dirs := map[string]bool{"": true}
		for i, r := range ix.Files {
			for _, s := range []string{r.Path, r.Name, r.Linkname} {
				if !utf8.ValidString(s) {
					t.Fatalf("row %d: %q is not UTF-8", i, s)
				}
			}
			if r.Path != "" && (!strings.HasPrefix(r.Path, "/") || strings.HasSuffix(r.Path, "/") ||
				strings.Contains(r.Path, "//") || strings.Contains(r.Path+"/", "/./") || strings.Contains(r.Path+"/", "/../")) {
				t.Fatalf("row %d: path %q", i, r.Path)
			}
			if strings.Contains(r.Name, "/") || r.Name == "." || r.Name == ".." || (r.Name == "" && r.Path != "") {
				t.Fatalf("row %d: name %q in %q", i, r.Name, r.Path)
			}
			k := key{r.Path, r.Name, r.OffsetHeader}
			if seen[k] {
				t.Fatalf("row %d: primary key %v twice", i, k)
			}
			seen[k] = true
			if i < b.Len() {
				members[r.OffsetHeader] = true
			} else if r.Mode != generatedMode || r.Type != '5' || r.Size != 0 || !members[r.OffsetHeader] {
				t.Fatalf("generated row %d: %+v", i, r)
			}
			if r.Path != "" {
				dirs[r.Path] = true
			}
		}
		for p := range dirs {
			if p == "" {
				continue
			}
			dir, base := splitName(p)
			found := false
			for _, r := range ix.Files {
				if r.Path == dir && r.Name == base {
					found = true
					break
				}
			}
			if !found {
				t.Fatalf("no row for directory %q", p)
			}
		}
		for _, x := range ix.XAttrs {
			if !members[x.OffsetHeader] || !utf8.ValidString(x.Key) || x.Value == nil {
				t.Fatalf("xattr %+v", x)
			}
		}
	})
}

// FuzzTarStats: what tarStatsJSON writes, ParseTarStats reads back to the
// same size and the same float st_mtime, and ParseTarStats takes any input
// without panicking.
func FuzzTarStats(f *testing.F) {
	f.Add(int64(10240), int64(1795551582), int64(305478170), `{"st_size": 10240, "st_mtime": 1795551582.305478}`)
	f.Add(int64(0), int64(-1), int64(999999999), `{"st_mtime": 1e999}`)
	f.Add(int64(1)<<40, int64(0), int64(0), `[1, 2]`)
	f.Fuzz(func(t *testing.T, size, sec, nsec int64, text string) {
		ParseTarStats(text)
		if size < 0 || nsec < 0 || nsec >= 1e9 || sec < -1<<40 || sec > 1<<40 {
			return
		}
		fi := fakeInfo{size: size, mtime: time.Unix(sec, nsec)}
		s := tarStatsJSON(fi)
		ts, err := ParseTarStats(s)
		if err != nil {
			t.Fatalf("%s: %v", s, err)
		}
		if ts.Size != size || ts.MTime != statTime(sec, nsec) {
			t.Fatalf("%s: read back %+v", s, ts)
		}
		if err := ts.Check(fi, true); err != nil {
			t.Fatal(err)
		}
	})
}

var pyReprSyntax = regexp.MustCompile(`^-?([0-9]+\.[0-9]+|[0-9](\.[0-9]+)?e[+-][0-9]{2,3})$`)

// FuzzPython: pyFloat writes every finite float so that it reads back the
// same, in Python's syntax; escapeText and unquote give
// UTF-8 (unquote from UTF-8, the only keys ratarmount stores), and
// escapeText changes valid UTF-8 not at all.
func FuzzPython(f *testing.F) {
	f.Add(uint64(0x41dac17c57938cf4), "bad\xff.txt")
	f.Add(uint64(0x0000000000000001), "%E2%82a\xed\xa0\x80")
	f.Add(uint64(0x4341c37937e08000), "user.%41b")
	f.Fuzz(func(t *testing.T, bits uint64, s string) {
		v := math.Float64frombits(bits)
		r := pyFloat(v)
		if !math.IsNaN(v) && !math.IsInf(v, 0) {
			if !pyReprSyntax.MatchString(r) {
				t.Fatalf("pyFloat(%v) = %s", v, r)
			}
			back, err := strconv.ParseFloat(r, 64)
			if err != nil || math.Float64bits(back) != bits {
				t.Fatalf("pyFloat(%v) = %s reads back as %v", v, r, back)
			}
		}
		outs := []string{escapeText(s)}
		if utf8.ValidString(s) {
			outs = append(outs, unquote(s)) // (ratarmount refuses other xattr keys)
		}
		for _, out := range outs {
			if !utf8.ValidString(out) {
				t.Fatalf("%q gave %q", s, out)
			}
		}
		if utf8.ValidString(s) && escapeText(s) != s {
			t.Fatalf("escapeText changed %q", s)
		}
		if !strings.Contains(s, "%") && unquote(s) != s {
			t.Fatalf("unquote changed %q", s)
		}
	})
}
