package scdl

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/itarconv/itarconv/internal/human"
	"github.com/itarconv/itarconv/internal/pathguard"
)

// Block is a run of rows that share one var_features dataframe, and so one
// number of genes: every gene index of its rows is below NGenes.
type Block struct {
	Start, End int // rows [Start, End)
	NGenes     int
}

// Archive is an SCDL archive opened for reading. Its methods read the array
// files with positioned reads, so an Archive may be used by several
// goroutines at once (each with its own RowIter).
type Archive struct {
	dir    string
	header *Header

	data, rowPtr, colPtr *os.File
	dataDT, rowDT, colDT DType
	nrows                int
	nnz                  uint64

	blocks []Block
	files  []string

	// rp is row_ptr.npy held in memory when it is at most rowPtrInMemory
	// bytes (8M rows of uint64), so that Row reads the two others only.
	rp []byte
}

// rowPtrInMemory bounds the row_ptr.npy kept in memory (a variable for
// tests).
var rowPtrInMemory = 64 << 20

// maxHeaderSize bounds the header.sch read into memory; real ones are a
// few hundred bytes.
const maxHeaderSize = 64 << 20

// neighborArrays are the arrays bionemo's loader accepts in a header beside
// the three of the matrix (its optional neighbour graph); Open ignores them.
var neighborArrays = map[string]bool{"NEIGHBOR_INDICES": true, "NEIGHBOR_INDICES_PTR": true, "NEIGHBOR_VALUES": true}

// Open opens the SCDL archive in directory dir and checks it, reading the
// row offsets and gene indices once (not the values):
//
//   - header.sch decodes (DecodeHeader) and names the arrays DATA, ROWPTR
//     and COLPTR once each, DATA of a numeric dtype and the others of an
//     unsigned one; metadata.json exists (bionemo will not load without
//     it);
//   - each array file's size is its length times its item size, DATA and
//     COLPTR have one length, nnz, and ROWPTR n_rows + 1;
//   - the archive has at least one row and one value (ErrEmpty otherwise:
//     bionemo can neither write nor open such an archive);
//   - row_ptr starts at 0, never decreases and ends at nnz;
//   - var_features (or the older features/) holds cumulative_sum_index.npy
//     and one Parquet dataframe per block, and every gene index is below
//     its row's block's number of genes (see Blocks).
//
// Errors are *Error naming the file concerned.
func Open(dir string) (*Archive, error) {
	return OpenContext(context.Background(), dir)
}

// OpenContext is Open, stopped by ctx: Open reads the whole of row_ptr
// and col_ptr, which takes a while for a large archive.
func OpenContext(ctx context.Context, dir string) (*Archive, error) {
	a := &Archive{dir: dir}
	if err := a.open(ctx); err != nil {
		a.Close()
		return nil, err
	}
	return a, nil
}

func (a *Archive) path(name string) string { return filepath.Join(a.dir, filepath.FromSlash(name)) }

func (a *Archive) open(ctx context.Context) error {
	hpath := a.path(HeaderFile)
	b, err := readSmallFile(hpath, maxHeaderSize)
	if errors.Is(err, fs.ErrNotExist) {
		// What a failed bionemo conversion leaves: a directory holding
		// only version.json.
		return errorf(hpath, -1, ErrFormat, "missing: not an SCDL archive, or an incomplete one")
	}
	if err != nil {
		return err
	}
	if a.header, err = DecodeHeader(b); err != nil {
		var e *Error
		if errors.As(err, &e) {
			e.Path = hpath
		}
		return err
	}
	arrays := map[string]*ArrayInfo{}
	for i := range a.header.Arrays {
		ai := &a.header.Arrays[i]
		switch {
		case ai.Name == ArrayData || ai.Name == ArrayRowPtr || ai.Name == ArrayColPtr:
			if arrays[ai.Name] != nil {
				return errorf(hpath, -1, ErrCorrupt, "array %s is described twice", ai.Name)
			}
			arrays[ai.Name] = ai
		case neighborArrays[ai.Name]:
		default:
			return errorf(hpath, -1, ErrUnsupported, "array name %s: bionemo-scdl's loader knows DATA, ROWPTR, COLPTR and NEIGHBOR_*", human.Name(ai.Name))
		}
	}
	for _, name := range []string{ArrayData, ArrayRowPtr, ArrayColPtr} {
		if arrays[name] == nil {
			return errorf(hpath, -1, ErrCorrupt, "the header describes no %s array", name)
		}
	}
	da, ra, ca := arrays[ArrayData], arrays[ArrayRowPtr], arrays[ArrayColPtr]
	a.dataDT, a.rowDT, a.colDT = da.DType, ra.DType, ca.DType
	switch {
	case !a.dataDT.Numeric():
		return errorf(hpath, -1, ErrUnsupported, "DATA has dtype %v, not a numeric one", a.dataDT)
	case !a.rowDT.Unsigned():
		return errorf(hpath, -1, ErrUnsupported, "ROWPTR has dtype %v, not an unsigned integer", a.rowDT)
	case !a.colDT.Unsigned():
		return errorf(hpath, -1, ErrUnsupported, "COLPTR has dtype %v, not an unsigned integer", a.colDT)
	case ra.Length == 0:
		return errorf(hpath, -1, ErrCorrupt, "ROWPTR has length 0; it holds n_rows + 1 offsets")
	case da.Length != ca.Length:
		return errorf(hpath, -1, ErrCorrupt, "DATA has %d elements but COLPTR %d", da.Length, ca.Length)
	case ra.Length == 1 || da.Length == 0:
		return errorf(a.dir, -1, ErrEmpty, "%d cells and %d non-zero values: bionemo-scdl cannot open an archive without both", ra.Length-1, da.Length)
	case ra.Length-1 > uint64(maxInt):
		return errorf(hpath, -1, ErrUnsupported, "%d rows", ra.Length-1)
	}
	a.nrows, a.nnz = int(ra.Length-1), da.Length
	if _, err := os.Stat(a.path(MetadataFile)); err != nil {
		return errorf(a.path(MetadataFile), -1, ErrCorrupt, "missing: bionemo-scdl does not load an archive without it (%v)", unwrapPathErr(err))
	}
	for _, f := range []struct {
		fp   **os.File
		name string
		ai   *ArrayInfo
	}{{&a.data, DataFile, da}, {&a.rowPtr, RowPtrFile, ra}, {&a.colPtr, ColPtrFile, ca}} {
		if *f.fp, err = openArray(a.path(f.name), f.ai); err != nil {
			return err
		}
	}
	if err := a.readBlocks(); err != nil {
		return err
	}
	bounds, err := a.checkRowPtr(ctx)
	if err != nil {
		return err
	}
	if err := a.checkGenes(ctx, bounds); err != nil {
		return err
	}
	a.files, err = listFiles(a.dir)
	return err
}

const maxInt = int(^uint(0) >> 1)

func unwrapPathErr(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

func readSmallFile(path string, limit int64) ([]byte, error) {
	f, err := pathguard.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > limit {
		return nil, errorf(path, limit, ErrFormat, "larger than %d bytes", limit)
	}
	return b, nil
}

// openArray opens an array file and checks its size against the header.
func openArray(path string, ai *ArrayInfo) (*os.File, error) {
	f, err := pathguard.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, errorf(path, -1, ErrCorrupt, "missing, but the header describes the %s array", ai.Name)
	}
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	size := uint64(st.Size())
	item := uint64(ai.DType.ItemSize())
	if want := ai.Length * item; ai.Length > (1<<63-1)/item || size != want {
		f.Close()
		return nil, errorf(path, int64(min(size, want)), ErrCorrupt, "%d bytes, but the header's %s array holds %d %v elements (%d bytes)", size, ai.Name, ai.Length, ai.DType, ai.Length*item)
	}
	return f, nil
}

// readBlocks reads the var_features blocks (see Blocks for the rule).
func (a *Archive) readBlocks() error {
	fdir := VarFeatures
	if _, err := os.Stat(a.path(fdir)); err != nil {
		if _, err2 := os.Stat(a.path(Features)); err2 != nil {
			return errorf(a.path(VarFeatures), -1, ErrCorrupt, "missing: the genes of each row are unknown without it (%v)", unwrapPathErr(err))
		}
		fdir = Features
	}
	cpath := a.path(fdir + "/" + CumSumFile)
	csum, err := readInt64NPY(cpath)
	if err != nil {
		return err
	}
	switch {
	case len(csum) < 2:
		return errorf(cpath, -1, ErrCorrupt, "%d entries; a feature index of rows needs at least 2", len(csum))
	case csum[0] != -1 && csum[0] != 0:
		return errorf(cpath, -1, ErrCorrupt, "first entry is %d, not -1", csum[0])
	case csum[len(csum)-1] != int64(a.nrows):
		return errorf(cpath, -1, ErrCorrupt, "last entry is %d, but row_ptr has %d rows", csum[len(csum)-1], a.nrows)
	}
	frames, err := parquetFiles(a.path(fdir))
	if err != nil {
		return err
	}
	if len(frames) != len(csum)-1 {
		return errorf(a.path(fdir), -1, ErrCorrupt, "%d blocks in %s but %d Parquet dataframes", len(csum)-1, CumSumFile, len(frames))
	}
	a.blocks = make([]Block, len(frames))
	for d := range a.blocks {
		if csum[d+1] < csum[d] {
			return errorf(cpath, -1, ErrCorrupt, "entry %d (%d) is below entry %d (%d)", d+1, csum[d+1], d, csum[d])
		}
		n, err := parquetRows(frames[d])
		if err != nil {
			return err
		}
		if n > int64(maxInt) {
			return errorf(frames[d], -1, ErrUnsupported, "%d rows", n)
		}
		a.blocks[d] = Block{Start: int(max(csum[d], 0)), End: int(csum[d+1]), NGenes: int(n)}
	}
	return nil
}

// readInt64NPY reads a 1-D little-endian int64 NPY file.
func readInt64NPY(path string) ([]int64, error) {
	f, err := pathguard.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, errorf(path, -1, ErrCorrupt, "missing: the rows of each block are unknown without it")
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	h, err := ReadNPYHeader(f)
	if err != nil {
		var e *Error
		if errors.As(err, &e) {
			e.Path = path
		}
		return nil, err
	}
	if h.Descr != "<i8" || len(h.Shape) != 1 {
		return nil, errorf(path, 0, ErrUnsupported, "dtype %q of shape %v; want a 1-D int64 array ('<i8')", h.Descr, h.Shape)
	}
	if want := int64(h.DataOffset) + 8*int64(h.Shape[0]); int64(h.Shape[0]) > 1<<40 || st.Size() != want {
		return nil, errorf(path, int64(h.DataOffset), ErrCorrupt, "%d bytes, but its header announces %d int64 values (%d bytes)", st.Size(), h.Shape[0], want)
	}
	b := make([]byte, 8*h.Shape[0])
	if _, err := io.ReadFull(f, b); err != nil {
		return nil, errorf(path, int64(h.DataOffset), ErrTruncated, "%v", err)
	}
	v := make([]int64, h.Shape[0])
	for i := range v {
		v[i] = int64(binary.LittleEndian.Uint64(b[8*i:]))
	}
	return v, nil
}

// parquetFiles lists the *.parquet files below dir in bionemo's order:
// pathlib's rglob, sorted by path components.
func parquetFiles(dir string) ([]string, error) {
	var rels [][]string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !strings.HasSuffix(d.Name(), ".parquet") || p == dir {
			return nil
		}
		if !d.Type().IsRegular() {
			if st, err := os.Stat(p); err != nil || !st.Mode().IsRegular() {
				return errorf(p, -1, ErrUnsupported, "a dataframe that is not a regular file")
			}
		}
		rel, _ := filepath.Rel(dir, p)
		rels = append(rels, strings.Split(filepath.ToSlash(rel), "/"))
		return nil
	})
	if err != nil {
		return nil, err
	}
	slices.SortFunc(rels, slices.Compare)
	out := make([]string, len(rels))
	for i, r := range rels {
		out[i] = filepath.Join(dir, filepath.Join(r...))
	}
	return out, nil
}

// chunkElems is how many elements the streaming checks and RowIter read at
// once from each array (a variable for tests).
var chunkElems = 1 << 16

// checkRowPtr reads row_ptr once: it starts at 0, never decreases and ends
// at nnz. It returns row_ptr at each block's start and end.
func (a *Archive) checkRowPtr(ctx context.Context) (bounds []uint64, err error) {
	path := a.path(RowPtrFile)
	size := a.rowDT.ItemSize()
	buf := make([]byte, chunkElems*size)
	if total := (a.nrows + 1) * size; total <= rowPtrInMemory {
		a.rp = make([]byte, total)
	}
	want := make([]int, 0, 2*len(a.blocks)) // rows whose offsets Blocks need
	for _, b := range a.blocks {
		want = append(want, b.Start, b.End)
	}
	bounds = make([]uint64, len(want))
	next := 0 // index into want
	var prev uint64
	for i := 0; i <= a.nrows; i += chunkElems {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		n := min(chunkElems, a.nrows+1-i)
		if a.rp != nil {
			buf = a.rp[i*size:]
		}
		if err := readAt(a.rowPtr, path, buf[:n*size], int64(i*size)); err != nil {
			return nil, err
		}
		for j := range n {
			v := getUint(a.rowDT, buf, j)
			row := i + j
			switch {
			case row == 0 && v != 0:
				return nil, errorf(path, 0, ErrCorrupt, "row_ptr[0] is %d, not 0", v)
			case v < prev:
				return nil, errorf(path, int64(row*size), ErrCorrupt, "row_ptr[%d] = %d is below row_ptr[%d] = %d: offsets must not decrease", row, v, row-1, prev)
			case v > a.nnz:
				return nil, errorf(path, int64(row*size), ErrCorrupt, "row_ptr[%d] = %d is past the %d values", row, v, a.nnz)
			}
			prev = v
			for next < len(want) && want[next] == row {
				bounds[next] = v
				next++
			}
		}
	}
	if prev != a.nnz {
		return nil, errorf(path, int64(a.nrows*size), ErrCorrupt, "row_ptr[%d] = %d, but there are %d values", a.nrows, prev, a.nnz)
	}
	return bounds, nil
}

// checkGenes reads col_ptr once: every gene index is below the number of
// genes of its row's block.
func (a *Archive) checkGenes(ctx context.Context, bounds []uint64) error {
	path := a.path(ColPtrFile)
	size := a.colDT.ItemSize()
	buf := make([]byte, chunkElems*size)
	for k, b := range a.blocks {
		lo, hi := bounds[2*k], bounds[2*k+1]
		for at := lo; at < hi; at += uint64(chunkElems) {
			if err := ctx.Err(); err != nil {
				return err
			}
			n := min(uint64(chunkElems), hi-at)
			chunk := buf[:int(n)*size]
			if err := readAt(a.colPtr, path, chunk, int64(at)*int64(size)); err != nil {
				return err
			}
			if j := firstAtLeast(a.colDT, chunk, uint64(b.NGenes)); j >= 0 {
				el := at + uint64(j)
				row, err := a.rowOf(el)
				if err != nil {
					return err
				}
				return errorf(path, int64(el)*int64(size), ErrCorrupt, "col_ptr[%d] = %d (row %d) is not below %d, the number of genes of block %d", el, getUint(a.colDT, chunk, j), row, b.NGenes, k)
			}
		}
	}
	return nil
}

// rowOf finds the row holding element el: the last row i with
// row_ptr[i] <= el < row_ptr[i+1].
func (a *Archive) rowOf(el uint64) (int, error) {
	var err error
	i := sort.Search(a.nrows, func(i int) bool {
		v, e := a.rowPtrAt(i + 1)
		if e != nil {
			err = e
		}
		return v > el
	})
	return i, err
}

func (a *Archive) rowPtrAt(i int) (uint64, error) {
	if a.rp != nil {
		return getUint(a.rowDT, a.rp, i), nil
	}
	var b [8]byte
	size := a.rowDT.ItemSize()
	if err := readAt(a.rowPtr, a.path(RowPtrFile), b[:size], int64(i*size)); err != nil {
		return 0, err
	}
	return getUint(a.rowDT, b[:], 0), nil
}

// readAt fills b from f at off; a short read means the file shrank since
// Open checked its size.
func readAt(f *os.File, path string, b []byte, off int64) error {
	n, err := f.ReadAt(b, off)
	if n == len(b) {
		return nil
	}
	if err == io.EOF || err == nil {
		return errorf(path, off+int64(n), ErrTruncated, "the file ends inside %d bytes read at %d", len(b), off)
	}
	return err
}

// listFiles lists every file below dir, relative, slash-separated and
// sorted; a symlink counts as the file it points to. Anything else (a
// device, a socket, a dangling link) is an error: a converter copying the
// list would lose it.
func listFiles(dir string) ([]string, error) {
	var files []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return nil
		}
		if !d.Type().IsRegular() {
			st, err := os.Stat(p)
			if err != nil || !st.Mode().IsRegular() {
				return errorf(p, -1, ErrUnsupported, "not a regular file (%v)", d.Type())
			}
		}
		rel, _ := filepath.Rel(dir, p)
		files = append(files, filepath.ToSlash(rel))
		return nil
	})
	slices.Sort(files)
	return files, err
}

// Header is the archive's decoded header.sch.
func (a *Archive) Header() *Header { return a.header }

// Dir is the archive's directory.
func (a *Archive) Dir() string { return a.dir }

// NumRows is the number of cells.
func (a *Archive) NumRows() int { return a.nrows }

// NNZ is the number of stored (non-zero) values.
func (a *Archive) NNZ() uint64 { return a.nnz }

// DataDType is the dtype of the values (data.npy).
func (a *Archive) DataDType() DType { return a.dataDT }

// RowPtrDType is the dtype of the row offsets (row_ptr.npy).
func (a *Archive) RowPtrDType() DType { return a.rowDT }

// ColPtrDType is the dtype of the gene indices (col_ptr.npy).
func (a *Archive) ColPtrDType() DType { return a.colDT }

// Blocks are the var_features blocks, in order, as bionemo's
// VariableFeatureIndex defines them:
//
//   - var_features/cumulative_sum_index.npy is [-1, e_0, e_1, ..., e_{k-1}]:
//     it starts at -1 and each block appends the running total of rows, so
//     the last entry is the number of rows;
//   - row r belongs to block d = (number of entries <= r) - 1, so block d
//     holds rows [max(e_{d-1}, 0), e_d), and a block of no rows (possible,
//     and kept here) is never a row's block;
//   - block d's features are the d-th of the *.parquet files below
//     var_features/, sorted by path (dataframe_0.parquet, ...: bionemo pads
//     the numbers to one width), and its number of genes is that table's
//     number of rows (0 for a table without columns): a row's gene indices
//     are below it, and bionemo's padded rows have that width.
//
// bionemo merges a block into the one before when their features are
// equal, so a concatenation of archives over the same genes has one block
// (conformance case concat_2x_same_genes: 30 + 25 rows, one block of 30
// genes). Archives older than bionemo-scdl 0.1 name the folder features/.
func (a *Archive) Blocks() []Block { return slices.Clone(a.blocks) }

// RowBlock returns the block of row i and its number of genes; -1, 0 for a
// row out of range.
func (a *Archive) RowBlock(i int) (block int, nGenes int) {
	k := sort.Search(len(a.blocks), func(k int) bool { return a.blocks[k].End > i })
	if k == len(a.blocks) || i < 0 {
		return -1, 0
	}
	return k, a.blocks[k].NGenes
}

// Files lists every file of the archive directory (header, arrays,
// metadata, feature indices, anything else), relative to it,
// slash-separated and sorted, as found when it was opened.
func (a *Archive) Files() []string { return slices.Clone(a.files) }

// Close closes the array files.
func (a *Archive) Close() error {
	var errs []error
	for _, f := range []**os.File{&a.data, &a.rowPtr, &a.colPtr} {
		if *f != nil {
			errs = append(errs, (*f).Close())
			*f = nil
		}
	}
	return errors.Join(errs...)
}

// Row returns row i: its values, raw little-endian in DataDType, and its
// gene indices, raw little-endian in ColPtrDType, in stored order. It costs
// two positioned reads (three when row_ptr.npy is over 64 MiB and not held
// in memory); to read many rows in order, RowIter is much faster.
func (a *Archive) Row(i int) (values, genes []byte, err error) {
	return a.AppendRow(nil, nil, i)
}

// AppendRow is Row appending to values and genes, to reuse their storage.
func (a *Archive) AppendRow(values, genes []byte, i int) ([]byte, []byte, error) {
	if i < 0 || i >= a.nrows {
		return values, genes, fmt.Errorf("scdl: row %d out of range [0, %d)", i, a.nrows)
	}
	var b [16]byte
	size := a.rowDT.ItemSize()
	rp := a.rp[min(i*size, len(a.rp)):]
	if a.rp == nil {
		if err := readAt(a.rowPtr, a.path(RowPtrFile), b[:2*size], int64(i*size)); err != nil {
			return values, genes, err
		}
		rp = b[:]
	}
	s, e := getUint(a.rowDT, rp, 0), getUint(a.rowDT, rp, 1)
	if s > e || e > a.nnz {
		return values, genes, errorf(a.path(RowPtrFile), int64(i*size), ErrCorrupt, "row %d spans [%d, %d) of %d values (the file changed since Open)", i, s, e, a.nnz)
	}
	n := int(e - s)
	ds, cs := a.dataDT.ItemSize(), a.colDT.ItemSize()
	values, vb := grow(values, n*ds)
	genes, gb := grow(genes, n*cs)
	if err := readAt(a.data, a.path(DataFile), vb, int64(s)*int64(ds)); err != nil {
		return values, genes, err
	}
	if err := readAt(a.colPtr, a.path(ColPtrFile), gb, int64(s)*int64(cs)); err != nil {
		return values, genes, err
	}
	return values, genes, nil
}

// grow extends b by n bytes and returns it and the new part.
func grow(b []byte, n int) ([]byte, []byte) {
	b = slices.Grow(b, n)
	l := len(b)
	b = b[:l+n]
	return b, b[l:]
}

// RowIter reads consecutive rows with large sequential reads of each array.
// Use it like bufio.Scanner:
//
//	it := a.Rows(0, a.NumRows())
//	for it.Next() {
//		use(it.Row(), it.Values(), it.Genes())
//	}
//	if err := it.Err(); err != nil { ... }
type RowIter struct {
	a         *Archive
	next, end int
	row       int

	rp      []byte // row_ptr entries for rows [rpStart, rpStart+rpLen)
	rpStart int
	rpLen   int

	data, col        []byte // values and genes of elements [winStart, winEnd)
	winStart, winEnd uint64

	values, genes []byte
	err           error
}

// Rows returns an iterator over rows [from, to), clamped to the archive.
func (a *Archive) Rows(from, to int) *RowIter {
	from, to = max(from, 0), min(to, a.nrows)
	return &RowIter{a: a, next: from, end: max(to, from), row: -1}
}

// Next advances to the next row; it returns false at the end or on an
// error (see Err).
func (it *RowIter) Next() bool {
	if it.err != nil || it.next >= it.end {
		return false
	}
	a := it.a
	i := it.next
	rsize := a.rowDT.ItemSize()
	if a.rp != nil {
		it.rp, it.rpStart, it.rpLen = a.rp, 0, a.nrows+1
	} else if i < it.rpStart || i+1 >= it.rpStart+it.rpLen {
		n := min(chunkElems, it.end-i) + 1
		it.rp = slices.Grow(it.rp[:0], n*rsize)[:n*rsize]
		if it.err = readAt(a.rowPtr, a.path(RowPtrFile), it.rp, int64(i*rsize)); it.err != nil {
			return false
		}
		it.rpStart, it.rpLen = i, n
	}
	s := getUint(a.rowDT, it.rp, i-it.rpStart)
	e := getUint(a.rowDT, it.rp, i-it.rpStart+1)
	if s > e || e > a.nnz {
		it.err = errorf(a.path(RowPtrFile), int64(i*rsize), ErrCorrupt, "row %d spans [%d, %d) of %d values (the file changed since Open)", i, s, e, a.nnz)
		return false
	}
	ds, cs := a.dataDT.ItemSize(), a.colDT.ItemSize()
	if s < it.winStart || e > it.winEnd {
		n := min(max(uint64(chunkElems), e-s), a.nnz-s)
		it.data = slices.Grow(it.data[:0], int(n)*ds)[:int(n)*ds]
		it.col = slices.Grow(it.col[:0], int(n)*cs)[:int(n)*cs]
		if it.err = readAt(a.data, a.path(DataFile), it.data, int64(s)*int64(ds)); it.err != nil {
			return false
		}
		if it.err = readAt(a.colPtr, a.path(ColPtrFile), it.col, int64(s)*int64(cs)); it.err != nil {
			return false
		}
		it.winStart, it.winEnd = s, s+n
	}
	off, end := int(s-it.winStart), int(e-it.winStart)
	it.values = it.data[off*ds : end*ds]
	it.genes = it.col[off*cs : end*cs]
	it.row = i
	it.next++
	return true
}

// Row is the index of the current row.
func (it *RowIter) Row() int { return it.row }

// Values are the current row's values, raw little-endian in the archive's
// DataDType; valid until the next call to Next.
func (it *RowIter) Values() []byte { return it.values }

// Genes are the current row's gene indices, raw little-endian in the
// archive's ColPtrDType; valid until the next call to Next.
func (it *RowIter) Genes() []byte { return it.genes }

// Err is the error that stopped the iteration, if any.
func (it *RowIter) Err() error { return it.err }
