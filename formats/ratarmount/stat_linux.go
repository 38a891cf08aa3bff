//go:build linux

package ratarmount

import (
	"os"
	"syscall"
)

// statFields are the st_* attributes of Python's os.stat_result on Linux,
// in dir() order, from the stat(2) result behind fi (or the generic ones
// when fi has none).
func statFields(fi os.FileInfo) []statField {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return genericStatFields(fi)
	}
	var f []statField
	f = append(f, timeFields("st_atime", int64(st.Atim.Sec), int64(st.Atim.Nsec))...)
	f = append(f, intField("st_blksize", int64(st.Blksize)), intField("st_blocks", int64(st.Blocks)))
	f = append(f, timeFields("st_ctime", int64(st.Ctim.Sec), int64(st.Ctim.Nsec))...)
	f = append(f, uintField("st_dev", uint64(st.Dev)), uintField("st_gid", uint64(st.Gid)),
		uintField("st_ino", uint64(st.Ino)), uintField("st_mode", uint64(st.Mode)))
	f = append(f, timeFields("st_mtime", int64(st.Mtim.Sec), int64(st.Mtim.Nsec))...)
	f = append(f, uintField("st_nlink", uint64(st.Nlink)), uintField("st_rdev", uint64(st.Rdev)),
		intField("st_size", st.Size), uintField("st_uid", uint64(st.Uid)))
	return f
}
