package convert

import (
	"bytes"
	"cmp"
	"context"
	"fmt"

	"github.com/itarconv/itarconv/dataset"
	"github.com/itarconv/itarconv/fold"
	"github.com/itarconv/itarconv/formats/registry"
	"github.com/itarconv/itarconv/formats/tarfile"
	"github.com/itarconv/itarconv/formats/tbl"
	"github.com/itarconv/itarconv/spool"
)

// TBLOptions tune TarToTBL and ToTBL.
type TBLOptions struct {
	Version int  // 1 or 2 (default 2)
	LZ4     bool // v2: an LZ4 block per sample where it is smaller
	// NoNames leaves v2's metadata section out: member names are lost.
	NoNames bool
	// CompatTurboLoader selects members as TurboLoader's v2 converter does
	// (regular files with a known extension and size > 0, named by their
	// header's name field as a C string), for byte-identical output.
	CompatTurboLoader bool
	Workers           int
	// Overwrite replaces an existing output (--force).
	Overwrite bool
	Scan      tarfile.Options
	// Spool reads compressed tar shards through decompressed copies.
	Spool    *spool.Spool
	Progress func(dataset.Progress)
	// Memory bounds what the writer keeps for the whole file until its
	// end, in bytes (tbl.RowsOptions.Memory; 0: tbl.DefaultMemory).
	Memory int64
}

// TarToTBL converts tar shards (in fid order) into one TBL file (see
// ToTBL). The tar source is read in place: headers only for the count,
// payloads mapped a batch at a time for the copy.
func TarToTBL(ctx context.Context, shards []string, out string, opts TBLOptions) (*tbl.RowsStats, error) {
	if opts.CompatTurboLoader {
		opts.Scan.HeaderBlocks = true
	}
	return ToTBL(ctx, func(bool) (dataset.PayloadSource, error) {
		src := fold.NewTarShards(shards, opts.Scan)
		src.Spool = opts.Spool
		src.BatchBytes = 2 << 20 // payloads wait in memory between Prepare and Write
		return src, nil
	}, out, opts)
}

// ToTBL converts any source into one TBL file (tbl.WriteRows): every file
// row becomes a sample, in the source's order. newSource makes the source
// of each of the two passes (counting is true for the first, which need
// not carry bytes). Tar shards are mapped in place; with
// CompatTurboLoader, the source must be tar shards, whose members are
// selected as TurboLoader's converter selects them.
func ToTBL(ctx context.Context, newSource func(counting bool) (dataset.PayloadSource, error), out string, opts TBLOptions) (*tbl.RowsStats, error) {
	newSource, o := tblSetup(newSource, opts)
	return tbl.WriteRows(ctx, newSource, out, o)
}

// tblSetup gives the TBL writer's options for opts, and the sources it
// reads (with CompatTurboLoader, checked to be tar shards).
func tblSetup(newSource func(counting bool) (dataset.PayloadSource, error), opts TBLOptions) (func(bool) (dataset.PayloadSource, error), tbl.RowsOptions) {
	if opts.Version == 0 {
		opts.Version = 2
	}
	o := tbl.RowsOptions{Version: opts.Version, LZ4: opts.LZ4, NoNames: opts.NoNames, Workers: opts.Workers, Progress: opts.Progress, Overwrite: opts.Overwrite, Memory: opts.Memory}
	if opts.CompatTurboLoader {
		// Upstream never writes the metadata section, nor knows metadata
		// members.
		o.NoNames, o.NoMetaMembers = true, true
		var first *fold.TarShards
		o.Select = func(shard int, r *dataset.Row) (string, error) { return turboLoaderSkips(first, shard, r) }
		inner := newSource
		newSource = func(counting bool) (dataset.PayloadSource, error) {
			src, err := inner(counting)
			if err != nil {
				return nil, err
			}
			if err := compatTurboLoader(opts.Version); err != nil {
				registry.CloseSource(src)
				return nil, err
			}
			tars, ok := src.(*fold.TarShards)
			if !ok {
				registry.CloseSource(src)
				return nil, errCompatNotTar
			}
			if first == nil {
				first = tars
			}
			return src, nil
		}
	}
	return newSource, o
}

var errCompatNotTar = fmt.Errorf("--compat turboloader reproduces the converter of tar shards: the source must be tar")

// compatTurboLoader refuses a TBL version TurboLoader's converter does not
// write.
func compatTurboLoader(version int) error {
	if version != 2 {
		return fmt.Errorf("--compat turboloader reproduces the v2 converter: it needs TBL version 2")
	}
	return nil
}

// turboLoaderSkips selects as TurboLoader's v2 tool does: type '0' or NUL,
// size > 0, and a known extension after the last dot of the name field
// read as a C string, which for a 100-byte name runs on into the mode
// field. It returns why a member is not a sample ("" when it is).
func turboLoaderSkips(tars *fold.TarShards, shard int, r *dataset.Row) (string, error) {
	if r.Type != tarfile.TypeReg && r.Type != tarfile.TypeRegA {
		return "not a regular file", nil
	}
	if r.Size == 0 {
		return "empty", nil
	}
	name, err := turboLoaderName(tars, shard, r)
	if err != nil {
		return "", err
	}
	if tbl.FormatFromName(name) == tbl.FormatUnknown {
		return "unknown extension", nil
	}
	return "", nil
}

// turboLoaderName is the member's name as TurboLoader reads it: the
// header's name field as a C string.
func turboLoaderName(tars *fold.TarShards, shard int, r *dataset.Row) (string, error) {
	if len(r.Name) < 100 {
		return string(r.Name), nil
	}
	f, err := tars.ShardFile(shard)
	if err != nil {
		return "", err
	}
	defer f.Close()
	var hdr [tarfile.BlockSize]byte
	if _, err := f.ReadAt(hdr[:], r.Offset); err != nil {
		return "", fmt.Errorf("%s: offset %d: %w", tars.Paths[shard], r.Offset, err)
	}
	if i := bytes.IndexByte(hdr[:], 0); i >= 0 {
		return string(hdr[:i]), nil
	}
	return string(hdr[:]), nil
}

// compatTurboLoaderName is the value of tbl.RowsOptions.Compat that
// selects members as TurboLoader's converter does.
const compatTurboLoaderName = "turboloader"

// checkCompat refuses a Compat no converter reproduces, and TurboLoader's
// with a TBL version it does not write.
func checkCompat(t tbl.RowsOptions) error {
	switch t.Compat {
	case "":
		return nil
	case compatTurboLoaderName:
		return compatTurboLoader(cmp.Or(t.Version, 2))
	}
	return fmt.Errorf("TBL: compat %q: %w", t.Compat, tbl.ErrCompat)
}
