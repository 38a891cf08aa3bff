package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestConvertIntoNewDirectory: a directory target written with a trailing
// slash (OUT/), as users type it, is made by the format that writes it,
// whatever the format. The command used to make OUT itself before the
// conversion, and a format that stages its directory beside OUT and
// renames it into place (Parquet, MDS) then found it there and refused.
func TestConvertIntoNewDirectory(t *testing.T) {
	dir := t.TempDir()
	paths, err := filepath.Glob("../../../examples/webdataset/*.tar")
	if err != nil || len(paths) != 2 {
		t.Fatalf("the example's shards: %v %v", paths, err)
	}
	for _, to := range []string{"parquet", "mds", "tar"} {
		out := filepath.Join(dir, "out-"+to) + string(filepath.Separator)
		args := append(append([]string{"convert", "-q", "--to", to, "--shard-size", "16KiB"}, paths...), out)
		if code, msg := process(t, nil, args...); code != 0 {
			t.Fatalf("--to %s into %s: exit %d: %s", to, out, code, msg)
		}
		ents, err := os.ReadDir(out)
		if err != nil || len(ents) == 0 {
			t.Fatalf("--to %s: %s holds %d entries (%v)", to, out, len(ents), err)
		}
		if code, msg := process(t, nil, "verify", strings.TrimSuffix(out, string(filepath.Separator))); code != 0 {
			t.Errorf("verify --to %s output: exit %d: %s", to, code, msg)
		}
	}
}
