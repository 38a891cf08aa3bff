//go:build !linux

package formatcompare

import "errors"

func dropPages([]string) (int64, error) {
	return 0, errors.New("dropping a file's pages is implemented on Linux only")
}

func syncFiles([]string) {}
