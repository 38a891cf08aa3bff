//go:build !linux

package ratarmount

import "os"

// statFields are the st_* attributes written on systems other than Linux:
// st_mode, st_mtime and st_size, which is what ratarmount reads back.
func statFields(fi os.FileInfo) []statField { return genericStatFields(fi) }
