package mds_test

import (
	"path/filepath"
	"testing"

	"github.com/itarconv/itarconv/formats/formattest"
	"github.com/itarconv/itarconv/formats/mds"
)

// files are an output's files: its index and its shards.
func files(out string) []string {
	m, _ := filepath.Glob(filepath.Join(out, "shard.*"))
	return append([]string{filepath.Join(out, mds.IndexFile)}, m...)
}

// TestConformance runs the suite every format runs: plain shards, and
// shards compressed with zstd.
func TestConformance(t *testing.T) {
	formattest.Run(t, formattest.Format{Name: "mds", Files: files})
}

func TestConformanceZstd(t *testing.T) {
	formattest.Run(t, formattest.Format{Name: "mds", Files: files, Options: mds.Options{Compression: "zstd"}})
}
