package barecat

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/itarconv/itarconv/formats/registry"
	"github.com/itarconv/itarconv/formats/tarfile"
)

func init() {
	registry.Register(&registry.Format{Name: "barecat", Label: "Barecat", Detect: Detect, Open: open, Create: create, CreatePart: createPart, MergeParts: mergeParts, Inspect: Inspect, Verify: Verify,
		Claims: func(path string) bool {
			return strings.HasSuffix(path, ".barecat") || strings.HasSuffix(path, "-sqlite-index")
		},
		Damaged: damaged, Inputs: inputs, Outputs: outputs, Options: options, ParseOptions: parseOptions, CheckOptions: checkOptions})
}

// OpenOptions are Barecat's own options for reading an archive
// (registry.OpenOptions.Format). The layout it is read in is
// registry.OpenOptions.Mode ("path" or "address").
type OpenOptions struct {
	// ReuseTars, from a wrapped archive to tar shards, writes only the
	// fold's index over the tar files its shards link to (package
	// convert's ReuseTars); other conversions read the archive as usual.
	ReuseTars bool
	// Scan tunes reading those tar files.
	Scan tarfile.Options
}

// CreateOptions are Barecat's own options for writing an archive
// (registry.CreateOptions.Format). They apply to tar shards converted in
// place (package convert's TarToBarecat); an archive written from rows
// takes the zero value only.
type CreateOptions struct {
	// Wrap writes no data: the archive's shards are links to the tar
	// shards.
	Wrap bool
	// CRC computes crc32c with Wrap too (it reads every payload).
	CRC bool
	// OnDuplicate is which member keeps a duplicated path: "first",
	// "last", or "" to refuse duplicates.
	OnDuplicate string
}

// ErrTarOnly: options that apply to tar shards converted in place, given
// to an archive written from rows.
var ErrTarOnly = errors.New("Barecat: wrap, crc and on-duplicate apply to converting tar shards")

// parseOptions makes Barecat's own options of the flags' values.
func parseOptions(dir registry.Direction, v registry.Values) (any, error) {
	if dir == registry.Read {
		return OpenOptions{ReuseTars: v.Bool("reuse-tars"), Scan: tarfile.Options{IgnoreZeros: v.Bool("ignore-zeros")}}, nil
	}
	return CreateOptions{Wrap: v.Bool("wrap"), CRC: v.Bool("crc"), OnDuplicate: v.String("on-duplicate")}, nil
}

// createOptions are the options of an archive written from rows: the
// zero CreateOptions, or none.
func createOptions(v any) error {
	o, err := registry.FormatOptions[CreateOptions]("Barecat", v)
	if err == nil && o != (CreateOptions{}) {
		err = ErrTarOnly
	}
	return err
}

// options are Barecat's options, as flags: how tar shards become an
// archive, and how an archive becomes tar shards.
var options = []registry.Option{
	{Name: "wrap", Type: registry.Bool, Default: "false", Help: "Barecat: copy no data; shards are links to the tar shards",
		Dir: registry.Write, With: "tar", Applies: "converting tar shards to Barecat"},
	{Name: "crc", Type: registry.Bool, Default: "false", Help: "with --wrap: compute every file's crc32c (reads all payloads)",
		Dir: registry.Write, With: "tar", Applies: "converting tar shards to Barecat"},
	{Name: "on-duplicate", Type: registry.String, Help: `"first" or "last": which member keeps a duplicated path (default: refuse)`,
		Dir: registry.Write, With: "tar", Applies: "converting tar shards to Barecat"},
	{Name: "order", Type: registry.String, Default: "path", Help: `from Barecat: "path" or "address" (shard, offset)`,
		Dir: registry.Read, With: "tar", Mode: true, Applies: "reading a Barecat archive into tar shards"},
	{Name: "reuse-tars", Type: registry.Bool, Default: "false", Help: "from a wrapped Barecat: write only OUTDIR/<fold>.taridx over the tars its shards link to, after checking every member",
		Dir: registry.Read, With: "tar", Applies: "converting a wrapped Barecat archive to tar shards"},
	// --reuse-tars reads the tars.
	{Name: "ignore-zeros", Type: registry.Bool, Default: "false", Help: "read tar shards past zero blocks (concatenated archives)",
		Dir: registry.Read, With: "tar", Applies: "reading tar shards"},
}

// checkOptions refuses the values that do not go together.
func checkOptions(c registry.Conversion) error {
	v := c.Values
	switch {
	case c.From == "tar" && c.To == "barecat":
		if v.Bool("crc") && !v.Bool("wrap") {
			return fmt.Errorf("--crc goes with --wrap (a copy always computes crc32c)")
		}
		if v.Bool("wrap") && v.String("shard-size") != "" {
			return fmt.Errorf("--shard-size does not apply to --wrap: the shards are the tar files")
		}
		switch d := v.String("on-duplicate"); d {
		case "", "first", "last":
		default:
			return fmt.Errorf("--on-duplicate: %q is neither first nor last", d)
		}
	case c.From == "barecat" && c.To == "tar":
		if o := v.String("order"); o != "path" && o != "address" {
			return fmt.Errorf("--order: %q is neither path nor address", o)
		}
	}
	return nil
}

// damaged: the error opening a path that claims to be an archive.
func damaged(path string) error {
	a, err := Open(path)
	if err == nil {
		a.Close()
	}
	return err
}

// inputs: the index (path, or a 0.2 base path's path-sqlite-index), then
// the shards.
func inputs(path string) []string {
	files := []string{path}
	base := strings.TrimSuffix(path, "-sqlite-index")
	if _, err := os.Stat(path); err != nil {
		if _, err := os.Stat(path + "-sqlite-index"); err == nil {
			files, base = []string{path + "-sqlite-index"}, path
		}
	}
	return append(files, shardFiles(base)...)
}

// outputs: the archive and its shards.
func outputs(path string, _ registry.Conversion) registry.Outputs {
	var o registry.Outputs
	if _, err := os.Lstat(path); err == nil {
		o.Replaced = append(o.Replaced, path)
	}
	o.Replaced = append(o.Replaced, shardFiles(path)...)
	return o
}

// shardFiles are the shards of the archive at base, but for a write's
// temporaries.
func shardFiles(base string) []string {
	quoted := strings.NewReplacer(`*`, `\*`, `?`, `\?`, `[`, `\[`, `\`, `\\`).Replace(base)
	shards, _ := filepath.Glob(quoted + "-shard-*")
	var out []string
	for _, s := range shards {
		if !strings.Contains(filepath.Base(s), ".itarconv-tmp") {
			out = append(out, s)
		}
	}
	return out
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
