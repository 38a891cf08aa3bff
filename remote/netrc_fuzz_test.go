package remote

import (
	"strings"
	"testing"
)

// FuzzParseNetrc: the netrc reader never panics on any file, and its
// errors never quote a password from it.
func FuzzParseNetrc(f *testing.F) {
	f.Add("machine host login alice password SECRETTOK\n")
	f.Add("default login a password \"SECRET\\\"TOK\"\nmacdef init\ncd /\n\nmachine x")
	f.Add("# comment\nmachine h login \"unterminated password SECRETTOK")
	f.Add("password SECRETTOK machine")
	f.Fuzz(func(t *testing.T, s string) {
		_, err := parseNetrc(s)
		if err != nil && strings.Contains(s, "SECRETTOK") && strings.Contains(err.Error(), "SECRETTOK") {
			t.Fatalf("%q: the error quotes a token: %v", s, err)
		}
	})
}
