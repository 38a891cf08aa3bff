package scdl

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"

	"github.com/itarconv/itarconv/testing/testutil"
)

// TestOpenConformance opens every archive bionemo wrote and checks its
// header against header.json and every row against expected.json: values,
// gene indices and number of genes, through Row and RowIter alike.
func TestOpenConformance(t *testing.T) {
	dtypes := map[string][3]DType{ // data, row_ptr, col_ptr
		"basic_50x30_f32":      {Float32, Uint16, Uint8},
		"nonint_50x30_f32":     {Float32, Uint16, Uint8},
		"concat_2x_same_genes": {Float32, Uint16, Uint8},
		"counts_uint8":         {Uint8, Uint8, Uint8},
	}
	for _, c := range conformanceCases(t) {
		if !c.ok {
			continue
		}
		t.Run(c.name, func(t *testing.T) {
			a, err := Open(filepath.Join(c.dir, "scdl"))
			if err != nil {
				t.Fatal(err)
			}
			defer a.Close()
			var e expected
			loadJSON(t, filepath.Join(c.dir, "expected.json"), &e)
			var j headerJSON
			loadJSON(t, filepath.Join(c.dir, "header.json"), &j)
			if !reflect.DeepEqual(a.Header(), j.header()) {
				t.Errorf("header %+v", a.Header())
			}
			if a.NumRows() != len(e.Indptr)-1 || a.NNZ() != uint64(len(e.Indices)) {
				t.Fatalf("%d rows, %d values; want %d, %d", a.NumRows(), a.NNZ(), len(e.Indptr)-1, len(e.Indices))
			}
			want, ok := dtypes[c.name]
			if !ok {
				t.Fatalf("no dtypes listed for case %s", c.name)
			}
			if got := [3]DType{a.DataDType(), a.RowPtrDType(), a.ColPtrDType()}; got != want {
				t.Errorf("dtypes %v, want %v", got, want)
			}
			// Same genes: even the concatenation of two blocks of 30 is
			// one block once bionemo merged them.
			if b := a.Blocks(); !reflect.DeepEqual(b, []Block{{0, a.NumRows(), len(e.VarFeatureNames) / len(e.VarBlockWidths)}}) {
				t.Errorf("blocks %+v (var_block_widths %v)", b, e.VarBlockWidths)
			}
			it := a.Rows(0, a.NumRows())
			for i := range a.NumRows() {
				lo, hi := e.Indptr[i], e.Indptr[i+1]
				values, genes, err := a.Row(i)
				if err != nil {
					t.Fatal(err)
				}
				checkRow(t, a, i, values, genes, e.Data[lo:hi], e.Indices[lo:hi])
				if !it.Next() || it.Row() != i {
					t.Fatalf("RowIter stopped before row %d: %v", i, it.Err())
				}
				if !bytes.Equal(it.Values(), values) || !bytes.Equal(it.Genes(), genes) {
					t.Errorf("row %d: RowIter and Row differ", i)
				}
				if k, n := a.RowBlock(i); k != 0 || n != e.RowWidth[i] {
					t.Errorf("row %d: block %d of %d genes, want 0, %d", i, k, n, e.RowWidth[i])
				}
			}
			if it.Next() || it.Err() != nil {
				t.Errorf("RowIter past the end: %v", it.Err())
			}
			wantFiles := []string{"col_ptr.npy", "data.npy", "header.sch", "metadata.json",
				"obs_features/cumulative_sum_index.npy", "obs_features/dataframe_0.parquet", "obs_features/labels.json", "obs_features/version.npy",
				"row_ptr.npy",
				"var_features/cumulative_sum_index.npy", "var_features/dataframe_0.parquet", "var_features/labels.json", "var_features/version.npy",
				"version.json"}
			if !reflect.DeepEqual(a.Files(), wantFiles) {
				t.Errorf("files %q", a.Files())
			}
		})
	}
}

// checkRow compares a row's raw bytes with expected values and genes.
func checkRow(t *testing.T, a *Archive, i int, values, genes []byte, wantValues []float64, wantGenes []uint64) {
	t.Helper()
	v, err := AppendFloat64s(nil, a.DataDType(), values)
	if err != nil {
		t.Fatal(err)
	}
	g, err := AppendUint64s(nil, a.ColPtrDType(), genes)
	if err != nil {
		t.Fatal(err)
	}
	if len(wantValues) == 0 && len(v) == 0 && len(g) == 0 && len(wantGenes) == 0 {
		return
	}
	if !reflect.DeepEqual(v, wantValues) || !reflect.DeepEqual(g, wantGenes) {
		t.Errorf("row %d: values %v genes %v\nwant values %v genes %v", i, v, g, wantValues, wantGenes)
	}
}

// TestOpenFailedConversions: where bionemo failed (0 cells, an all-zero
// matrix) it left a directory holding only version.json; it is not an
// archive.
func TestOpenFailedConversions(t *testing.T) {
	n := 0
	for _, c := range conformanceCases(t) {
		if c.ok {
			continue
		}
		n++
		_, err := Open(filepath.Join(c.dir, "scdl"))
		wantErr(t, err, ErrFormat, "scdl/header.sch", -1, "missing")
	}
	if n != 2 {
		t.Errorf("%d failed cases, want 2 (zero_cells, all_zero_matrix)", n)
	}
}

// basicCopy copies basic_50x30_f32's archive to a temporary directory.
func basicCopy(t *testing.T) string {
	dir := filepath.Join(t.TempDir(), "scdl")
	copyDir(t, filepath.Join(conformanceDir(t, "basic_50x30_f32"), "scdl"), dir)
	return dir
}

func conformanceDir(t testing.TB, name string) string {
	for _, c := range conformanceCases(t) {
		if c.name == name {
			return c.dir
		}
	}
	t.Fatalf("no conformance case %s", name)
	return ""
}

// editFile rewrites a file of the archive in dir.
func editFile(t *testing.T, dir, rel string, f func(b []byte) []byte) {
	t.Helper()
	p := filepath.Join(dir, rel)
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := replaceFile(p, f(b)); err != nil {
		t.Fatal(err)
	}
}

// editHeader rewrites header.sch through its decoded form.
func editHeader(t *testing.T, dir string, f func(h *Header)) {
	editFile(t, dir, HeaderFile, func(b []byte) []byte {
		h, err := DecodeHeader(b)
		if err != nil {
			t.Fatal(err)
		}
		f(h)
		out, err := h.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		return out
	})
}

// TestOpenErrors corrupts copies of basic_50x30_f32 (50 rows, 285 values:
// data float32, row_ptr uint16, col_ptr uint8, 30 genes) one way each.
func TestOpenErrors(t *testing.T) {
	u16 := func(off int, v uint16) func([]byte) []byte {
		return func(b []byte) []byte { binary.LittleEndian.PutUint16(b[off:], v); return b }
	}
	cases := []struct {
		name  string
		edit  func(t *testing.T, dir string)
		kind  error
		path  string
		off   int64
		words []string
	}{
		{"bad magic", func(t *testing.T, d string) {
			editFile(t, d, HeaderFile, func(b []byte) []byte { b[0] = 's'; return b })
		}, ErrFormat, "header.sch", 0, []string{"magic"}},
		{"endianness", func(t *testing.T, d string) {
			editFile(t, d, HeaderFile, func(b []byte) []byte { b[7] = 0; return b })
		}, ErrUnsupported, "header.sch", 7, []string{"endianness 0"}},
		{"backend", func(t *testing.T, d string) {
			editFile(t, d, HeaderFile, func(b []byte) []byte { b[11] = 2; return b })
		}, ErrUnsupported, "header.sch", 8, []string{"backend 2"}},
		{"unknown dtype", func(t *testing.T, d string) {
			editFile(t, d, HeaderFile, func(b []byte) []byte { b[0x23] = 12; return b }) // DATA's dtype
		}, ErrUnsupported, "header.sch", 0x20, []string{`array "DATA" dtype 12`}},
		{"truncated header", func(t *testing.T, d string) {
			editFile(t, d, HeaderFile, func(b []byte) []byte { return b[:100] })
		}, ErrTruncated, "header.sch", -2, nil},
		{"trailing bytes", func(t *testing.T, d string) {
			editFile(t, d, HeaderFile, func(b []byte) []byte { return append(b, 0) })
		}, ErrFormat, "header.sch", 419, []string{"1 bytes after"}},
		{"no header", func(t *testing.T, d string) { os.Remove(filepath.Join(d, HeaderFile)) },
			ErrFormat, "header.sch", -1, []string{"missing"}},
		{"unknown array name", func(t *testing.T, d string) {
			editHeader(t, d, func(h *Header) { h.Arrays[0].Name = "data.npy" })
		}, ErrUnsupported, "header.sch", -1, []string{`"data.npy"`}},
		{"array twice", func(t *testing.T, d string) {
			// MarshalBinary refuses this: copy DATA's 21-byte descriptor.
			editFile(t, d, HeaderFile, func(b []byte) []byte {
				b[15] = 4
				return slices.Concat(b[:37], b[16:37], b[37:])
			})
		}, ErrCorrupt, "header.sch", -1, []string{"DATA is described twice"}},
		{"no COLPTR", func(t *testing.T, d string) {
			editHeader(t, d, func(h *Header) { h.Arrays = h.Arrays[:2] })
		}, ErrCorrupt, "header.sch", -1, []string{"no COLPTR"}},
		{"float row_ptr", func(t *testing.T, d string) {
			editHeader(t, d, func(h *Header) { h.Arrays[1].DType = Float16 })
		}, ErrUnsupported, "header.sch", -1, []string{"ROWPTR has dtype float16"}},
		{"string data", func(t *testing.T, d string) {
			editHeader(t, d, func(h *Header) { h.Arrays[0].DType = StringArray })
		}, ErrUnsupported, "header.sch", -1, []string{"DATA has dtype string"}},
		{"lengths disagree", func(t *testing.T, d string) {
			editHeader(t, d, func(h *Header) { h.Arrays[2].Length = 284 })
		}, ErrCorrupt, "header.sch", -1, []string{"DATA has 285 elements but COLPTR 284"}},
		{"data size", func(t *testing.T, d string) {
			editFile(t, d, DataFile, func(b []byte) []byte { return b[:len(b)-4] })
		}, ErrCorrupt, "data.npy", 1136, []string{"1136 bytes", "285 float32 elements (1140 bytes)"}},
		{"data dtype wider than the file", func(t *testing.T, d string) {
			editHeader(t, d, func(h *Header) { h.Arrays[0].DType = Float64 })
		}, ErrCorrupt, "data.npy", 1140, []string{"1140 bytes", "(2280 bytes)"}},
		{"col_ptr size", func(t *testing.T, d string) {
			editFile(t, d, ColPtrFile, func(b []byte) []byte { return append(b, 0) })
		}, ErrCorrupt, "col_ptr.npy", 285, []string{"286 bytes"}},
		{"row_ptr size", func(t *testing.T, d string) {
			editFile(t, d, RowPtrFile, func(b []byte) []byte { return b[:101] })
		}, ErrCorrupt, "row_ptr.npy", 101, []string{"51 uint16 elements"}},
		{"row_ptr does not start at 0", func(t *testing.T, d string) {
			editFile(t, d, RowPtrFile, u16(0, 1))
		}, ErrCorrupt, "row_ptr.npy", 0, []string{"row_ptr[0] is 1"}},
		{"row_ptr decreases", func(t *testing.T, d string) {
			editFile(t, d, RowPtrFile, u16(2*10, 2))
		}, ErrCorrupt, "row_ptr.npy", 20, []string{"row_ptr[10] = 2 is below row_ptr[9] = 46"}},
		{"row_ptr past nnz", func(t *testing.T, d string) {
			editFile(t, d, RowPtrFile, u16(2*49, 300))
		}, ErrCorrupt, "row_ptr.npy", 98, []string{"row_ptr[49] = 300 is past the 285 values"}},
		{"row_ptr ends early", func(t *testing.T, d string) {
			editFile(t, d, RowPtrFile, u16(2*49, 280))
			editFile(t, d, RowPtrFile, u16(2*50, 280))
		}, ErrCorrupt, "row_ptr.npy", 100, []string{"row_ptr[50] = 280, but there are 285 values"}},
		{"gene out of range", func(t *testing.T, d string) {
			editFile(t, d, ColPtrFile, func(b []byte) []byte { b[100] = 30; return b })
		}, ErrCorrupt, "col_ptr.npy", 100, []string{"col_ptr[100] = 30 (row 19) is not below 30", "block 0"}},
		{"last gene out of range", func(t *testing.T, d string) {
			editFile(t, d, ColPtrFile, func(b []byte) []byte { b[284] = 255; return b })
		}, ErrCorrupt, "col_ptr.npy", 284, []string{"col_ptr[284] = 255 (row 48)"}},
		{"no data.npy", func(t *testing.T, d string) { os.Remove(filepath.Join(d, DataFile)) },
			ErrCorrupt, "data.npy", -1, []string{"missing", "DATA"}},
		{"no cumulative sum", func(t *testing.T, d string) { os.Remove(filepath.Join(d, "var_features", CumSumFile)) },
			ErrCorrupt, CumSumFile, -1, []string{"missing"}},
		{"no metadata.json", func(t *testing.T, d string) { os.Remove(filepath.Join(d, MetadataFile)) },
			ErrCorrupt, "metadata.json", -1, []string{"missing"}},
		{"no var_features", func(t *testing.T, d string) { os.RemoveAll(filepath.Join(d, VarFeatures)) },
			ErrCorrupt, "var_features", -1, []string{"missing"}},
		{"cumulative sum too short", func(t *testing.T, d string) {
			writeFile(t, d, "var_features/"+CumSumFile, CumSumIndex(nil))
		}, ErrCorrupt, CumSumFile, -1, []string{"1 entries"}},
		{"cumulative sum wrong total", func(t *testing.T, d string) {
			writeFile(t, d, "var_features/"+CumSumFile, CumSumIndex([]int{49}))
		}, ErrCorrupt, CumSumFile, -1, []string{"last entry is 49, but row_ptr has 50 rows"}},
		{"cumulative sum decreasing", func(t *testing.T, d string) {
			writeFile(t, d, "var_features/"+CumSumFile, CumSumIndex([]int{60, -10}))
			writeFile(t, d, "var_features/dataframe_1.parquet", testutil.FakeParquet(30))
		}, ErrCorrupt, CumSumFile, -1, []string{"entry 2 (50) is below entry 1 (60)"}},
		{"cumulative sum not int64", func(t *testing.T, d string) {
			var b bytes.Buffer
			WriteNPY(&b, Uint64, make([]byte, 16), 2)
			writeFile(t, d, "var_features/"+CumSumFile, b.Bytes())
		}, ErrUnsupported, CumSumFile, 0, []string{`"<u8"`}},
		{"cumulative sum truncated", func(t *testing.T, d string) {
			editFile(t, d, "var_features/"+CumSumFile, func(b []byte) []byte { return b[:140] })
		}, ErrCorrupt, CumSumFile, 128, []string{"140 bytes"}},
		{"cumulative sum not NPY", func(t *testing.T, d string) {
			writeFile(t, d, "var_features/"+CumSumFile, []byte("[-1, 50]"))
		}, ErrFormat, CumSumFile, 0, []string{"NPY magic"}},
		{"extra dataframe", func(t *testing.T, d string) {
			writeFile(t, d, "var_features/dataframe_1.parquet", testutil.FakeParquet(30))
		}, ErrCorrupt, "var_features", -1, []string{"1 blocks in cumulative_sum_index.npy but 2 Parquet dataframes"}},
		{"parquet footer", func(t *testing.T, d string) {
			editFile(t, d, "var_features/dataframe_0.parquet", func(b []byte) []byte { b[len(b)-1] = 0; return b })
		}, ErrFormat, "dataframe_0.parquet", 0, []string{"not a Parquet file"}},
		{"parquet footer length", func(t *testing.T, d string) {
			editFile(t, d, "var_features/dataframe_0.parquet", func(b []byte) []byte { b[len(b)-6] = 0x7f; return b })
		}, ErrFormat, "dataframe_0.parquet", 913, []string{"metadata length"}},
		{"fewer genes", func(t *testing.T, d string) {
			writeFile(t, d, "var_features/dataframe_0.parquet", testutil.FakeParquet(29))
		}, ErrCorrupt, "col_ptr.npy", -2, []string{"is not below 29"}},
		{"only 0 cells", func(t *testing.T, d string) {
			editHeader(t, d, func(h *Header) { h.Arrays[1].Length = 1 })
		}, ErrEmpty, "scdl", -1, []string{"0 cells"}},
		{"no values", func(t *testing.T, d string) {
			editHeader(t, d, func(h *Header) { h.Arrays[0].Length, h.Arrays[2].Length = 0, 0 })
		}, ErrEmpty, "scdl", -1, []string{"0 non-zero values"}},
		{"a fifo", func(t *testing.T, d string) { mkfifo(t, filepath.Join(d, "pipe")) },
			ErrUnsupported, "pipe", -1, []string{"not a regular file"}},
	}
	// The cases share one copy, restored from memory before each, rather
	// than copying the archive's directories forty times.
	dir := basicCopy(t)
	snap := snapshot(t, dir)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			restore(t, dir, snap)
			c.edit(t, dir)
			a, err := Open(dir)
			if a != nil {
				a.Close()
				t.Fatal("archive returned with an error")
			}
			wantErr(t, err, c.kind, c.path, c.off, c.words...)
		})
	}
}

// snapshot reads every file below dir into memory.
func snapshot(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	snap := map[string][]byte{}
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		snap[p] = b
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return snap
}

// restore brings dir back to its snapshot: files not in it are removed, the
// others rewritten.
func restore(t *testing.T, dir string, snap map[string][]byte) {
	t.Helper()
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && snap[p] == nil {
			os.Remove(p)
		}
		return nil
	})
	for p, b := range snap {
		// Rewrite only what changed.
		if cur, err := os.ReadFile(p); err == nil && bytes.Equal(cur, b) {
			continue
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := replaceFile(p, b); err != nil {
			t.Fatal(err)
		}
	}
}

// replaceFile removes the file and writes a new one: on ext4, truncating or
// renaming over a file with data makes the close wait for the new data to
// reach the disk (auto_da_alloc), which costs these tests seconds on a busy
// machine.
func replaceFile(p string, b []byte) error {
	if err := os.Remove(p); err != nil && !os.IsNotExist(err) {
		return err
	}
	return os.WriteFile(p, b, 0o644)
}

func writeFile(t *testing.T, dir, rel string, b []byte) {
	t.Helper()
	if err := replaceFile(filepath.Join(dir, rel), b); err != nil {
		t.Fatal(err)
	}
}

// TestOpenLegacyFeatures: before var_features, bionemo called the folder
// features/; its loader still reads it, and so does Open.
func TestOpenLegacyFeatures(t *testing.T) {
	dir := basicCopy(t)
	if err := os.Rename(filepath.Join(dir, VarFeatures), filepath.Join(dir, Features)); err != nil {
		t.Fatal(err)
	}
	a, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	if b := a.Blocks(); !reflect.DeepEqual(b, []Block{{0, 50, 30}}) {
		t.Errorf("blocks %+v", b)
	}
	if !slices.Contains(a.Files(), "features/dataframe_0.parquet") {
		t.Errorf("files %q", a.Files())
	}
}

// TestParquetRows reads the number of rows of the Parquet files bionemo's
// feature indices hold: 30 genes, 50 cells.
func TestParquetRows(t *testing.T) {
	dir := filepath.Join(conformanceDir(t, "basic_50x30_f32"), "scdl")
	for _, c := range []struct {
		rel  string
		want int64
	}{{"var_features/dataframe_0.parquet", 30}, {"obs_features/dataframe_0.parquet", 50}} {
		n, err := parquetRows(filepath.Join(dir, c.rel))
		if err != nil || n != c.want {
			t.Errorf("%s: %d rows, %v; want %d", c.rel, n, err, c.want)
		}
	}
	tmp := t.TempDir()
	for _, c := range []struct {
		name string
		b    []byte
		want int64
		kind error
	}{
		{"fake", testutil.FakeParquet(12345), 12345, nil},
		{"short", []byte("PAR1PAR1"), 0, ErrTruncated},
		{"garbage metadata", append(append([]byte("PAR1\xff\xff\xff"), 3, 0, 0, 0), "PAR1"...), 0, ErrFormat},
		{"no num_rows", append(append([]byte("PAR1\x15\x02\x00"), 3, 0, 0, 0), "PAR1"...), 0, ErrFormat},
		{"no columns", append(append([]byte("PAR1\x29\x1c\x48\x01s\x00\x16\x14\x00"), 9, 0, 0, 0), "PAR1"...), 0, nil},
	} {
		p := filepath.Join(tmp, c.name)
		os.WriteFile(p, c.b, 0o644)
		n, err := parquetRows(p)
		if c.kind != nil {
			wantErr(t, err, c.kind, c.name, -2)
			continue
		}
		if err != nil || n != c.want {
			t.Errorf("%s: %d, %v; want %d", c.name, n, err, c.want)
		}
	}
}

// TestRowIterRanges: iterators over sub-ranges, clamped, agree with Row.
func TestRowIterRanges(t *testing.T) {
	a, err := Open(filepath.Join(conformanceDir(t, "concat_2x_same_genes"), "scdl"))
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	for _, r := range [][2]int{{0, 55}, {10, 20}, {54, 55}, {-5, 3}, {50, 99}, {30, 30}, {40, 10}} {
		it := a.Rows(r[0], r[1])
		want := max(r[0], 0)
		for it.Next() {
			v, g, err := a.Row(want)
			if err != nil || it.Row() != want || !bytes.Equal(v, it.Values()) || !bytes.Equal(g, it.Genes()) {
				t.Fatalf("range %v: row %d vs %d", r, it.Row(), want)
			}
			want++
		}
		if it.Err() != nil || want != max(min(r[1], 55), max(r[0], 0)) {
			t.Errorf("range %v: stopped at %d, %v", r, want, it.Err())
		}
	}
	if _, _, err := a.Row(55); err == nil {
		t.Error("row 55 of 55")
	}
	if _, _, err := a.Row(-1); err == nil {
		t.Error("row -1")
	}
	if k, n := a.RowBlock(55); k != -1 || n != 0 {
		t.Errorf("RowBlock(55) = %d, %d", k, n)
	}
}

// TestConcurrentReads: goroutines share an Archive, each with its own
// RowIter or Row calls (run with -race).
func TestConcurrentReads(t *testing.T) {
	a, err := Open(filepath.Join(conformanceDir(t, "concat_2x_same_genes"), "scdl"))
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	want := make([][2][]byte, a.NumRows())
	for i := range want {
		v, g, err := a.Row(i)
		if err != nil {
			t.Fatal(err)
		}
		want[i] = [2][]byte{v, g}
	}
	errs := make(chan error, 4)
	for w := range 4 {
		go func() {
			for range 20 {
				if w%2 == 0 {
					it := a.Rows(w, a.NumRows())
					for it.Next() {
						if !bytes.Equal(it.Values(), want[it.Row()][0]) || !bytes.Equal(it.Genes(), want[it.Row()][1]) {
							errs <- fmt.Errorf("RowIter row %d differs", it.Row())
							return
						}
					}
				} else {
					for i := a.NumRows() - 1; i >= 0; i-- {
						v, g, err := a.Row(i)
						if err != nil || !bytes.Equal(v, want[i][0]) || !bytes.Equal(g, want[i][1]) {
							errs <- fmt.Errorf("Row %d differs: %v", i, err)
							return
						}
					}
				}
			}
			errs <- nil
		}()
	}
	for range 4 {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}

// TestRowPtrOnDisk: past 64 MiB, row_ptr.npy stays on disk and rows are
// found with positioned reads of it; the results are the same, with reads
// of a few elements at a time too.
func TestRowPtrOnDisk(t *testing.T) {
	dir := filepath.Join(conformanceDir(t, "concat_2x_same_genes"), "scdl")
	mem, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer mem.Close()
	// Small chunks: the streaming checks and RowIter cross many
	// boundaries of row_ptr and of the value windows.
	rowPtrInMemory, chunkElems = 0, 7
	defer func() { rowPtrInMemory, chunkElems = 64<<20, 1<<16 }()
	disk, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer disk.Close()
	if mem.rp == nil || disk.rp != nil {
		t.Fatal("row_ptr.npy held in memory or not as intended")
	}
	it := disk.Rows(0, disk.NumRows())
	for i := range disk.NumRows() {
		v1, g1, err1 := mem.Row(i)
		v2, g2, err2 := disk.Row(i)
		if err1 != nil || err2 != nil || !bytes.Equal(v1, v2) || !bytes.Equal(g1, g2) {
			t.Fatalf("row %d differs: %v %v", i, err1, err2)
		}
		if !it.Next() || !bytes.Equal(it.Values(), v1) || !bytes.Equal(it.Genes(), g1) {
			t.Fatalf("RowIter row %d differs: %v", i, it.Err())
		}
	}
	// The row named in an error is found on disk too.
	copyDir := basicCopy(t)
	editFile(t, copyDir, ColPtrFile, func(b []byte) []byte { b[100] = 30; return b })
	_, err = Open(copyDir)
	wantErr(t, err, ErrCorrupt, ColPtrFile, 100, "(row 19)")
}
