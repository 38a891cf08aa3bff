package tarscan

import (
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/itarconv/itarconv/formats/registry"
	"github.com/itarconv/itarconv/internal/pathguard"
)

func init() {
	registry.Register(&registry.Format{Name: "tar", Label: "tar", Detect: Detect, Claims: claims})
}

// Detect tells whether path is a tar file: its first block is a header
// whose checksum holds (an archive may also start with its end: two zero
// blocks).
func Detect(path string) bool {
	f, err := pathguard.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	var blk [BlockSize]byte
	if _, err := io.ReadFull(f, blk[:]); err != nil {
		return false
	}
	return checksumOK(blk[:]) || blk == [BlockSize]byte{}
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
