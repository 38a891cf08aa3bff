//go:build !unix

package tarfile

import (
	"errors"
	"os"
)

func mmapFile(*os.File, int64) ([]byte, error) {
	return nil, errors.New("memory mapping is not supported on this system")
}

func munmapFile([]byte) error { return nil }
