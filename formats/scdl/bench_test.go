package scdl

import (
	"bytes"
	"encoding/binary"
	"math"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/itarconv/itarconv/testing/testutil"
)

const (
	benchCells  = 200_000
	benchGenes  = 20_000 // col_ptr uint16
	benchPerRow = 100    // values per cell on average (50 to 150)
)

// writeBenchArchive writes cells cells of 50 to 150 float32 values
// (benchCells: 20M values in all, data.npy 80 MB, col_ptr.npy 40 MB).
func writeBenchArchive(b *testing.B, dir string, cells int) {
	files := []string{"var_features/cumulative_sum_index.npy", "var_features/dataframe_0.parquet"}
	w, err := Create(dir, WriterOptions{
		NGenes:         []int{benchGenes},
		FeatureIndices: []FeatureIndexInfo{{Name: VarFeatures, Length: uint64(cells), DType: StringArray, Files: files}},
	})
	if err != nil {
		b.Fatal(err)
	}
	defer w.Abort()
	values := make([]byte, 0, 4*2*benchPerRow)
	genes := make([]byte, 0, 4*2*benchPerRow)
	for i := range cells {
		n := benchPerRow/2 + i*7919%(benchPerRow+1)
		values, genes = values[:0], genes[:0]
		start := i * 31 % (benchGenes - n)
		for j := range n {
			values = binary.LittleEndian.AppendUint32(values, math.Float32bits(float32(j+i%13)))
			genes = binary.LittleEndian.AppendUint32(genes, uint32(start+j))
		}
		if err := w.AddRow(values, genes); err != nil {
			b.Fatal(err)
		}
	}
	w.AddFile(files[0], bytes.NewReader(CumSumIndex([]int{cells})))
	w.AddFile(files[1], bytes.NewReader(testutil.FakeParquet(benchGenes)))
	if err := w.Close(); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkRows reads every row of a 200k-cell archive (about 100 values a
// cell): in order with RowIter, in order with one Row call each, and with
// RowIter while encoding each row's values and genes as two NPY files (the
// format's share of a per-cell export). Open (which reads row_ptr and
// col_ptr once to check them) and the Writer are timed too.
func BenchmarkRows(b *testing.B) {
	dir := filepath.Join(b.TempDir(), "bench")
	writeBenchArchive(b, dir, benchCells)
	a, err := Open(dir)
	if err != nil {
		b.Fatal(err)
	}
	defer a.Close()
	if a.RowPtrDType() != Uint32 || a.ColPtrDType() != Uint16 {
		b.Fatalf("dtypes %v %v", a.RowPtrDType(), a.ColPtrDType())
	}
	cells := func(b *testing.B) {
		b.ReportMetric(float64(benchCells)*float64(b.N)/b.Elapsed().Seconds(), "cells/s")
	}
	b.Run("RowIter", func(b *testing.B) {
		b.SetBytes(int64(a.NNZ()) * 6)
		for range b.N {
			it := a.Rows(0, a.NumRows())
			n := 0
			for it.Next() {
				n += len(it.Genes())
			}
			if it.Err() != nil || n != 2*int(a.NNZ()) {
				b.Fatal(it.Err(), n)
			}
		}
		cells(b)
	})
	b.Run("Row", func(b *testing.B) {
		var v, g []byte
		for range b.N {
			for i := range a.NumRows() {
				if v, g, err = a.AppendRow(v[:0], g[:0], i); err != nil {
					b.Fatal(err)
				}
			}
		}
		cells(b)
	})
	b.Run("RowIter+NPY", func(b *testing.B) {
		var buf bytes.Buffer
		for range b.N {
			it := a.Rows(0, a.NumRows())
			for it.Next() {
				buf.Reset()
				v, g := it.Values(), it.Genes()
				if err := WriteNPY(&buf, Float32, v, len(v)/4); err != nil {
					b.Fatal(err)
				}
				if err := WriteNPY(&buf, Uint16, g, len(g)/2); err != nil {
					b.Fatal(err)
				}
			}
		}
		cells(b)
	})
	b.Run("Open", func(b *testing.B) {
		for range b.N {
			a, err := Open(dir)
			if err != nil {
				b.Fatal(err)
			}
			a.Close()
		}
		cells(b)
	})
	b.Run("Write", func(b *testing.B) {
		for i := range b.N {
			writeBenchArchive(b, filepath.Join(b.TempDir(), "w"+strconv.Itoa(i)), benchCells)
		}
		cells(b)
	})
	b.Run("WriteNoSync", func(b *testing.B) {
		noSync(b)
		for i := range b.N {
			writeBenchArchive(b, filepath.Join(b.TempDir(), "w"+strconv.Itoa(i)), benchCells)
		}
		cells(b)
	})
}
