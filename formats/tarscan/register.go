package tarscan

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/itarconv/itarconv/formats/registry"
)

func init() {
	registry.Register(&registry.Format{Name: "tar", Label: "tar", Detect: Detect, Claims: claims})
}

// Detect tells whether path is a tar file: its first block is a header
// whose checksum holds (an archive may also start with its end: two zero
// blocks).
func Detect(path string) bool {
	b, ok := registry.Head(path, BlockSize)
	return ok && (checksumOK(b) || [BlockSize]byte(b) == [BlockSize]byte{})
}

// claims: a .tar file, or a directory holding .tar files (a fold of shards).
func claims(path string) bool {
	if strings.HasSuffix(path, ".tar") {
		return true
	}
	if st, err := os.Stat(path); err != nil || !st.IsDir() {
		return false
	}
	m, _ := filepath.Glob(filepath.Join(path, "*.tar"))
	return len(m) > 0
}
