//go:build !linux

package filecopy

import (
	"context"
	"os"
)

func kernelCopy(context.Context, *os.File, int64, *os.File, int64, int64) (int64, error) {
	return 0, nil
}
