//go:build !unix

package barecat

import "os"

// mapFile: no mappings here; ViewFiles reads into memory instead.
func mapFile(*os.File, int64, int64) []byte { return nil }

func unmapFile([]byte) {}
