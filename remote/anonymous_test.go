package remote

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/itarconv/itarconv/remote/s3"
	"github.com/itarconv/itarconv/testing/s3server"
)

// TestS3Anonymous: with no AWS credentials anywhere, a public bucket (a
// policy granting "*" s3:ListBucket and s3:GetObject) is listed and read
// with unsigned requests, as the AWS CLI's --no-sign-request reads it; a
// private bucket answers "access denied", saying that the request went
// unsigned. AWS_NO_SIGN_REQUEST, and Options.NoSign, send unsigned
// requests even where credentials are set.
func TestS3Anonymous(t *testing.T) {
	dir := t.TempDir()
	data := tarOf(t, 3000, 70000)
	os.MkdirAll(filepath.Join(dir, "a"), 0o755)
	os.WriteFile(filepath.Join(dir, "a", "shard-1.tar"), data, 0o644)
	os.WriteFile(filepath.Join(dir, "a", "shard-2.tar"), data[:1024], 0o644)
	srv := s3server.Start(t, map[string]string{"open": dir, "closed": dir})
	srv.SetPublic(t, "open")
	read := func(t *testing.T, c *Client) error {
		t.Helper()
		ctx := context.Background()
		got, err := c.Glob(ctx, "s3://open/a/shard-*.tar")
		if err != nil {
			return err
		}
		if strings.Join(got, " ") != "s3://open/a/shard-1.tar s3://open/a/shard-2.tar" {
			t.Errorf("Glob: %v", got)
		}
		f, err := c.Open(ctx, "s3://open/a/shard-1.tar")
		if err != nil {
			return err
		}
		p := make([]byte, 5000)
		if _, err := f.ReadAt(p, 60000); err != nil || !bytes.Equal(p, data[60000:65000]) {
			t.Errorf("ReadAt: %v", err)
		}
		return nil
	}
	setEnv := func(t *testing.T, env []string) {
		for _, kv := range env {
			k, v, _ := strings.Cut(kv, "=")
			t.Setenv(k, v)
		}
	}

	t.Run("no credentials", func(t *testing.T) {
		setEnv(t, srv.AnonymousEnv())
		t.Setenv(s3.NoSignEnv, "")
		c := NewClient(Options{})
		if err := read(t, c); err != nil {
			t.Fatalf("a public bucket, no credentials: %v", err)
		}
		_, _, err := c.Stat(context.Background(), "s3://closed/a/shard-1.tar")
		if !errors.Is(err, fs.ErrPermission) || !strings.Contains(err.Error(), "unsigned") || !strings.Contains(err.Error(), "s3://closed/a/shard-1.tar") {
			t.Errorf("a private bucket, no credentials: %v", err)
		}
	})
	t.Run("AWS_NO_SIGN_REQUEST", func(t *testing.T) {
		setEnv(t, srv.Env())
		t.Setenv(s3.NoSignEnv, "true")
		c := NewClient(Options{})
		if err := read(t, c); err != nil {
			t.Fatal(err)
		}
		// The root user's credentials are set, but not sent.
		if _, _, err := c.Stat(context.Background(), "s3://closed/a/shard-1.tar"); !errors.Is(err, fs.ErrPermission) {
			t.Errorf("a private bucket, %s set: %v", s3.NoSignEnv, err)
		}
		t.Setenv(s3.NoSignEnv, "maybe")
		if _, err := NewClient(Options{}).Open(context.Background(), "s3://open/a/shard-1.tar"); err == nil || !strings.Contains(err.Error(), s3.NoSignEnv) {
			t.Errorf("%s=maybe: %v", s3.NoSignEnv, err)
		}
	})
	t.Run("Options.NoSign", func(t *testing.T) {
		setEnv(t, srv.Env())
		t.Setenv(s3.NoSignEnv, "")
		if err := read(t, NewClient(Options{NoSign: true})); err != nil {
			t.Fatal(err)
		}
		if _, _, err := NewClient(Options{NoSign: true}).Stat(context.Background(), "s3://closed/a/shard-1.tar"); !errors.Is(err, fs.ErrPermission) {
			t.Errorf("a private bucket, NoSign: %v", err)
		}
		// Signed, the root user reads the private one.
		if _, _, err := NewClient(Options{}).Stat(context.Background(), "s3://closed/a/shard-1.tar"); err != nil {
			t.Errorf("signed: %v", err)
		}
	})
}
