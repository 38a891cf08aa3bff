package parquet

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/itarconv/itarconv/formats/registry"
)

// A partitioned run writes a Parquet dataset in N tasks: each writes a
// part, a directory holding
//
//	part-00000.parquet ...  what a write of the task's rows alone writes
//	part.json               the part's record (partInfo), written last
//
// and MergeParts joins them: each file of a part whose columns are the
// dataset's (the union of the parts', in order of first appearance, each
// of the kind every part's members fit) is linked into place as it is,
// renamed to its place among all the files; a part whose columns differ
// (a column the others lack, an int64 column another part had to store as
// string) is read back and written anew under the dataset's columns. A
// sample whose members two tasks share becomes two rows of one key, which
// read back as the same members.

const (
	partInfoName = "part.json"
	partFormat   = "itarconv-parquet-part"
	partVersion  = 1
	// partInfoMax bounds part.json: a column list and file names.
	partInfoMax = 16 << 20
)

// ErrPart is wrapped by every error MergeParts returns about a part it
// cannot use.
var ErrPart = errors.New("unusable part of a partitioned Parquet run")

// partInfo is a part's record.
type partInfo struct {
	Format  string       `json:"format"`
	Version int          `json:"version"`
	Split   string       `json:"split"`
	Codec   string       `json:"compression"`
	Columns []partColumn `json:"columns"`
	Files   []string     `json:"files"`
	Stats   *WriteStats  `json:"stats"`
}

type partColumn struct {
	Name string `json:"name"`
	Kind kind   `json:"kind"`
}

func createPart(ctx context.Context, in registry.Input, dir string, o registry.CreateOptions) (any, error) {
	opts, err := registry.FormatOptions[CreateOptions]("Parquet", o.Format)
	if err != nil {
		return nil, err
	}
	wo, err := settle(opts, o.ShardSize, o.Workers, o.Progress)
	if err != nil {
		return nil, err
	}
	wo.name = func(i, _ int) string { return fmt.Sprintf("part-%05d.parquet", i) }
	p, err := planInput(ctx, in, wo.workers)
	if err != nil {
		return nil, err
	}
	st, err := writePlannedInput(ctx, in, dir, p, wo)
	if err != nil {
		return nil, err
	}
	info := partInfo{Format: partFormat, Version: partVersion, Split: wo.split, Codec: opts.Compression, Files: st.Files, Stats: st}
	for _, c := range p.cols {
		info.Columns = append(info.Columns, partColumn{c.name, c.kind})
	}
	b, err := json.Marshal(info)
	if err == nil {
		err = writeSynced(filepath.Join(dir, partInfoName), b)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", dir, err)
	}
	return st, nil
}

func writeSynced(path string, b []byte) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	_, err = f.Write(b)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

func readPartInfo(dir string) (*partInfo, error) {
	f, err := os.Open(filepath.Join(dir, partInfoName))
	if err != nil {
		return nil, fmt.Errorf("%s: %w: %w", dir, ErrPart, err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, partInfoMax+1))
	if err != nil {
		return nil, err
	}
	var info partInfo
	if len(b) > partInfoMax {
		return nil, fmt.Errorf("%s: more than %d bytes: %w", f.Name(), partInfoMax, ErrPart)
	}
	if err := json.Unmarshal(b, &info); err != nil {
		return nil, fmt.Errorf("%s: %v: %w", f.Name(), err, ErrPart)
	}
	if info.Format != partFormat || info.Version != partVersion || info.Stats == nil {
		return nil, fmt.Errorf("%s: format %q version %d, want %q version %d: %w", f.Name(), info.Format, info.Version, partFormat, partVersion, ErrPart)
	}
	for _, c := range info.Columns {
		if c.Kind < kindBinary || c.Kind > kindImage {
			return nil, fmt.Errorf("%s: column %q of kind %d: %w", f.Name(), c.Name, c.Kind, ErrPart)
		}
	}
	return &info, nil
}

// meet is the kind a column of kinds a and b takes: their own when they
// agree, string for integers and text (an integer's bytes are text),
// binary otherwise.
func meet(a, b kind) kind {
	switch {
	case a == b:
		return a
	case a == kindInt64 && b == kindString, a == kindString && b == kindInt64:
		return kindString
	}
	return kindBinary
}

// MergeStats are a merge's own figures.
type MergeStats struct {
	Parts     int `json:"parts"`
	Linked    int `json:"linked_files"`    // files put in place as the parts wrote them
	Rewritten int `json:"rewritten_parts"` // parts written anew under the dataset's columns
}

func mergeParts(ctx context.Context, parts []string, path string, o registry.CreateOptions) (*registry.Result, error) {
	opts, err := registry.FormatOptions[CreateOptions]("Parquet", o.Format)
	if err != nil {
		return nil, err
	}
	wo, err := settle(opts, o.ShardSize, o.Workers, o.Progress)
	if err != nil {
		return nil, err
	}
	infos := make([]*partInfo, len(parts))
	p := &plan{index: map[string]int{}}
	for i, dir := range parts {
		if infos[i], err = readPartInfo(dir); err != nil {
			return nil, err
		}
		if infos[i].Split != wo.split {
			return nil, fmt.Errorf("%s: split %q, the merge's %q: %w", dir, infos[i].Split, wo.split, ErrPart)
		}
		for _, c := range infos[i].Columns {
			j, ok := p.index[c.Name]
			if !ok {
				p.index[c.Name] = len(p.cols)
				p.cols = append(p.cols, column{name: c.Name, kind: c.Kind})
				continue
			}
			p.cols[j].kind = meet(p.cols[j].kind, c.Kind)
		}
	}
	if err := checkTarget(path, o.Overwrite); err != nil {
		return nil, err
	}
	ms := &MergeStats{Parts: len(parts)}
	st, err := stage(path, o.Overwrite, func(dir string) (*WriteStats, error) {
		data := filepath.Join(dir, "data")
		if err := os.Mkdir(data, 0o755); err != nil {
			return nil, err
		}
		var files []string // in data, in order, under temporary names
		total := &WriteStats{}
		for i, part := range parts {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			info := infos[i]
			// The part's files take the next temporary names, in order.
			base := len(files)
			tmp := func(k int) string { return filepath.Join(data, fmt.Sprintf(".merge-%05d.tmp", base+k)) }
			if sameColumns(info.Columns, p.cols) {
				for k, f := range info.Files {
					if err := linkOrCopy(filepath.Join(part, f), tmp(k)); err != nil {
						return nil, err
					}
				}
				for k := range info.Files {
					files = append(files, tmp(k))
				}
				ms.Linked += len(info.Files)
				addStats(total, info.Stats)
				continue
			}
			// Written anew: the part's rows, under the dataset's columns.
			sub := filepath.Join(data, fmt.Sprintf(".rewrite-%05d", i))
			if err := os.Mkdir(sub, 0o755); err != nil {
				return nil, err
			}
			st, err := rewritePart(ctx, part, sub, p, wo)
			if err != nil {
				return nil, err
			}
			for k, f := range st.Files {
				if err := os.Rename(filepath.Join(sub, f), tmp(k)); err != nil {
					return nil, err
				}
			}
			for k := range st.Files {
				files = append(files, tmp(k))
			}
			os.Remove(sub)
			ms.Rewritten++
			addStats(total, st)
		}
		if len(files) == 0 {
			// No part held a row: one file of no rows, as a write makes.
			l := newLayout(p.cols)
			w, err := newWriter(ctx, data, l, wo)
			if err != nil {
				return nil, err
			}
			if err := w.finish(); err != nil {
				return nil, err
			}
			files = append(files, filepath.Join(data, w.st.Files[0]))
		}
		total.Files = nil
		for i, f := range files {
			name := HubName(wo.split, i, len(files))
			if err := os.Rename(f, filepath.Join(data, name)); err != nil {
				return nil, err
			}
			total.Files = append(total.Files, "data/"+name)
		}
		total.Columns = columnStats(p.cols)
		return total, nil
	})
	if err != nil {
		return nil, err
	}
	res := result(st, path, fmt.Sprintf("%d parts", len(parts)))
	res.Summary += fmt.Sprintf(", merged (%d files linked, %d parts rewritten)", ms.Linked, ms.Rewritten)
	res.Stats = &registry.MergedStats{Format: "parquet", Stats: st, Merge: ms}
	return res, nil
}

func addStats(total, st *WriteStats) {
	total.Rows += st.Rows
	total.Members += st.Members
	total.Bytes += st.Bytes
}

func sameColumns(a []partColumn, b []column) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Name != b[i].name || a[i].Kind != b[i].kind {
			return false
		}
	}
	return true
}

// linkOrCopy puts src at dst without copying where both are on one file
// system (a hard link), else copies it.
func linkOrCopy(src, dst string) error {
	if err := os.Link(src, dst); err == nil {
		return nil
	}
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	_, err = io.Copy(out, in)
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	return err
}

// rewritePart writes a part's rows anew into dir under the plan's
// columns.
func rewritePart(ctx context.Context, part string, dir string, p *plan, wo *writeOptions) (*WriteStats, error) {
	d, err := Open(part)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrPart, err)
	}
	defer d.Close()
	src, _ := d.Rows(false)
	o := *wo
	o.name = func(i, _ int) string { return fmt.Sprintf("part-%05d.parquet", i) }
	return writePlanned(ctx, src, dir, p, &o)
}
