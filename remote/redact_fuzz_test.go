package remote

import (
	"strings"
	"testing"
)

// FuzzRedact: whatever the user, host, path and parameters around them, a
// URL's password and the value of a signature parameter never survive
// Redact, RedactText (the URL inside a message) or StoredURL, and
// redacting twice changes nothing more.
func FuzzRedact(f *testing.F) {
	f.Add("alice", "host:8080", "data/train-000000.tar", "X-Amz-Signature", "v=1")
	f.Add("", "s3.example.org", "", "sig", "")
	f.Add("a.b", "[::1]", "a%20b/c.tar", "access_token", "x=%2F")
	f.Fuzz(func(t *testing.T, user, host, path, param, extra string) {
		clean := func(s string) string {
			return strings.Map(func(r rune) rune {
				if strings.ContainsRune("@/?#&;= \t\r\n\"'<>`\\:", r) || r < 0x20 || r == 0x7f {
					return -1
				}
				return r
			}, s)
		}
		user, host, path, extra = clean(user), clean(host), clean(path), clean(extra)
		host = strings.TrimSpace(host)
		if host == "" {
			host = "h"
		}
		if !secretParam(param) || strings.ContainsAny(param, "=&;#?%+ \t\r\n\"'<>`\\") || param == "" {
			param = "X-Amz-Signature"
		}
		const pass, sig = "PASSWORDMARK", "SIGNATUREMARK"
		url := "https://" + user + ":" + pass + "@" + host + "/" + path + "?a=" + extra + "&" + param + "=" + sig + "&z=1"
		for _, got := range []string{Redact(url), RedactText("GET " + url + ": 403 Forbidden"), RedactText(`{"url": "` + url + `"}`)} {
			if strings.Contains(got, pass) || strings.Contains(got, sig) {
				t.Fatalf("%q gave %q", url, got)
			}
		}
		if r := Redact(url); Redact(r) != r {
			t.Fatalf("Redact is not idempotent on %q: %q, then %q", url, r, Redact(r))
		}
		if stored, err := StoredURL(url, false); err == nil {
			t.Fatalf("%q stored as %q without --store-signed-urls", url, stored)
		}
		if stored, err := StoredURL(url, true); err != nil || strings.Contains(stored, pass) {
			t.Fatalf("%q stored as %q, %v", url, stored, err)
		}
	})
}
