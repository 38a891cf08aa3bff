package remote

import (
	"fmt"
	"strings"
	"testing"
)

// TestParseNetrcCases pins what parseNetrc reads and each refusal with its
// line: escapes in quoted tokens, comments, macdef skipped to the blank
// line (its lines counted), and tokens cut short. No message quotes what
// the file holds.
func TestParseNetrcCases(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"", "[]"},
		{"# only a comment", "[]"},
		{"machine h login u password \"a\\tb\\nc\\rd\\\\e\\qf\" account x", "[{h false u a\tb\nc\rd\\eqf true}]"},
		{"machine h\tlogin u # password p\n  password\r\np2", "[{h false u p2 true}]"},
		{"default login \"\" password \"\"", "[{ true   true}]"},
		{"machine a macdef m\nlogin x\n\nmachine b login y", "[{a false   false} {b false y  false}]"},
		{"machine a login x macdef m\nlogin z password SECRET", "[{a false x  false}]"},
		{"machine", "line 1: machine without a name"},
		{"\n\nmachine h login", "line 3: login without a value"},
		{"login u", "line 1: login before any machine"},
		{"machine a macdef m\n\npassword q", "line 3: password before any machine"},
		{"machine h\nlogin \"SECRET\nmore\"", "line 2: a quoted token runs past the end of its line\nline 2: login without a value"},
		{"machine h password \"SECRET", "line 1: a quoted token is not closed\nline 1: password without a value"},
		{"machine h password \"SECRET\\", "line 1: a quoted token is not closed\nline 1: password without a value"},
		{"machine h\n\nSECRET", "line 3: unknown keyword"},
	} {
		entries, err := parseNetrc(c.in)
		got := fmt.Sprint(entries)
		if err != nil {
			got = err.Error()
			if strings.Contains(got, "SECRET") {
				t.Errorf("%q: the error quotes the file: %v", c.in, err)
			}
		} else if entries == nil {
			got = "[]"
		}
		if got != c.want {
			t.Errorf("parseNetrc(%q):\n got %q\nwant %q", c.in, got, c.want)
		}
	}
}
