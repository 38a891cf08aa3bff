package cli

import (
	"context"
	"os"
	"path/filepath"
)

// isSCDL tells whether path is an SCDL archive directory (it holds
// header.sch).
func isSCDL(path string) bool {
	st, err := os.Stat(filepath.Join(path, "header.sch"))
	return err == nil && st.Mode().IsRegular()
}

func convertSCDLToTar(ctx context.Context, e *env, fl convertFlags, src, dstDir string, shardSize int64) error {
	return usagef("SCDL conversion is not available yet")
}

func convertToSCDL(ctx context.Context, e *env, fl convertFlags, srcs []string, dst string) error {
	return usagef("SCDL conversion is not available yet")
}
