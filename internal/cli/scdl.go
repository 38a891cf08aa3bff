package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/itarconv/itarconv/convert"
	"github.com/itarconv/itarconv/formats/barecat"
	"github.com/itarconv/itarconv/formats/scdl"
	"github.com/itarconv/itarconv/formats/tbl"
	"github.com/itarconv/itarconv/internal/safefile"
)

// refuseSCDLFlags refuses the flags of other conversions.
func refuseSCDLFlags(fl convertFlags) error {
	if fl.wrap || fl.crc || fl.onDuplicate != "" || fl.lz4 || fl.compat != "" || fl.noNames || fl.reuseTars || fl.order != "path" || fl.ignoreZeros {
		return usagef("--wrap, --crc, --on-duplicate, --lz4, --compat, --no-names, --reuse-tars, --order and --ignore-zeros do not apply to SCDL conversions")
	}
	return nil
}

// checkSCDLMode checks --scdl-mode, which reading an SCDL archive takes.
func checkSCDLMode(fl convertFlags) error {
	if fl.scdlMode != convert.SCDLModeCells && fl.scdlMode != convert.SCDLModeArchive {
		return usagef("--scdl-mode: %q is neither cells nor archive", fl.scdlMode)
	}
	return nil
}

// scdlSize is the size of an archive's files, for progress bars.
func scdlSize(a *scdl.Archive) int64 {
	var files []string
	for _, f := range a.Files() {
		files = append(files, filepath.Join(a.Dir(), filepath.FromSlash(f)))
	}
	return totalSize(files)
}

func convertSCDLToBarecat(ctx context.Context, e *env, fl convertFlags, src, dst string, shardSize int64) error {
	if err := refuseSCDLFlags(fl); err != nil {
		return err
	}
	if err := checkSCDLMode(fl); err != nil {
		return err
	}
	if fl.cellsPerShard != 0 || fl.fold != "" {
		return usagef("--cells-per-shard and --fold apply to tar shards")
	}
	a, err := scdl.Open(src)
	if err != nil {
		return err
	}
	defer a.Close()
	s, err := convert.NewSCDLSource(a, fl.scdlMode)
	if err != nil {
		return err
	}
	bar := e.newProgress("barecat", scdlSize(a)).of("files")
	st, err := convert.ToBarecat(ctx, s, dst, convert.BarecatOptions{
		ShardSize: shardSize, Workers: fl.workers, Overwrite: fl.force,
		Progress: func(p convert.Progress) { bar.update("barecat", p) },
	})
	bar.done()
	if err != nil {
		return err
	}
	e.infof("%s: %d files, %s from %d cells (%d values) of %s, %s mode, into %d shards\n",
		dst, st.Files, humanBytes(st.Bytes), a.NumRows(), a.NNZ(), src, fl.scdlMode, st.Shards)
	if fl.jsonOut {
		return e.printJSON(st)
	}
	return nil
}

func convertSCDLToTar(ctx context.Context, e *env, fl convertFlags, src, dstDir string, shardSize int64) error {
	if err := refuseSCDLFlags(fl); err != nil {
		return err
	}
	if err := checkSCDLMode(fl); err != nil {
		return err
	}
	switch {
	case fl.cellsPerShard < 0:
		return usagef("--cells-per-shard must be positive")
	case fl.cellsPerShard > 0 && fl.scdlMode == convert.SCDLModeArchive:
		return usagef("--cells-per-shard applies to --scdl-mode cells")
	case strings.ContainsAny(fl.fold, "_/") || fl.fold == convert.SCDLMetaFold:
		return usagef("--fold %q: a fold name has no \"_\" or \"/\", and %s is taken", fl.fold, convert.SCDLMetaFold)
	}
	a, err := scdl.Open(src)
	if err != nil {
		return err
	}
	defer a.Close()
	label := fl.fold
	if label == "" {
		label = map[string]string{convert.SCDLModeCells: convert.SCDLCellsFold, convert.SCDLModeArchive: convert.SCDLArchiveFold}[fl.scdlMode]
	}
	bar := e.newProgress(label, scdlSize(a)).of("members")
	st, err := convert.SCDLToTar(ctx, a, convert.SCDLExportOptions{
		Dir: dstDir, Mode: fl.scdlMode, Fold: fl.fold, ShardSize: shardSize, CellsPerShard: fl.cellsPerShard,
		Workers: fl.workers, Progress: func(p convert.Progress) { bar.update(label, p) }, Replace: fl.force,
	})
	bar.done()
	if err != nil {
		return err
	}
	if st.Mode == convert.SCDLModeCells {
		e.infof("%s: %d cells, %d values -> %d members in %d shards of fold %s, and %d files in fold %s, in %s\n",
			src, st.Cells, st.NNZ, st.Fold.Members, len(st.Fold.Shards), label, st.Meta.Members, convert.SCDLMetaFold, dstDir)
	} else {
		e.infof("%s: %d files, %s -> %d shards of fold %s in %s\n", src, st.Fold.Members, humanBytes(st.Fold.Bytes), len(st.Fold.Shards), label, dstDir)
	}
	if fl.jsonOut {
		return e.printJSON(st)
	}
	return nil
}

func convertToSCDL(ctx context.Context, e *env, fl convertFlags, srcs []string, dst string) error {
	if err := refuseSCDLFlags(fl); err != nil {
		return err
	}
	if fl.shardSize != "" || fl.cellsPerShard != 0 {
		return usagef("--shard-size and --cells-per-shard apply to writing tar shards")
	}
	if len(srcs) != 1 {
		return usagef("--to scdl reads one directory of folds (cells + scdlmeta, or scdl), one Barecat archive or one TBL file, not %d paths", len(srcs))
	}
	if fl.from == "tar" {
		if st, err := os.Stat(srcs[0]); err != nil {
			return err
		} else if !st.IsDir() {
			return usagef("%s is not a directory: --to scdl reads the folds of a directory", srcs[0])
		}
	} else if fl.fold != "" {
		return usagef("--fold names the fold of tar shards to read")
	}
	var newSource func(counting bool) (convert.PayloadSource, error)
	switch fl.from {
	case "barecat":
		a, err := barecat.Open(srcs[0])
		if err != nil {
			return err
		}
		defer a.Close()
		newSource = func(counting bool) (convert.PayloadSource, error) {
			// The order files were added in; the first pass reads the index
			// and the files beside the cells only.
			return &convert.BarecatSource{Archive: a, Order: barecat.ByAddress, NoData: counting}, nil
		}
	case "tbl":
		r, err := tbl.Open(srcs[0])
		if err != nil {
			return err
		}
		defer r.Close()
		if r.Version() < 2 || !r.HasMetadata() {
			return fmt.Errorf("%s: TBL v%d without a metadata section keeps no file names (its samples are %%09d.<ext>): an SCDL archive cannot be rebuilt from it; convert the archive to TBL v2 with names",
				srcs[0], r.Version())
		}
		newSource = func(counting bool) (convert.PayloadSource, error) {
			return &convert.TBLSource{Reader: r, NoData: counting}, nil
		}
	}
	// With --force over an existing archive, the new one is written beside
	// it under a temporary name and then takes its place.
	out := dst
	if _, err := os.Lstat(dst); err == nil && fl.force {
		parent, base := filepath.Split(filepath.Clean(dst))
		safefile.SweepLeftovers(cmpOr(parent, "."))
		out = filepath.Join(parent, strings.TrimSuffix(safefile.TempName(base), "*")+"new")
	}
	opts := convert.SCDLImportOptions{Fold: fl.fold, Workers: fl.workers}
	var st *convert.SCDLImportStats
	var err error
	if newSource == nil {
		st, err = convert.TarToSCDL(ctx, srcs[0], out, opts)
	} else {
		st, err = convert.ToSCDL(ctx, newSource, out, opts)
	}
	if err == nil && out != dst {
		st.Output = dst
		err = safefile.ReplaceDir(out, dst)
	}
	if err != nil {
		if out != dst {
			os.RemoveAll(out)
		}
		return err
	}
	if st.Fresh {
		e.warnf("%s: no %s files beside the cells: wrote a fresh header.sch (version 0.1.0), metadata.json, version.json and a var_features index whose genes are named by their index (gene and cell names are unknown; no obs_features)\n",
			dst, convert.SCDLMetaFold)
	}
	from := srcs[0]
	if st.Fold != "" {
		from = "fold " + st.Fold
	}
	e.infof("%s: %d cells, %d values, %d files from %s (%s mode)\n", dst, st.Cells, st.NNZ, st.Files, from, st.Mode)
	if fl.jsonOut {
		return e.printJSON(st)
	}
	return nil
}

// scdlArrayOut is one array of the header and its file.
type scdlArrayOut struct {
	Name      string   `json:"name"`
	File      string   `json:"file,omitempty"`
	DType     string   `json:"dtype"`
	Length    uint64   `json:"length"`
	Shape     []uint32 `json:"shape"`
	WantBytes uint64   `json:"expected_bytes"`
	FileBytes int64    `json:"file_bytes"` // -1: missing
}

type scdlFeatureOut struct {
	Name   string   `json:"name"`
	DType  string   `json:"dtype"`
	Length uint64   `json:"length"`
	Files  []string `json:"files"`
	Shape  []uint32 `json:"shape"`
}

type scdlBlockOut struct {
	Start  int `json:"start"`
	End    int `json:"end"`
	NGenes int `json:"n_genes"`
}

// scdlInfo is what inspect shows of an SCDL archive.
type scdlInfo struct {
	Dir            string           `json:"dir"`
	Version        string           `json:"version"`
	Endianness     uint8            `json:"endianness"`
	Backend        uint32           `json:"backend"`
	Arrays         []scdlArrayOut   `json:"arrays"`
	FeatureIndices []scdlFeatureOut `json:"feature_indices"`
	Cells          uint64           `json:"cells"`
	NNZ            uint64           `json:"nnz"`
	Blocks         []scdlBlockOut   `json:"blocks"`
	// Density is nnz over the cells' widths (each row's block's genes).
	Density      float64  `json:"density"`
	MetadataRows *int64   `json:"metadata_num_rows"`
	Files        int      `json:"files"`
	Bytes        int64    `json:"bytes"`
	Mismatches   []string `json:"mismatches"`
	Notes        []string `json:"notes"`
}

var arrayFiles = map[string]string{scdl.ArrayData: scdl.DataFile, scdl.ArrayRowPtr: scdl.RowPtrFile, scdl.ArrayColPtr: scdl.ColPtrFile}

// describeSCDL reads an archive's header and checks it against the files,
// collecting every mismatch; it fails only when the header cannot be read.
func describeSCDL(dir string) (*scdlInfo, error) {
	hpath := filepath.Join(dir, scdl.HeaderFile)
	b, err := os.ReadFile(hpath)
	if err != nil {
		return nil, err
	}
	h, err := scdl.DecodeHeader(b)
	if err != nil {
		var e *scdl.Error
		if errors.As(err, &e) {
			e.Path = hpath
		}
		return nil, err
	}
	info := &scdlInfo{Dir: dir, Version: fmt.Sprintf("%d.%d.%d", h.Major, h.Minor, h.Point),
		Endianness: h.Endianness, Backend: h.Backend, Arrays: []scdlArrayOut{}, FeatureIndices: []scdlFeatureOut{},
		Blocks: []scdlBlockOut{}, Mismatches: []string{}, Notes: []string{}}
	bad := func(format string, args ...any) {
		info.Mismatches = append(info.Mismatches, fmt.Sprintf(format, args...))
	}
	for _, a := range h.Arrays {
		out := scdlArrayOut{Name: a.Name, DType: a.DType.String(), Length: a.Length, Shape: a.Shape, FileBytes: -1,
			WantBytes: a.Length * uint64(a.DType.ItemSize()), File: arrayFiles[a.Name]}
		if out.File != "" {
			st, err := os.Stat(filepath.Join(dir, out.File))
			switch {
			case err != nil:
				bad("%s: missing (%v), but the header describes the %s array", out.File, unwrapErr(err), a.Name)
			case uint64(st.Size()) != out.WantBytes:
				out.FileBytes = st.Size()
				bad("%s: %d bytes, but the header's %s array holds %d %v elements (%d bytes)", out.File, st.Size(), a.Name, a.Length, a.DType, out.WantBytes)
			default:
				out.FileBytes = st.Size()
			}
		}
		switch a.Name {
		case scdl.ArrayData:
			info.NNZ = a.Length
		case scdl.ArrayRowPtr:
			if a.Length > 0 {
				info.Cells = a.Length - 1
			}
		}
		info.Arrays = append(info.Arrays, out)
	}
	for _, fi := range h.FeatureIndices {
		info.FeatureIndices = append(info.FeatureIndices, scdlFeatureOut{Name: fi.Name, DType: fi.DType.String(), Length: fi.Length, Files: fi.Files, Shape: fi.Shape})
		for _, f := range fi.Files {
			if _, err := os.Stat(filepath.Join(dir, filepath.FromSlash(f))); err != nil {
				bad("%s: missing (%v), but feature index %q lists it", f, unwrapErr(err), fi.Name)
			}
		}
	}
	if mb, err := os.ReadFile(filepath.Join(dir, scdl.MetadataFile)); err == nil {
		var m struct {
			NumRows *int64 `json:"num_rows"`
		}
		if json.Unmarshal(mb, &m) == nil && m.NumRows != nil {
			info.MetadataRows = m.NumRows
			if uint64(*m.NumRows) != info.Cells {
				info.Notes = append(info.Notes, fmt.Sprintf("metadata.json says %d rows, the header %d (bionemo leaves it stale after concatenation)", *m.NumRows, info.Cells))
			}
		}
	}
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			info.Files++
			if st, err := os.Stat(p); err == nil {
				info.Bytes += st.Size()
			}
		}
		return nil
	})
	// The deeper checks (row_ptr, gene indices against the blocks) are
	// scdl.Open's: its first error is one more mismatch, unless one found
	// above already explains it.
	a, err := scdl.Open(dir)
	if err != nil {
		if len(info.Mismatches) == 0 {
			bad("%v", err)
		}
		return info, nil
	}
	defer a.Close()
	var width float64
	for _, bl := range a.Blocks() {
		info.Blocks = append(info.Blocks, scdlBlockOut{bl.Start, bl.End, bl.NGenes})
		width += float64(bl.End-bl.Start) * float64(bl.NGenes)
	}
	if width > 0 {
		info.Density = float64(a.NNZ()) / width
	}
	return info, nil
}

func unwrapErr(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

func (e *env) printSCDLInfo(info *scdlInfo) {
	w := tabwriter.NewWriter(e.stdout, 0, 2, 2, ' ', 0)
	fmt.Fprintf(w, "archive:\t%s\n", info.Dir)
	fmt.Fprintf(w, "version:\t%s (endianness %d, backend %d)\n", info.Version, info.Endianness, info.Backend)
	fmt.Fprintf(w, "cells:\t%d\n", info.Cells)
	fmt.Fprintf(w, "non-zero values:\t%d\n", info.NNZ)
	if len(info.Blocks) > 0 {
		fmt.Fprintf(w, "density:\t%.6f\n", info.Density)
	}
	if info.MetadataRows != nil {
		fmt.Fprintf(w, "metadata.json num_rows:\t%d\n", *info.MetadataRows)
	}
	fmt.Fprintf(w, "files:\t%d (%s, %d bytes)\n", info.Files, humanBytes(info.Bytes), info.Bytes)
	w.Flush()
	fmt.Fprintln(e.stdout, "\narrays:")
	w = tabwriter.NewWriter(e.stdout, 0, 2, 2, ' ', 0)
	fmt.Fprintln(w, "  name\tfile\tdtype\tlength\tbytes\tfile bytes")
	for _, a := range info.Arrays {
		fb := "missing"
		if a.FileBytes >= 0 {
			fb = fmt.Sprint(a.FileBytes)
		}
		if a.File == "" {
			fb = "-"
		}
		fmt.Fprintf(w, "  %s\t%s\t%s\t%d\t%d\t%s\n", a.Name, a.File, a.DType, a.Length, a.WantBytes, fb)
	}
	w.Flush()
	if len(info.FeatureIndices) > 0 {
		fmt.Fprintln(e.stdout, "\nfeature indices:")
		for _, f := range info.FeatureIndices {
			fmt.Fprintf(e.stdout, "  %s: %s, length %d, %d files\n", f.Name, f.DType, f.Length, len(f.Files))
		}
	}
	if len(info.Blocks) > 0 {
		fmt.Fprintln(e.stdout, "\ngenes per block:")
		w = tabwriter.NewWriter(e.stdout, 0, 2, 2, ' ', 0)
		fmt.Fprintln(w, "  block\trows\tgenes")
		for i, b := range info.Blocks {
			fmt.Fprintf(w, "  %d\t[%d, %d)\t%d\n", i, b.Start, b.End, b.NGenes)
		}
		w.Flush()
	}
	for _, n := range info.Notes {
		fmt.Fprintf(e.stdout, "\nnote: %s\n", n)
	}
	if len(info.Mismatches) == 0 {
		fmt.Fprintln(e.stdout, "\nheader and files agree")
		return
	}
	fmt.Fprintf(e.stdout, "\n%d mismatches:\n", len(info.Mismatches))
	for _, m := range info.Mismatches {
		fmt.Fprintf(e.stdout, "  %s\n", m)
	}
}

// inspectSCDL is `itarconv inspect SCDL_DIR`: the description as text or
// JSON; exit 1 when header and files disagree.
func inspectSCDL(e *env, dir string) error {
	info, err := describeSCDL(dir)
	if err != nil {
		return err
	}
	if e.jsonOut {
		if err := e.printJSON(info); err != nil {
			return err
		}
	} else {
		e.printSCDLInfo(info)
	}
	if len(info.Mismatches) > 0 {
		return errReported
	}
	return nil
}

// verifySCDL opens an SCDL archive (header, arrays and feature indices
// checked against each other) and reads every row (each row's span of
// values within the arrays).
func (e *env) verifySCDL(dir string) error {
	info, err := describeSCDL(dir)
	if err != nil {
		return err
	}
	problems := append([]string{}, info.Mismatches...)
	rows := 0
	if len(problems) == 0 {
		a, err := scdl.Open(dir)
		if err != nil {
			problems = append(problems, err.Error())
		} else {
			it := a.Rows(0, a.NumRows())
			for it.Next() {
				rows++
			}
			if err := it.Err(); err != nil {
				problems = append(problems, err.Error())
			}
			a.Close()
		}
	}
	if e.jsonOut {
		if err := e.printJSON(map[string]any{"ok": len(problems) == 0, "dir": dir, "rows": rows, "problems": problems}); err != nil {
			return err
		}
	} else if len(problems) == 0 {
		fmt.Fprintf(e.stdout, "%s: OK: %d rows (header, arrays, feature indices and every row's span checked)\n", dir, rows)
	} else {
		fmt.Fprintf(e.stdout, "%s: BROKEN:\n", dir)
		for _, p := range problems {
			fmt.Fprintf(e.stdout, "  %s\n", p)
		}
	}
	if len(problems) > 0 {
		return errReported
	}
	return nil
}
