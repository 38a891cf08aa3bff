package cli

import (
	"os"
	"strings"

	"github.com/itarconv/itarconv/convert"
	"github.com/itarconv/itarconv/formats/scdl"
)

// checkConvertFlags refuses, as usage errors, the flags that do not apply
// to the pair of formats converted and values out of range: a flag the
// conversion would ignore is a mistake the user should hear of.
func checkConvertFlags(fl convertFlags, srcs []string, shardSize int64) error {
	from, to := fl.from, fl.to
	if from != "tar" || to != "barecat" {
		if fl.wrap || fl.crc || fl.onDuplicate != "" {
			return usagef("--wrap, --crc and --on-duplicate apply to converting tar shards to Barecat")
		}
	}
	if to != "tbl" && (fl.lz4 || fl.compat != "" || fl.noNames) {
		return usagef("--lz4, --compat and --no-names apply to writing TBL")
	}
	if from != "barecat" || to != "tar" {
		if fl.order != "path" {
			return usagef("--order applies to reading a Barecat archive into tar shards")
		}
		if fl.reuseTars {
			return usagef("--reuse-tars applies to converting a wrapped Barecat archive to tar shards")
		}
	}
	if from == "scdl" {
		if fl.scdlMode != scdl.ModeCells && fl.scdlMode != scdl.ModeArchive {
			return usagef("--scdl-mode: %q is neither cells nor archive", fl.scdlMode)
		}
		if fl.ignoreZeros {
			return usagef("--ignore-zeros applies to reading tar shards")
		}
	}
	if fl.cellsPerShard != 0 && (from != "scdl" || to != "tar") {
		return usagef("--cells-per-shard applies to SCDL to tar shards")
	}
	if fl.fold != "" && from != "tar" && to != "tar" {
		return usagef("--fold names the fold of tar shards to read or write")
	}
	switch [2]string{from, to} {
	case [2]string{"tar", "barecat"}:
		if fl.crc && !fl.wrap {
			return usagef("--crc goes with --wrap (a copy always computes crc32c)")
		}
		if fl.wrap && shardSize > 0 {
			return usagef("--shard-size does not apply to --wrap: the shards are the tar files")
		}
		switch fl.onDuplicate {
		case "", "first", "last":
		default:
			return usagef("--on-duplicate: %q is neither first nor last", fl.onDuplicate)
		}
	case [2]string{"barecat", "tar"}:
		if fl.order != "path" && fl.order != "address" {
			return usagef("--order: %q is neither path nor address", fl.order)
		}
	case [2]string{"scdl", "tar"}:
		switch {
		case fl.cellsPerShard < 0:
			return usagef("--cells-per-shard must be positive")
		case fl.cellsPerShard > 0 && fl.scdlMode == scdl.ModeArchive:
			return usagef("--cells-per-shard applies to --scdl-mode cells")
		case fl.fold == convert.SCDLMetaFold:
			return usagef("--fold %q: %s is taken", fl.fold, convert.SCDLMetaFold)
		}
	}
	if to == "tbl" {
		if fl.tblVersion != 1 && fl.tblVersion != 2 {
			return usagef("--tbl-version: %d (1 or 2)", fl.tblVersion)
		}
		if fl.tblVersion == 1 && (fl.lz4 || fl.compat != "") {
			return usagef("--lz4 and --compat turboloader need --tbl-version 2")
		}
		if fl.compat != "" && from != "tar" {
			return usagef("--compat turboloader reproduces TurboLoader's converter of tar shards, not of %s", label(from))
		}
		if fl.shardSize != "" {
			return usagef("--shard-size does not apply to writing TBL")
		}
	}
	if to == "scdl" {
		if fl.shardSize != "" {
			return usagef("--shard-size applies to writing shards")
		}
		if len(srcs) != 1 {
			return usagef("--to scdl reads one directory of folds (cells + scdlmeta, or scdl), one Barecat archive or one TBL file, not %d paths", len(srcs))
		}
		if from == "tar" {
			if st, err := os.Stat(srcs[0]); err != nil {
				return err
			} else if !st.IsDir() {
				return usagef("%s is not a directory: --to scdl reads the folds of a directory", srcs[0])
			}
		}
	}
	if strings.ContainsAny(fl.fold, "/") {
		return usagef("--fold %q: a fold name has no \"/\"", fl.fold)
	}
	return nil
}
