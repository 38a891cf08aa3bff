//go:build !unix

package tarscan

import (
	"io"
	"os"
)

func fastReaderAt(f *os.File) io.ReaderAt { return f }
