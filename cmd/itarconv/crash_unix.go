//go:build unix

package main

import (
	"os"
	"strings"
	"syscall"
)

// quietCrashes makes a panic that no code recovers (a bug, on a goroutine
// of a library package) print its message without the goroutines' stacks,
// unless ITARCONV_DEBUG asks for them: cli.Main and dataset.Run already
// report the panics they see in one line. The runtime reads GOTRACEBACK
// only as the process starts, so the process starts again with it set, in
// place (same pid, descriptors and arguments). Where GOTRACEBACK is set
// already, it is left as the user chose.
func quietCrashes() {
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
