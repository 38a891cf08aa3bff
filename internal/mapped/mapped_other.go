//go:build !unix

package mapped

import "os"

func mapFile(*os.File, int64, int64) ([]byte, error) { return nil, ErrUnsupported }

func unmapFile([]byte) error { return nil }
