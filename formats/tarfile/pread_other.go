//go:build !unix

package tarfile

import (
	"io"
	"os"
)

func fastReaderAt(f *os.File) io.ReaderAt { return f }
