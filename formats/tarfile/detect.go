package tarfile

import "github.com/itarconv/itarconv/formats/registry"

// Detect tells whether path is a tar file: its first block is a header
// whose checksum holds (an archive may also start with its end: two zero
// blocks).
func Detect(path string) bool {
	b, ok := registry.Head(path, BlockSize)
	return ok && (checksumOK(b) || [BlockSize]byte(b) == [BlockSize]byte{})
}
