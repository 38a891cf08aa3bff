package convert

import (
	"context"
	"io"
	"path/filepath"
	"testing"
)

// TestResultSaysWhatWasWritten: whatever the target, a conversion's result
// names its output and counts its members and their bytes (the example's
// 36 members of 5281 bytes), typed, not only in the format's own figures.
func TestResultSaysWhatWasWritten(t *testing.T) {
	shards := []string{"../examples/webdataset/imagenet-train-000000.tar", "../examples/webdataset/imagenet-train-000001.tar"}
	dir := t.TempDir()
	for _, dst := range []string{"train.tbl", "train.barecat", "fold", Stream} {
		out := dst
		if dst != Stream {
			out = filepath.Join(dir, dst)
		}
		res, err := Convert(context.Background(), shards, out, ConvertOptions{ShardSize: 1 << 20, Stdout: io.Discard})
		if err != nil {
			t.Fatalf("%s: %v", dst, err)
		}
		if res.Output != out || res.Members != 36 || res.Bytes != 5281 {
			t.Errorf("%s: output %q, %d members, %d bytes; want %q, 36, 5281", dst, res.Output, res.Members, res.Bytes, out)
		}
	}
}
