//go:build linux && (amd64 || arm64)

package partition

import (
	"io/fs"
	"path/filepath"
	"syscall"
	"time"
)

// fileID is the device and inode of the file fi describes (identity).
func fileID(fi fs.FileInfo) (dev, ino uint64, ok bool) {
	k, ok := identity(fi)
	return k.dev, k.ino, ok
}

// recordedStat is a stat a task recorded (ResolveShared): what another
// task takes for os.Stat's, its file's identity included (Sys).
type recordedStat struct {
	name  string
	size  int64
	mtime time.Time
	mode  fs.FileMode
	sys   *syscall.Stat_t
}

func (r *recordedStat) Name() string       { return filepath.Base(r.name) }
func (r *recordedStat) Size() int64        { return r.size }
func (r *recordedStat) Mode() fs.FileMode  { return r.mode }
func (r *recordedStat) ModTime() time.Time { return r.mtime }
func (r *recordedStat) IsDir() bool        { return r.mode.IsDir() }
func (r *recordedStat) Sys() any           { return r.sys }

func recordedInfo(name string, size, mtime int64, mode fs.FileMode, dev, ino uint64) (fs.FileInfo, bool) {
	return &recordedStat{name: name, size: size, mtime: time.Unix(0, mtime), mode: mode,
		sys: &syscall.Stat_t{Dev: dev, Ino: ino, Size: size, Mtim: syscall.NsecToTimespec(mtime)}}, true
}
