package parquet

import (
	"path/filepath"
	"testing"

	"github.com/itarconv/itarconv/formats/formattest"
)

// parquetFiles are the Parquet files of a dataset written at out.
func parquetFiles(out string) []string {
	files, _ := filepath.Glob(filepath.Join(out, "data", "*.parquet"))
	return files
}

func TestFormat(t *testing.T) {
	formattest.Run(t, formattest.Format{Name: "parquet", Out: "sample", Files: parquetFiles,
		UncheckedIndex: "Parquet's footer (the schema, the key-value metadata, the row groups' places) carries no checksum"})
}
