package convert

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/itarconv/itarconv/dataset"
	"github.com/itarconv/itarconv/fold"
	"github.com/itarconv/itarconv/formats/barecat"
	"github.com/itarconv/itarconv/formats/scdl"
	"github.com/itarconv/itarconv/formats/tbl"
)

// scdlToBarecat writes an archive as a Barecat archive, in the given mode.
func scdlToBarecat(t *testing.T, src, out, mode string) *BarecatStats {
	t.Helper()
	a, err := scdl.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	s, err := NewSCDLSource(a, mode)
	if err != nil {
		t.Fatal(err)
	}
	st, err := ToBarecat(context.Background(), s, out, BarecatOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func scdlToTBL(t *testing.T, src, out, mode string, version int) *tbl.RowsStats {
	t.Helper()
	a, err := scdl.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	st, err := ToTBL(context.Background(), func(bool) (dataset.PayloadSource, error) { return NewSCDLSource(a, mode) }, out, TBLOptions{Version: version})
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func barecatToSCDL(archive, out string) (*SCDLImportStats, error) {
	a, err := barecat.Open(archive)
	if err != nil {
		return nil, err
	}
	defer a.Close()
	return ToSCDL(context.Background(), func(counting bool) (dataset.PayloadSource, error) {
		return &barecat.Source{Archive: a, Order: barecat.ByAddress, NoData: counting}, nil
	}, out, SCDLImportOptions{Workers: 2})
}

func tblToSCDL(file, out string) (*SCDLImportStats, error) {
	r, err := tbl.Open(file)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return ToSCDL(context.Background(), func(counting bool) (dataset.PayloadSource, error) {
		return &tbl.Source{Reader: r, NoData: counting}, nil
	}, out, SCDLImportOptions{Workers: 2})
}

// An SCDL archive goes to Barecat and TBL v2 and back, in both modes,
// byte for byte: the conformance archives and a synthetic one of many
// batches, whose cells straddle the sources' chunks.
func TestSCDLThroughBarecatAndTBL(t *testing.T) {
	cases := scdlCases(t)
	synth := filepath.Join(t.TempDir(), "synth")
	writeSynthSCDL(t, synth, 3000)
	cases["synth"] = synth
	b, c := scdlBatchCells, scdlChunkCells
	scdlBatchCells, scdlChunkCells = 100, 500
	t.Cleanup(func() { scdlBatchCells, scdlChunkCells = b, c })
	for name, src := range cases {
		a, err := scdl.Open(src)
		if err != nil {
			t.Fatal(err)
		}
		cells, nnz := a.NumRows(), a.NNZ()
		a.Close()
		for _, mode := range []string{scdl.ModeCells, scdl.ModeArchive} {
			t.Run(name+"/"+mode, func(t *testing.T) {
				dir := t.TempDir()
				check := func(via string, st *SCDLImportStats, err error) {
					t.Helper()
					if err != nil {
						t.Fatalf("%s -> SCDL: %v", via, err)
					}
					if st.Mode != mode || st.Fresh || st.Cells != cells || st.NNZ != nnz {
						t.Errorf("%s -> SCDL: %+v; want mode %s, %d cells, %d values", via, st, mode, cells, nnz)
					}
					sameTree(t, src, st.Output)
				}
				bc := filepath.Join(dir, "a.barecat")
				scdlToBarecat(t, src, bc, mode)
				st, err := barecatToSCDL(bc, filepath.Join(dir, "from-barecat"))
				check("Barecat", st, err)

				// Barecat -> tar gives one fold holding both the cells and
				// scdlmeta/: it converts back as well.
				ba, err := barecat.Open(bc)
				if err != nil {
					t.Fatal(err)
				}
				_, err = fold.Write(context.Background(), &barecat.Source{Archive: ba, Order: barecat.ByAddress}, fold.WriteOptions{Dir: filepath.Join(dir, "tar"), Fold: "train"})
				ba.Close()
				if err != nil {
					t.Fatal(err)
				}
				st, err = TarToSCDL(context.Background(), filepath.Join(dir, "tar"), filepath.Join(dir, "from-tar"), SCDLImportOptions{Fold: "train"})
				check("Barecat -> tar", st, err)

				tf := filepath.Join(dir, "a.tbl")
				if tst := scdlToTBL(t, src, tf, mode, 2); !tst.NamesKept {
					t.Errorf("TBL v2 keeps names: %+v", tst)
				}
				st, err = tblToSCDL(tf, filepath.Join(dir, "from-tbl"))
				check("TBL", st, err)
			})
		}
	}
}

// TBL v1 keeps no names: its samples are not an archive's files, and the
// error says what the first one is.
func TestSCDLFromTBLv1(t *testing.T) {
	var src string
	for _, s := range scdlCases(t) {
		src = s
		break
	}
	dir := t.TempDir()
	tf := filepath.Join(dir, "a.tbl")
	scdlToTBL(t, src, tf, scdl.ModeCells, 1)
	_, err := tblToSCDL(tf, filepath.Join(dir, "back"))
	var e *scdl.Error
	if err == nil || !errors.As(err, &e) {
		t.Fatalf("TBL v1 -> SCDL: %v; want the archive's check to fail", err)
	}
	t.Log(err)
}

// scdlRows lists the rows NewSCDLSource gives, each with its bytes.
func scdlRows(t *testing.T, src string) (meta, cells []dataset.Row) {
	t.Helper()
	a, err := scdl.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	s, err := NewSCDLSource(a, scdl.ModeCells)
	if err != nil {
		t.Fatal(err)
	}
	err = dataset.Run(context.Background(), s, dataset.RowFunc(func(_ int, r *dataset.Row) error {
		row := *r
		row.Name = bytes.Clone(r.Name)
		if r.Inline != nil {
			row.Inline = bytes.Clone(r.Inline)
		} else {
			rd, err := s.OpenPayload(r)
			if err != nil {
				return err
			}
			if row.Inline, err = io.ReadAll(rd); err != nil {
				return err
			}
		}
		if bytes.HasPrefix(row.Name, []byte(scdl.MetaPrefix)) {
			meta = append(meta, row)
		} else {
			cells = append(cells, row)
		}
		return nil
	}), dataset.Options{Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	return meta, cells
}

// rowsSource is one shard of rows with their bytes; OpenPayload serves
// rows without them.
type rowsSource struct{ inlineSource }

func (s *rowsSource) OpenPayload(r *dataset.Row) (io.Reader, error) {
	for _, x := range s.rows {
		if bytes.Equal(x.Name, r.Name) {
			return bytes.NewReader(x.Inline), nil
		}
	}
	return nil, fs.ErrNotExist
}

// ToSCDL takes the rows in any order: the files beside the cells after
// them (a listing pass first), the header last among them; a file that is
// neither is refused (scdl.ErrNotCell); cells alone make a fresh archive.
func TestToSCDLRowOrders(t *testing.T) {
	var src string
	for _, s := range scdlCases(t) {
		src = s
		break
	}
	meta, cells := scdlRows(t, src)
	headerLast := slices.Clone(meta)
	slices.SortStableFunc(headerLast, func(a, b dataset.Row) int {
		return cmp.Compare(boolInt(string(a.Name) == scdl.MetaPrefix+scdl.HeaderFile), boolInt(string(b.Name) == scdl.MetaPrefix+scdl.HeaderFile))
	})
	stray := dataset.Row{Name: []byte("notes.txt"), Kind: dataset.KindFile, Size: 2, Inline: []byte("hi")}
	dir := []dataset.Row{{Name: []byte("scdlmeta/"), Kind: dataset.KindDir}} // directories follow from the files
	for _, c := range []struct {
		name  string
		rows  []dataset.Row
		fresh bool
		err   error
	}{
		{name: "meta first", rows: slices.Concat(dir, meta, cells)},
		{name: "meta last", rows: slices.Concat(dir, cells, meta)},
		{name: "header last", rows: slices.Concat(headerLast, cells)},
		{name: "header after cells", rows: slices.Concat(headerLast[:len(headerLast)-1], cells, headerLast[len(headerLast)-1:])},
		{name: "cells alone", rows: cells, fresh: true},
		{name: "stray file after cells", rows: slices.Concat(meta, cells, []dataset.Row{stray}), err: scdl.ErrNotCell},
		{name: "stray file first", rows: slices.Concat([]dataset.Row{stray}, cells), err: scdl.ErrNotCell},
	} {
		t.Run(c.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out")
			st, err := ToSCDL(context.Background(), func(bool) (dataset.PayloadSource, error) {
				return &rowsSource{inlineSource{rows: slices.Clone(c.rows)}}, nil
			}, out, SCDLImportOptions{})
			if c.err != nil {
				if !errors.Is(err, c.err) {
					t.Fatalf("error %v, want %v", err, c.err)
				}
				if _, err := os.Lstat(out); err == nil {
					t.Error("the output exists")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if st.Fresh != c.fresh || st.Cells != len(cells)/3 {
				t.Errorf("%+v; want fresh %v, %d cells", st, c.fresh, len(cells)/3)
			}
			if !c.fresh {
				sameTree(t, src, out)
			}
		})
	}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
