package convert

import (
	"context"
	"errors"
	"path/filepath"
	"testing"

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

func scdlToTBL(t *testing.T, src, out, mode string, version int) *TBLStats {
	t.Helper()
	a, err := scdl.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	st, err := ToTBL(context.Background(), func(bool) (PayloadSource, error) { return NewSCDLSource(a, mode) }, out, TBLOptions{Version: version})
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
	return ToSCDL(context.Background(), func(counting bool) (PayloadSource, error) {
		return &BarecatSource{Archive: a, Order: barecat.ByAddress, NoData: counting}, nil
	}, out, SCDLImportOptions{Workers: 2})
}

func tblToSCDL(file, out string) (*SCDLImportStats, error) {
	r, err := tbl.Open(file)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return ToSCDL(context.Background(), func(counting bool) (PayloadSource, error) {
		return &TBLSource{Reader: r, NoData: counting}, nil
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
		for _, mode := range []string{SCDLModeCells, SCDLModeArchive} {
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
				_, err = WriteFold(context.Background(), &BarecatSource{Archive: ba, Order: barecat.ByAddress}, FoldOptions{Dir: filepath.Join(dir, "tar"), Fold: "train"})
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
	scdlToTBL(t, src, tf, SCDLModeCells, 1)
	_, err := tblToSCDL(tf, filepath.Join(dir, "back"))
	var e *scdl.Error
	if err == nil || !errors.As(err, &e) {
		t.Fatalf("TBL v1 -> SCDL: %v; want the archive's check to fail", err)
	}
	t.Log(err)
}
