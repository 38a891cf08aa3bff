package scdl

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"text/tabwriter"

	"github.com/itarconv/itarconv/formats/registry"
	"github.com/itarconv/itarconv/internal/human"
)

// ArrayReport is one array of the header and its file.
type ArrayReport struct {
	Name      string   `json:"name"`
	File      string   `json:"file,omitempty"`
	DType     string   `json:"dtype"`
	Length    uint64   `json:"length"`
	Shape     []uint32 `json:"shape"`
	WantBytes uint64   `json:"expected_bytes"`
	FileBytes int64    `json:"file_bytes"` // -1: missing
}

// FeatureInfo is a feature index of the header.
type FeatureInfo struct {
	Name   string   `json:"name"`
	DType  string   `json:"dtype"`
	Length uint64   `json:"length"`
	Files  []string `json:"files"`
	Shape  []uint32 `json:"shape"`
}

// BlockInfo is a block of rows and the genes its cells index.
type BlockInfo struct {
	Start  int `json:"start"`
	End    int `json:"end"`
	NGenes int `json:"n_genes"`
}

// Info is what Inspect shows of an SCDL archive.
type Info struct {
	Dir            string        `json:"dir"`
	Version        string        `json:"version"`
	Endianness     uint8         `json:"endianness"`
	Backend        uint32        `json:"backend"`
	Arrays         []ArrayReport `json:"arrays"`
	FeatureIndices []FeatureInfo `json:"feature_indices"`
	Cells          uint64        `json:"cells"`
	NNZ            uint64        `json:"nnz"`
	Blocks         []BlockInfo   `json:"blocks"`
	// Density is nnz over the cells' widths (each row's block's genes).
	Density      float64  `json:"density"`
	MetadataRows *int64   `json:"metadata_num_rows"`
	Files        int      `json:"files"`
	Bytes        int64    `json:"bytes"`
	Mismatches   []string `json:"mismatches"`
	Notes        []string `json:"notes"`
}

var arrayFiles = map[string]string{ArrayData: DataFile, ArrayRowPtr: RowPtrFile, ArrayColPtr: ColPtrFile}

// describe reads an archive's header and checks it against the files,
// collecting every mismatch; it fails only when the header cannot be read,
// or ctx is done.
func describe(ctx context.Context, dir string) (*Info, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	hpath := filepath.Join(dir, HeaderFile)
	b, err := readSmallFile(hpath, maxHeaderSize) // a FIFO is refused, not opened
	if err != nil {
		return nil, err
	}
	h, err := DecodeHeader(b)
	if err != nil {
		var e *Error
		if errors.As(err, &e) {
			e.Path = hpath
		}
		return nil, err
	}
	info := &Info{Dir: dir, Version: fmt.Sprintf("%d.%d.%d", h.Major, h.Minor, h.Point),
		Endianness: h.Endianness, Backend: h.Backend, Arrays: []ArrayReport{}, FeatureIndices: []FeatureInfo{},
		Blocks: []BlockInfo{}, Mismatches: []string{}, Notes: []string{}}
	bad := func(format string, args ...any) {
		info.Mismatches = append(info.Mismatches, fmt.Sprintf(format, args...))
	}
	for _, a := range h.Arrays {
		out := ArrayReport{Name: a.Name, DType: a.DType.String(), Length: a.Length, Shape: a.Shape, FileBytes: -1,
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
		case ArrayData:
			info.NNZ = a.Length
		case ArrayRowPtr:
			if a.Length > 0 {
				info.Cells = a.Length - 1
			}
		}
		info.Arrays = append(info.Arrays, out)
	}
	for _, fi := range h.FeatureIndices {
		info.FeatureIndices = append(info.FeatureIndices, FeatureInfo{Name: fi.Name, DType: fi.DType.String(), Length: fi.Length, Files: fi.Files, Shape: fi.Shape})
		for _, f := range fi.Files {
			if _, err := os.Stat(filepath.Join(dir, filepath.FromSlash(f))); err != nil {
				bad("%s: missing (%v), but feature index %s lists it", human.Name(f), unwrapErr(err), human.Name(fi.Name))
			}
		}
	}
	if mb, err := os.ReadFile(filepath.Join(dir, MetadataFile)); err == nil {
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
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err == nil && !d.IsDir() {
			info.Files++
			if st, err := os.Stat(p); err == nil {
				info.Bytes += st.Size()
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	// The deeper checks (row_ptr, gene indices against the blocks) are
	// Open's: its first error is one more mismatch, unless one found
	// above already explains it.
	a, err := OpenContext(ctx, dir)
	if cerr := ctx.Err(); cerr != nil {
		if err == nil {
			a.Close()
		}
		return nil, cerr
	}
	if err != nil {
		if len(info.Mismatches) == 0 {
			bad("%v", err)
		}
		return info, nil
	}
	defer a.Close()
	var width float64
	for _, bl := range a.Blocks() {
		info.Blocks = append(info.Blocks, BlockInfo{bl.Start, bl.End, bl.NGenes})
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

// WriteText prints the description for a person.
func (info *Info) WriteText(out io.Writer) error {
	w := tabwriter.NewWriter(out, 0, 2, 2, ' ', 0)
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
	fmt.Fprintf(w, "files:\t%d (%s, %d bytes)\n", info.Files, human.Bytes(info.Bytes), info.Bytes)
	w.Flush()
	fmt.Fprintln(out, "\narrays:")
	w = tabwriter.NewWriter(out, 0, 2, 2, ' ', 0)
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
		fmt.Fprintln(out, "\nfeature indices:")
		for _, f := range info.FeatureIndices {
			fmt.Fprintf(out, "  %s: %s, length %d, %d files\n", f.Name, f.DType, f.Length, len(f.Files))
		}
	}
	if len(info.Blocks) > 0 {
		fmt.Fprintln(out, "\ngenes per block:")
		w = tabwriter.NewWriter(out, 0, 2, 2, ' ', 0)
		fmt.Fprintln(w, "  block\trows\tgenes")
		for i, b := range info.Blocks {
			fmt.Fprintf(w, "  %d\t[%d, %d)\t%d\n", i, b.Start, b.End, b.NGenes)
		}
		w.Flush()
	}
	for _, n := range info.Notes {
		fmt.Fprintf(out, "\nnote: %s\n", n)
	}
	if len(info.Mismatches) == 0 {
		_, err := fmt.Fprintln(out, "\nheader and files agree")
		return err
	}
	fmt.Fprintf(out, "\n%d mismatches:\n", len(info.Mismatches))
	for _, m := range info.Mismatches {
		fmt.Fprintf(out, "  %s\n", m)
	}
	return nil
}

// Inspect describes the archive at path: header, array sizes, cells, genes
// per block, nnz, density, and every mismatch between header and files,
// which is also an error wrapping registry.ErrVerify.
func Inspect(ctx context.Context, path string) (registry.Report, error) {
	info, err := describe(ctx, path)
	if err != nil {
		return nil, err
	}
	if len(info.Mismatches) > 0 {
		return info, fmt.Errorf("%s: %d mismatches between header and files: %w", path, len(info.Mismatches), registry.ErrVerify)
	}
	return info, nil
}

// VerifyResult is what Verify found.
type VerifyResult struct {
	Dir      string   `json:"dir"`
	OK       bool     `json:"ok"`
	Problems []string `json:"problems"`
	Rows     int      `json:"rows"`
}

// Verify opens the archive (header, arrays and feature indices checked
// against each other) and reads every row (each row's span of values
// within the arrays). Damage found is the result and an error wrapping
// registry.ErrVerify. A canceled ctx stops it, with ctx's error.
func Verify(ctx context.Context, dir string) (registry.Report, error) {
	info, err := describe(ctx, dir)
	if err != nil {
		return nil, err
	}
	res := &VerifyResult{Dir: dir, Problems: append([]string{}, info.Mismatches...)}
	if len(res.Problems) == 0 {
		a, err := OpenContext(ctx, dir)
		if cerr := ctx.Err(); cerr != nil {
			if err == nil {
				a.Close()
			}
			return nil, cerr
		}
		if err != nil {
			res.Problems = append(res.Problems, err.Error())
		} else {
			it := a.Rows(0, a.NumRows())
			for it.Next() {
				if res.Rows++; res.Rows%4096 == 0 && ctx.Err() != nil {
					break
				}
			}
			a.Close()
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			if err := it.Err(); err != nil {
				res.Problems = append(res.Problems, err.Error())
			}
		}
	}
	res.OK = len(res.Problems) == 0
	if !res.OK {
		return res, fmt.Errorf("%s: %d problems: %w", dir, len(res.Problems), registry.ErrVerify)
	}
	return res, nil
}

// WriteText prints the result for a person.
func (v *VerifyResult) WriteText(out io.Writer) error {
	if v.OK {
		_, err := fmt.Fprintf(out, "%s: OK: %d cells (header, arrays, feature indices and every cell's span checked)\n", v.Dir, v.Rows)
		return err
	}
	fmt.Fprintf(out, "%s: BROKEN:\n", v.Dir)
	for _, p := range v.Problems {
		fmt.Fprintf(out, "  %s\n", p)
	}
	return nil
}
