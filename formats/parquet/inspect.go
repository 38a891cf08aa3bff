package parquet

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/itarconv/itarconv/formats/registry"
	"github.com/itarconv/itarconv/internal/human"
)

// Report is what Inspect and Verify tell of a dataset.
type Report struct {
	Path    string       `json:"path"`
	Splits  []string     `json:"splits"`
	Files   []FileReport `json:"files"`
	Rows    int64        `json:"rows"`
	Members int64        `json:"members,omitempty"` // Verify: the members read
	Bytes   int64        `json:"bytes,omitempty"`
	// Warnings are the columns left out.
	Warnings []string `json:"warnings,omitempty"`
}

// FileReport is one file of a Report.
type FileReport struct {
	File      string   `json:"file"`
	Split     string   `json:"split"`
	Size      int64    `json:"size"`
	Rows      int64    `json:"rows"`
	RowGroups int      `json:"row_groups"`
	Columns   []string `json:"columns"`
	CreatedBy string   `json:"created_by,omitempty"`
	// Features are the datasets features of the file's "huggingface"
	// metadata, by column ("Image", a Value's dtype, ...).
	Features map[string]string `json:"features,omitempty"`
}

func (r *Report) WriteText(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: Parquet, %s, %d rows, splits %s\n", r.Path, human.Count(len(r.Files), "file"), r.Rows, strings.Join(r.Splits, ", "))
	for _, f := range r.Files {
		fmt.Fprintf(&b, "  %s  split %s  %d bytes  %d rows  %s  columns %s\n", f.File, f.Split, f.Size, f.Rows, human.Count(f.RowGroups, "row group"), strings.Join(f.Columns, ", "))
	}
	if r.Members > 0 {
		fmt.Fprintf(&b, "read %d members, %d bytes: every page checked\n", r.Members, r.Bytes)
	}
	for _, w := range r.Warnings {
		fmt.Fprintf(&b, "warning: %s\n", w)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// hubFeatures parses a "huggingface" metadata value as the datasets
// library writes it: {"info": {"features": {column: {"_type": ...}}}}.
func hubFeatures(v string) (map[string]string, error) {
	var m struct {
		Info struct {
			Features map[string]struct {
				Type  string `json:"_type"`
				DType string `json:"dtype"`
			} `json:"features"`
		} `json:"info"`
	}
	if err := json.Unmarshal([]byte(v), &m); err != nil {
		return nil, err
	}
	if m.Info.Features == nil {
		return nil, fmt.Errorf("no info.features")
	}
	out := map[string]string{}
	for k, f := range m.Info.Features {
		switch {
		case f.Type == "":
			return nil, fmt.Errorf("feature %q has no _type", k)
		case f.Type == "Value":
			out[k] = f.DType
		default:
			out[k] = f.Type
		}
	}
	return out, nil
}

func describe(d *Dataset) (*Report, error) {
	r := &Report{Path: d.path, Warnings: d.Warnings()}
	for _, f := range d.files {
		if len(r.Splits) == 0 || r.Splits[len(r.Splits)-1] != f.Split {
			r.Splits = append(r.Splits, f.Split)
		}
		fr := FileReport{File: f.Rel, Split: f.Split, Size: f.Size, Rows: f.Rows, RowGroups: f.RowGroups(), CreatedBy: f.pf.Metadata().CreatedBy}
		for _, fd := range f.pf.Schema().Fields() {
			fr.Columns = append(fr.Columns, fd.Name())
		}
		if v := f.Features(); v != "" {
			feats, err := hubFeatures(v)
			if err != nil {
				return r, f.fail(-1, fmt.Errorf("%q metadata: %v: %w", MetadataKey, err, ErrFormat))
			}
			for _, c := range fr.Columns {
				if _, ok := feats[c]; !ok {
					return r, f.fail(-1, fmt.Errorf("%q metadata: no feature for column %s: %w", MetadataKey, c, ErrFormat))
				}
			}
			fr.Features = feats
		}
		r.Files = append(r.Files, fr)
		r.Rows += f.Rows
	}
	return r, nil
}

func inspect(ctx context.Context, path string) (registry.Report, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	d, err := Open(path)
	if err != nil {
		return nil, err
	}
	defer d.Close()
	r, err := describe(d)
	if err != nil {
		return nil, err
	}
	return r, nil
}

// verify reads every page of every file (parquet-go checks each page's
// CRC-32 where it has one) and the features metadata.
func verify(ctx context.Context, path string) (registry.Report, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	d, err := Open(path)
	if err != nil {
		return nil, err
	}
	defer d.Close()
	r, err := describe(d)
	if err != nil {
		return r, fmt.Errorf("%w: %w", registry.ErrVerify, err)
	}
	for _, g := range d.groups {
		f := d.files[g.file]
		err := f.readGroup(ctx, g.index, d.prefix(f), g.first, func(_ int64, ms []member) error {
			for _, m := range ms {
				r.Members++
				r.Bytes += int64(len(m.data))
			}
			return nil
		})
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if err != nil {
			return r, fmt.Errorf("%w: %w", registry.ErrVerify, err)
		}
	}
	return r, nil
}
