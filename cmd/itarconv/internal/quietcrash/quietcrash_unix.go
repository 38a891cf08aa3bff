//go:build unix

package quietcrash

import (
	"os"
	"strings"
	"syscall"
)

func init() {
	if strings.HasSuffix(os.Args[0], ".test") {
		return // a test binary: its tests call Exec when they want it
	}
	Exec()
}

// Exec starts the process again with GOTRACEBACK=none, unless it or
// ITARCONV_DEBUG is set. It returns only where it does nothing, or the
// exec failed: the process then runs as it is.
func Exec() {
	if os.Getenv("GOTRACEBACK") != "" || os.Getenv("ITARCONV_DEBUG") != "" {
		return
	}
	exe, err := os.Executable()
	if err != nil {
		return
	}
	env := []string{"GOTRACEBACK=none"}
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "GOTRACEBACK=") { // an empty one, set
			env = append(env, kv)
		}
	}
	syscall.Exec(exe, os.Args, env) // returns only if it failed: run as is
}
