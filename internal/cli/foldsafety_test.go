package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/itarconv/itarconv/formats/taridx"
)

// TestCatTruncatedPayload: cat of a member whose shard was cut short inside
// its payload exits 1 and writes nothing to stdout.
func TestCatTruncatedPayload(t *testing.T) {
	dir, payloads := writeShards(t, 1, 3)
	if code, _, stderr := run(t, "index", "-q", dir); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	x, err := taridx.ReadFile(filepath.Join(dir, "train.taridx"))
	if err != nil {
		t.Fatal(err)
	}
	last := x.Row(x.Len() - 1) // s000002.cls
	if int(last.Size) != len(payloads["s000002.cls"]) || last.Size < 2 {
		t.Fatalf("last row %+v", last)
	}
	if err := os.Truncate(filepath.Join(dir, "train_0000.tar"), int64(last.DataOffset()+last.Size/2)); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := run(t, "cat", dir, "s000002.cls")
	if code != ExitData || stdout != "" || !strings.Contains(stderr, "shard ends inside the payload") || !strings.Contains(stderr, "train_0000.tar") {
		t.Errorf("exit %d, %d bytes on stdout, stderr %q", code, len(stdout), stderr)
	}
	// A whole member of the same shard still comes out.
	if code, stdout, _ := run(t, "cat", dir, "s000001.jpg"); code != 0 || stdout != string(payloads["s000001.jpg"]) {
		t.Errorf("cat s000001.jpg: exit %d, %d bytes", code, len(stdout))
	}
}
