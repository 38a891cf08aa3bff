package tbl

import (
	"strings"

	"github.com/itarconv/itarconv/formats/registry"
)

func init() {
	registry.Register(&registry.Format{Name: "tbl", Label: "TBL", Detect: Detect, Open: open, Create: create, CreatePart: createPart, MergeParts: mergeParts, Inspect: Inspect, Verify: Verify,
		Claims: func(path string) bool { return strings.HasSuffix(path, ".tbl") }})
}

// Detect tells whether path is a TBL file by its magic: "TBL" and the
// version byte, 1 or 2.
func Detect(path string) bool {
	b, ok := registry.Head(path, 4)
	return ok && string(b[:3]) == "TBL" && (b[3] == 1 || b[3] == 2)
}
