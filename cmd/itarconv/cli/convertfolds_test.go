package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestConvertSeveralFolds: a directory of two folds converted into tar
// shards names the folds and asks for --fold (exit 2), where it used to say
// there was nothing to convert; one plain fold chosen says what would
// write new shards.
func TestConvertSeveralFolds(t *testing.T) {
	dir, _ := writeShards(t, 1, 2)
	b, err := os.ReadFile(filepath.Join(dir, "train_0000.tar"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "val_0000.tar"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "out")
	code, _, stderr := run(t, "convert", dir, out)
	if code != ExitUsage || !strings.Contains(stderr, "holds folds train, val") || !strings.Contains(stderr, "choose one with --fold") {
		t.Errorf("two folds: exit %d: %s", code, stderr)
	}
	code, _, stderr = run(t, "convert", "--fold", "train", dir, out)
	if code != ExitUsage || !strings.Contains(stderr, "nothing to convert (--shard-size writes new shards") {
		t.Errorf("one plain fold: exit %d: %s", code, stderr)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("output made: %v", err)
	}
}
