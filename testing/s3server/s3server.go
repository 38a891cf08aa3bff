package s3server

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	awss3 "github.com/aws/aws-sdk-go-v2/service/s3"
	"golang.org/x/sys/unix"
)

// Version is the versitygw release .ci/run installs, and the one these
// tests were written against.
const Version = "v1.8.0"

// Server is a running versitygw.
type Server struct {
	// AccessKey and SecretKey are the root user's credentials, which may
	// do anything to any bucket.
	AccessKey, SecretKey string
	// Root is the directory served: Root/bucket/key.
	Root string

	endpoint string
	home     string // where Env's config and credentials files (do not) live
}

// Start runs versitygw until the test ends. buckets maps each bucket to
// create to a local directory whose files (recursively) become its objects,
// keyed by their slash-separated path under it; "" makes an empty bucket.
// Put and PutFile add objects later: the POSIX backend reads the directory
// live.
//
// The binary is $VERSITYGW, else versitygw on PATH, else the one
// `go install` put in $(go env GOPATH)/bin. Without it the test is skipped,
// or fails under CI (whose .ci/run installs it).
func Start(t testing.TB, buckets map[string]string) *Server {
	t.Helper()
	bin := binary(t)
	s := &Server{
		AccessKey: "itarconvtestaccess",
		SecretKey: "itarconvtestsecretkey0123456789",
		Root:      t.TempDir(),
		home:      t.TempDir(),
	}
	for b, src := range buckets {
		s.MakeBucket(t, b)
		if src != "" {
			s.PutDir(t, b, "", src)
		}
	}
	// A free port found by listening can be taken by another process
	// before versitygw binds it: try a few.
	var err error
	for range 3 {
		if err = s.run(t, bin); err == nil {
			return s
		}
	}
	t.Fatalf("s3server: %v", err)
	return nil
}

// run starts versitygw on a free port and waits until it answers.
func (s *Server) run(t testing.TB, bin string) error {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	addr := l.Addr().String()
	l.Close()

	cmd := exec.Command(bin, "--port", addr, "--region", "us-east-1", "--health", "/health", "--keep-alive", "posix", s.Root)
	cmd.Env = append(os.Environ(), "ROOT_ACCESS_KEY="+s.AccessKey, "ROOT_SECRET_KEY="+s.SecretKey)
	out := &syncBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("starting %s: %w", bin, err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	stop := func() {
		// SIGTERM lets it close its listener; a gateway stuck past that
		// must not outlive the test.
		cmd.Process.Signal(unix.SIGTERM)
		select {
		case <-exited:
		case <-time.After(5 * time.Second):
			cmd.Process.Kill()
			<-exited
		}
	}

	s.endpoint = "http://" + addr
	deadline := time.Now().Add(30 * time.Second)
	probe := &http.Client{Timeout: time.Second}
	for {
		resp, err := probe.Get(s.endpoint + "/health")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				t.Cleanup(stop)
				return nil
			}
		}
		select {
		case <-exited:
			return fmt.Errorf("versitygw on %s exited before answering: %s", addr, out.String())
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			stop()
			return fmt.Errorf("versitygw on %s did not answer /health in 30s: %s", addr, out.String())
		}
	}
}

// binary finds versitygw, or skips (fails under CI) saying how to get it.
func binary(t testing.TB) string {
	t.Helper()
	if p := os.Getenv("VERSITYGW"); p != "" {
		return p
	}
	if p, err := exec.LookPath("versitygw"); err == nil {
		return p
	}
	if gopath, err := exec.Command("go", "env", "GOPATH").Output(); err == nil {
		// GOPATH may list several directories; go install uses the first.
		first := filepath.SplitList(strings.TrimSpace(string(gopath)))
		if len(first) > 0 && first[0] != "" {
			p := filepath.Join(first[0], "bin", "versitygw")
			if _, err := os.Stat(p); err == nil {
				return p
			}
		}
	}
	msg := "versitygw is not installed: go install github.com/versity/versitygw/cmd/versitygw@" + Version + " (or set VERSITYGW to its path)"
	if os.Getenv("CI") != "" {
		t.Fatalf("%s; .ci/run installs it", msg)
	}
	t.Skip(msg)
	return ""
}

// Endpoint is the server's base URL, "http://127.0.0.1:PORT". Its host is
// an IP address, so clients address buckets by path.
func (s *Server) Endpoint() string { return s.endpoint }

// Env returns the environment ("KEY=value") that points the standard AWS
// configuration at this server with its root credentials, and away from
// the user's own: no ~/.aws files, profile, session token, CA bundle or
// instance metadata. Tests set it with SetEnv; a test running a command appends it
// to the command's Env.
func (s *Server) Env() []string {
	return []string{
		"AWS_ACCESS_KEY_ID=" + s.AccessKey,
		"AWS_SECRET_ACCESS_KEY=" + s.SecretKey,
		"AWS_SESSION_TOKEN=",
		"AWS_PROFILE=",
		"AWS_REGION=us-east-1",
		"AWS_DEFAULT_REGION=",
		"AWS_ENDPOINT_URL=" + s.endpoint,
		// Set too, lest one in the user's environment win over the
		// general one.
		"AWS_ENDPOINT_URL_S3=" + s.endpoint,
		"AWS_CONFIG_FILE=" + filepath.Join(s.home, "config"),
		"AWS_SHARED_CREDENTIALS_FILE=" + filepath.Join(s.home, "credentials"),
		"AWS_EC2_METADATA_DISABLED=true",
		// The server speaks plain HTTP: no bundle of the user's is
		// needed, nor must one that fails to load get in the way.
		"AWS_CA_BUNDLE=",
	}
}

// SetEnv sets Env for the rest of the test (t.Setenv: not in parallel
// tests).
func (s *Server) SetEnv(t testing.TB) {
	t.Helper()
	for _, kv := range s.Env() {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
}

// MakeBucket creates an empty bucket (a top-level folder), if not there.
func (s *Server) MakeBucket(t testing.TB, bucket string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Join(s.Root, bucket), 0o755); err != nil {
		t.Fatalf("s3server: bucket %s: %v", bucket, err)
	}
}

// Put stores data as bucket/key, with the ETag S3 gives an object put in
// one part (its quoted MD5), which it returns.
func (s *Server) Put(t testing.TB, bucket, key string, data []byte) string {
	t.Helper()
	etag, err := s.put(bucket, key, bytes.NewReader(data))
	if err != nil {
		t.Fatalf("s3server: %v", err)
	}
	return etag
}

// PutFile copies the local file src into bucket/key, and returns its ETag.
// It copies rather than links, so that setting the ETag does not touch
// the source.
func (s *Server) PutFile(t testing.TB, bucket, key, src string) string {
	t.Helper()
	f, err := os.Open(src)
	if err != nil {
		t.Fatalf("s3server: %v", err)
	}
	defer f.Close()
	etag, err := s.put(bucket, key, f)
	if err != nil {
		t.Fatalf("s3server: %v", err)
	}
	return etag
}

// PutDir copies every file under the local directory src into bucket,
// each keyed prefix + its slash-separated path under src.
func (s *Server) PutDir(t testing.TB, bucket, prefix, src string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		f, err := os.Open(p)
		if err != nil {
			return err
		}
		defer f.Close()
		_, err = s.put(bucket, prefix+filepath.ToSlash(rel), f)
		return err
	})
	if err != nil {
		t.Fatalf("s3server: %s into bucket %s: %v", src, bucket, err)
	}
}

func (s *Server) put(bucket, key string, r io.Reader) (string, error) {
	if key == "" || strings.HasSuffix(key, "/") {
		return "", fmt.Errorf("%s/%q: not a file's key", bucket, key)
	}
	dst := filepath.Join(s.Root, bucket, filepath.FromSlash(key))
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return "", err
	}
	f, err := os.Create(dst)
	if err != nil {
		return "", err
	}
	h := md5.New()
	_, err = io.Copy(io.MultiWriter(f, h), r)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return "", fmt.Errorf("%s: %w", dst, err)
	}
	// The POSIX backend keeps an object's ETag in this attribute, written
	// when the object is put through S3; a file copied in by hand has
	// none until it is set.
	etag := `"` + hex.EncodeToString(h.Sum(nil)) + `"`
	if err := unix.Setxattr(dst, "user.etag", []byte(etag), 0); err != nil {
		if errors.Is(err, unix.ENOTSUP) {
			return "", fmt.Errorf("%s: the file system does not take user extended attributes, which versitygw's POSIX backend needs (set TMPDIR to another): %w", dst, err)
		}
		return "", fmt.Errorf("%s: setting the ETag: %w", dst, err)
	}
	return etag, nil
}

// syncBuffer collects the gateway's output, written by exec's copying
// goroutines while a failed start reads it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// SetPublic gives bucket the policy of a public data set: anyone, signed
// or not, may list it and read its objects (s3:ListBucket, s3:GetObject,
// Principal "*"). It is put through the S3 API, as the root user.
func (s *Server) SetPublic(t testing.TB, bucket string) {
	t.Helper()
	policy := fmt.Sprintf(`{"Version":"2012-10-17","Statement":[`+
		`{"Effect":"Allow","Principal":"*","Action":["s3:ListBucket"],"Resource":["arn:aws:s3:::%[1]s"]},`+
		`{"Effect":"Allow","Principal":"*","Action":["s3:GetObject"],"Resource":["arn:aws:s3:::%[1]s/*"]}]}`, bucket)
	client := awss3.New(awss3.Options{
		Region:       "us-east-1",
		BaseEndpoint: aws.String(s.endpoint),
		UsePathStyle: true,
		Credentials:  credentials.NewStaticCredentialsProvider(s.AccessKey, s.SecretKey, ""),
	})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := client.PutBucketPolicy(ctx, &awss3.PutBucketPolicyInput{Bucket: aws.String(bucket), Policy: aws.String(policy)}); err != nil {
		t.Fatalf("s3server: making bucket %s public: %v", bucket, err)
	}
}

// AnonymousEnv is Env without credentials: the standard AWS
// configuration then finds none anywhere.
func (s *Server) AnonymousEnv() []string {
	env := s.Env()
	for i, kv := range env {
		switch k, _, _ := strings.Cut(kv, "="); k {
		case "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY":
			env[i] = k + "="
		}
	}
	return env
}
