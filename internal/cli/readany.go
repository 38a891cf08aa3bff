package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"strings"

	"github.com/itarconv/itarconv/convert"
	"github.com/itarconv/itarconv/formats/barecat"
	"github.com/itarconv/itarconv/formats/registry"
	"github.com/itarconv/itarconv/formats/scdl"
	"github.com/itarconv/itarconv/formats/tbl"
)

// ls and cat read Barecat archives, TBL files and SCDL archives as they
// read folds: each entry under the name a conversion gives it (a Barecat
// file by its path; a TBL sample by its metadata name, else %09d.<ext>; an
// SCDL cell's members by <row>.values.npy, <row>.genes.npy and <row>.json,
// the archive's other files under scdlmeta/).

// lsOther lists a Barecat archive's files (in path order) or a TBL file's
// samples; handled is false when path is neither.
func (e *env) lsOther(ctx context.Context, path string) (handled bool, err error) {
	w := bufio.NewWriterSize(e.stdout, 1<<16)
	defer w.Flush()
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	switch {
	case registry.Is("barecat", path):
		a, err := barecat.Open(path)
		if err != nil {
			return true, err
		}
		defer a.Close()
		return true, a.Files(ctx, barecat.ByPath, func(f barecat.File) error {
			if e.jsonOut {
				return enc.Encode(struct {
					Path   string `json:"path"`
					Size   int64  `json:"size"`
					Shard  int    `json:"shard"`
					Offset int64  `json:"offset"`
				}{f.Path, f.Size, f.Shard, f.Offset})
			}
			_, err := fmt.Fprintf(w, "%s\t%d\t%d\t%d\n", f.Path, f.Shard, f.Offset, f.Size)
			return err
		})
	case registry.Is("tbl", path):
		r, err := tbl.Open(path)
		if err != nil {
			return true, err
		}
		defer r.Close()
		names := &convert.TBLSource{Reader: r}
		for i := range r.Len() {
			name, err := names.SampleName(i)
			if err != nil {
				return true, err
			}
			s := r.Sample(i)
			if e.jsonOut {
				err = enc.Encode(struct {
					Sample int    `json:"sample"`
					Name   string `json:"name"`
					Format string `json:"format"`
					Size   uint32 `json:"size"`
				}{i, name, strings.ToLower(s.Format.String()), s.Size})
			} else {
				_, err = fmt.Fprintf(w, "%d\t%s\t%s\t%d\n", i, name, s.Format, s.Size)
			}
			if err != nil {
				return true, err
			}
		}
		return true, nil
	case registry.Is("scdl", path):
		a, err := scdl.Open(path)
		if err != nil {
			return true, err
		}
		defer a.Close()
		src, err := convert.NewSCDLSource(a, convert.SCDLModeCells)
		if err != nil {
			return true, err
		}
		return true, convert.Run(ctx, src, rowPrinter(func(r *convert.Row) error {
			if e.jsonOut {
				return enc.Encode(struct {
					Name string `json:"name"`
					Size int64  `json:"size"`
				}{string(r.Name), r.Size})
			}
			_, err := fmt.Fprintf(w, "%s\t%d\n", r.Name, r.Size)
			return err
		}), convert.Options{})
	}
	return false, nil
}

// rowPrinter is a sink that hands each row, in order, to a function.
type rowPrinter func(r *convert.Row) error

func (p rowPrinter) Prepare(*convert.Batch) error { return nil }
func (p rowPrinter) EndShard(int) error           { return nil }
func (p rowPrinter) Write(b *convert.Batch) error {
	for i := range b.Rows {
		if err := p(&b.Rows[i]); err != nil {
			return err
		}
	}
	return nil
}

// catOther writes one Barecat file (by path) or TBL sample (by name) to
// stdout, whole and checked (crc32c, CRC-16, LZ4) before a byte is written;
// handled is false when path is neither.
func (e *env) catOther(path, name string) (handled bool, err error) {
	var data []byte
	switch {
	case registry.Is("barecat", path):
		a, err := barecat.Open(path)
		if err != nil {
			return true, err
		}
		defer a.Close()
		f, err := a.Lookup(name)
		if err != nil {
			return true, err
		}
		if data, err = a.ReadFile(f); err != nil {
			return true, err
		}
	case registry.Is("tbl", path):
		r, err := tbl.Open(path)
		if err != nil {
			return true, err
		}
		defer r.Close()
		names := &convert.TBLSource{Reader: r}
		i := 0
		for ; i < r.Len(); i++ {
			n, err := names.SampleName(i)
			if err != nil {
				return true, err
			}
			if n == name {
				break
			}
		}
		if i == r.Len() {
			return true, fmt.Errorf("%s: %s: no sample of that name: %w", path, name, fs.ErrNotExist)
		}
		if data, err = r.ReadSample(i, nil); err != nil {
			return true, err
		}
	case registry.Is("scdl", path):
		a, err := scdl.Open(path)
		if err != nil {
			return true, err
		}
		defer a.Close()
		if data, err = convert.SCDLMember(a, name); err != nil {
			return true, err
		}
	default:
		return false, nil
	}
	_, err = e.stdout.Write(data)
	return true, err
}
