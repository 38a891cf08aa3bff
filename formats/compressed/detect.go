package compressed

import (
	"bytes"
	"io"

	"github.com/itarconv/itarconv/internal/pathguard"
)

// Codec is a compression format a shard may be stored in.
type Codec string

const (
	None  Codec = ""
	Gzip  Codec = "gzip"
	Zstd  Codec = "zstd"
	Bzip2 Codec = "bzip2"
	Xz    Codec = "xz"
)

// HeadSize is how many leading bytes Sniff needs to tell every codec.
const HeadSize = 6

var magics = []struct {
	codec Codec
	magic []byte
}{
	{Gzip, []byte{0x1f, 0x8b}},
	{Zstd, []byte{0x28, 0xb5, 0x2f, 0xfd}},
	{Bzip2, []byte("BZh")},
	{Xz, []byte{0xfd, '7', 'z', 'X', 'Z', 0x00}},
}

// Sniff tells the codec of a stream from its first bytes (None when they
// are no compressed stream's).
func Sniff(head []byte) Codec {
	for _, m := range magics {
		if bytes.HasPrefix(head, m.magic) {
			return m.codec
		}
	}
	return None
}

// DetectFile tells the codec of a file from its first bytes.
func DetectFile(path string) (Codec, error) {
	f, err := pathguard.Open(path) // a FIFO is refused, not read
	if err != nil {
		return None, err
	}
	defer f.Close()
	return DetectReaderAt(f)
}

// DetectReaderAt tells the codec of r from its first bytes, read at
// offset 0 (a file the caller opened keeps its offset).
func DetectReaderAt(r io.ReaderAt) (Codec, error) {
	head := make([]byte, HeadSize)
	n, err := r.ReadAt(head, 0)
	if err != nil && err != io.EOF {
		return None, err
	}
	return Sniff(head[:n]), nil
}
