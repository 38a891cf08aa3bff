package s3server_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/itarconv/itarconv/remote/s3"
	"github.com/itarconv/itarconv/testing/s3server"
)

// TestStart: a bucket made from a local directory lists its files, nested
// ones under their slash-separated paths, with the ETags S3 would give;
// a bucket made empty lists nothing; objects put later are seen.
func TestStart(t *testing.T) {
	src := t.TempDir()
	os.MkdirAll(filepath.Join(src, "train"), 0o755)
	os.WriteFile(filepath.Join(src, "train", "shard-0.tar"), []byte("abc"), 0o644)
	os.WriteFile(filepath.Join(src, "index.json"), nil, 0o644)

	srv := s3server.Start(t, map[string]string{"shards": src, "empty": ""})
	srv.SetEnv(t)
	t.Setenv(s3.PathStyleEnv, "")
	client, err := s3.New(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	etag := srv.Put(t, "empty", "late/one.bin", []byte("x"))
	if etag != `"9dd4e461268c8034f5c8564e155c67a6"` {
		t.Errorf("Put gave ETag %s, want the quoted MD5 of its data", etag)
	}
	for _, c := range []struct {
		bucket string
		want   string
	}{
		{"shards", `[{index.json 0 "d41d8cd98f00b204e9800998ecf8427e"} {train/shard-0.tar 3 "900150983cd24fb0d6963f7d28e17f72"}]`},
		{"empty", `[{late/one.bin 1 "9dd4e461268c8034f5c8564e155c67a6"}]`},
	} {
		objs, err := client.List(context.Background(), c.bucket, "")
		if err != nil {
			t.Fatal(err)
		}
		if got := fmt.Sprint(objs); got != c.want {
			t.Errorf("bucket %s holds %s, want %s", c.bucket, got, c.want)
		}
	}
}
