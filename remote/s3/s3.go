package s3

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	smithy "github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"
)

// DefaultRegion is the region used when the environment and the shared
// config name none. SigV4 signs for a region, so one is needed even by
// S3-compatible stores that ignore it, and us-east-1 is the one they
// (and AWS's global endpoint) accept by convention.
const DefaultRegion = "us-east-1"

// PathStyleEnv names the environment variable that asks for path-style
// addressing (https://host/bucket/key) rather than virtual-hosted
// (https://bucket.host/key), as many S3-compatible stores need: "1" or
// "true". It is also used, whatever this says, for an endpoint whose host
// is an IP address or localhost.
const PathStyleEnv = "ITARCONV_S3_PATH_STYLE"

// NoSignEnv names the environment variable that has every request sent
// unsigned, for public buckets, as the AWS CLI's --no-sign-request does
// (and GDAL's variable of this name): "1", "true" or "yes". Requests go
// unsigned too when no credentials are found anywhere (the environment,
// the shared files, a credential service): a public bucket reads without
// any setting, and a private one answers "access denied", which then
// says that the request was unsigned.
const NoSignEnv = "AWS_NO_SIGN_REQUEST"

// PresignExpiry is how long a presigned URL is asked to stay valid.
// Long enough for a shard to be read through; callers sign again after it
// runs out (or on 403).
const PresignExpiry = time.Hour

// IsURL tells whether s names an S3 object or prefix ("s3://...").
func IsURL(s string) bool { return strings.HasPrefix(s, "s3://") }

// ParseURL splits "s3://bucket/key" into its bucket and key. The key is
// kept as written (it may be empty, a prefix or a glob: what it means is
// the caller's to decide); "s3://bucket" has an empty key.
func ParseURL(u string) (bucket, key string, err error) {
	rest, ok := strings.CutPrefix(u, "s3://")
	if !ok {
		return "", "", fmt.Errorf("%q: not an S3 URL (want s3://bucket/key)", u)
	}
	bucket, key, _ = strings.Cut(rest, "/")
	if bucket == "" {
		return "", "", fmt.Errorf("%q: no bucket (want s3://bucket/key)", u)
	}
	if err := checkBucket(bucket); err != nil {
		return "", "", fmt.Errorf("%q: %w", u, err)
	}
	return bucket, key, nil
}

// checkBucket accepts the characters a bucket name may hold, including
// the uppercase letters and underscores of older buckets and of some
// S3-compatible stores, so that a typo such as "s3:bucket" or a host with
// a port fails here rather than as a puzzling signature error.
func checkBucket(b string) error {
	if len(b) > 255 {
		return fmt.Errorf("bucket name of %d characters", len(b))
	}
	for _, r := range b {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '.', r == '-', r == '_':
		default:
			return fmt.Errorf("bucket %q: %q is not allowed in a bucket name", b, r)
		}
	}
	return nil
}

// Object is an object found by List.
type Object struct {
	Key  string
	Size int64
	// ETag is as the server sent it, quotes included, so that it can be
	// sent back in If-Match as is.
	ETag string
}

// Client finds, lists and signs objects in one store, with one set of
// credentials.
type Client struct {
	s3      *s3.Client
	presign *s3.PresignClient
	creds   aws.CredentialsProvider

	// unsigned says why requests go unsigned ("" when they are signed).
	unsigned string

	// pageSize is ListObjectsV2's MaxKeys (0: the server's own, 1000 on
	// S3). Only tests change it, to see several pages cheaply.
	pageSize int32
}

// New loads the standard AWS configuration, as the AWS CLI does: the
// environment (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN,
// AWS_PROFILE, AWS_REGION or AWS_DEFAULT_REGION, AWS_ENDPOINT_URL or
// AWS_ENDPOINT_URL_S3, ...), the shared config and credentials files and
// their profiles (SSO, web identity, processes, roles), then the rest of
// the SDK's default chain (container and instance credentials). With no
// region configured anywhere, the region is DefaultRegion, us-east-1.
// httpClient makes the SDK's own requests to S3 (listing, stat); nil
// means the SDK's default, which also honours AWS_CA_BUNDLE.
//
// The SDK's standard retryer (3 tries) is kept: it only serves Stat and
// List, which are few, while the ranged reads of data go through the
// caller's HTTP path and its own retries.
func New(ctx context.Context, httpClient *http.Client) (*Client, error) {
	return NewWithOptions(ctx, httpClient, Options{})
}

// Options tune NewWithOptions.
type Options struct {
	// NoSign sends every request unsigned (public buckets), whatever
	// credentials there are, as NoSignEnv does.
	NoSign bool
}

// NewWithOptions is New with options: a library's caller asks for
// unsigned requests without setting NoSignEnv.
func NewWithOptions(ctx context.Context, httpClient *http.Client, o Options) (*Client, error) {
	pathStyle, err := pathStyleFromEnv()
	if err != nil {
		return nil, err
	}
	noSign, err := noSignFromEnv()
	if err != nil {
		return nil, err
	}
	cfg, err := config.LoadDefaultConfig(ctx)
	if err != nil {
		return nil, fmt.Errorf("s3: loading the AWS configuration: %w", err)
	}
	var unsigned string
	switch {
	case o.NoSign:
		unsigned = "unsigned requests were asked for"
	case noSign:
		unsigned = NoSignEnv + " is set"
	case cfg.Credentials == nil:
		unsigned = "no AWS credentials are configured"
	default:
		// The SDK caches what it finds: signing later asks nothing more.
		if _, err := cfg.Credentials.Retrieve(ctx); err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			unsigned = "no AWS credentials were found"
		}
	}
	if unsigned != "" {
		cfg.Credentials = aws.AnonymousCredentials{}
	}
	if httpClient != nil {
		// Set after loading rather than by config.WithHTTPClient, which
		// fails when AWS_CA_BUNDLE is set: the SDK can add roots only to
		// a client it builds. The caller's client has its own TLS roots,
		// as it must for the presigned GETs it makes anyway.
		cfg.HTTPClient = httpClient
	}
	if cfg.Region == "" {
		// Signing needs one, and every S3-compatible store takes this.
		cfg.Region = DefaultRegion
	}
	client := s3.NewFromConfig(cfg, func(o *s3.Options) {
		// By now the SDK has settled the endpoint, from AWS_ENDPOINT_URL,
		// AWS_ENDPOINT_URL_S3 or the profile's endpoint_url.
		if pathStyle || needsPathStyle(o.BaseEndpoint) {
			o.UsePathStyle = true
		}
	})
	c := &Client{
		s3:       client,
		presign:  s3.NewPresignClient(client, s3.WithPresignExpires(PresignExpiry)),
		unsigned: unsigned,
	}
	if unsigned == "" {
		c.creds = cfg.Credentials
	}
	return c, nil
}

// Unsigned says why the client's requests go unsigned, or "" when they
// are signed.
func (c *Client) Unsigned() string { return c.unsigned }

// noSignFromEnv reads NoSignEnv.
func noSignFromEnv() (bool, error) {
	switch v := strings.ToLower(os.Getenv(NoSignEnv)); v {
	case "", "0", "false", "no", "off":
		return false, nil
	case "1", "true", "yes", "on":
		return true, nil
	}
	return false, fmt.Errorf("s3: %s=%q: want 1, true, yes, 0, false or no", NoSignEnv, os.Getenv(NoSignEnv))
}

func pathStyleFromEnv() (bool, error) {
	v := os.Getenv(PathStyleEnv)
	if v == "" {
		return false, nil
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		return false, fmt.Errorf("s3: %s=%q: want 1, true, 0 or false", PathStyleEnv, v)
	}
	return b, nil
}

// needsPathStyle tells whether the endpoint's host cannot take a bucket
// name in front of it: an IP address, or localhost (whose subdomains do
// not resolve everywhere).
func needsPathStyle(endpoint *string) bool {
	if endpoint == nil || *endpoint == "" {
		return false
	}
	u, err := url.Parse(*endpoint)
	if err != nil {
		return false // the SDK reports a bad endpoint on first use
	}
	host := u.Hostname()
	return host == "localhost" || net.ParseIP(host) != nil
}

// Presign returns a URL that GETs bucket/key without credentials, and
// when it stops working. It signs only the host, so callers may add Range
// and If-Match headers freely. The URL expires after PresignExpiry, or
// sooner when the credentials that signed it do (temporary ones from a
// role or SSO): callers sign again then, or on a 403.
func (c *Client) Presign(ctx context.Context, bucket, key string) (string, time.Time, error) {
	// Taken before signing, so that the expiry told errs early.
	expires := time.Now().Add(PresignExpiry)
	if c.unsigned != "" {
		// Nothing to sign: the object's own URL (the SDK does not
		// presign without credentials).
		u, err := c.objectURL(ctx, bucket, key)
		return u, expires, err
	}
	req, err := c.presign.PresignGetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(bucket), Key: aws.String(key)})
	if err != nil {
		return "", time.Time{}, fmt.Errorf("presign s3://%s/%s: %w", bucket, key, err)
	}
	if c.creds != nil {
		// The credentials are cached by the SDK: this asks nothing of a
		// server. A URL signed by them dies with them.
		if creds, err := c.creds.Retrieve(ctx); err == nil && creds.CanExpire && creds.Expires.Before(expires) {
			expires = creds.Expires
		}
	}
	return req.URL, expires, nil
}

// objectURL is the URL of bucket/key at the client's endpoint, as the
// SDK resolves it (virtual-hosted or path-style, the region's host), for
// unsigned GETs.
func (c *Client) objectURL(ctx context.Context, bucket, key string) (string, error) {
	o := c.s3.Options()
	ep, err := o.EndpointResolverV2.ResolveEndpoint(ctx, s3.EndpointParameters{
		Bucket: aws.String(bucket), Region: aws.String(o.Region), Endpoint: o.BaseEndpoint,
		ForcePathStyle: aws.Bool(o.UsePathStyle), UseFIPS: aws.Bool(false), UseDualStack: aws.Bool(false), Accelerate: aws.Bool(false),
	})
	if err != nil {
		return "", fmt.Errorf("s3://%s/%s: the object's URL: %w", bucket, key, err)
	}
	segs := strings.Split(key, "/")
	for i, s := range segs {
		// S3 reads a "+" in a path as a space, as the SDK knows.
		segs[i] = strings.ReplaceAll(url.PathEscape(s), "+", "%2B")
	}
	return strings.TrimSuffix(ep.URI.String(), "/") + "/" + strings.Join(segs, "/"), nil
}

// Stat returns the size and ETag (quotes included) of bucket/key. A
// missing object (or bucket) gives an *fs.PathError wrapping
// fs.ErrNotExist; refused credentials or access, one wrapping
// fs.ErrPermission.
func (c *Client) Stat(ctx context.Context, bucket, key string) (size int64, etag string, err error) {
	out, err := c.s3.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String(bucket), Key: aws.String(key)})
	if err != nil {
		return 0, "", c.pathError("stat", "s3://"+bucket+"/"+key, err)
	}
	return aws.ToInt64(out.ContentLength), aws.ToString(out.ETag), nil
}

// List returns the objects of bucket whose key starts with prefix, in key
// order, reading every page.
func (c *Client) List(ctx context.Context, bucket, prefix string) ([]Object, error) {
	in := &s3.ListObjectsV2Input{Bucket: aws.String(bucket), Prefix: aws.String(prefix)}
	if c.pageSize > 0 {
		in.MaxKeys = aws.Int32(c.pageSize)
	}
	var objs []Object
	pages := s3.NewListObjectsV2Paginator(c.s3, in)
	for pages.HasMorePages() {
		page, err := pages.NextPage(ctx)
		if err != nil {
			return nil, c.pathError("list", "s3://"+bucket+"/"+prefix, err)
		}
		for _, o := range page.Contents {
			objs = append(objs, Object{Key: aws.ToString(o.Key), Size: aws.ToInt64(o.Size), ETag: aws.ToString(o.ETag)})
		}
	}
	// S3 lists in key order; not every compatible store is as careful,
	// and callers number shards by this order.
	if !slices.IsSortedFunc(objs, byKey) {
		slices.SortFunc(objs, byKey)
	}
	return objs, nil
}

func byKey(a, b Object) int { return strings.Compare(a.Key, b.Key) }

// pathError names the object in err, and makes the two answers callers
// act on testable with errors.Is: not there, and not allowed.
func (c *Client) pathError(op, path string, err error) error {
	var (
		api  smithy.APIError
		resp *smithyhttp.ResponseError
		code string
		// A HEAD answer has no body, so no code but the status.
		status int
	)
	if errors.As(err, &api) {
		code = api.ErrorCode()
	}
	if errors.As(err, &resp) {
		status = resp.HTTPStatusCode()
	}
	switch {
	case (deniedCodes[code] || status == http.StatusForbidden) && c.unsigned != "":
		err = fmt.Errorf("%w: the request was unsigned (%s), and the bucket is not public: %w", fs.ErrPermission, c.unsigned, err)
	case deniedCodes[code] || status == http.StatusForbidden:
		err = fmt.Errorf("%w: the credentials were refused, or do not allow this: %w", fs.ErrPermission, err)
	case notFoundCodes[code] || (code == "" && status == http.StatusNotFound):
		err = fmt.Errorf("%w: %w", fs.ErrNotExist, err)
	}
	return &fs.PathError{Op: op, Path: path, Err: err}
}

var notFoundCodes = map[string]bool{"NoSuchKey": true, "NoSuchBucket": true, "NotFound": true}

// deniedCodes are the codes of refused credentials. Some S3-compatible
// stores answer an unknown access key with a 404 of their own code
// (versitygw: XAdminUserNotFound), which must not read as a missing
// object.
var deniedCodes = map[string]bool{
	"AccessDenied":          true,
	"InvalidAccessKeyId":    true,
	"SignatureDoesNotMatch": true,
	"ExpiredToken":          true,
	"InvalidToken":          true,
	"XAdminUserNotFound":    true,
}
