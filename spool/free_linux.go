package spool

import "syscall"

// freeSpace is how many bytes an unprivileged writer may still put on the
// file system holding dir; ok is false where it cannot tell (a file
// system that reports no blocks at all, as some network ones do).
func freeSpace(dir string) (free uint64, ok bool) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil || st.Blocks == 0 || st.Bsize <= 0 {
		return 0, false
	}
	return st.Bavail * uint64(st.Bsize), true
}
