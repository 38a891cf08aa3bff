//go:build !linux

package filecopy

import "os"

func kernelCopy(*os.File, int64, *os.File, int64, int64) (int64, error) { return 0, nil }
