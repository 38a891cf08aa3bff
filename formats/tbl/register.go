package tbl

import (
	"errors"
	"fmt"
	"strings"

	"github.com/itarconv/itarconv/formats/registry"
)

func init() {
	registry.Register(&registry.Format{Name: "tbl", Label: "TBL", Detect: Detect, Open: open, Create: create, CreatePart: createPart, MergeParts: mergeParts, Inspect: Inspect, Verify: Verify,
		Claims:  func(path string) bool { return strings.HasSuffix(path, ".tbl") },
		Damaged: damaged, Options: options, ParseOptions: parseOptions, CheckOptions: checkOptions})
}

// parseOptions makes TBL's own options of the flags' values: a
// RowsOptions for writing; reading takes none.
func parseOptions(dir registry.Direction, v registry.Values) (any, error) {
	if dir == registry.Read {
		return nil, nil
	}
	return RowsOptions{Version: v.Int("tbl-version"), LZ4: v.Bool("lz4"), NoNames: v.Bool("no-names"), Compat: v.String("compat")}, nil
}

// ErrCompat: RowsOptions.Compat given where no converter reproduces
// another's output (only package convert's converter of tar shards does).
var ErrCompat = errors.New("TBL: compat reproduces a converter of tar shards, not a write of rows")

// rowsOptions are the RowsOptions in a registry options value, without
// Compat.
func rowsOptions(v any) (RowsOptions, error) {
	o, err := registry.FormatOptions[RowsOptions]("TBL", v)
	if err == nil && o.Compat != "" {
		err = fmt.Errorf("%q: %w", o.Compat, ErrCompat)
	}
	return o, err
}

// options are TBL's options, as flags: how a TBL file is written.
var options = []registry.Option{
	{Name: "tbl-version", Type: registry.Int, Default: "2", Help: "TBL: format version to write, 1 or 2",
		Dir: registry.Write, Applies: "writing TBL"},
	{Name: "lz4", Type: registry.Bool, Default: "false", Help: "TBL v2: an LZ4 block per sample where it is smaller",
		Dir: registry.Write, Applies: "writing TBL"},
	{Name: "no-names", Type: registry.Bool, Default: "false", Help: "TBL v2: leave member names out of the metadata section",
		Dir: registry.Write, Applies: "writing TBL"},
	{Name: "compat", Type: registry.String, Help: `TBL: "turboloader" selects members as TurboLoader's v2 converter does (byte-identical output)`,
		Dir: registry.Write, Applies: "writing TBL"},
}

// checkOptions refuses the values of a conversion into TBL that do not go
// together.
func checkOptions(c registry.Conversion) error {
	if c.To != "tbl" {
		return nil
	}
	v := c.Values
	compat := v.String("compat")
	if compat != "" && compat != "turboloader" {
		return fmt.Errorf("--compat: unknown implementation %q (turboloader)", compat)
	}
	switch version := v.Int("tbl-version"); {
	case version != 1 && version != 2:
		return fmt.Errorf("--tbl-version: %d (1 or 2)", version)
	case version == 1 && (v.Bool("lz4") || compat != ""):
		return errors.New("--lz4 and --compat turboloader need --tbl-version 2")
	}
	if compat != "" && c.From != "tar" {
		label := c.From
		if f := registry.Lookup(c.From); f != nil {
			label = f.Label
		}
		return fmt.Errorf("--compat turboloader reproduces TurboLoader's converter of tar shards, not of %s", label)
	}
	if v.String("shard-size") != "" {
		return errors.New("--shard-size does not apply to writing TBL")
	}
	return nil
}

// damaged: the error opening a path that claims to be a TBL file.
func damaged(path string) error {
	r, err := Open(path)
	if err == nil {
		r.Close()
	}
	return err
}

// Detect tells whether path is a TBL file by its magic: "TBL" and the
// version byte, 1 or 2.
func Detect(path string) bool {
	b, ok := registry.Head(path, 4)
	return ok && string(b[:3]) == "TBL" && (b[3] == 1 || b[3] == 2)
}
