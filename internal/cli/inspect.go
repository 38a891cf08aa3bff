package cli

import (
	"fmt"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/itarconv/itarconv/formats/registry"
	"github.com/itarconv/itarconv/formats/taridx"
)

func newInspectCmd(e *env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "inspect FILE.taridx | X.barecat | X.tbl | SCDL_DIR",
		Short: "Describe an index or archive: header, counts, tables, contiguity, duplicates",
		Long: `Inspect describes a TARIDX index (header, counts, the extension table with
row counts, crash stems, contiguity, duplicate keys) or a Barecat archive
(layout, schema version, counts, shard sizes, largest directories) or a TBL
file (version, counts by format, compression ratio, metadata; opening it
checks the whole index) or an SCDL archive directory (header, array sizes,
cells, genes per block, nnz, density, and every mismatch between header and
files; exit 1 when there is one).`,
		Args: argsBetween(1, 1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkClaimed(args[0]); err != nil {
				return err
			}
			if registry.Is("scdl", args[0]) {
				return inspectSCDL(e, args[0])
			}
			if registry.Is("tbl", args[0]) {
				info, err := describeTBL(args[0])
				if err != nil {
					return err
				}
				if e.jsonOut {
					return e.printJSON(info)
				}
				e.printTBLInfo(info)
				return nil
			}
			if registry.Is("barecat", args[0]) {
				info, err := describeBarecat(cmd.Context(), args[0])
				if err != nil {
					return err
				}
				if e.jsonOut {
					return e.printJSON(info)
				}
				e.printBarecatInfo(info)
				return nil
			}
			x, err := taridx.ReadFile(args[0])
			if err != nil {
				return corrupt("taridx", err)
			}
			info := describeIndex(x)
			if e.jsonOut {
				return e.printJSON(info)
			}
			e.printIndexInfo(info)
			return nil
		},
	}
	cmd.Flags().BoolVar(&e.jsonOut, "json", false, "print the description as JSON")
	return cmd
}

type extInfo struct {
	ID    int    `json:"id"`
	Ext   string `json:"ext"`
	Rows  int    `json:"rows"`
	Bytes uint64 `json:"bytes"`
}

type dupInfo struct {
	KeyHash string `json:"keyhash"`
	CrashID uint32 `json:"crashid"`
	Ext     string `json:"ext"`
	Rows    []int  `json:"rows"`
}

type indexInfo struct {
	File         string    `json:"file"`
	FileBytes    int64     `json:"file_bytes"`
	Header       headerOut `json:"header"`
	Extensions   []extInfo `json:"extensions"`
	CrashStems   []string  `json:"crash_stems"`
	Shards       int       `json:"shards_used"`
	MaxFid       int       `json:"max_fid"`
	PayloadBytes uint64    `json:"payload_bytes"`
	Runs         int       `json:"key_runs"`
	Keys         int       `json:"distinct_keys"`
	Contiguous   bool      `json:"rows_contiguous"`
	FlagMatches  bool      `json:"flag_matches_rows"`
	Duplicates   []dupInfo `json:"duplicate_keys"`
	NDuplicates  int       `json:"duplicate_key_count"`
}

type headerOut struct {
	Major      uint16 `json:"major"`
	Minor      uint16 `json:"minor"`
	RecSize    uint16 `json:"rec_size"`
	HdrSize    uint16 `json:"hdr_size"`
	NStems     uint64 `json:"n_stems"`
	NRows      uint64 `json:"n_rows"`
	NExt       uint32 `json:"n_ext"`
	NCrash     uint32 `json:"n_crash"`
	OffCrash   uint64 `json:"off_crash"`
	OffArr     uint64 `json:"off_arr"`
	Flags      uint8  `json:"flags"`
	Contiguous bool   `json:"flag_contiguous"`
}

func (e *env) printIndexInfo(info indexInfo) {
	h := info.Header
	w := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintf(w, "file\t%s (%d bytes)\n", info.File, info.FileBytes)
	fmt.Fprintf(w, "version\t%d.%d (header %d bytes, rows %d bytes)\n", h.Major, h.Minor, h.HdrSize, h.RecSize)
	fmt.Fprintf(w, "rows\t%d\n", h.NRows)
	fmt.Fprintf(w, "stems\t%d\n", h.NStems)
	fmt.Fprintf(w, "extensions\t%d\n", h.NExt)
	fmt.Fprintf(w, "crash stems\t%d\n", h.NCrash)
	fmt.Fprintf(w, "shards\t%d used (highest fid %d)\n", info.Shards, info.MaxFid)
	fmt.Fprintf(w, "payload\t%s (%d bytes)\n", humanBytes(int64(info.PayloadBytes)), info.PayloadBytes)
	state := "not contiguous"
	if info.Contiguous {
		state = "contiguous"
	}
	flag := "flag clear"
	if h.Contiguous {
		flag = "flag set"
	}
	mismatch := ""
	if !info.FlagMatches {
		mismatch = " (the flag disagrees with the rows)"
	}
	fmt.Fprintf(w, "contiguity\t%s; rows %s: %d runs of %d keys%s\n", flag, state, info.Runs, info.Keys, mismatch)
	fmt.Fprintf(w, "duplicate keys\t%d\n", info.NDuplicates)
	w.Flush()

	fmt.Fprintln(e.stdout)
	w = tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(w, "id\text\trows\tbytes\t")
	for _, x := range info.Extensions {
		fmt.Fprintf(w, "%d\t%q\t%d\t%d\t\n", x.ID, x.Ext, x.Rows, x.Bytes)
	}
	w.Flush()
	if len(info.CrashStems) > 0 {
		fmt.Fprintln(e.stdout, "\ncrash stems (crash id: stem):")
		for i, s := range info.CrashStems {
			fmt.Fprintf(e.stdout, "  %d: %q\n", i+1, s)
		}
	}
	if len(info.Duplicates) > 0 {
		fmt.Fprintln(e.stdout, "\nduplicate keys (same stem and extension in several rows):")
		for _, d := range info.Duplicates {
			fmt.Fprintf(e.stdout, "  keyhash %s crash %d ext %q: rows %v\n", d.KeyHash, d.CrashID, d.Ext, d.Rows)
		}
		if info.NDuplicates > len(info.Duplicates) {
			fmt.Fprintf(e.stdout, "  ... and %d more\n", info.NDuplicates-len(info.Duplicates))
		}
	}
}
