//go:build unix

package quietcrash

import (
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// TestMain lets TestQuietCrashes run this test binary as the command runs:
// Exec first, then a panic no code recovers, on a goroutine.
func TestMain(m *testing.M) {
	if os.Getenv("ITARCONV_CRASH_TEST") == "1" {
		Exec()
		go func() {
			var rows []int
			_ = rows[3]
		}()
		time.Sleep(10 * time.Second)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestQuietCrashes: an unrecovered panic prints its message and no
// goroutine stacks, unless ITARCONV_DEBUG is set.
func TestQuietCrashes(t *testing.T) {
	for _, debug := range []bool{false, true} {
		cmd := exec.Command(os.Args[0], "-test.run=TestQuietCrashes")
		cmd.Env = append(os.Environ(), "ITARCONV_CRASH_TEST=1", "GOTRACEBACK=")
		if debug {
			cmd.Env = append(cmd.Env, "ITARCONV_DEBUG=1")
		}
		out, err := cmd.CombinedOutput()
		if err == nil {
			t.Fatalf("debug %v: the panic did not end the process: %s", debug, out)
		}
		msg := string(out)
		if !strings.Contains(msg, "index out of range [3]") {
			t.Errorf("debug %v: no panic message: %s", debug, msg)
		}
		if stacks := strings.Contains(msg, "goroutine "); stacks != debug {
			t.Errorf("debug %v: stacks printed: %v: %s", debug, stacks, msg)
		}
	}
}
