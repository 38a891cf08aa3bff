package cli

import (
	"github.com/spf13/cobra"

	"github.com/itarconv/itarconv/formats/registry"
	"github.com/itarconv/itarconv/formats/taridx"
	"github.com/itarconv/itarconv/loaders"
)

func newInspectCmd(e *env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "inspect FILE.taridx | X.barecat | X.tbl | SCDL_DIR | LOADER_INDEX [SHARDS...]",
		Short: "Describe an index or archive: header, counts, tables, contiguity, duplicates",
		Long: `Inspect describes a TARIDX index (header, counts, the extension table with
row counts, crash stems, contiguity, duplicate keys) or a Barecat archive
(layout, schema version, counts, shard sizes, largest directories) or a TBL
file (version, counts by format, compression ratio, metadata; opening it
checks the whole index) or an SCDL archive directory (header, array sizes,
cells, genes per block, nnz, density, and every mismatch between header and
files; exit 1 when there is one).

On another loader's index (DALI, energon, wids, ratarmount) it reads the
shards' headers too, and reports what the index holds, where it disagrees
with the shards, and the keys the loaders trip over (see verify, which
exits 1 on a disagreement).`,
		Args: argsBetween(1, -1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if _, ok := loaders.Detect(args[0]); ok {
				return e.checkLoaderIndex(cmd.Context(), args[0], args[1:], defaultWorkers(), false)
			}
			if len(args) > 1 {
				return usagef("inspect takes one path, except for a loader's index and its shards")
			}
			if err := checkClaimed(args[0]); err != nil {
				return err
			}
			// What no format recognises is read as a damaged index.
			f := registry.Detect(args[0])
			if f == nil || f.Inspect == nil {
				f = registry.Lookup(taridx.FormatName)
			}
			rep, err := f.Inspect(cmd.Context(), args[0])
			if f.Name == taridx.FormatName && rep == nil {
				return corrupt(taridx.FormatName, err)
			}
			return e.report(rep, err)
		},
	}
	return cmd
}
