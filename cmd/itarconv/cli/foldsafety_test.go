package cli

import (
	"fmt"
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

// TestVerifyExtraMembersAndShards: a member appended to an indexed shard
// and a stale shard of the fold beside the indexed ones make verify exit 1,
// naming them.
func TestVerifyExtraMembersAndShards(t *testing.T) {
	dir, _ := writeShards(t, 2, 3)
	if code, _, stderr := run(t, "index", "-q", dir); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	// A stale third shard of the fold, as an earlier, larger run left it.
	other, _ := writeShards(t, 1, 2)
	b, err := os.ReadFile(filepath.Join(other, "train_0000.tar"))
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "train_0002.tar"), b, 0o644)
	code, stdout, _ := run(t, "verify", dir)
	want := `train_0002.tar (fid 2): a shard of the fold that the index does not cover (its last shard is fid 1): 4 members, the first "s000000.jpg"`
	if code != ExitData || !strings.Contains(stdout, "STALE: 1 problem in 12 members; 4 members in the shards are not in the index; 1 shard of the fold is not in it") || !strings.Contains(stdout, want) {
		t.Errorf("extra shard: exit %d: %s", code, stdout)
	}
	os.Remove(filepath.Join(dir, "train_0002.tar"))

	// tar rf: a member appended over the end-of-archive blocks.
	shard := filepath.Join(dir, "train_0001.tar")
	b, _ = os.ReadFile(shard)
	end := len(b) - 1024
	appended := append(b[:end:end], b[:512+512]...) // a copy of the shard's first member
	appended = append(appended, make([]byte, 1024)...)
	os.WriteFile(shard, appended, 0o644)
	code, stdout, _ = run(t, "verify", dir)
	want = fmt.Sprintf(`train_0001.tar (fid 1) offset %d: member "s000003.jpg"`, end)
	if code != ExitData || !strings.Contains(stdout, want) || !strings.Contains(stdout, "is not in the index") {
		t.Errorf("tar rf: exit %d: %s\nwant %s", code, stdout, want)
	}
}
