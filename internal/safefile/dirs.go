package safefile

import (
	"os"
	"path/filepath"
	"syscall"
)

// MissingDirs returns the directories of path that do not exist yet,
// deepest first: what a run that creates them must remove if it fails.
func MissingDirs(path string) []string {
	var dirs []string
	for p := filepath.Clean(path); ; p = filepath.Dir(p) {
		if _, err := os.Lstat(p); err == nil {
			break
		}
		dirs = append(dirs, p)
		if filepath.Dir(p) == p {
			break
		}
	}
	return dirs
}

// RemoveCreated removes, deepest first, the directories MissingDirs named,
// while they are empty (a failed output's temporaries are gone by then).
// It removes directories only (rmdir): where the output itself is a
// file, another run may have put it there meanwhile.
// A directory the run never made (the output itself, a file) is passed.
func RemoveCreated(dirs []string) {
	for _, d := range dirs {
		if err := syscall.Rmdir(d); err != nil && err != syscall.ENOENT {
			return
		}
	}
}
