package tbl

import (
	"io"
	"strings"

	"github.com/itarconv/itarconv/formats/registry"
	"github.com/itarconv/itarconv/internal/pathguard"
)

func init() {
	registry.Register(&registry.Format{Name: "tbl", Label: "TBL", Detect: Detect,
		Claims: func(path string) bool { return strings.HasSuffix(path, ".tbl") }})
}

// Detect tells whether path is a TBL file by its magic: "TBL" and the
// version byte, 1 or 2.
func Detect(path string) bool {
	f, err := pathguard.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	var magic [4]byte
	_, err = io.ReadFull(f, magic[:])
	return err == nil && string(magic[:3]) == "TBL" && (magic[3] == 1 || magic[3] == 2)
}
