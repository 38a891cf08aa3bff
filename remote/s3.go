package remote

import (
	"context"
	"fmt"
	"os"
	"path"
	"strings"
	"sync"
	"time"

	"github.com/itarconv/itarconv/remote/s3"
)

// s3Settings are the variables that choose the configuration.
var s3Settings = []string{"AWS_PROFILE", "AWS_REGION", "AWS_DEFAULT_REGION", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY",
	"AWS_SESSION_TOKEN", "AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_S3", "AWS_CONFIG_FILE", "AWS_SHARED_CREDENTIALS_FILE", s3.PathStyleEnv, s3.NoSignEnv}

// s3client is the S3 client of the AWS configuration the environment
// names now, loaded once for c.
func (c *Client) s3client(ctx context.Context) (*s3.Client, error) {
	var key strings.Builder
	for _, v := range s3Settings {
		key.WriteString(os.Getenv(v))
		key.WriteByte(0)
	}
	c.s3Mu.Lock()
	defer c.s3Mu.Unlock()
	if sc := c.s3[key.String()]; sc != nil {
		return sc, nil
	}
	sc, err := s3.NewWithOptions(ctx, nil, s3.Options{NoSign: c.noSign})
	if err != nil {
		return nil, err
	}
	c.s3[key.String()] = sc
	return sc, nil
}

func (c *Client) locateS3(ctx context.Context, name string) (locator, error) {
	bucket, key, err := s3.ParseURL(name)
	if err != nil {
		return nil, err
	}
	if key == "" || strings.HasSuffix(key, "/") {
		return nil, fmt.Errorf("%s: names no object (a bucket or a prefix)", name)
	}
	sc, err := c.s3client(ctx)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return &presigned{c: sc, bucket: bucket, key: key}, nil
}

// presigned addresses an S3 object by a presigned GET URL, made again a
// few minutes before it expires, or when the server refuses it (the
// credentials that signed it expired first).
type presigned struct {
	c           *s3.Client
	bucket, key string

	mu      sync.Mutex
	u       string
	expires time.Time
}

func (p *presigned) url(ctx context.Context, renew bool) (string, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if renew || p.u == "" || time.Until(p.expires) < 5*time.Minute {
		u, exp, err := p.c.Presign(ctx, p.bucket, p.key)
		if err != nil {
			return "", fmt.Errorf("s3://%s/%s: %w", p.bucket, p.key, err)
		}
		p.u, p.expires = u, exp
	}
	return p.u, nil
}

// Glob is the client ctx carries' Glob (ClientFrom).
func Glob(ctx context.Context, pattern string) ([]string, error) {
	return ClientFrom(ctx).Glob(ctx, pattern)
}

// Glob lists the objects of an S3 URL whose key matches a pattern
// (path.Match syntax: * does not cross a /), by listing the keys that
// start with the pattern's part before its first wildcard; or the files
// of an http(s) URL's directory whose names match its last segment,
// from the listing page its server gives (an autoindex).
func (c *Client) Glob(ctx context.Context, pattern string) ([]string, error) {
	if !s3.IsURL(pattern) {
		return c.globHTTP(ctx, pattern)
	}
	bucket, key, err := s3.ParseURL(pattern)
	if err != nil {
		return nil, err
	}
	if _, err := path.Match(key, ""); err != nil {
		return nil, fmt.Errorf("%s: %w", pattern, err)
	}
	sc, err := c.s3client(ctx)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", pattern, err)
	}
	prefix := key
	if i := strings.IndexAny(key, "*?[\\"); i >= 0 {
		prefix = key[:i]
	}
	objs, err := sc.List(ctx, bucket, prefix)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, o := range objs {
		if ok, _ := path.Match(key, o.Key); ok {
			out = append(out, "s3://"+bucket+"/"+o.Key)
			seen.Store(out[len(out)-1], knownFile{o.Size, o.ETag})
		}
	}
	return out, nil
}
