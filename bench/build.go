package bench

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
)

// BuildItarconv compiles ./cmd/itarconv of the module the current
// directory is in (anywhere inside it) into out, so that a bench command
// times the code it sits beside.
func BuildItarconv(out string) error {
	goBin, err := exec.LookPath("go")
	if err != nil {
		goBin = filepath.Join(runtime.GOROOT(), "bin", "go")
	}
	gomod, err := exec.Command(goBin, "env", "GOMOD").Output()
	if err != nil {
		return fmt.Errorf("go env GOMOD: %w", err)
	}
	root := filepath.Dir(strings.TrimSpace(string(gomod)))
	if root == "." || strings.TrimSpace(string(gomod)) == os.DevNull {
		return errors.New("run the bench commands from inside the itarconv module")
	}
	cmd := exec.Command(goBin, "build", "-o", out, "./cmd/itarconv")
	cmd.Dir = root
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("building itarconv: %w", err)
	}
	return nil
}

// Verdict is how a target reads in a bench command's report.
func Verdict(ok bool) string {
	if ok {
		return "PASS"
	}
	return "FAIL"
}
