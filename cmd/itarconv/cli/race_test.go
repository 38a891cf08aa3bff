package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// TestConcurrentConversionsIntoOneOutput: two conversions started at once
// into the same new output: exactly one succeeds, the other is refused
// (exit 1, "exists"), and the output is whole (verify passes). Before,
// both exited 0 and the first one's output was silently replaced.
func TestConcurrentConversionsIntoOneOutput(t *testing.T) {
	a, _ := writeShards(t, 2, 30)
	b, _ := writeShards(t, 2, 40)
	// A fold is converted from TBL files (tar into tar is no conversion).
	tbls := map[string]string{}
	for _, src := range []string{a, b} {
		tbls[src] = filepath.Join(t.TempDir(), "s.tbl")
		if code, _, stderr := run(t, "convert", "-q", src, tbls[src]); code != 0 {
			t.Fatalf("convert: exit %d: %s", code, stderr)
		}
	}
	for _, target := range []string{"x.tbl", "x.barecat", "fold"} {
		for trial := range 4 {
			out := filepath.Join(t.TempDir(), target)
			var wg sync.WaitGroup
			codes, msgs := make([]int, 2), make([]string, 2)
			for i, src := range []string{a, b} {
				wg.Add(1)
				go func() {
					defer wg.Done()
					args := []string{"convert", "-q", src, out}
					if target == "fold" {
						args = []string{"convert", "-q", tbls[src], out}
					}
					codes[i], msgs[i] = process(t, nil, args...)
				}()
			}
			wg.Wait()
			won := 0
			for i := range codes {
				if codes[i] == 0 {
					won++
				} else if codes[i] != ExitData || !strings.Contains(msgs[i], "exists") {
					t.Errorf("%s trial %d: the refused run: exit %d: %s", target, trial, codes[i], msgs[i])
				}
			}
			if won != 1 {
				t.Fatalf("%s trial %d: %d runs succeeded (exits %v): %q", target, trial, won, codes, msgs)
			}
			verifyArg := out
			if code, stdout, stderr := run(t, "verify", verifyArg); code != 0 {
				t.Errorf("%s trial %d: the output does not verify: exit %d: %s%s", target, trial, code, stdout, stderr)
			}
			if entries, _ := os.ReadDir(filepath.Dir(out)); target != "fold" && len(entries) > 4 {
				t.Errorf("%s trial %d: %s", target, trial, fmt.Sprint(entries))
			}
		}
	}
}
