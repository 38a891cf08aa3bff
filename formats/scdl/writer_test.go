package scdl

import (
	"bytes"
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// encodeValues encodes expected.json's values in dtype d.
func encodeValues(t *testing.T, d DType, vals []float64) []byte {
	t.Helper()
	var b []byte
	for _, v := range vals {
		switch d {
		case Float32:
			b = binary.LittleEndian.AppendUint32(b, math.Float32bits(float32(v)))
		case Uint8:
			b = append(b, byte(v))
		default:
			t.Fatalf("no encoding for %v", d)
		}
	}
	return b
}

func encodeGenes(genes []uint64) []byte {
	var b []byte
	for _, g := range genes {
		b = binary.LittleEndian.AppendUint32(b, uint32(g))
	}
	return b
}

// TestWriterReproducesBionemo rewrites every conformance archive from
// expected.json's rows and the original's other files: every file comes
// out byte for byte as bionemo wrote it, header.sch and the narrowed
// arrays included. Where metadata.json is not given, the Writer's own
// matches bionemo's, except after a concatenation, where bionemo's is stale.
func TestWriterReproducesBionemo(t *testing.T) {
	noSync(t)
	for _, c := range conformanceCases(t) {
		if !c.ok {
			continue
		}
		t.Run(c.name, func(t *testing.T) {
			src := filepath.Join(c.dir, "scdl")
			orig, err := Open(src)
			if err != nil {
				t.Fatal(err)
			}
			defer orig.Close()
			var e expected
			loadJSON(t, filepath.Join(c.dir, "expected.json"), &e)
			out := filepath.Join(t.TempDir(), "out")
			w, err := Create(out, WriterOptions{
				DataDType:      orig.DataDType(),
				NGenes:         []int{orig.Blocks()[0].NGenes},
				FeatureIndices: orig.Header().FeatureIndices,
			})
			if err != nil {
				t.Fatal(err)
			}
			defer w.Abort()
			for i := range len(e.Indptr) - 1 {
				lo, hi := e.Indptr[i], e.Indptr[i+1]
				if err := w.AddRow(encodeValues(t, orig.DataDType(), e.Data[lo:hi]), encodeGenes(e.Indices[lo:hi])); err != nil {
					t.Fatal(err)
				}
			}
			own := map[string]bool{HeaderFile: true, DataFile: true, RowPtrFile: true, ColPtrFile: true, MetadataFile: true, VersionFile: true}
			for _, f := range orig.Files() {
				if own[f] && !(c.name == "concat_2x_same_genes" && f == MetadataFile) {
					continue
				}
				b, err := os.ReadFile(filepath.Join(src, f))
				if err != nil {
					t.Fatal(err)
				}
				if err := w.AddFile(f, bytes.NewReader(b)); err != nil {
					t.Fatal(err)
				}
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			got, err := listFiles(out)
			if err != nil || !reflect.DeepEqual(got, orig.Files()) {
				t.Fatalf("files %q, %v\nwant %q", got, err, orig.Files())
			}
			for _, f := range got {
				a, _ := os.ReadFile(filepath.Join(out, f))
				b, _ := os.ReadFile(filepath.Join(src, f))
				if !bytes.Equal(a, b) {
					t.Errorf("%s differs from bionemo's:\n%q\n%q", f, trim(a), trim(b))
				}
			}
		})
	}
}

func trim(b []byte) []byte { return b[:min(len(b), 200)] }

// TestWriterRoundTrip writes a synthetic archive of two blocks with
// different genes and reads every row back.
func TestWriterRoundTrip(t *testing.T) {
	// Small chunks: narrowing row_ptr, the checks of Open and RowIter cross
	// many chunk boundaries.
	chunkElems = 7
	defer func() { chunkElems = 1 << 16 }()
	blockRows, nGenes := []int{7, 0, 13}, []int{40, 5, 300}
	rows := synthRows(20, 3, blockRows, nGenes)
	rows[3] = synthRow{} // an empty row
	dir := filepath.Join(t.TempDir(), "synth")
	writeSynth(t, dir, rows, blockRows, nGenes, WriterOptions{})
	a, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	nnz := 0
	for _, r := range rows {
		nnz += len(r.genes)
	}
	if nnz >= 256 || nnz < 20 {
		t.Fatalf("nnz %d: the test wants uint8 offsets", nnz)
	}
	if a.NumRows() != 20 || a.NNZ() != uint64(nnz) || a.DataDType() != Float32 || a.RowPtrDType() != Uint8 || a.ColPtrDType() != Uint16 {
		t.Errorf("%d rows, %d values, dtypes %v %v %v", a.NumRows(), a.NNZ(), a.DataDType(), a.RowPtrDType(), a.ColPtrDType())
	}
	if b := a.Blocks(); !reflect.DeepEqual(b, []Block{{0, 7, 40}, {7, 7, 5}, {7, 20, 300}}) {
		t.Errorf("blocks %+v", b)
	}
	it := a.Rows(0, a.NumRows())
	for i, r := range rows {
		values, genes, err := a.Row(i)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(values, f32bytes(r.values)) {
			t.Errorf("row %d: values %x, want %x", i, values, f32bytes(r.values))
		}
		g, _ := AppendUint64s(nil, Uint16, genes)
		want := make([]uint64, len(r.genes))
		for j, x := range r.genes {
			want[j] = uint64(x)
		}
		if len(g)+len(want) > 0 && !reflect.DeepEqual(g, want) {
			t.Errorf("row %d: genes %v, want %v", i, g, want)
		}
		if !it.Next() || !bytes.Equal(it.Values(), values) || !bytes.Equal(it.Genes(), genes) {
			t.Fatalf("row %d: RowIter differs (%v)", i, it.Err())
		}
		wantBlock, wantGenes := 0, 40
		if i >= 7 {
			wantBlock, wantGenes = 2, 300
		}
		if k, n := a.RowBlock(i); k != wantBlock || n != wantGenes {
			t.Errorf("row %d: block %d of %d genes", i, k, n)
		}
	}
	for f, want := range map[string]string{MetadataFile: `{"num_rows": 20}`, VersionFile: `"0.1.3"`} {
		if b, _ := os.ReadFile(filepath.Join(dir, f)); string(b) != want {
			t.Errorf("%s: %q, want %q", f, b, want)
		}
	}
	wantFiles := []string{"col_ptr.npy", "data.npy", "header.sch", "metadata.json", "row_ptr.npy",
		"var_features/cumulative_sum_index.npy", "var_features/dataframe_0.parquet", "var_features/dataframe_1.parquet", "var_features/dataframe_2.parquet",
		"version.json"}
	if !reflect.DeepEqual(a.Files(), wantFiles) {
		t.Errorf("files %q", a.Files())
	}
	// A gene valid in block 0 but not in block 1 is refused once written.
	editFile(t, dir, ColPtrFile, func(b []byte) []byte {
		binary.LittleEndian.PutUint16(b[len(b)-2:], 300)
		return b
	})
	_, err = Open(dir)
	wantErr(t, err, ErrCorrupt, ColPtrFile, int64(2*nnz-2), "(row 19) is not below 300, the number of genes of block 2")
}

// TestWriterDTypes: row_ptr and col_ptr take the smallest unsigned type
// holding nnz and the largest gene index, as bionemo picks them, unless
// forced.
func TestWriterDTypes(t *testing.T) {
	noSync(t)
	cases := []struct {
		name                 string
		rows, perRow, nGenes int
		forceRow, forceCol   DType
		wantRow, wantCol     DType
	}{
		{"255 values, 256 genes", 5, 51, 256, 0, 0, Uint8, Uint8},
		{"256 values, 257 genes", 4, 64, 257, 0, 0, Uint16, Uint16},
		{"65536 values, 65537 genes", 256, 256, 65537, 0, 0, Uint32, Uint32},
		{"forced", 2, 3, 10, Uint64, Uint32, Uint64, Uint32},
	}
	parent := t.TempDir()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rows := make([]synthRow, c.rows)
			for i := range rows {
				for j := range c.perRow {
					rows[i].genes = append(rows[i].genes, uint32((i*c.perRow+j)%c.nGenes))
					rows[i].values = append(rows[i].values, float32(j+1))
				}
			}
			rows[c.rows-1].genes[0] = uint32(c.nGenes - 1)
			dir := filepath.Join(parent, c.name)
			writeSynth(t, dir, rows, []int{c.rows}, []int{c.nGenes}, WriterOptions{RowPtrDType: c.forceRow, ColPtrDType: c.forceCol})
			a, err := Open(dir)
			if err != nil {
				t.Fatal(err)
			}
			defer a.Close()
			if a.RowPtrDType() != c.wantRow || a.ColPtrDType() != c.wantCol {
				t.Errorf("row_ptr %v col_ptr %v, want %v %v", a.RowPtrDType(), a.ColPtrDType(), c.wantRow, c.wantCol)
			}
			_, genes, err := a.Row(c.rows - 1)
			if g, _ := AppendUint64s(nil, a.ColPtrDType(), genes); err != nil || g[0] != uint64(c.nGenes-1) {
				t.Errorf("last row's first gene %v, %v", g, err)
			}
			st, _ := os.Stat(filepath.Join(dir, RowPtrFile))
			if st.Size() != int64((c.rows+1)*c.wantRow.ItemSize()) {
				t.Errorf("row_ptr.npy of %d bytes", st.Size())
			}
		})
	}
}

// TestWriterRefusesWhatBionemoCannotWrite: bionemo failed on these cases
// (0 cells; cells without a non-zero value); the Writer refuses them too
// and leaves nothing behind.
func TestWriterRefusesWhatBionemoCannotWrite(t *testing.T) {
	noSync(t)
	for _, c := range conformanceCases(t) {
		if c.ok {
			continue
		}
		t.Run(c.name, func(t *testing.T) {
			var e expected
			loadJSON(t, filepath.Join(c.dir, "expected.json"), &e)
			parent := t.TempDir()
			out := filepath.Join(parent, "out")
			w, err := Create(out, WriterOptions{NGenes: e.VarBlockWidths})
			if err != nil {
				t.Fatal(err)
			}
			for range len(e.Indptr) - 1 {
				if err := w.AddRow(nil, nil); err != nil {
					t.Fatal(err)
				}
			}
			err = w.Close()
			want := map[string]string{"zero_cells": "no cells", "all_zero_matrix": "10 cells but no non-zero value"}[c.name]
			wantErr(t, err, ErrEmpty, "out", -1, want)
			if entries, _ := os.ReadDir(parent); len(entries) != 0 {
				t.Errorf("left behind: %v", entries)
			}
		})
	}
}

func TestWriterErrors(t *testing.T) {
	noSync(t)
	one := []byte{1, 0, 0, 0}
	row := func(g uint32) [2][]byte { return [2][]byte{f32bytes([]float32{1}), u32bytes([]uint32{g})} }
	cases := []struct {
		name  string
		opts  WriterOptions
		rows  [][2][]byte
		files map[string]string
		kind  error
		words []string
	}{
		{"no NGenes", WriterOptions{}, nil, nil, ErrInvalid, []string{"NGenes is required"}},
		{"no BlockRows", WriterOptions{NGenes: []int{3, 4}}, nil, nil, ErrInvalid, []string{"no BlockRows"}},
		{"BlockRows count", WriterOptions{NGenes: []int{3}, BlockRows: []int{1, 2}}, nil, nil, ErrInvalid, []string{"2 BlockRows for 1 NGenes"}},
		{"no genes", WriterOptions{NGenes: []int{0}}, nil, nil, ErrInvalid, []string{"no block has genes"}},
		{"negative genes", WriterOptions{NGenes: []int{-1}}, nil, nil, ErrInvalid, []string{"-1 genes"}},
		{"string data", WriterOptions{DataDType: StringArray, NGenes: []int{3}}, nil, nil, ErrInvalid, []string{"DataDType string"}},
		{"float genes", WriterOptions{GeneDType: Float32, NGenes: []int{3}}, nil, nil, ErrInvalid, []string{"GeneDType float32"}},
		{"col_ptr too narrow", WriterOptions{ColPtrDType: Uint8, NGenes: []int{300}}, nil, nil, ErrInvalid, []string{"cannot hold gene index 299"}},
		{"gene out of range", WriterOptions{NGenes: []int{3}}, [][2][]byte{row(2), row(3)}, nil, ErrInvalid, []string{"row 1: gene index 3 is not below 3"}},
		{"gene out of range in block 1", WriterOptions{NGenes: []int{9, 3}, BlockRows: []int{1, 1}}, [][2][]byte{row(8), row(8)}, nil, ErrInvalid, []string{"row 1: gene index 8 is not below 3, the number of genes of block 1"}},
		{"values and genes disagree", WriterOptions{NGenes: []int{3}}, [][2][]byte{{one, nil}}, nil, ErrInvalid, []string{"4 bytes of float32 values for 0 bytes"}},
		{"partial gene", WriterOptions{NGenes: []int{3}}, [][2][]byte{{one, []byte{1, 0}}}, nil, ErrInvalid, []string{"2 bytes of uint32 genes"}},
		{"past BlockRows", WriterOptions{NGenes: []int{3}, BlockRows: []int{1}}, [][2][]byte{row(0), row(0)}, nil, ErrInvalid, []string{"row 1 is past"}},
		{"row_ptr too narrow", WriterOptions{NGenes: []int{3}, RowPtrDType: Uint8}, func() [][2][]byte {
			var r [][2][]byte
			for range 256 {
				r = append(r, row(1))
			}
			return r
		}(), nil, ErrInvalid, []string{"RowPtrDType uint8 cannot hold 256 values"}},
		{"fewer rows than BlockRows", WriterOptions{NGenes: []int{3}, BlockRows: []int{2}}, [][2][]byte{row(0)}, nil, ErrInvalid, []string{"1 rows added, BlockRows add up to 2"}},
		{"no rows", WriterOptions{NGenes: []int{3}}, nil, nil, ErrEmpty, []string{"no cells"}},
		{"no values", WriterOptions{NGenes: []int{3}}, [][2][]byte{{nil, nil}}, nil, ErrEmpty, []string{"1 cells but no non-zero value"}},
		{"header lists a missing file", WriterOptions{NGenes: []int{3}, FeatureIndices: []FeatureIndexInfo{{Name: "var_features", DType: StringArray, Files: []string{"var_features/labels.json"}}}},
			[][2][]byte{row(0)}, nil, ErrInvalid, []string{`lists "var_features/labels.json"`}},
		{"invalid feature index", WriterOptions{NGenes: []int{3}, FeatureIndices: []FeatureIndexInfo{{Name: " ", DType: StringArray}}},
			[][2][]byte{row(0)}, nil, ErrInvalid, []string{"feature index name"}},
		{"cumulative sum disagrees", WriterOptions{NGenes: []int{3}}, [][2][]byte{row(0), row(1)},
			map[string]string{"var_features/cumulative_sum_index.npy": string(CumSumIndex([]int{1}))}, ErrInvalid, []string{"is [-1 1], but the rows written make [-1 2]"}},
		{"reserved file", WriterOptions{NGenes: []int{3}}, nil, map[string]string{"header.sch": "x"}, ErrInvalid, []string{"written by the Writer"}},
		{"reserved array", WriterOptions{NGenes: []int{3}}, nil, map[string]string{"row_ptr.npy": "x"}, ErrInvalid, []string{"written by the Writer"}},
		{"escaping file", WriterOptions{NGenes: []int{3}}, nil, map[string]string{"../x": "x"}, ErrInvalid, []string{"not a clean relative path"}},
		{"absolute file", WriterOptions{NGenes: []int{3}}, nil, map[string]string{"/etc/x": "x"}, ErrInvalid, []string{"not a clean relative path"}},
		{"unclean file", WriterOptions{NGenes: []int{3}}, nil, map[string]string{"a//b": "x"}, ErrInvalid, []string{"not a clean relative path"}},
	}
	parent := t.TempDir()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out := filepath.Join(parent, "out")
			err := func() error {
				w, err := Create(out, c.opts)
				if err != nil {
					return err
				}
				defer w.Abort()
				for _, r := range c.rows {
					if err := w.AddRow(r[0], r[1]); err != nil {
						return err
					}
				}
				for name, content := range c.files {
					if err := w.AddFile(name, strings.NewReader(content)); err != nil {
						return err
					}
				}
				return w.Close()
			}()
			wantErr(t, err, c.kind, "out", -1, c.words...)
			if entries, _ := os.ReadDir(parent); len(entries) != 0 {
				t.Errorf("left behind: %v", entries)
			}
		})
	}
}

func TestWriterMisuse(t *testing.T) {
	parent := t.TempDir()
	out := filepath.Join(parent, "out")
	if err := os.Mkdir(out, 0o755); err != nil {
		t.Fatal(err)
	}
	_, err := Create(out, WriterOptions{NGenes: []int{3}})
	wantErr(t, err, ErrInvalid, "out", -1, "already exists")
	os.Remove(out)

	w, err := Create(out, WriterOptions{NGenes: []int{3}})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.AddFile("var_features/labels.json", strings.NewReader("[]")); err != nil {
		t.Fatal(err)
	}
	err = w.AddFile("var_features/labels.json", strings.NewReader("[]"))
	wantErr(t, err, ErrInvalid, "out", -1, "added twice")
	if err := w.AddRow(f32bytes([]float32{2}), u32bytes([]uint32{1})); err != nil {
		t.Fatal(err)
	}
	if w.NumRows() != 1 || w.NNZ() != 1 {
		t.Errorf("%d rows, %d values", w.NumRows(), w.NNZ())
	}
	// Someone else takes the name meanwhile: Close refuses to replace it.
	if err := os.Mkdir(out, 0o755); err != nil {
		t.Fatal(err)
	}
	err = w.Close()
	wantErr(t, err, ErrInvalid, "out", -1, "appeared")
	if entries, _ := os.ReadDir(parent); len(entries) != 1 {
		t.Errorf("left behind: %v", entries)
	}
	err = w.AddRow(nil, nil)
	wantErr(t, err, ErrInvalid, "out", -1, "after Close")
	w.Abort() // a no-op
}
