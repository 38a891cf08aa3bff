package convert

import (
	"archive/tar"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/itarconv/itarconv/fold"
	"github.com/itarconv/itarconv/formats/scdl"
	"github.com/itarconv/itarconv/formats/taridx"
	"github.com/itarconv/itarconv/testing/testutil"
)

// scdlCases are the conformance archives bionemo wrote (RESULT.txt "ok").
func scdlCases(t *testing.T) map[string]string {
	t.Helper()
	root := testutil.Conformance(t, "scdl")
	entries, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	cases := map[string]string{}
	for _, e := range entries {
		res, err := os.ReadFile(filepath.Join(root, e.Name(), "RESULT.txt"))
		if err != nil {
			t.Fatal(err)
		}
		if strings.TrimSpace(string(res)) == "ok" {
			cases[e.Name()] = filepath.Join(root, e.Name(), "scdl")
		}
	}
	if len(cases) < 4 {
		t.Fatalf("only %d SCDL conformance archives", len(cases))
	}
	return cases
}

// readTree maps every file below dir (slash-separated, relative) to its
// bytes.
func readTree(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	files := map[string][]byte{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		rel, _ := filepath.Rel(dir, p)
		files[filepath.ToSlash(rel)] = b
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

func sameTree(t *testing.T, want, got string) {
	t.Helper()
	w, g := readTree(t, want), readTree(t, got)
	for name, b := range w {
		gb, ok := g[name]
		switch {
		case !ok:
			t.Errorf("%s: missing from the rebuilt archive", name)
		case !bytes.Equal(b, gb):
			t.Errorf("%s: %d bytes differ from the original's %d", name, len(gb), len(b))
		}
	}
	for name := range g {
		if _, ok := w[name]; !ok {
			t.Errorf("%s: in the rebuilt archive only", name)
		}
	}
}

func exportSCDL(t *testing.T, src, dir string, opts SCDLExportOptions) *SCDLExportStats {
	t.Helper()
	a, err := scdl.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	opts.Dir = dir
	st, err := SCDLToTar(context.Background(), a, opts)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func TestSCDLConformanceRoundTrip(t *testing.T) {
	for name, src := range scdlCases(t) {
		for _, mode := range []string{scdl.ModeCells, scdl.ModeArchive} {
			t.Run(name+"/"+mode, func(t *testing.T) {
				t.Parallel()
				dir := t.TempDir()
				st := exportSCDL(t, src, dir, SCDLExportOptions{Mode: mode, CellsPerShard: map[string]int{scdl.ModeCells: 7}[mode]})
				a, _ := scdl.Open(src)
				defer a.Close()
				folds, err := taridx.Discover(dir)
				if err != nil {
					t.Fatal(err)
				}
				var names []string
				for _, f := range folds {
					names = append(names, f.Name)
					if _, err := os.Stat(f.IndexPath(dir)); err != nil {
						t.Errorf("fold %s has no index: %v", f.Name, err)
					}
				}
				switch mode {
				case scdl.ModeCells:
					if !slices.Equal(names, []string{"cells", "scdlmeta"}) {
						t.Fatalf("folds %v", names)
					}
					// 7 cells a shard; scdlmeta is one shard of every file but the arrays.
					if want := (a.NumRows() + 6) / 7; len(st.Fold.Shards) != want || st.Fold.Members != int64(3*a.NumRows()) {
						t.Errorf("cells: %d shards, %d members; want %d, %d", len(st.Fold.Shards), st.Fold.Members, want, 3*a.NumRows())
					}
					if len(st.Meta.Shards) != 1 || st.Meta.Members != int64(len(a.Files())-3) {
						t.Errorf("scdlmeta: %d shards, %d members; want 1, %d", len(st.Meta.Shards), st.Meta.Members, len(a.Files())-3)
					}
				case scdl.ModeArchive:
					if !slices.Equal(names, []string{"scdl"}) || st.Fold.Members != int64(len(a.Files())) {
						t.Fatalf("folds %v, %d members; want [scdl], %d", names, st.Fold.Members, len(a.Files()))
					}
					// Every payload is 512-byte aligned in its shard.
					x, err := taridx.ReadFile(folds[0].IndexPath(dir))
					if err != nil {
						t.Fatal(err)
					}
					for i := range x.Len() {
						if off := x.Row(i).DataOffset(); off%512 != 0 {
							t.Errorf("row %d: payload at %d", i, off)
						}
					}
				}
				out := filepath.Join(t.TempDir(), "back")
				ist, err := TarToSCDL(context.Background(), dir, out, SCDLImportOptions{})
				if err != nil {
					t.Fatal(err)
				}
				if ist.Mode != mode || ist.Fresh || ist.Cells != a.NumRows() || ist.NNZ != a.NNZ() {
					t.Errorf("import stats %+v; want mode %s, %d cells, %d values", ist, mode, a.NumRows(), a.NNZ())
				}
				sameTree(t, src, out)
			})
		}
	}
}

// The cells of basic_50x30_f32 hold what bionemo was given (expected.json).
func TestSCDLCellsContent(t *testing.T) {
	src := scdlCases(t)["basic_50x30_f32"]
	dir := t.TempDir()
	exportSCDL(t, src, dir, SCDLExportOptions{})
	members := tarMembers(t, dir, "cells")
	for _, c := range []struct {
		name string
		want []byte
	}{
		{"000000000.json", []byte(`{"row": 0, "block": 0, "n_genes": 30}`)},
		{"000000049.json", []byte(`{"row": 49, "block": 0, "n_genes": 30}`)},
		// Row 0: one value, 7.0 at gene 19 (expected.json).
		{"000000000.values.npy", npy(t, scdl.Float32, f32s(7))},
		{"000000000.genes.npy", npy(t, scdl.Uint8, []byte{19})},
		// Row 7 is empty: row_ptr[7] == row_ptr[8] == 36.
		{"000000007.values.npy", npy(t, scdl.Float32, nil)},
		{"000000002.genes.npy", npy(t, scdl.Uint8, []byte{2, 6, 12})},
	} {
		if got := members[c.name]; !bytes.Equal(got, c.want) {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
	if len(members) != 150 {
		t.Errorf("%d members, want 150", len(members))
	}
	meta := tarMembers(t, dir, "scdlmeta")
	orig := readTree(t, src)
	for name, b := range orig {
		if scdlArrays[name] {
			if _, ok := meta[name]; ok {
				t.Errorf("scdlmeta holds %s", name)
			}
			continue
		}
		if !bytes.Equal(meta[name], b) {
			t.Errorf("scdlmeta %s differs from the archive's", name)
		}
	}
}

func npy(t *testing.T, d scdl.DType, raw []byte) []byte {
	var buf bytes.Buffer
	if err := scdl.WriteNPY(&buf, d, raw, len(raw)/d.ItemSize()); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func f32s(v ...float32) []byte {
	var b []byte
	for _, x := range v {
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(x))
	}
	return b
}

// tarMembers reads every member of a fold with Go's archive/tar.
func tarMembers(t *testing.T, dir, fold string) map[string][]byte {
	t.Helper()
	folds, err := taridx.Discover(dir)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]byte{}
	for _, f := range folds {
		if f.Name != fold {
			continue
		}
		for _, sh := range f.Shards {
			for name, b := range readSCDLTar(t, sh) {
				out[name] = b
			}
		}
	}
	return out
}

type synthCell struct {
	values []byte // float64
	genes  []byte // uint32
}

// writeSynthSCDL writes an archive of two blocks (of 300 and 70000 genes:
// col_ptr uint32) with our writer and returns its rows.
func writeSynthSCDL(t *testing.T, dir string, n int) []synthCell {
	t.Helper()
	blockRows := []int{n / 3, n - n/3}
	nGenes := []int{300, 70000}
	files := []string{"var_features/cumulative_sum_index.npy", "var_features/dataframe_0.parquet", "var_features/dataframe_1.parquet"}
	w, err := scdl.Create(dir, scdl.WriterOptions{DataDType: scdl.Float64, NGenes: nGenes, BlockRows: blockRows,
		FeatureIndices: []scdl.FeatureIndexInfo{{Name: scdl.VarFeatures, Length: uint64(n), DType: scdl.StringArray, Files: files}}})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Abort()
	var cells []synthCell
	for i := range n {
		var c synthCell
		g := nGenes[0]
		if i >= blockRows[0] {
			g = nGenes[1]
		}
		k := (i * 7919) % 40
		if i%11 == 5 {
			k = 0 // some empty cells
		}
		for j := range k {
			c.values = binary.LittleEndian.AppendUint64(c.values, math.Float64bits(float64(i)+float64(j)/8))
			c.genes = binary.LittleEndian.AppendUint32(c.genes, uint32((i*31+j*97)%g))
		}
		if err := w.AddRow(c.values, c.genes); err != nil {
			t.Fatal(err)
		}
		cells = append(cells, c)
	}
	w.AddFile(files[0], bytes.NewReader(scdl.CumSumIndex(blockRows)))
	w.AddFile(files[1], bytes.NewReader(testutil.FakeParquet(int64(nGenes[0]))))
	w.AddFile(files[2], bytes.NewReader(testutil.FakeParquet(int64(nGenes[1]))))
	w.AddFile("neighbor_indices.npy", bytes.NewReader([]byte("opaque neighbour bytes")))
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return cells
}

func TestSCDLSyntheticRoundTrip(t *testing.T) {
	src := filepath.Join(t.TempDir(), "synth")
	const n = 8000
	cells := writeSynthSCDL(t, src, n)
	// Many Run shards of cells, of several batches each.
	b, c := scdlBatchCells, scdlChunkCells
	scdlBatchCells, scdlChunkCells = 200, 700
	t.Cleanup(func() { scdlBatchCells, scdlChunkCells = b, c })
	for _, c := range []struct {
		name string
		opts SCDLExportOptions
	}{
		{"cells", SCDLExportOptions{ShardSize: 1 << 20, Workers: 3}},
		{"cells-1worker", SCDLExportOptions{Fold: "train", Workers: 1}},
		{"archive", SCDLExportOptions{Mode: scdl.ModeArchive, ShardSize: 1 << 20}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			st := exportSCDL(t, src, dir, c.opts)
			if st.Cells != n {
				t.Errorf("%d cells", st.Cells)
			}
			out := filepath.Join(t.TempDir(), "back")
			if _, err := TarToSCDL(context.Background(), dir, out, SCDLImportOptions{Fold: c.opts.Fold}); err != nil {
				t.Fatal(err)
			}
			sameTree(t, src, out)
			a, err := scdl.Open(out)
			if err != nil {
				t.Fatal(err)
			}
			defer a.Close()
			// Every row equal, genes widened back from col_ptr's uint32.
			it := a.Rows(0, a.NumRows())
			for it.Next() {
				c := cells[it.Row()]
				if !bytes.Equal(it.Values(), c.values) || !bytes.Equal(it.Genes(), c.genes) {
					t.Fatalf("row %d differs", it.Row())
				}
			}
			if it.Err() != nil || a.NumRows() != n {
				t.Fatalf("%v, %d rows", it.Err(), a.NumRows())
			}
		})
	}
	// The same cells, same shards, whatever the number of workers.
	d1, d2 := t.TempDir(), t.TempDir()
	exportSCDL(t, src, d1, SCDLExportOptions{Workers: 1, CellsPerShard: 2000})
	exportSCDL(t, src, d2, SCDLExportOptions{Workers: 4, CellsPerShard: 2000})
	t1, t2 := readTree(t, d1), readTree(t, d2)
	if len(t1) != 4+1+1+1 || len(t1) != len(t2) {
		t.Fatalf("%d and %d files", len(t1), len(t2))
	}
	for name, b := range t1 {
		if !bytes.Equal(b, t2[name]) {
			t.Errorf("%s differs between 1 and 4 workers", name)
		}
	}
}

// Cells another tool wrote in the same layout, without scdlmeta: int64
// gene indices, as numpy makes them, and no json.
func TestSCDLFreshFromCells(t *testing.T) {
	dir := t.TempDir()
	var members []scdlEntry
	var wantData, wantCol []byte
	wantRow := []byte{0}
	total := 0
	for i := range 5 {
		var vals, genes []byte
		for j := range i {
			vals = append(vals, f32s(float32(i*10+j))...)
			genes = binary.LittleEndian.AppendUint64(genes, uint64(j*3+i))
			wantCol = append(wantCol, byte(j*3+i))
		}
		wantData = append(wantData, vals...)
		total += i
		wantRow = append(wantRow, byte(total))
		key := fmt.Sprintf("%09d", i)
		members = append(members,
			scdlEntry{key + ".values.npy", npy(t, scdl.Float32, vals)},
			scdlEntry{key + ".genes.npy", npyDescr("<i8", genes, i)})
	}
	writeSCDLTar(t, filepath.Join(dir, "cells_0000.tar"), members)
	out := filepath.Join(t.TempDir(), "fresh")
	st, err := TarToSCDL(context.Background(), dir, out, SCDLImportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !st.Fresh || st.Cells != 5 || st.NNZ != 10 {
		t.Errorf("stats %+v", st)
	}
	got := readTree(t, out)
	h, err := scdl.DecodeHeader(got["header.sch"])
	if err != nil {
		t.Fatal(err)
	}
	if h.Major != 0 || h.Minor != 1 || h.Point != 0 || len(h.FeatureIndices) != 1 {
		t.Fatalf("header %+v", h)
	}
	// The var_features index bionemo-scdl counts rows with: one block of
	// the 5 cells.
	fi := h.FeatureIndices[0]
	if fi.Name != scdl.VarFeatures || fi.Length != 5 || fi.DType != scdl.StringArray || len(fi.Files) != 4 {
		t.Errorf("feature index %+v", fi)
	}
	if want := scdl.CumSumIndex([]int{5}); !bytes.Equal(got["var_features/cumulative_sum_index.npy"], want) {
		t.Errorf("cumulative_sum_index.npy %v, want %v", got["var_features/cumulative_sum_index.npy"], want)
	}
	if pq := got["var_features/dataframe_0.parquet"]; len(pq) < 8 || string(pq[:4]) != "PAR1" {
		t.Errorf("dataframe_0.parquet is not a Parquet file")
	}
	for _, c := range []struct {
		name string
		want []byte
	}{
		{"data.npy", wantData},
		{"col_ptr.npy", wantCol}, // max gene 15: uint8
		{"row_ptr.npy", wantRow}, // nnz 10: uint8
		{"metadata.json", []byte(`{"num_rows": 5}`)},
		{"version.json", []byte(`"0.1.3"`)},
	} {
		if !bytes.Equal(got[c.name], c.want) {
			t.Errorf("%s: %v, want %v", c.name, got[c.name], c.want)
		}
	}
	if len(got) != 10 {
		t.Errorf("%d files", len(got))
	}
	// Our reader, which checks the feature index against the rows, opens it.
	a, err := scdl.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	if a.NumRows() != 5 {
		t.Errorf("%d rows", a.NumRows())
	}
}

func npyDescr(descr string, raw []byte, n int) []byte {
	h := []byte(fmt.Sprintf("{'descr': '%s', 'fortran_order': False, 'shape': (%d,), }", descr, n))
	for (10+len(h)+1)%64 != 0 {
		h = append(h, ' ')
	}
	h = append(h, '\n')
	b := append([]byte("\x93NUMPY\x01\x00"), byte(len(h)), byte(len(h)>>8))
	return append(append(b, h...), raw...)
}

func TestSCDLImportErrors(t *testing.T) {
	v1 := npy(t, scdl.Float32, f32s(1))
	g1 := npy(t, scdl.Uint8, []byte{0})
	v0 := npy(t, scdl.Float32, nil)
	g0 := npy(t, scdl.Uint8, nil)
	for _, c := range []struct {
		name    string
		members []scdlEntry
		want    string
	}{
		{"zero cells", nil, "no cells"},
		{"not a cell", []scdlEntry{{"000000000.values.npy", v1}, {"readme.json", []byte("{}")}}, "not a cell's member"},
		{"archive without header", []scdlEntry{{"data.npy", v1}}, "header.sch: not a valid SCDL archive: missing"},
		{"zero values", []scdlEntry{{"000000000.values.npy", v0}, {"000000000.genes.npy", g0}}, "no non-zero value"},
		{"missing cell", []scdlEntry{{"000000000.values.npy", v1}, {"000000000.genes.npy", g1}, {"000000002.values.npy", v1}}, "cell 1 is missing"},
		{"no genes", []scdlEntry{{"000000000.values.npy", v1}}, "has no .genes.npy"},
		{"count", []scdlEntry{{"000000000.values.npy", v1}, {"000000000.genes.npy", g0}}, "1 values but 0 gene indices"},
		{"negative gene", []scdlEntry{{"000000000.values.npy", v1}, {"000000000.genes.npy", npyDescr("<i8", binary.LittleEndian.AppendUint64(nil, math.MaxUint64), 1)}}, "negative"},
		{"short npy", []scdlEntry{{"000000000.values.npy", v1[:len(v1)-1]}, {"000000000.genes.npy", g1}}, "announces 1 elements"},
		{"bad json", []scdlEntry{{"000000000.values.npy", v1}, {"000000000.genes.npy", g1}, {"000000000.json", []byte(`{"row": 3}`)}}, `"row" is 3`},
		{"mixed dtypes", []scdlEntry{{"000000000.values.npy", v1}, {"000000000.genes.npy", g1},
			{"000000001.values.npy", npy(t, scdl.Float64, make([]byte, 8))}, {"000000001.genes.npy", g1}}, "one data dtype"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			writeSCDLTar(t, filepath.Join(dir, "cells_0.tar"), c.members)
			parent := t.TempDir()
			_, err := TarToSCDL(context.Background(), dir, filepath.Join(parent, "out"), SCDLImportOptions{})
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want one saying %q", err, c.want)
			}
			if left, _ := os.ReadDir(parent); len(left) != 0 {
				t.Errorf("left behind: %v", left[0].Name())
			}
		})
	}
}

// A cells fold whose scdlmeta header disagrees, or whose gene indices leave
// the block: the rebuilt archive is checked, nothing is left.
func TestSCDLImportChecksAgainstHeader(t *testing.T) {
	src := scdlCases(t)["basic_50x30_f32"]
	for _, c := range []struct {
		name   string
		damage func(t *testing.T, dir string)
		want   string
	}{
		{"cell removed", func(t *testing.T, dir string) {
			// Rewrite the cells fold without its last cell.
			m := tarMembers(t, dir, "cells")
			var keep []scdlEntry
			for i := range 49 {
				k := fmt.Sprintf("%09d", i)
				keep = append(keep, scdlEntry{k + ".values.npy", m[k+".values.npy"]}, scdlEntry{k + ".genes.npy", m[k+".genes.npy"]})
			}
			removeShards(t, dir, "cells")
			writeSCDLTar(t, filepath.Join(dir, "cells_0000.tar"), keep)
		}, "hold 49 cells and 285 values, but scdlmeta/header.sch describes 50 cells and 285 values"},
		{"gene out of range", func(t *testing.T, dir string) {
			m := tarMembers(t, dir, "cells")
			var all []scdlEntry
			for i := range 50 {
				k := fmt.Sprintf("%09d", i)
				g := m[k+".genes.npy"]
				if i == 0 {
					g = npy(t, scdl.Uint8, []byte{30}) // 30 genes: indices 0..29
				}
				all = append(all, scdlEntry{k + ".values.npy", m[k+".values.npy"]}, scdlEntry{k + ".genes.npy", g})
			}
			removeShards(t, dir, "cells")
			writeSCDLTar(t, filepath.Join(dir, "cells_0000.tar"), all)
		}, "col_ptr.npy: offset 0: corrupt SCDL archive: col_ptr[0] = 30 (row 0) is not below 30"},
		{"values dtype", func(t *testing.T, dir string) {
			m := tarMembers(t, dir, "cells")
			var all []scdlEntry
			for i := range 50 {
				k := fmt.Sprintf("%09d", i)
				v := m[k+".values.npy"]
				if i == 0 {
					v = npy(t, scdl.Float64, make([]byte, 8))
				}
				all = append(all, scdlEntry{k + ".values.npy", v}, scdlEntry{k + ".genes.npy", m[k+".genes.npy"]})
			}
			removeShards(t, dir, "cells")
			writeSCDLTar(t, filepath.Join(dir, "cells_0000.tar"), all)
		}, "values of dtype float64, but the archive's data dtype is float32"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			exportSCDL(t, src, dir, SCDLExportOptions{})
			c.damage(t, dir)
			parent := t.TempDir()
			_, err := TarToSCDL(context.Background(), dir, filepath.Join(parent, "out"), SCDLImportOptions{})
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want one saying %q", err, c.want)
			}
			if left, _ := os.ReadDir(parent); len(left) != 0 {
				t.Errorf("left behind: %v", left[0].Name())
			}
		})
	}
}

func removeShards(t *testing.T, dir, fold string) {
	folds, _ := taridx.Discover(dir)
	for _, f := range folds {
		if f.Name == fold {
			for _, s := range f.Shards {
				os.Remove(s)
			}
		}
	}
	os.Remove(filepath.Join(dir, fold+".taridx"))
}

func TestSCDLExportRefusesExistingFold(t *testing.T) {
	src := scdlCases(t)["basic_50x30_f32"]
	dir := t.TempDir()
	exportSCDL(t, src, dir, SCDLExportOptions{})
	before := readTree(t, dir)
	a, _ := scdl.Open(src)
	defer a.Close()
	_, err := SCDLToTar(context.Background(), a, SCDLExportOptions{Dir: dir})
	if err == nil || !strings.Contains(err.Error(), `already holds fold "cells"`) {
		t.Fatalf("error %v", err)
	}
	if after := readTree(t, dir); len(after) != len(before) {
		t.Errorf("%d files, %d before", len(after), len(before))
	}
	// A canceled export leaves no fold, not even scdlmeta.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	empty := t.TempDir()
	if _, err := SCDLToTar(ctx, a, SCDLExportOptions{Dir: empty}); !errors.Is(err, context.Canceled) {
		t.Fatalf("error %v", err)
	}
	if left, _ := os.ReadDir(empty); len(left) != 0 {
		t.Errorf("left behind: %v", left[0].Name())
	}
}

// pythonWithNumpy finds a python3 that imports numpy (the one on PATH may
// be a pyenv without it); it skips the test without one, except under CI.
func pythonWithNumpy(t *testing.T) string {
	cands := []string{"/usr/bin/python3"}
	if p, err := exec.LookPath("python3"); err == nil {
		cands = append([]string{p}, cands...)
	}
	for _, py := range cands {
		if exec.Command(py, "-c", "import numpy").Run() == nil {
			return py
		}
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("no python3 with numpy (CI installs python3-numpy)")
	}
	t.Skip("no python3 with numpy")
	return ""
}

// numpy.load reads the per-cell arrays (skipped without numpy, except
// under CI).
func TestSCDLCellsNumpy(t *testing.T) {
	py := pythonWithNumpy(t)
	dir := t.TempDir()
	exportSCDL(t, scdlCases(t)["basic_50x30_f32"], dir, SCDLExportOptions{})
	x := filepath.Join(t.TempDir(), "x")
	os.MkdirAll(x, 0o755)
	for name, b := range tarMembers(t, dir, "cells") {
		if strings.HasPrefix(name, "000000002.") {
			os.WriteFile(filepath.Join(x, name), b, 0o644)
		}
	}
	script := `import numpy as np, json, sys
d = sys.argv[1]
v = np.load(d + "/000000002.values.npy"); g = np.load(d + "/000000002.genes.npy")
j = json.load(open(d + "/000000002.json"))
print(v.dtype, g.dtype, v.tolist(), g.tolist(), j)`
	out, err := exec.Command(py, "-c", script, x).CombinedOutput()
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	// Row 2 of expected.json: genes 2, 6, 12; values 16, 6, 14.
	want := "float32 uint8 [16.0, 6.0, 14.0] [2, 6, 12] {'row': 2, 'block': 0, 'n_genes': 30}\n"
	if string(out) != want {
		t.Errorf("numpy read %q, want %q", out, want)
	}
}

type scdlEntry struct {
	name string
	body []byte
}

func writeSCDLTar(t *testing.T, path string, entries []scdlEntry) {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, e := range entries {
		if err := tw.WriteHeader(&tar.Header{Name: e.name, Typeflag: tar.TypeReg, Mode: 0o644, Size: int64(len(e.body))}); err != nil {
			t.Fatal(err)
		}
		tw.Write(e.body)
	}
	tw.Close()
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

func readSCDLTar(t *testing.T, path string) map[string][]byte {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string][]byte{}
	tr := tar.NewReader(f)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		out[h.Name], _ = io.ReadAll(tr)
	}
}

// The cells fold's TARIDX, written as the members are, is the one
// BuildIndex makes from the shards.
func TestSCDLCellsIndexMatchesBuildIndex(t *testing.T) {
	src := filepath.Join(t.TempDir(), "synth")
	writeSynthSCDL(t, src, 3000)
	dir := t.TempDir()
	st := exportSCDL(t, src, dir, SCDLExportOptions{CellsPerShard: 700})
	if len(st.Fold.Shards) != 5 || st.Fold.Index.Rows != 9000 || st.Fold.Index.Stems != 3000 {
		t.Fatalf("%d shards, index %+v", len(st.Fold.Shards), st.Fold.Index)
	}
	want := filepath.Join(t.TempDir(), "cells.taridx")
	if _, err := fold.BuildIndex(context.Background(), st.Fold.Shards, want, fold.IndexOptions{}); err != nil {
		t.Fatal(err)
	}
	a, _ := os.ReadFile(want)
	b, _ := os.ReadFile(filepath.Join(dir, "cells.taridx"))
	if !bytes.Equal(a, b) {
		t.Errorf("cells.taridx (%d bytes) differs from BuildIndex's (%d bytes)", len(b), len(a))
	}
}
