package barecat

import (
	"strings"

	"github.com/itarconv/itarconv/formats/registry"
)

func init() {
	registry.Register(&registry.Format{Name: "barecat", Label: "Barecat", Detect: Detect, Open: open, Create: create, CreatePart: createPart, MergeParts: mergeParts, Inspect: Inspect, Verify: Verify,
		Claims: func(path string) bool {
			return strings.HasSuffix(path, ".barecat") || strings.HasSuffix(path, "-sqlite-index")
		}})
}

// Detect tells whether path names a Barecat archive: an index file (an
// SQLite database), or the base path of either layout (0.3: the index at
// path; 0.2: path-sqlite-index).
//
// An SQLite database alone is not one (ratarmount's and energon's indexes
// are SQLite too): it must hold Barecat's files and dirs tables, read from
// the database as SQLite reads it, never a FIFO waited on.
func Detect(path string) bool {
	for _, p := range []string{path, path + "-sqlite-index"} {
		if b, ok := registry.Head(p, len(sqliteMagic)); ok && string(b) == sqliteMagic {
			return isIndex(p) == nil
		}
	}
	return false
}
