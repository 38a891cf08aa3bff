package s3

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/itarconv/itarconv/testing/s3server"
)

func TestParseURL(t *testing.T) {
	for _, c := range []struct {
		in, bucket, key string
		err             string // a part of the error, "" for none
	}{
		{"s3://shards/train/shard-000000.tar", "shards", "train/shard-000000.tar", ""},
		{"s3://shards/train/", "shards", "train/", ""},
		{"s3://shards/train/shard-*.tar", "shards", "train/shard-*.tar", ""},
		{"s3://shards/", "shards", "", ""},
		{"s3://shards", "shards", "", ""},
		{"s3://Old_Bucket.v2/a//b", "Old_Bucket.v2", "a//b", ""},
		{"s3://shards/key with spaces?x=1", "shards", "key with spaces?x=1", ""},
		{"s3:///key", "", "", "no bucket"},
		{"s3://", "", "", "no bucket"},
		{"s3:/shards/key", "", "", "not an S3 URL"},
		{"S3://shards/key", "", "", "not an S3 URL"},
		{"https://shards.s3.amazonaws.com/key", "", "", "not an S3 URL"},
		{"shards/key", "", "", "not an S3 URL"},
		{"s3://host:9000/bucket/key", "", "", `':' is not allowed`},
		{"s3://user@shards/key", "", "", `'@' is not allowed`},
		{"s3://" + strings.Repeat("b", 256) + "/k", "", "", "bucket name of 256 characters"},
	} {
		bucket, key, err := ParseURL(c.in)
		switch {
		case c.err == "" && err != nil:
			t.Errorf("ParseURL(%q): %v", c.in, err)
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("ParseURL(%q) = %q, %q, %v; want an error saying %q", c.in, bucket, key, err, c.err)
		case bucket != c.bucket || key != c.key:
			t.Errorf("ParseURL(%q) = %q, %q; want %q, %q", c.in, bucket, key, c.bucket, c.key)
		}
	}
}

// isolate points the AWS configuration at nothing of the user's, with
// fixed credentials and no endpoint.
func isolate(t *testing.T) {
	home := t.TempDir()
	for k, v := range map[string]string{
		"AWS_ACCESS_KEY_ID":           "AKIDEXAMPLE",
		"AWS_SECRET_ACCESS_KEY":       "secret",
		"AWS_SESSION_TOKEN":           "",
		"AWS_PROFILE":                 "",
		"AWS_REGION":                  "",
		"AWS_DEFAULT_REGION":          "",
		"AWS_ENDPOINT_URL":            "",
		"AWS_ENDPOINT_URL_S3":         "",
		"AWS_CONFIG_FILE":             home + "/config",
		"AWS_SHARED_CREDENTIALS_FILE": home + "/credentials",
		"AWS_EC2_METADATA_DISABLED":   "true",
		"AWS_CA_BUNDLE":               "",
		PathStyleEnv:                  "",
	} {
		t.Setenv(k, v)
	}
}

// TestAddressing checks where presigned URLs point, which needs no
// server: presigning is local.
func TestAddressing(t *testing.T) {
	for _, c := range []struct {
		name string
		env  map[string]string
		host string // of the presigned URL
		path string
	}{
		{"AWS, no region configured", nil, "shards.s3.us-east-1.amazonaws.com", "/a/b.tar"},
		{"AWS, region from the environment", map[string]string{"AWS_REGION": "eu-west-3"}, "shards.s3.eu-west-3.amazonaws.com", "/a/b.tar"},
		{"AWS, path style asked", map[string]string{PathStyleEnv: "1"}, "s3.us-east-1.amazonaws.com", "/shards/a/b.tar"},
		{"endpoint by name", map[string]string{"AWS_ENDPOINT_URL": "https://store.example.test:9000"}, "shards.store.example.test:9000", "/a/b.tar"},
		{"endpoint by name, path style asked", map[string]string{"AWS_ENDPOINT_URL": "https://store.example.test:9000", PathStyleEnv: "true"}, "store.example.test:9000", "/shards/a/b.tar"},
		{"endpoint by name, path style refused", map[string]string{"AWS_ENDPOINT_URL": "https://store.example.test", PathStyleEnv: "0"}, "shards.store.example.test", "/a/b.tar"},
		{"endpoint by IP", map[string]string{"AWS_ENDPOINT_URL": "http://127.0.0.1:9000"}, "127.0.0.1:9000", "/shards/a/b.tar"},
		{"endpoint by IPv6", map[string]string{"AWS_ENDPOINT_URL": "http://[::1]:9000"}, "[::1]:9000", "/shards/a/b.tar"},
		{"endpoint localhost", map[string]string{"AWS_ENDPOINT_URL": "http://localhost:9000"}, "localhost:9000", "/shards/a/b.tar"},
		{"S3's own endpoint wins", map[string]string{"AWS_ENDPOINT_URL": "https://other.example.test", "AWS_ENDPOINT_URL_S3": "http://10.0.0.7:9000"}, "10.0.0.7:9000", "/shards/a/b.tar"},
	} {
		t.Run(c.name, func(t *testing.T) {
			isolate(t)
			for k, v := range c.env {
				t.Setenv(k, v)
			}
			client, err := New(context.Background(), nil)
			if err != nil {
				t.Fatal(err)
			}
			before := time.Now()
			raw, expires, err := client.Presign(context.Background(), "shards", "a/b.tar")
			if err != nil {
				t.Fatal(err)
			}
			u, err := url.Parse(raw)
			if err != nil {
				t.Fatal(err)
			}
			if u.Host != c.host || u.Path != c.path {
				t.Errorf("presigned %s; want host %s, path %s", raw, c.host, c.path)
			}
			q := u.Query()
			if q.Get("X-Amz-Expires") != "3600" || q.Get("X-Amz-SignedHeaders") != "host" {
				t.Errorf("presigned %s; want X-Amz-Expires=3600 and X-Amz-SignedHeaders=host", raw)
			}
			if d := expires.Sub(before); d < PresignExpiry-time.Second || d > PresignExpiry+time.Second {
				t.Errorf("expires in %v, want %v", d, PresignExpiry)
			}
		})
	}
}

// TestPresignExpiringCredentials: a URL signed by temporary credentials
// is told to expire with them, here ones a profile's credential_process
// gives for ten more minutes.
func TestPresignExpiringCredentials(t *testing.T) {
	isolate(t)
	dir := t.TempDir()
	until := time.Now().Add(10 * time.Minute).UTC().Truncate(time.Second)
	script := filepath.Join(dir, "creds.sh")
	body := fmt.Sprintf("#!/bin/sh\necho '{\"Version\": 1, \"AccessKeyId\": \"AKIDTEMP\", \"SecretAccessKey\": \"s\", \"SessionToken\": \"t\", \"Expiration\": \"%s\"}'\n", until.Format(time.RFC3339))
	if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "config"), []byte("[profile temp]\ncredential_process = "+script+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("AWS_ACCESS_KEY_ID", "")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "")
	t.Setenv("AWS_CONFIG_FILE", filepath.Join(dir, "config"))
	t.Setenv("AWS_PROFILE", "temp")
	client, err := New(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	raw, expires, err := client.Presign(context.Background(), "shards", "a.tar")
	if err != nil {
		t.Fatal(err)
	}
	if !expires.Equal(until) {
		t.Errorf("expires %v, want the credentials' %v", expires, until)
	}
	if u, _ := url.Parse(raw); !strings.HasPrefix(u.Query().Get("X-Amz-Credential"), "AKIDTEMP/") || u.Query().Get("X-Amz-Security-Token") != "t" {
		t.Errorf("presigned %s; want it signed by the profile's credentials", raw)
	}
}

func TestPathStyleEnvInvalid(t *testing.T) {
	isolate(t)
	t.Setenv(PathStyleEnv, "yes please")
	_, err := New(context.Background(), nil)
	if err == nil || !strings.Contains(err.Error(), PathStyleEnv) {
		t.Fatalf("New with %s=%q: %v; want an error naming it", PathStyleEnv, "yes please", err)
	}
}

// TestHTTPClientWithCABundle: a caller's HTTP client is taken even when
// AWS_CA_BUNDLE is set, which the SDK can only add to a client of its own.
func TestHTTPClientWithCABundle(t *testing.T) {
	isolate(t)
	tls := httptest.NewTLSServer(http.NotFoundHandler())
	tls.Close()
	bundle := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(bundle, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: tls.Certificate().Raw}), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("AWS_CA_BUNDLE", bundle)
	for _, hc := range []*http.Client{nil, {}} {
		if _, err := New(context.Background(), hc); err != nil {
			t.Errorf("New(%v) with AWS_CA_BUNDLE set: %v", hc, err)
		}
	}
}

func testData(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*7 + i>>8)
	}
	return b
}

func etagOf(b []byte) string {
	sum := md5.Sum(b)
	return `"` + hex.EncodeToString(sum[:]) + `"`
}

// start runs a real S3 server holding a bucket "shards", points the
// environment at it, and returns a client of it.
func start(t *testing.T) (*s3server.Server, *Client) {
	srv := s3server.Start(t, map[string]string{"shards": ""})
	srv.SetEnv(t)
	t.Setenv(PathStyleEnv, "")
	client, err := New(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	return srv, client
}

func TestAgainstServer(t *testing.T) {
	srv, client := start(t)
	ctx := context.Background()
	data := testData(5000)
	srv.Put(t, "shards", "train/shard-000000.tar", data)
	srv.Put(t, "shards", "empty.tar", nil)

	t.Run("Stat", func(t *testing.T) {
		for _, c := range []struct {
			key  string
			size int64
			etag string
		}{
			{"train/shard-000000.tar", 5000, etagOf(data)},
			{"empty.tar", 0, `"d41d8cd98f00b204e9800998ecf8427e"`},
		} {
			size, etag, err := client.Stat(ctx, "shards", c.key)
			if err != nil || size != c.size || etag != c.etag {
				t.Errorf("Stat(%s) = %d, %s, %v; want %d, %s", c.key, size, etag, err, c.size, c.etag)
			}
		}
	})

	t.Run("Stat missing", func(t *testing.T) {
		for _, c := range []struct{ bucket, key string }{
			{"shards", "train/shard-999999.tar"},
			{"shards", "train"}, // a prefix, not an object
			{"nobucket", "train/shard-000000.tar"},
		} {
			_, _, err := client.Stat(ctx, c.bucket, c.key)
			name := "s3://" + c.bucket + "/" + c.key
			if !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), name) {
				t.Errorf("Stat(%s): %v; want fs.ErrNotExist naming %s", name, err, name)
			}
		}
	})

	t.Run("Presign ranges", func(t *testing.T) {
		u, expires, err := client.Presign(ctx, "shards", "train/shard-000000.tar")
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(u, srv.Endpoint()+"/shards/train/shard-000000.tar?") {
			t.Errorf("presigned %s; want path style under %s", u, srv.Endpoint())
		}
		if time.Until(expires) < 59*time.Minute {
			t.Errorf("expires in %v", time.Until(expires))
		}
		for _, c := range []struct {
			name         string
			headers      map[string]string
			status       int
			body         []byte
			contentRange string
		}{
			{"no range", nil, http.StatusOK, data, ""},
			{"range", map[string]string{"Range": "bytes=10-19"}, http.StatusPartialContent, data[10:20], "bytes 10-19/5000"},
			{"range and ETag", map[string]string{"Range": "bytes=4990-5100", "If-Match": etagOf(data)}, http.StatusPartialContent, data[4990:], "bytes 4990-4999/5000"},
			{"another ETag", map[string]string{"Range": "bytes=10-19", "If-Match": `"0123456789abcdef0123456789abcdef"`}, http.StatusPreconditionFailed, nil, ""},
			{"past the end", map[string]string{"Range": "bytes=5000-5009"}, http.StatusRequestedRangeNotSatisfiable, nil, ""},
		} {
			status, body, hdr := get(t, u, c.headers)
			if status != c.status || (c.body != nil && !bytes.Equal(body, c.body)) {
				t.Errorf("%s: status %d, %d bytes; want %d, %d bytes", c.name, status, len(body), c.status, len(c.body))
			}
			if status == http.StatusPartialContent && (hdr.Get("Content-Range") != c.contentRange || hdr.Get("ETag") != etagOf(data)) {
				t.Errorf("%s: Content-Range %q, ETag %s; want %q, %s", c.name, hdr.Get("Content-Range"), hdr.Get("ETag"), c.contentRange, etagOf(data))
			}
		}
	})

	t.Run("Presign tampered", func(t *testing.T) {
		u, _, err := client.Presign(ctx, "shards", "train/shard-000000.tar")
		if err != nil {
			t.Fatal(err)
		}
		// The signature covers the key: it cannot be moved to another.
		other := strings.Replace(u, "shard-000000.tar", "shard-000001.tar", 1)
		if status, _, _ := get(t, other, nil); status != http.StatusForbidden {
			t.Errorf("a presigned URL moved to another key: status %d, want 403", status)
		}
	})
}

func get(t *testing.T, u string, headers map[string]string) (int, []byte, http.Header) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, u, nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, body, resp.Header
}

type countingTransport struct{ n atomic.Int64 }

func (c *countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	c.n.Add(1)
	return http.DefaultTransport.RoundTrip(r)
}

func TestList(t *testing.T) {
	srv, _ := start(t)
	// Keys whose order on disk (by directory) differs from key order:
	// "a/b" sorts after "a-c" and "a.d" as a key, before them as a path.
	want := []Object{}
	for _, key := range []string{"a-c.tar", "a.d.tar", "a/b.tar", "a/c/d.tar", "a0.tar", "b.tar"} {
		data := testData(len(key) * 100)
		srv.Put(t, "shards", "train/"+key, data)
		want = append(want, Object{Key: "train/" + key, Size: int64(len(data)), ETag: etagOf(data)})
	}
	srv.Put(t, "shards", "test/a.tar", testData(10))
	// A client whose requests are counted, to see that List reads every
	// page, and that the SDK uses the HTTP client it is given.
	count := &countingTransport{}
	client, err := New(context.Background(), &http.Client{Transport: count})
	if err != nil {
		t.Fatal(err)
	}
	client.pageSize = 2

	for _, c := range []struct {
		prefix string
		want   []Object
		pages  int64
	}{
		{"train/", want, 3},
		{"train/a/", want[2:4], 1},
		{"train/a", want[:5], 3},
		{"val/", nil, 1},
	} {
		before := count.n.Load()
		got, err := client.List(context.Background(), "shards", c.prefix)
		if err != nil {
			t.Fatalf("List(%s): %v", c.prefix, err)
		}
		if fmt.Sprint(got) != fmt.Sprint(c.want) {
			t.Errorf("List(%s) =\n%v\nwant\n%v", c.prefix, got, c.want)
		}
		if pages := count.n.Load() - before; pages != c.pages {
			t.Errorf("List(%s): %d pages, want %d", c.prefix, pages, c.pages)
		}
	}
	_, err = client.List(context.Background(), "nobucket", "train/")
	if !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), "s3://nobucket/train/") {
		t.Errorf("List of a missing bucket: %v; want fs.ErrNotExist naming s3://nobucket/train/", err)
	}
}

func TestWrongCredentials(t *testing.T) {
	srv, _ := start(t)
	srv.Put(t, "shards", "a.tar", testData(100))
	ctx := context.Background()
	for _, c := range []struct {
		name, key, secret string
		// stat: whether Stat is checked. A HEAD answer has no body, and
		// versitygw answers an unknown key with a 404, which a bodiless
		// HEAD cannot tell from a missing object (S3 says 403).
		stat     bool
		listCode string
		status   int // of a GET by a presigned URL
	}{
		{"wrong secret", srv.AccessKey, "not-the-secret", true, "SignatureDoesNotMatch", http.StatusForbidden},
		{"unknown access key", "nobody", srv.SecretKey, false, "XAdminUserNotFound", http.StatusNotFound},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Setenv("AWS_ACCESS_KEY_ID", c.key)
			t.Setenv("AWS_SECRET_ACCESS_KEY", c.secret)
			client, err := New(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			if c.stat {
				_, _, err = client.Stat(ctx, "shards", "a.tar")
				if !errors.Is(err, fs.ErrPermission) || !strings.Contains(err.Error(), "stat s3://shards/a.tar: permission denied: the credentials were refused") {
					t.Errorf("Stat: %v; want fs.ErrPermission naming s3://shards/a.tar and the credentials", err)
				}
			}
			_, err = client.List(ctx, "shards", "")
			if !errors.Is(err, fs.ErrPermission) || errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), c.listCode) {
				t.Errorf("List: %v; want fs.ErrPermission saying %s", err, c.listCode)
			}
			u, _, err := client.Presign(ctx, "shards", "a.tar")
			if err != nil {
				t.Fatal(err)
			}
			if status, _, _ := get(t, u, map[string]string{"Range": "bytes=0-9"}); status != c.status {
				t.Errorf("a presigned GET: status %d, want %d", status, c.status)
			}
		})
	}
}

// TestNoCredentials: with no credentials anywhere, requests go unsigned
// (a public bucket reads so): "presigning" gives the object's own URL,
// its key escaped, with no signature; Unsigned says why.
func TestNoCredentials(t *testing.T) {
	isolate(t)
	t.Setenv("AWS_ACCESS_KEY_ID", "")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "")
	t.Setenv("AWS_REGION", "eu-west-3")
	client, err := New(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	u, _, err := client.Presign(context.Background(), "shards", "a dir/a+b.tar")
	if err != nil || u != "https://shards.s3.eu-west-3.amazonaws.com/a%20dir/a%2Bb.tar" {
		t.Errorf("Presign without credentials: %q, %v; want the object's unsigned URL", u, err)
	}
	if why := client.Unsigned(); !strings.Contains(why, "credentials") {
		t.Errorf("Unsigned() = %q", why)
	}
	t.Setenv(PathStyleEnv, "true")
	t.Setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:9000")
	if client, err = New(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	if u, _, err := client.Presign(context.Background(), "shards", "k/a.tar"); err != nil || u != "http://127.0.0.1:9000/shards/k/a.tar" {
		t.Errorf("Presign without credentials, path style: %q, %v", u, err)
	}
}

// TestUnreachableNamesObject: a store that cannot be reached gives errors
// naming the object as s3://bucket/key, with no credential in them.
func TestUnreachableNamesObject(t *testing.T) {
	isolate(t)
	t.Setenv("AWS_ACCESS_KEY_ID", "AKIAFAKE")
	t.Setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:1") // nothing listens there
	client, err := New(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	_, _, statErr := client.Stat(context.Background(), "b", "k.tar")
	_, listErr := client.List(context.Background(), "b", "k.tar")
	for _, err := range []error{statErr, listErr} {
		if err == nil || !strings.Contains(err.Error(), "s3://b/k.tar") || strings.Contains(err.Error(), "AKIAFAKE") || strings.Contains(err.Error(), "X-Amz-") {
			t.Errorf("an unreachable store: %v", err)
		}
	}
}
