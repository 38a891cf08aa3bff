package taridx

import (
	"io"
	"strings"

	"github.com/itarconv/itarconv/formats/registry"
	"github.com/itarconv/itarconv/internal/pathguard"
)

func init() {
	registry.Register(&registry.Format{Name: "taridx", Label: "TARIDX", Detect: Detect,
		Claims: func(path string) bool { return strings.HasSuffix(path, ".taridx") }})
}

// Detect tells whether path is a TARIDX file by its magic.
func Detect(path string) bool {
	f, err := pathguard.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	var magic [8]byte
	_, err = io.ReadFull(f, magic[:])
	return err == nil && strings.TrimRight(string(magic[:]), "\x00") == Magic
}
