package remote

import (
	"errors"
	"strings"
	"testing"
)

func TestRedact(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"/data/shard-0.tar", "/data/shard-0.tar"},
		{"shard.tar", "shard.tar"},
		{"s3://bucket/a/b.tar", "s3://bucket/a/b.tar"},
		{"https://host/a.tar", "https://host/a.tar"},
		{"https://alice:PASSWORD@host:8080/a.tar", "https://host:8080/a.tar"},
		{"http://alice@host/a.tar?x=1", "http://host/a.tar?x=1"},
		{"http://a:b@c@host/p", "http://host/p"},
		{"https://b.s3.amazonaws.com/k.tar?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AKIAFAKE%2F20260101%2Fus-east-1%2Fs3%2Faws4_request&X-Amz-Date=20260101T000000Z&X-Amz-Expires=3600&X-Amz-SignedHeaders=host&X-Amz-Security-Token=TOK&X-Amz-Signature=abc123",
			"https://b.s3.amazonaws.com/k.tar?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=REDACTED&X-Amz-Date=20260101T000000Z&X-Amz-Expires=3600&X-Amz-SignedHeaders=REDACTED&X-Amz-Security-Token=REDACTED&X-Amz-Signature=REDACTED"},
		{"https://storage.googleapis.com/b/o?X-Goog-Signature=ff&X-Goog-Date=1", "https://storage.googleapis.com/b/o?X-Goog-Signature=REDACTED&X-Goog-Date=1"},
		{"https://acct.blob.core.windows.net/c/x.tar?sv=2020&sig=SECRET&se=2030", "https://acct.blob.core.windows.net/c/x.tar?sv=2020&sig=REDACTED&se=2030"},
		{"https://h/x?access_token=T&page=2#frag", "https://h/x?access_token=REDACTED&page=2#frag"},
		{"https://h/x#access_token=T", "https://h/x#access_token=REDACTED"},
		{"https://h/x?API_KEY=k;Password=p", "https://h/x?API_KEY=REDACTED;Password=REDACTED"},
		{"https://h/x?q", "https://h/x?q"},
		{"HTTPS://u:p@H/x", "HTTPS://H/x"},
	} {
		if got := Redact(c.in); got != c.want {
			t.Errorf("Redact(%q)\n = %q\nwant %q", c.in, got, c.want)
		}
	}
}

func TestRedactText(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"no url here", "no url here"},
		{`Get "http://h:1/k.tar?X-Amz-Signature=abc&a=b": dial tcp`, `Get "http://h:1/k.tar?X-Amz-Signature=REDACTED&a=b": dial tcp`},
		{"a https://u:p@h/x b http://h/y?token=z\nc", "a https://h/x b http://h/y?token=REDACTED\nc"},
		// encoding/json writes & as \u0026.
		{`{"url":"https://h/x?a=1\u0026X-Amz-Signature=s\u0026b=2"}`, `{"url":"https://h/x?a=1\u0026X-Amz-Signature=REDACTED\u0026b=2"}`},
		{`Get \"https://h/x?sig=s\": EOF`, `Get \"https://h/x?sig=REDACTED\": EOF`},
		{"ftp://u:p@h/x and s3://b/k", "ftp://u:p@h/x and s3://b/k"},
	} {
		if got := RedactText(c.in); got != c.want {
			t.Errorf("RedactText(%q)\n = %q\nwant %q", c.in, got, c.want)
		}
	}
}

func TestStoredURL(t *testing.T) {
	for _, c := range []struct {
		in, want string
		keep     bool
		secret   bool
	}{
		{"/data/x.tar", "/data/x.tar", false, false},
		{"s3://b/x.tar", "s3://b/x.tar", false, false},
		{"https://alice:PW@h/x.tar", "https://h/x.tar", false, false},
		{"https://h/x.tar?v=2", "https://h/x.tar?v=2", false, false},
		{"https://h/x.tar?X-Amz-Signature=s", "", false, true},
		{"https://u:p@h/x.tar?X-Amz-Signature=s", "https://h/x.tar?X-Amz-Signature=s", true, false},
	} {
		got, err := StoredURL(c.in, c.keep)
		if got != c.want || errors.Is(err, ErrSecretInURL) != c.secret || (err != nil) != c.secret {
			t.Errorf("StoredURL(%q, %v) = %q, %v", c.in, c.keep, got, err)
		}
		if err != nil && (strings.Contains(err.Error(), "=s") || !strings.Contains(err.Error(), "--store-signed-urls")) {
			t.Errorf("StoredURL(%q): %v", c.in, err)
		}
	}
}
