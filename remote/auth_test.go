package remote

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestParseNetrc(t *testing.T) {
	const file = `# a comment
machine other.example login bob password "b ob\"pw"
macdef init
cd /pub
login nobody password nothing

machine 127.0.0.1
  login alice
  password s3cret
default login anon password guest
`
	entries, err := parseNetrc(file)
	if err != nil {
		t.Fatal(err)
	}
	want := []netrcEntry{
		{machine: "other.example", login: "bob", password: `b ob"pw`, hasPass: true},
		{machine: "127.0.0.1", login: "alice", password: "s3cret", hasPass: true},
		{def: true, login: "anon", password: "guest", hasPass: true},
	}
	if fmt.Sprint(entries) != fmt.Sprint(want) {
		t.Errorf("got %+v\nwant %+v", entries, want)
	}
	path := filepath.Join(t.TempDir(), "netrc")
	os.WriteFile(path, []byte(file), 0o600)
	t.Setenv("NETRC", path)
	for _, c := range []struct{ host, login, user, pass string }{
		{"127.0.0.1", "", "alice", "s3cret"},
		{"OTHER.example", "", "bob", `b ob"pw`},
		{"other.example", "carol", "", ""}, // no entry of that login; the default is anon's
		{"elsewhere", "", "anon", "guest"},
	} {
		user, pass, ok, err := netrcFor(c.host, c.login)
		if err != nil || (c.user != "") != ok || user != c.user || pass != c.pass {
			t.Errorf("netrcFor(%q, %q) = %q, %q, %v, %v", c.host, c.login, user, pass, ok, err)
		}
	}
	// A broken file is an error that quotes none of it.
	os.WriteFile(path, []byte(`machine h login u password "SECRETVALUE`), 0o600)
	if _, _, _, err := netrcFor("h", ""); !errors.Is(err, ErrAuthConfig) || strings.Contains(err.Error(), "SECRET") {
		t.Errorf("a broken netrc: %v", err)
	}
}

// authServer serves data (with ranges) to requests that carry the
// wanted header, and answers 401 to the others, with a reason phrase
// that repeats what they sent.
func authServer(t *testing.T, data []byte, header, want string) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if got := r.Header.Get(header); got != want {
			conn, buf, _ := w.(http.Hijacker).Hijack()
			fmt.Fprintf(buf, "HTTP/1.1 401 Unauthorized %s\r\nContent-Length: 0\r\nConnection: close\r\n\r\n", got)
			buf.Flush()
			conn.Close()
			return
		}
		http.ServeContent(w, r, "shard.tar", time.Unix(1e9, 0), bytes.NewReader(data))
	}))
	t.Cleanup(srv.Close)
	return srv
}

// TestNetrcAuth: the netrc file's login authenticates requests to its
// host, and neither the password nor the user reach an error.
func TestNetrcAuth(t *testing.T) {
	data := testData()
	srv := authServer(t, data, "Authorization", "Basic YWxpY2U6czNjcmV0") // alice:s3cret
	path := filepath.Join(t.TempDir(), "netrc")
	os.WriteFile(path, []byte("machine 127.0.0.1 login alice password s3cret\n"), 0o600)
	t.Setenv("NETRC", path)
	t.Setenv(HeaderEnv, "")
	f, err := Open(context.Background(), srv.URL+"/shard.tar", fast)
	if err != nil {
		t.Fatal(err)
	}
	p := make([]byte, 100)
	if _, err := f.ReadAt(p, 500); err != nil || !bytes.Equal(p, data[500:600]) {
		t.Fatalf("ReadAt: %v", err)
	}
	// A refused password (the server repeats what it was sent in its
	// reason phrase), and a refused connection.
	os.WriteFile(path, []byte("machine 127.0.0.1 login alice password WRONGPASS\n"), 0o600)
	for _, u := range []string{srv.URL + "/shard.tar", "http://127.0.0.1:1/shard.tar"} {
		_, err := Open(context.Background(), u, Options{Backoff: time.Millisecond, Retries: 1})
		if err == nil || !strings.Contains(err.Error(), u) || strings.Contains(err.Error(), "WRONGPASS") ||
			strings.Contains(err.Error(), "YWxpY2U6V1JPTkdQQVNT") || strings.Contains(err.Error(), "alice") {
			t.Errorf("%s: %v", u, err)
		}
	}
}

// TestHeaderEnv: ITARCONV_HTTP_HEADER's header reaches the server, and
// its value no error.
func TestHeaderEnv(t *testing.T) {
	data := testData()
	srv := authServer(t, data, "Authorization", "Bearer TOKEN123")
	t.Setenv("NETRC", filepath.Join(t.TempDir(), "none"))
	t.Setenv(HeaderEnv, "Authorization: Bearer TOKEN123")
	f, err := Open(context.Background(), srv.URL+"/shard.tar", fast)
	if err != nil {
		t.Fatal(err)
	}
	if f.Size() != int64(len(data)) {
		t.Fatalf("size %d", f.Size())
	}
	t.Setenv(HeaderEnv, "Authorization: Bearer WRONGTOKEN")
	for _, u := range []string{srv.URL + "/shard.tar", "http://127.0.0.1:1/shard.tar"} {
		_, err := Open(context.Background(), u, Options{Backoff: time.Millisecond, Retries: 1})
		if err == nil || !strings.Contains(err.Error(), u) || strings.Contains(err.Error(), "WRONGTOKEN") {
			t.Errorf("%s: %v", u, err)
		}
	}
	t.Setenv(HeaderEnv, "no colon SECRETVALUE")
	if _, err := Open(context.Background(), srv.URL+"/shard.tar", fast); !errors.Is(err, ErrAuthConfig) || strings.Contains(err.Error(), "SECRET") {
		t.Errorf("a malformed header: %v", err)
	}
}

// TestUserInfoAuth: user info in a URL authenticates its requests
// (Basic), and appears in no error nor in the file's name.
func TestUserInfoAuth(t *testing.T) {
	data := testData()
	srv := authServer(t, data, "Authorization", "Basic YWxpY2U6czNjcmV0")
	t.Setenv("NETRC", filepath.Join(t.TempDir(), "none"))
	t.Setenv(HeaderEnv, "")
	base := strings.Replace(srv.URL, "http://", "http://alice:s3cret@", 1)
	f, err := Open(context.Background(), base+"/shard.tar", fast)
	if err != nil {
		t.Fatal(err)
	}
	if f.Name() != srv.URL+"/shard.tar" {
		t.Errorf("Name() = %q", f.Name())
	}
	for _, u := range []string{strings.Replace(base, "s3cret", "WRONGPASS", 1) + "/shard.tar", "http://alice:s3cret@127.0.0.1:1/shard.tar"} {
		_, err := Open(context.Background(), u, Options{Backoff: time.Millisecond, Retries: 1})
		if err == nil || !strings.Contains(err.Error(), Redact(u)) || strings.Contains(err.Error(), "alice") ||
			strings.Contains(err.Error(), "s3cret") || strings.Contains(err.Error(), "WRONGPASS") {
			t.Errorf("%s: %v", Redact(u), err)
		}
	}
}

// TestRedirectDropsAuth: a redirect to another origin (here another
// port of the same host, which Go's client alone would trust) carries
// neither Basic credentials nor ITARCONV_HTTP_HEADER's header; one to
// the same origin keeps them.
func TestRedirectDropsAuth(t *testing.T) {
	data := testData()
	var other []string
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		other = append(other, r.Header.Get("Authorization")+"|"+r.Header.Get("X-Api-Key"))
		http.ServeContent(w, r, "x", time.Time{}, bytes.NewReader(data))
	}))
	defer target.Close()
	var same []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/away.tar":
			http.Redirect(w, r, target.URL+"/x.tar", http.StatusFound)
		case "/here.tar":
			http.Redirect(w, r, "/x.tar", http.StatusFound)
		default:
			same = append(same, r.Header.Get("Authorization")+"|"+r.Header.Get("X-Api-Key"))
			http.ServeContent(w, r, "x", time.Time{}, bytes.NewReader(data))
		}
	}))
	defer srv.Close()
	t.Setenv("NETRC", filepath.Join(t.TempDir(), "none"))
	t.Setenv(HeaderEnv, "X-Api-Key: KEY")
	base := strings.Replace(srv.URL, "http://", "http://alice:pw@", 1)
	for _, p := range []string{"/away.tar", "/here.tar"} {
		if _, err := Open(context.Background(), base+p, fast); err != nil {
			t.Fatal(err)
		}
	}
	if len(other) != 1 || other[0] != "|" {
		t.Errorf("another origin was sent %q", other)
	}
	if len(same) != 1 || same[0] != "Basic YWxpY2U6cHc=|KEY" {
		t.Errorf("the same origin was sent %q", same)
	}
}

// TestS3ErrorNamesObject: a failed read of an S3 object names it
// s3://bucket/key, never by its presigned URL (whose query holds the
// access key id and a signature).
func TestS3ErrorNamesObject(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("AWS_ACCESS_KEY_ID", "AKIAFAKE")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "x")
	t.Setenv("AWS_SESSION_TOKEN", "")
	t.Setenv("AWS_PROFILE", "")
	t.Setenv("AWS_REGION", "us-east-1")
	t.Setenv("AWS_CONFIG_FILE", filepath.Join(dir, "config"))
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", filepath.Join(dir, "credentials"))
	t.Setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:1") // nothing listens there
	t.Setenv("AWS_ENDPOINT_URL_S3", "")
	_, err := Open(context.Background(), "s3://b/k.tar", Options{Backoff: time.Millisecond, Retries: 1})
	if err == nil || !strings.Contains(err.Error(), "s3://b/k.tar") || strings.Contains(err.Error(), "X-Amz-") || strings.Contains(err.Error(), "AKIAFAKE") {
		t.Errorf("a failed S3 read: %v", err)
	}
}
