package taridx

import (
	"strings"

	"github.com/itarconv/itarconv/formats/registry"
)

func init() {
	registry.Register(&registry.Format{Name: "taridx", Label: "TARIDX", Detect: Detect, Inspect: Inspect,
		Claims: func(path string) bool { return strings.HasSuffix(path, ".taridx") }})
}

// Detect tells whether path is a TARIDX file by its magic.
func Detect(path string) bool {
	b, ok := registry.Head(path, 8)
	return ok && strings.TrimRight(string(b), "\x00") == Magic
}
