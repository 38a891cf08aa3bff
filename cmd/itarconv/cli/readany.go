package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/itarconv/itarconv/fold"
	"github.com/itarconv/itarconv/formats/registry"
	"github.com/itarconv/itarconv/formats/taridx"
)

// ls, cat, inspect and verify read every registered format through the
// registry; tar folds and TARIDX files, which the index serves, have
// commands of their own (read.go, inspect.go). Each entry is listed and
// read by the name a conversion gives it (a Barecat file by its path; a
// TBL sample by its metadata name, else %09d.<ext>; an SCDL cell's members
// by <row>.values.npy, <row>.genes.npy and <row>.json, the archive's other
// files under scdlmeta/).

// registered returns the format path holds, when the registry serves the
// operation (op says which, through its Format's function); nil for tar
// folds and TARIDX files.
func registered(path string, op func(*registry.Format) bool) *registry.Format {
	f := registry.Detect(path)
	if f == nil || f.Name == fold.FormatName || f.Name == taridx.FormatName || !op(f) {
		return nil
	}
	return f
}

// openRegistered opens path through the registry; handled is false when
// the registry does not serve it.
func openRegistered(path string) (d registry.Dataset, handled bool, err error) {
	f := registered(path, func(f *registry.Format) bool { return f.Open != nil })
	if f == nil {
		return nil, false, nil
	}
	d, err = f.Open([]string{path}, registry.OpenOptions{})
	return d, true, err
}

// lsOther lists a dataset of a registered format; handled is false when
// the registry does not serve path.
func (e *env) lsOther(ctx context.Context, path string) (handled bool, err error) {
	d, handled, err := openRegistered(path)
	if !handled || err != nil {
		return handled, err
	}
	defer d.Close()
	for _, w := range d.Warnings() {
		e.warnf("%s\n", w)
	}
	w := bufio.NewWriterSize(e.stdout, 1<<16)
	rows := e.lsJSON()
	header := rows == nil && isTerminal(e.stdout) // a pipe gets the rows alone
	err = d.List(ctx, func(en registry.Entry) error {
		if rows != nil {
			row, err := entryJSON(en)
			if err != nil {
				return err
			}
			return rows.add(row)
		}
		if header {
			header = false
			fmt.Fprintf(w, "name")
			for _, f := range en.Fields {
				fmt.Fprintf(w, "\t%s", f.Key)
			}
			fmt.Fprintf(w, "\tsize\n")
		}
		fmt.Fprintf(w, "%s", en.Name)
		for _, f := range en.Fields {
			fmt.Fprintf(w, "\t%v", f.Value)
		}
		_, err := fmt.Fprintf(w, "\t%d\n", en.Size)
		return err
	})
	if err != nil {
		return true, err
	}
	return true, w.Flush()
}

// entryJSON is an entry as one JSON object: name, the format's fields in
// order, size.
func entryJSON(en registry.Entry) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	field := func(k string, v any) error {
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		enc.Encode(k)
		b.Truncate(b.Len() - 1) // Encode ends with a newline
		b.WriteByte(':')
		if err := enc.Encode(v); err != nil {
			return err
		}
		b.Truncate(b.Len() - 1)
		return nil
	}
	field("name", en.Name)
	for _, f := range en.Fields {
		if err := field(f.Key, f.Value); err != nil {
			return nil, err
		}
	}
	field("size", en.Size)
	return append(append([]byte{'{'}, b.Bytes()...), '}'), nil
}

// catOther writes one entry of a dataset of a registered format to
// stdout, whole and checked (crc32c, CRC-16, LZ4, ...) before a byte is
// written; handled is false when the registry does not serve path.
func (e *env) catOther(path, name string) (handled bool, err error) {
	d, handled, err := openRegistered(path)
	if !handled || err != nil {
		return handled, err
	}
	defer d.Close()
	data, err := d.ReadEntry(name)
	if err != nil {
		return true, err
	}
	_, err = e.stdout.Write(data)
	return true, err
}

// report prints what Inspect or Verify found (as JSON with --json); a
// report of damage is printed and exits 1.
func (e *env) report(rep registry.Report, err error) error {
	if rep == nil {
		return err
	}
	if e.jsonOut {
		if perr := e.setResult(rep); perr != nil {
			return perr
		}
	} else if werr := rep.WriteText(e.stdout); werr != nil {
		return werr
	}
	if errors.Is(err, registry.ErrVerify) {
		return errReported
	}
	return err
}
