//go:build !(linux && (amd64 || arm64))

package partition

import "io/fs"

// fileID: none here; ResolveShared records nothing.
func fileID(fs.FileInfo) (dev, ino uint64, ok bool) { return 0, 0, false }

func recordedInfo(string, int64, int64, fs.FileMode, uint64, uint64) (fs.FileInfo, bool) {
	return nil, false
}
