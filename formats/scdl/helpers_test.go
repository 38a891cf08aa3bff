package scdl

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/itarconv/itarconv/testing/testutil"
)

// confCase is one conformance case made by bionemo-scdl itself.
type confCase struct {
	name, dir string
	ok        bool // RESULT.txt is "ok": bionemo wrote an archive
}

func conformanceCases(t testing.TB) []confCase {
	root := testutil.Conformance(t, "scdl")
	entries, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	var cases []confCase
	for _, e := range entries {
		dir := filepath.Join(root, e.Name())
		res, err := os.ReadFile(filepath.Join(dir, "RESULT.txt"))
		if err != nil {
			t.Fatal(err)
		}
		cases = append(cases, confCase{e.Name(), dir, strings.TrimSpace(string(res)) == "ok"})
	}
	if len(cases) < 6 {
		t.Fatalf("only %d SCDL conformance cases", len(cases))
	}
	return cases
}

// expected is a case's expected.json: the CSR arrays bionemo was given.
type expected struct {
	Indptr          []uint64  `json:"indptr"`
	Indices         []uint64  `json:"indices"`
	Data            []float64 `json:"data"`
	RowWidth        []int     `json:"row_width"`
	VarFeatureNames []string  `json:"var_feature_names"`
	VarBlockWidths  []int     `json:"var_block_widths"`
	ObsCellType     []string  `json:"obs_cell_type"`
}

func loadJSON(t testing.TB, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// headerJSON is a case's header.json: the header as bionemo decoded it.
type headerJSON struct {
	Version []uint8 `json:"version"`
	Backend uint32  `json:"backend"`
	Arrays  []struct {
		Name   string   `json:"name"`
		Length uint64   `json:"length"`
		DType  DType    `json:"dtype"`
		Shape  []uint32 `json:"shape"`
	} `json:"arrays"`
	FeatureIndices []struct {
		Name       string   `json:"name"`
		Length     uint64   `json:"length"`
		DType      DType    `json:"dtype"`
		IndexFiles []string `json:"index_files"`
		Shape      []uint32 `json:"shape"`
	} `json:"feature_indices"`
}

// header converts header.json to a Header.
func (j *headerJSON) header() *Header {
	h := &Header{Major: j.Version[0], Minor: j.Version[1], Point: j.Version[2], Endianness: EndianNetwork, Backend: j.Backend}
	for _, a := range j.Arrays {
		h.Arrays = append(h.Arrays, ArrayInfo{a.Name, a.Length, a.DType, a.Shape})
	}
	for _, f := range j.FeatureIndices {
		h.FeatureIndices = append(h.FeatureIndices, FeatureIndexInfo{f.Name, f.Length, f.DType, f.IndexFiles, f.Shape})
	}
	return h
}

// copyDir copies a directory tree (conformance files are read-only; tests
// corrupt copies).
func copyDir(t testing.TB, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		out := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(out, 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(out, b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// synthRow is a row to write: float32 values and uint32 genes.
type synthRow struct {
	values []float32
	genes  []uint32
}

func f32bytes(v []float32) []byte {
	b := make([]byte, 0, 4*len(v))
	for _, x := range v {
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(x))
	}
	return b
}

func u32bytes(v []uint32) []byte {
	b := make([]byte, 0, 4*len(v))
	for _, x := range v {
		b = binary.LittleEndian.AppendUint32(b, x)
	}
	return b
}

// synthRows makes n rows of about avg values each (0 to 2*avg), over blocks
// of genes, deterministically.
func synthRows(n, avg int, blockRows, nGenes []int) []synthRow {
	rows := make([]synthRow, 0, n)
	seed := uint64(0x9e3779b97f4a7c15)
	next := func() uint64 {
		seed ^= seed << 13
		seed ^= seed >> 7
		seed ^= seed << 17
		return seed
	}
	block, left := 0, blockRows[0]
	for i := range n {
		for left == 0 {
			block++
			left = blockRows[block]
		}
		left--
		g := nGenes[block]
		k := min(int(next()%uint64(2*avg+1)), g)
		var r synthRow
		start := uint32(next() % uint64(g-k+1))
		for j := range k {
			r.genes = append(r.genes, start+uint32(j))
			r.values = append(r.values, float32(i%97)+float32(j)/4)
		}
		rows = append(rows, r)
	}
	return rows
}

// writeSynth writes rows as an archive in dir with var_features made of a
// cumulative_sum_index.npy and fake Parquet dataframes.
func writeSynth(t testing.TB, dir string, rows []synthRow, blockRows, nGenes []int, opts WriterOptions) {
	t.Helper()
	opts.NGenes, opts.BlockRows = nGenes, blockRows
	var files []string
	files = append(files, "var_features/cumulative_sum_index.npy")
	for k := range nGenes {
		files = append(files, "var_features/dataframe_"+pad(k, len(nGenes))+".parquet")
	}
	opts.FeatureIndices = []FeatureIndexInfo{{Name: VarFeatures, Length: uint64(len(rows)), DType: StringArray, Files: files}}
	w, err := Create(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Abort()
	for _, r := range rows {
		if err := w.AddRow(f32bytes(r.values), u32bytes(r.genes)); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.AddFile(files[0], bytes.NewReader(CumSumIndex(blockRows))); err != nil {
		t.Fatal(err)
	}
	for k, g := range nGenes {
		if err := w.AddFile(files[k+1], bytes.NewReader(testutil.FakeParquet(int64(g)))); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

// pad formats k as bionemo names dataframes: zero-padded to the digits of
// the number of blocks.
func pad(k, n int) string { return fmt.Sprintf("%0*d", len(strconv.Itoa(n)), k) }

// noSync turns off the Writer's syncs for the rest of the test.
func noSync(t testing.TB) {
	syncFiles = false
	t.Cleanup(func() { syncFiles = true })
}

// wantErr checks that err is an *Error wrapping kind, for path (a suffix),
// at offset off (unless off is -2), with detail containing each of words.
func wantErr(t testing.TB, err error, kind error, path string, off int64, words ...string) {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("error %v (%T) is not *Error", err, err)
	}
	if !errors.Is(err, kind) {
		t.Errorf("error %v: want %v", err, kind)
	}
	if !strings.HasSuffix(filepath.ToSlash(e.Path), path) {
		t.Errorf("error %v: path %q, want one ending %q", err, e.Path, path)
	}
	if off != -2 && e.Offset != off {
		t.Errorf("error %v: offset %d, want %d", err, e.Offset, off)
	}
	for _, w := range words {
		if !strings.Contains(e.Detail, w) {
			t.Errorf("error %v: detail lacks %q", err, w)
		}
	}
}
