//go:build !unix

package pathguard

import (
	"io/fs"
	"os"
)

func openNonblocking(path string) (*os.File, error) { return os.Open(path) }

// identity: none here; Inputs compares with os.SameFile.
func identity(fs.FileInfo) (fileID, bool) { return fileID{}, false }
