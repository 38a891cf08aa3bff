package scdl

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/itarconv/itarconv/dataset"
)

// memRow is a row of memSource.
type memRow struct {
	name   string
	data   []byte
	kind   dataset.Kind
	inline bool // in Row.Inline; else read through OpenPayload
}

// memSource is a dataset cut into shards as a test wants it: cells whose
// members straddle shards, files after the cells, duplicates. Its rows
// come in batches of two, so that cells straddle batches too.
type memSource struct {
	name   string
	shards [][]memRow
}

func (s *memSource) NumShards() int             { return len(s.shards) }
func (s *memSource) ShardName(shard int) string { return fmt.Sprintf("%s#%d", s.name, shard) }

func (s *memSource) Scan(ctx context.Context, shard int, emit func([]dataset.Row) error) error {
	var rows []dataset.Row
	for i, r := range s.shards[shard] {
		row := dataset.Row{Name: []byte(r.name), Kind: r.kind, Size: int64(len(r.data)), Mode: 0o644,
			Offset: int64(i) * 512, DataFile: shard<<20 | i}
		if r.inline {
			row.Inline = r.data
		}
		if rows = append(rows, row); len(rows) == 2 {
			if err := emit(rows); err != nil {
				return err
			}
			rows = nil
		}
	}
	if len(rows) > 0 {
		return emit(rows)
	}
	return nil
}

func (s *memSource) OpenPayload(r *dataset.Row) (io.Reader, error) {
	return bytes.NewReader(s.shards[r.DataFile>>20][r.DataFile&(1<<20-1)].data), nil
}

// rowsOf reads every row of a source, with its bytes.
func rowsOf(t testing.TB, src dataset.PayloadSource) []memRow {
	t.Helper()
	var rows []memRow
	for shard := range src.NumShards() {
		err := src.Scan(context.Background(), shard, func(batch []dataset.Row) error {
			for i := range batch {
				r := &batch[i]
				m := memRow{name: string(r.Name), kind: r.Kind, inline: r.Inline != nil}
				if m.inline {
					m.data = bytes.Clone(r.Inline)
				} else {
					var err error
					if m.data, err = dataset.ReadPayload(src, r); err != nil {
						return err
					}
				}
				rows = append(rows, m)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return rows
}

// reshard cuts rows into shards of the sizes given, cycling through them.
func reshard(rows []memRow, sizes ...int) [][]memRow {
	var shards [][]memRow
	for k := 0; len(rows) > 0; k++ {
		n := min(sizes[k%len(sizes)], len(rows))
		shards = append(shards, rows[:n:n])
		rows = rows[n:]
	}
	return shards
}

// withGenes rewrites every cell's gene indices as an NPY file of descr
// ("|u1", "<u4", "<i8"...).
func withGenes(t testing.TB, rows []memRow, descr string) []memRow {
	t.Helper()
	out := slices.Clone(rows)
	for i, r := range out {
		if !strings.HasSuffix(r.name, ".genes.npy") {
			continue
		}
		h, err := ParseNPYHeader(r.data)
		if err != nil {
			t.Fatal(err)
		}
		dt := DTypeOfDescr(h.Descr)
		genes, err := AppendUint64s(nil, dt, r.data[h.DataOffset:])
		if err != nil {
			t.Fatal(err)
		}
		out[i].data = npyGenes(descr, genes)
	}
	return out
}

// npyGenes is an NPY file of gene indices of dtype descr.
func npyGenes(descr string, genes []uint64) []byte {
	b := appendNPYHeader(nil, descr, len(genes))
	size, _ := strconv.Atoi(descr[2:])
	for _, g := range genes {
		var e [8]byte
		binary.LittleEndian.PutUint64(e[:], g)
		b = append(b, e[:size]...)
	}
	return b
}

// partDataset is a source to convert whole and in parts.
type partDataset struct {
	name      string
	newSource func() (dataset.PayloadSource, error)
	err       error // the sentinel both runs' error wraps (nil: both succeed)
	check     func(t *testing.T, st *RowsStats, out string)
}

func memDataset(name string, shards [][]memRow, err error) partDataset {
	return partDataset{name: name, err: err, newSource: func() (dataset.PayloadSource, error) {
		return &memSource{name: name, shards: shards}, nil
	}}
}

// freshCells makes cells alone, as another tool might write them: gene
// indices of uint8 first (below 200), then uint16 up to 1099 (n_genes
// 1100 in their .json), then signed int64; some cells have no .json, some
// no values. A task that sees only the first cells picks uint8 for its
// gene indices; the archive's col_ptr is uint16.
func freshCells(n int) []memRow {
	var rows []memRow
	for i := range n {
		k := i % 5
		values := appendNPYHeader(nil, "<f4", k)
		genes := make([]uint64, k)
		for j := range k {
			values = binary.LittleEndian.AppendUint32(values, math.Float32bits(float32(i)+float32(j)/8))
			genes[j] = uint64((i*37 + j*11) % 200)
		}
		descr := "|u1"
		switch {
		case i >= 2*n/3:
			descr = "<i8"
		case i >= n/3:
			descr = "<u2"
			for j := range genes {
				genes[j] = uint64((i*97 + j*131) % 1100)
			}
		}
		key := CellKey(i)
		rows = append(rows, memRow{name: key + ".values.npy", data: values, inline: true},
			memRow{name: key + ".genes.npy", data: npyGenes(descr, genes), inline: i%2 == 0})
		switch {
		case i%4 == 3:
		case descr == "<u2":
			rows = append(rows, memRow{name: key + ".json", data: fmt.Appendf(nil, `{"row": %d, "n_genes": 1100}`, i), inline: true})
		default:
			rows = append(rows, memRow{name: key + ".json", data: fmt.Appendf(nil, `{"row": %d}`, i), inline: true})
		}
	}
	return rows
}

// partDatasets are the datasets every split is tried on: bionemo's own
// archives through NewSource in both modes, and the awkward cases.
func partDatasets(t *testing.T) []partDataset {
	var sets []partDataset
	var basicCells, basicFiles []memRow
	for _, c := range conformanceCases(t) {
		if !c.ok {
			continue
		}
		a, err := Open(filepath.Join(c.dir, "scdl"))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { a.Close() })
		for _, mode := range []string{ModeCells, ModeArchive} {
			newSource := func() (dataset.PayloadSource, error) {
				return NewSource(a, SourceOptions{Mode: mode, BatchCells: 2, ChunkCells: 4})
			}
			cells, nnz := a.NumRows(), a.NNZ()
			sets = append(sets, partDataset{name: c.name + "/" + mode, newSource: newSource, check: func(t *testing.T, st *RowsStats, out string) {
				if st.Mode != mode || st.Cells != cells || st.NNZ != nnz || st.Fresh {
					t.Errorf("stats %+v: want %s mode, %d cells, %d values", st, mode, cells, nnz)
				}
			}})
			if c.name == "basic_50x30_f32" {
				src, _ := newSource()
				if mode == ModeCells {
					basicCells = rowsOf(t, src)
				} else {
					basicFiles = rowsOf(t, src)
				}
			}
		}
	}
	if basicCells == nil {
		t.Fatal("no basic_50x30_f32 conformance case")
	}
	nMeta := slices.IndexFunc(basicCells, func(r memRow) bool { return IsCellMember([]byte(r.name)) })
	meta, cells := basicCells[:nMeta], basicCells[nMeta:]

	// Cells whose members straddle shards (and so tasks), one member a
	// shard in places: a cell may span three tasks.
	sets = append(sets, memDataset("straddling", reshard(basicCells, 4, 1, 1, 5, 2, 7, 3), nil))
	// The files beside the cells after them: WriteRows' listing pass.
	sets = append(sets, memDataset("meta-last", reshard(append(slices.Clone(cells), meta...), 9, 2, 4), nil))
	// Gene indices wider than the header's col_ptr: every part narrowed.
	sets = append(sets, memDataset("genes-u4-into-u1", reshard(withGenes(t, basicCells, "<u4"), 5, 8, 3), nil))
	// Gene indices narrower than the header's: widened, from signed int8.
	wide := filepath.Join(t.TempDir(), "wide")
	rows := synthRows(40, 6, []int{25, 15}, []int{90, 120})
	writeSynth(t, wide, rows, []int{25, 15}, []int{90, 120}, WriterOptions{ColPtrDType: Uint32})
	aw, err := Open(wide)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { aw.Close() })
	src, _ := NewSource(aw, SourceOptions{})
	sets = append(sets, memDataset("genes-i1-into-u4", reshard(withGenes(t, rowsOf(t, src), "|i1"), 7, 6, 2), nil))
	// Cells alone: a fresh archive, whose dtypes come from every task's.
	sets = append(sets, partDataset{name: "fresh-mixed-dtypes", newSource: func() (dataset.PayloadSource, error) {
		return &memSource{name: "fresh", shards: reshard(freshCells(60), 6, 10, 2, 13)}, nil
	}, check: func(t *testing.T, st *RowsStats, out string) {
		a, err := Open(out)
		if err != nil {
			t.Fatal(err)
		}
		defer a.Close()
		if !st.Fresh || st.Cells != 60 || st.Files != 6 || a.ColPtrDType() != Uint16 || a.RowPtrDType() != Uint8 || a.DataDType() != Float32 {
			t.Errorf("fresh archive: %+v, dtypes %v %v %v", st, a.DataDType(), a.RowPtrDType(), a.ColPtrDType())
		}
	}})
	sets = append(sets, memDataset("fresh-from-basic", reshard(withGenes(t, cells, "<i8"), 4, 4, 11), nil))
	// Archive mode with files in several tasks.
	sets = append(sets, memDataset("archive-sharded", reshard(basicFiles, 1, 3, 2), nil))

	// What WriteRows refuses, the merge refuses: a file twice in two tasks,
	// a file beside cells, a cell's member after the next cell, nothing.
	sets = append(sets, memDataset("duplicate-file", reshard(append(slices.Clone(basicFiles), basicFiles[2]), 3, 4), nil))
	sets[len(sets)-1].err = errAny
	stray := memRow{name: "stray.txt", data: []byte("stray"), inline: true}
	sets = append(sets, memDataset("file-beside-cells", reshard(append(slices.Clone(basicCells), stray), 7, 20), ErrNotCell))
	late := slices.Clone(cells)
	j := slices.IndexFunc(late, func(r memRow) bool { return r.name == CellKey(3)+".json" })
	json3 := late[j]
	late = slices.Insert(slices.Delete(late, j, j+1), j+2, json3) // after cell 4's values and genes
	sets = append(sets, memDataset("member-after-next-cell", reshard(append(slices.Clone(meta), late...), 3, 4, 5), ErrCellOrder))
	sets = append(sets, memDataset("empty", nil, ErrEmpty))
	sets = append(sets, memDataset("meta-only", reshard(meta, 2), ErrEmpty))
	return sets
}

// errAny: a dataset both runs refuse, for reasons without a sentinel.
var errAny = errors.New("any error")

// splits are the ways of cutting shards into tasks: even cuts of 1, 2, 3
// and 7 tasks (empty ones when there are fewer shards), and lopsided ones.
func splits(shards int) [][]int {
	var out [][]int
	for _, n := range []int{1, 2, 3, 7} {
		b := make([]int, n+1)
		for k := range b {
			b[k] = k * shards / n
		}
		out = append(out, b)
	}
	if shards >= 2 {
		out = append(out, []int{0, shards - 1, shards - 1, shards - 1, shards}, []int{0, 0, 1, shards})
	}
	return out
}

// writeParts writes one part per task of the split, with 1 to 3 workers.
func writeParts(t testing.TB, newSource func() (dataset.PayloadSource, error), bounds []int, root string) ([]string, []*PartStats, error) {
	var dirs []string
	var stats []*PartStats
	for k := range len(bounds) - 1 {
		dir := filepath.Join(root, fmt.Sprintf("part%03d", k))
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		lo, hi := bounds[k], bounds[k+1]
		st, err := WritePart(context.Background(), func(bool) (dataset.PayloadSource, error) {
			src, err := newSource()
			if err != nil {
				return nil, err
			}
			return dataset.Slice(src, lo, hi)
		}, dir, RowsOptions{Workers: k%3 + 1})
		if err != nil {
			return dirs, stats, err
		}
		dirs, stats = append(dirs, dir), append(stats, st)
	}
	return dirs, stats, nil
}

// mergeEverySplit checks, for every dataset and split, that the parts
// write makes of the split merge into what WriteRows writes over the whole
// source, byte for byte and with the same stats, or that both refuse the
// dataset (and nothing is written); then check looks at the merge
// (out, made of dirs) as the writer of the parts wants.
func mergeEverySplit(t *testing.T, write func(t testing.TB, newSource func() (dataset.PayloadSource, error), bounds []int, root string) ([]string, []*PartStats, error),
	check func(t *testing.T, ds partDataset, want *RowsStats, bounds []int, root string, dirs []string, pst []*PartStats, ms *MergeStats)) {
	ctx := context.Background()
	for _, ds := range partDatasets(t) {
		t.Run(ds.name, func(t *testing.T) {
			single := filepath.Join(t.TempDir(), "single")
			want, wantErr := WriteRows(ctx, func(bool) (dataset.PayloadSource, error) { return ds.newSource() }, single, RowsOptions{Workers: 2})
			switch {
			case ds.err == nil && wantErr != nil:
				t.Fatalf("WriteRows: %v", wantErr)
			case ds.err != nil && wantErr == nil:
				t.Fatalf("WriteRows accepted the dataset")
			case ds.err != nil && ds.err != errAny && !errors.Is(wantErr, ds.err):
				t.Fatalf("WriteRows: %v, want %v", wantErr, ds.err)
			}
			if wantErr == nil && ds.check != nil {
				ds.check(t, want, single)
			}
			src, err := ds.newSource()
			if err != nil {
				t.Fatal(err)
			}
			for _, bounds := range splits(src.NumShards()) {
				name := strings.Trim(strings.ReplaceAll(fmt.Sprint(bounds), " ", "-"), "[]")
				t.Run(name, func(t *testing.T) {
					root := t.TempDir()
					out := filepath.Join(root, "merged")
					dirs, pst, err := write(t, ds.newSource, bounds, root)
					var got *RowsStats
					var ms *MergeStats
					if err == nil {
						got, ms, err = MergeParts(ctx, dirs, out, RowsOptions{})
					}
					if wantErr != nil {
						if err == nil {
							t.Fatalf("the parts merged; WriteRows said %v", wantErr)
						}
						if ds.err != errAny && !errors.Is(err, ds.err) {
							t.Errorf("%v, want %v (WriteRows: %v)", err, ds.err, wantErr)
						}
						if errors.Is(err, ErrPart) {
							t.Errorf("a dataset's error blamed on a part: %v", err)
						}
						if _, serr := os.Stat(out); serr == nil {
							t.Errorf("an output after an error")
						}
						return
					}
					if err != nil {
						t.Fatal(err)
					}
					wantSt := *want
					wantSt.Output = out
					if *got != wantSt {
						t.Errorf("stats %+v, want %+v", got, wantSt)
					}
					sameTree(t, single, out)
					check(t, ds, want, bounds, root, dirs, pst, ms)
				})
			}
		})
	}
}

// TestMergePartsMatchesWriteRows: for every dataset and split, the parts
// WritePart writes merge into what WriteRows writes over the whole source,
// with the same stats, or both refuse the dataset.
func TestMergePartsMatchesWriteRows(t *testing.T) {
	mergeEverySplit(t, writeParts, func(t *testing.T, ds partDataset, want *RowsStats, bounds []int, _ string, dirs []string, pst []*PartStats, ms *MergeStats) {
		if ms.Parts != len(dirs) || ms.CopiedBytes+ms.LinkedBytes == 0 && want.NNZ > 2 {
			t.Errorf("merge stats %+v", ms)
		}
		checkMergeStats(t, ds.name, bounds, pst, ms)
		for _, st := range pst {
			t.Logf("part %s: %d shards, %d members, %d whole cells, %d edge cells, genes %v, %d passes",
				filepath.Base(st.Dir), st.Shards, st.Members, st.WholeCells, st.EdgeCells, st.GeneDType, st.Passes)
		}
		t.Logf("merge: %+v", *ms)
	})
}

// checkMergeStats checks what the merge says it rewrote against what the
// dataset's parts chose.
func checkMergeStats(t *testing.T, name string, bounds []int, pst []*PartStats, ms *MergeStats) {
	t.Helper()
	var whole []int
	for k, st := range pst {
		if st.WholeCells > 0 {
			whole = append(whole, k)
		}
	}
	switch {
	case name == "genes-u4-into-u1" || name == "genes-i1-into-u4":
		// Every part with whole cells chose another dtype than the header's.
		if !slices.Equal(ms.ConvertedParts, whole) {
			t.Errorf("converted parts %v, want %v", ms.ConvertedParts, whole)
		}
	case name == "fresh-mixed-dtypes":
		// Parts that saw only uint8 genes are widened; the others not.
		for _, k := range whole {
			if pst[k].GeneDType != Uint16 && !slices.Contains(ms.ConvertedParts, k) {
				t.Errorf("part %d of %v chose %v and was not converted (%v)", k, bounds, pst[k].GeneDType, ms.ConvertedParts)
			}
		}
		if len(bounds) == 2 && (pst[0].Passes != 2 || pst[0].GeneDType != Uint16 || ms.ConvertedParts != nil) {
			t.Errorf("one part over every cell: %+v, converted %v", pst[0], ms.ConvertedParts)
		}
	case strings.HasSuffix(name, "/"+ModeCells) || name == "straddling" || name == "meta-last":
		// The cells come in the header's dtype: nothing rewritten.
		if ms.ConvertedParts != nil {
			t.Errorf("converted parts %v", ms.ConvertedParts)
		}
		if ms.LinkedFiles == 0 && ms.CopiedBytes == 0 {
			t.Errorf("no file linked or copied: %+v", ms)
		}
	}
}

// sameTree compares two directories file by file.
func sameTree(t *testing.T, wantDir, gotDir string) {
	t.Helper()
	want, got := treeOf(t, wantDir), treeOf(t, gotDir)
	if len(got) != len(want) {
		t.Errorf("%d files, want %d: %v", len(got), len(want), slices.Sorted(mapKeys(got)))
	}
	for name, b := range want {
		if g, ok := got[name]; !ok {
			t.Errorf("%s missing", name)
		} else if !bytes.Equal(g, b) {
			t.Errorf("%s differs: %d bytes, want %d", name, len(g), len(b))
		}
	}
}

func mapKeys(m map[string][]byte) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// basicParts writes basic_50x30_f32 in cells mode (9 shards: the files
// beside the cells, then 8 of 7 cells) as parts of the split; a bound of
// -1 is the number of shards.
func basicParts(t *testing.T, bounds []int) (dirs []string, newSource func() (dataset.PayloadSource, error)) {
	t.Helper()
	var dir string
	for _, c := range conformanceCases(t) {
		if c.name == "basic_50x30_f32" {
			dir = filepath.Join(c.dir, "scdl")
		}
	}
	a, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	newSource = func() (dataset.PayloadSource, error) {
		return NewSource(a, SourceOptions{BatchCells: 3, ChunkCells: 7})
	}
	src, _ := newSource()
	bounds = slices.Clone(bounds)
	for i, b := range bounds {
		if b < 0 {
			bounds[i] = src.NumShards()
		}
	}
	dirs, _, err = writeParts(t, newSource, bounds, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return dirs, newSource
}

// TestMergePartsBadParts: a part cut short, damaged, of another version or
// unfinished is refused with an error that names it and leaves no output;
// the parts themselves are never changed.
func TestMergePartsBadParts(t *testing.T) {
	dirs, _ := basicParts(t, []int{0, 3, 5, -1})
	before := map[string]map[string][]byte{}
	for _, d := range dirs {
		before[d] = treeOf(t, d)
	}
	out := filepath.Join(t.TempDir(), "out")
	if _, _, err := MergeParts(context.Background(), dirs, out, RowsOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, d := range dirs {
		if after := treeOf(t, d); len(after) != len(before[d]) {
			t.Fatalf("%s changed", d)
		} else {
			for n, b := range before[d] {
				if !bytes.Equal(after[n], b) {
					t.Fatalf("%s/%s changed", d, n)
				}
			}
		}
	}
	reCRC := func(b []byte) []byte {
		b = bytes.Clone(b)
		return binary.LittleEndian.AppendUint32(b[:len(b)-4], crc32.ChecksumIEEE(b[:len(b)-4]))
	}
	cases := []struct {
		name  string
		part  int
		file  string
		data  func([]byte) []byte // nil: remove the file
		words []string
	}{
		{"truncated values", 1, partDataFile, func(b []byte) []byte { return b[:len(b)-3] }, []string{"data.bin", "offset", "3 bytes short", "truncated"}},
		{"longer gene indices", 2, partColFile, func(b []byte) []byte { return append(b, 0) }, []string{"col.bin", "1 bytes more"}},
		{"truncated file", 0, partFilesDir + "/0", func(b []byte) []byte { return b[:1] }, []string{"files/0", "truncated"}},
		{"no edges", 1, partEdgeFile, nil, []string{"edges.bin", "no such file"}},
		{"unfinished", 2, PartMetaFile, nil, []string{PartMetaFile, "not a finished part"}},
		{"flipped byte", 1, PartMetaFile, func(b []byte) []byte { b[20] ^= 0x40; return b }, []string{PartMetaFile, "CRC-32", "corrupt"}},
		{"meta cut short", 1, PartMetaFile, func(b []byte) []byte { return b[:len(b)/2] }, []string{PartMetaFile, "offset"}},
		{"other version", 1, PartMetaFile, func(b []byte) []byte {
			binary.LittleEndian.PutUint32(b[8:], PartFormatVersion+1)
			return reCRC(b)
		}, []string{PartMetaFile, "offset 8", fmt.Sprint("version ", PartFormatVersion+1), fmt.Sprint("reads version ", PartFormatVersion)}},
		{"not a part", 0, PartMetaFile, func([]byte) []byte { return []byte("{}") }, []string{"magic"}},
		{"lying counts", 1, PartMetaFile, func(b []byte) []byte {
			// The whole cells' count, 8 bytes after the first member's
			// origin: one more than the part has.
			m, _ := decodePartMeta(b)
			at := 8 + 4 + 4 + 4 + len(m.source) + 8 + 4 + len(m.firstCell)
			binary.LittleEndian.PutUint64(b[at:], m.cells+1)
			return reCRC(b)
		}, []string{PartMetaFile, "offset"}},
		{"rows out of order", 1, partRowEndFile, func(b []byte) []byte {
			binary.LittleEndian.PutUint64(b[8:], math.MaxUint32)
			return b
		}, []string{"rowend.bin", "offset 8", "a cell ends at value"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			root := t.TempDir()
			var bad []string
			for _, d := range dirs {
				cp := filepath.Join(root, filepath.Base(d))
				copyDir(t, d, cp)
				bad = append(bad, cp)
			}
			p := filepath.Join(bad[c.part], filepath.FromSlash(c.file))
			if c.data == nil {
				os.Remove(p)
			} else {
				b, err := os.ReadFile(p)
				if err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, c.data(b), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			out := filepath.Join(root, "out")
			_, _, err := MergeParts(context.Background(), bad, out, RowsOptions{})
			if !errors.Is(err, ErrPart) {
				t.Fatalf("%v: want ErrPart", err)
			}
			msg := err.Error()
			if !strings.Contains(msg, bad[c.part]) {
				t.Errorf("%q does not name the part %s", msg, bad[c.part])
			}
			for _, w := range c.words {
				if !strings.Contains(msg, w) {
					t.Errorf("%q lacks %q", msg, w)
				}
			}
			if ents, _ := os.ReadDir(root); len(ents) != len(bad) {
				t.Errorf("%d entries beside the parts: output or leftovers", len(ents)-len(bad))
			}
		})
	}
}

// TestMergePartsOverwrite: an existing output is refused, or replaced
// with Overwrite, as WriteRows does.
func TestMergePartsOverwrite(t *testing.T) {
	dirs, newSource := basicParts(t, []int{0, 2, -1})
	root := t.TempDir()
	single := filepath.Join(root, "single")
	if _, err := WriteRows(context.Background(), func(bool) (dataset.PayloadSource, error) { return newSource() }, single, RowsOptions{}); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(root, "out")
	if err := os.Mkdir(out, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(out, "old"), []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := MergeParts(context.Background(), dirs, out, RowsOptions{}); err == nil || !strings.Contains(err.Error(), "already exists") {
		t.Fatalf("an existing output without Overwrite: %v", err)
	}
	if b, _ := os.ReadFile(filepath.Join(out, "old")); string(b) != "old" {
		t.Fatal("the existing output was touched")
	}
	// Overwrite replaces an archive, not a directory holding other files.
	if _, _, err := MergeParts(context.Background(), dirs, out, RowsOptions{Overwrite: true}); !errors.Is(err, ErrNotArchive) {
		t.Fatalf("a directory of other files with Overwrite: %v", err)
	}
	if b, _ := os.ReadFile(filepath.Join(out, "old")); string(b) != "old" {
		t.Fatal("the existing output was touched")
	}
	os.RemoveAll(out)
	copyDir(t, single, out)
	st, ms, err := MergeParts(context.Background(), dirs, out, RowsOptions{Overwrite: true})
	if err != nil {
		t.Fatal(err)
	}
	if st.Output != out || st.Cells != 50 || st.NNZ != 285 || st.Mode != ModeCells {
		t.Errorf("stats %+v", st)
	}
	// header.sch, metadata.json, version.json and two feature indices of 4
	// files, linked; data.npy and col_ptr.npy copied by range.
	if ms.LinkedFiles != 11 || ms.ConvertedParts != nil || ms.CopiedBytes == 0 {
		t.Errorf("merge stats %+v", ms)
	}
	sameTree(t, single, out)
	if ents, _ := os.ReadDir(root); len(ents) != 2 {
		t.Errorf("%d entries, want single and out: leftovers", len(ents))
	}
}

// TestWritePartErrors: a directory that is not empty is refused; a part
// that fails leaves its directory empty.
func TestWritePartErrors(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "x"), nil, 0o644)
	_, err := WritePart(context.Background(), func(bool) (dataset.PayloadSource, error) {
		return &memSource{}, nil
	}, dir, RowsOptions{})
	if err == nil || !strings.Contains(err.Error(), "not empty") {
		t.Errorf("a directory not empty: %v", err)
	}
	dir = t.TempDir()
	bad := [][]memRow{{{name: "000000000.values.npy", data: []byte("not npy"), inline: true}}}
	_, err = WritePart(context.Background(), func(bool) (dataset.PayloadSource, error) {
		return &memSource{name: "bad", shards: bad}, nil
	}, dir, RowsOptions{})
	if err == nil || !strings.Contains(err.Error(), "bad#0") {
		t.Errorf("a member that does not parse: %v", err)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("%d files left", len(ents))
	}
}

// TestPartMetaRoundTrip: a part's description encodes and decodes to
// itself, and every prefix of it is refused.
func TestPartMetaRoundTrip(t *testing.T) {
	m := &partMeta{shards: 3, source: "s#0", members: 9, firstCell: "s#0: 1.values.npy", cells: 1, firstRow: 2, nnz: 4,
		dataDT: Float32, dataWhere: "s#0: 2.values.npy", colDT: Uint16, anyGene: true, maxGene: 300, nGenes: 1100,
		files: []partFile{{name: []byte("scdlmeta/header.sch"), size: 120, where: "s#0: scdlmeta/header.sch"}},
		edges: []edgeCell{
			{row: 1, members: []edgeMember{{kind: 'g', dtype: Uint8, signed: true, n: 3, nGenes: -1, off: 0, size: 3, where: "a"}}},
			{row: 3, members: []edgeMember{{kind: 'v', dtype: Float64, n: 2, nGenes: -1, off: 3, size: 16, where: "b"}, {kind: 'j', nGenes: 7, off: 19, where: "c"}}},
		}, edgesBytes: 19}
	b := m.encode()
	got, err := decodePartMeta(b)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.encode(), b) || got.edgesBytes != 19 || got.edges[1].members[1].nGenes != 7 || string(got.files[0].name) != "scdlmeta/header.sch" {
		t.Errorf("decoded %+v", got)
	}
	for n := range len(b) {
		if _, err := decodePartMeta(b[:n]); !errors.Is(err, ErrPart) {
			t.Fatalf("%d of %d bytes: %v", n, len(b), err)
		}
	}
}

// TestMergePartsWithoutLinks: where the file system refuses hard links,
// the files are copied, and the archive is the same.
func TestMergePartsWithoutLinks(t *testing.T) {
	dirs, newSource := basicParts(t, []int{0, 1, 4, -1})
	root := t.TempDir()
	single := filepath.Join(root, "single")
	if _, err := WriteRows(context.Background(), func(bool) (dataset.PayloadSource, error) { return newSource() }, single, RowsOptions{}); err != nil {
		t.Fatal(err)
	}
	linkFile = func(string, string) error { return &os.LinkError{Op: "link", Err: syscall.EXDEV} }
	t.Cleanup(func() { linkFile = os.Link })
	out := filepath.Join(root, "out")
	_, ms, err := MergeParts(context.Background(), dirs, out, RowsOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if ms.LinkedFiles != 0 || ms.LinkedBytes != 0 || ms.CopiedBytes <= 285*4+285 {
		t.Errorf("merge stats %+v", ms)
	}
	sameTree(t, single, out)
}
