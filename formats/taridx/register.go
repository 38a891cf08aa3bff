package taridx

import (
	"strings"

	"github.com/itarconv/itarconv/formats/registry"
)

func init() {
	registry.Register(&registry.Format{Name: FormatName, Label: "TARIDX", Detect: Detect, Inspect: Inspect,
		Claims: func(path string) bool { return strings.HasSuffix(path, ".taridx") }})
}

// FormatName is TARIDX's name in the registry.
const FormatName = "taridx"

// Detect tells whether path is a TARIDX file by its magic.
func Detect(path string) bool {
	b, ok := registry.Head(path, 8)
	return ok && strings.TrimRight(string(b), "\x00") == Magic
}
