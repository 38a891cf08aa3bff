package scdl

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/itarconv/itarconv/internal/human"
	"github.com/itarconv/itarconv/internal/safefile"
	"github.com/itarconv/itarconv/internal/syswrite"
)

// WriterOptions describe the archive a Writer makes.
type WriterOptions struct {
	// DataDType is the dtype of the values given to AddRow and stored in
	// data.npy (default Float32, bionemo's default).
	DataDType DType
	// GeneDType is the dtype of the gene indices given to AddRow (default
	// Uint32); they are stored in ColPtrDType.
	GeneDType DType
	// NGenes is the number of genes of each var_features block: every gene
	// index of a block's rows must be below it. Required.
	NGenes []int
	// BlockRows is the number of rows of each block, as many as NGenes; it
	// may be nil when there is one block, which then takes every row.
	BlockRows []int
	// RowPtrDType and ColPtrDType force the dtypes of row_ptr.npy and
	// col_ptr.npy. Zero picks them as bionemo does: the smallest unsigned
	// type holding nnz (known at Close) and max(NGenes) - 1.
	RowPtrDType, ColPtrDType DType
	// FeatureIndices are written to the header as given. Every file they
	// list must be added with AddFile before Close.
	FeatureIndices []FeatureIndexInfo
}

// Writer writes an SCDL archive row by row. The archive is built in a
// temporary directory beside dir and renamed to dir by Close only when
// complete; Abort, or a failed Close, removes it.
//
// It writes data.npy, col_ptr.npy, row_ptr.npy, header.sch, and, unless
// given with AddFile, metadata.json ({"num_rows": N}) and version.json
// ("0.1.3") as bionemo-scdl 0.1.3 writes them. The feature indices
// (var_features/, obs_features/: a cumulative_sum_index.npy, labels.json,
// version.npy and Parquet dataframes) are the caller's, through AddFile and
// WriterOptions.FeatureIndices: bionemo will not load an archive without
// them, nor Open, which needs var_features to know each row's genes.
type Writer struct {
	dir, tmp string
	opts     WriterOptions

	dataDT, geneDT, colDT, rowDT DType
	dataF, colF, rowF            *os.File
	data, col, rowPtr            *bufio.Writer
	spool                        bool // row_ptr is spooled as uint64, narrowed at Close

	rows      int
	nnz       uint64
	block     int // current block
	blockLeft int // rows left in it; -1: unlimited (one block, no BlockRows)
	scratch   []byte
	added     map[string]bool
	done      bool
}

// rowSpoolFile is where row_ptr waits as uint64 until nnz, and so its
// dtype, is known.
const rowSpoolFile = ".row_ptr.u64"

// Create starts writing an archive that will be the directory dir, which
// must not exist.
func Create(dir string, opts WriterOptions) (*Writer, error) {
	w := &Writer{dir: filepath.Clean(dir), opts: opts, added: map[string]bool{}}
	if err := w.init(); err != nil {
		w.Abort()
		return nil, err
	}
	return w, nil
}

func (w *Writer) invalid(format string, args ...any) error {
	return errorf(w.dir, -1, ErrInvalid, format, args...)
}

func (w *Writer) init() error {
	o := &w.opts
	w.dataDT, w.geneDT = cmpOr(o.DataDType, Float32), cmpOr(o.GeneDType, Uint32)
	switch {
	case !w.dataDT.Numeric():
		return w.invalid("DataDType %v is not numeric", w.dataDT)
	case !w.geneDT.Unsigned():
		return w.invalid("GeneDType %v is not an unsigned integer", w.geneDT)
	case o.RowPtrDType != 0 && !o.RowPtrDType.Unsigned():
		return w.invalid("RowPtrDType %v is not an unsigned integer", o.RowPtrDType)
	case o.ColPtrDType != 0 && !o.ColPtrDType.Unsigned():
		return w.invalid("ColPtrDType %v is not an unsigned integer", o.ColPtrDType)
	case len(o.NGenes) == 0:
		return w.invalid("NGenes is required: col_ptr's dtype and the check of gene indices depend on it")
	case o.BlockRows == nil && len(o.NGenes) > 1:
		return w.invalid("%d blocks of genes but no BlockRows", len(o.NGenes))
	case o.BlockRows != nil && len(o.BlockRows) != len(o.NGenes):
		return w.invalid("%d BlockRows for %d NGenes", len(o.BlockRows), len(o.NGenes))
	}
	// The feature indices go to the header as given: check them now rather
	// than after every row is written.
	h := NewHeader()
	h.Arrays = []ArrayInfo{{Name: ArrayData, DType: w.dataDT}, {Name: ArrayRowPtr, DType: Uint64}, {Name: ArrayColPtr, DType: Uint64}}
	h.FeatureIndices = o.FeatureIndices
	if _, err := h.MarshalBinary(); err != nil {
		var e *Error
		if errors.As(err, &e) {
			e.Path = w.dir
		}
		return err
	}
	maxGenes := 0
	for i, n := range o.NGenes {
		if n < 0 {
			return w.invalid("block %d: %d genes", i, n)
		}
		if o.BlockRows != nil && o.BlockRows[i] < 0 {
			return w.invalid("block %d: %d rows", i, o.BlockRows[i])
		}
		maxGenes = max(maxGenes, n)
	}
	if maxGenes == 0 {
		return w.invalid("no block has genes: col_ptr cannot hold an index (bionemo refuses 0 columns too)")
	}
	w.colDT = o.ColPtrDType
	if w.colDT == 0 {
		w.colDT = SmallestUint(uint64(maxGenes - 1))
	} else if uint64(maxGenes-1) > maxUint(w.colDT) {
		return w.invalid("ColPtrDType %v cannot hold gene index %d", w.colDT, maxGenes-1)
	}
	w.rowDT, w.spool = o.RowPtrDType, o.RowPtrDType == 0
	w.blockLeft = -1
	if o.BlockRows != nil {
		w.blockLeft = o.BlockRows[0]
	}
	if _, err := os.Lstat(w.dir); err == nil {
		return errorf(w.dir, -1, ErrInvalid, "already exists")
	}
	parent, base := filepath.Split(w.dir)
	if parent == "" {
		parent = "."
	}
	var err error
	if w.tmp, err = os.MkdirTemp(parent, safefile.TempName(base)); err != nil {
		return fmt.Errorf("creating %s: %w", w.dir, unwrapPathErr(err))
	}
	open := func(name string) (*os.File, *bufio.Writer, error) {
		f, err := os.OpenFile(filepath.Join(w.tmp, name), os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
		if err != nil {
			return nil, nil, err
		}
		return f, bufio.NewWriterSize(f, syswrite.MaxWrite), nil
	}
	if w.dataF, w.data, err = open(DataFile); err != nil {
		return err
	}
	if w.colF, w.col, err = open(ColPtrFile); err != nil {
		return err
	}
	rowName := RowPtrFile
	if w.spool {
		rowName = rowSpoolFile
	}
	if w.rowF, w.rowPtr, err = open(rowName); err != nil {
		return err
	}
	return w.putRowPtr(0)
}

func cmpOr(d, def DType) DType {
	if d == 0 {
		return def
	}
	return d
}

func (w *Writer) putRowPtr(v uint64) error {
	var b [8]byte
	if w.spool {
		binary.LittleEndian.PutUint64(b[:], v)
		_, err := w.rowPtr.Write(b[:])
		return err
	}
	if v > maxUint(w.rowDT) {
		return w.invalid("RowPtrDType %v cannot hold %d values", w.rowDT, v)
	}
	putUint(w.rowDT, b[:], 0, v)
	_, err := w.rowPtr.Write(b[:w.rowDT.ItemSize()])
	return err
}

// AddRow appends a row: its values, raw little-endian in DataDType, and
// their gene indices, raw little-endian in GeneDType, as many of each. A
// gene index must be below the number of genes of the row's block.
func (w *Writer) AddRow(values, genes []byte) error {
	if w.done {
		return w.invalid("AddRow after Close or Abort")
	}
	gs := w.geneDT.ItemSize()
	n := len(genes) / gs
	if len(genes)%gs != 0 || len(values) != n*w.dataDT.ItemSize() {
		return w.invalid("row %d: %d bytes of %v values for %d bytes of %v genes", w.rows, len(values), w.dataDT, len(genes), w.geneDT)
	}
	for w.blockLeft == 0 {
		if w.block+1 >= len(w.opts.NGenes) {
			return w.invalid("row %d is past the %d rows BlockRows add up to", w.rows, w.rows)
		}
		w.block++
		w.blockLeft = w.opts.BlockRows[w.block]
	}
	limit := uint64(w.opts.NGenes[w.block])
	if j := firstAtLeast(w.geneDT, genes, limit); j >= 0 {
		return w.invalid("row %d: gene index %d is not below %d, the number of genes of block %d", w.rows, getUint(w.geneDT, genes, j), limit, w.block)
	}
	out := genes
	if w.geneDT != w.colDT {
		if cap(w.scratch) < n*w.colDT.ItemSize() {
			w.scratch = make([]byte, n*w.colDT.ItemSize())
		}
		out = w.scratch[:n*w.colDT.ItemSize()]
		for i := range n {
			putUint(w.colDT, out, i, getUint(w.geneDT, genes, i))
		}
	}
	if _, err := w.data.Write(values); err != nil {
		return err
	}
	if _, err := w.col.Write(out); err != nil {
		return err
	}
	w.nnz += uint64(n)
	w.rows++
	if w.blockLeft > 0 {
		w.blockLeft--
	}
	return w.putRowPtr(w.nnz)
}

// NumRows is the number of rows added so far.
func (w *Writer) NumRows() int { return w.rows }

// NNZ is the number of values added so far.
func (w *Writer) NNZ() uint64 { return w.nnz }

// reserved are the files the Writer makes itself.
var reserved = map[string]bool{HeaderFile: true, DataFile: true, RowPtrFile: true, ColPtrFile: true, rowSpoolFile: true}

// AddFile adds a file to the archive: rel is its slash-separated path
// inside the directory (var_features/labels.json), r its content. It may
// replace the metadata.json and version.json the Writer would make (to keep
// an original's bytes), not header.sch or the arrays.
func (w *Writer) AddFile(rel string, r io.Reader) error {
	if w.done {
		return w.invalid("AddFile after Close or Abort")
	}
	if !filepath.IsLocal(filepath.FromSlash(rel)) || strings.Contains(rel, "\\") || rel != filepath.ToSlash(filepath.Clean(rel)) {
		return w.invalid("file name %s is not a clean relative path inside the archive", human.Name(rel))
	}
	if reserved[rel] {
		return w.invalid("file %s is written by the Writer itself", human.Name(rel))
	}
	if w.added[rel] {
		return w.invalid("file %s added twice", human.Name(rel))
	}
	p := filepath.Join(w.tmp, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return fmt.Errorf("adding %s: %w", rel, unwrapPathErr(err))
	}
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return fmt.Errorf("adding %s: %w", rel, unwrapPathErr(err))
	}
	_, err = io.Copy(f, r)
	if err == nil && syncFiles {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("adding %s: %w", rel, err)
	}
	w.added[rel] = true
	return nil
}

// Close completes the archive and renames it into place. It refuses an
// archive without rows or without values (ErrEmpty): bionemo-scdl can
// neither write nor open one. On any error the temporary directory is
// removed and nothing appears under dir.
func (w *Writer) Close() error {
	if w.done {
		return w.invalid("Close after Close or Abort")
	}
	err := w.finish()
	if err != nil {
		w.Abort()
		return err
	}
	w.done = true
	return nil
}

func (w *Writer) finish() error {
	switch {
	case w.rows == 0:
		return errorf(w.dir, -1, ErrEmpty, "no cells: bionemo-scdl cannot write or open an archive of 0 rows")
	case w.nnz == 0:
		return errorf(w.dir, -1, ErrEmpty, "%d cells but no non-zero value: bionemo-scdl cannot write or open an archive of 0 values", w.rows)
	}
	if w.opts.BlockRows != nil {
		total := 0
		for _, n := range w.opts.BlockRows {
			total += n
		}
		if total != w.rows {
			return w.invalid("%d rows added, BlockRows add up to %d", w.rows, total)
		}
	}
	for _, b := range []*bufio.Writer{w.data, w.col, w.rowPtr} {
		if err := b.Flush(); err != nil {
			return err
		}
	}
	if w.spool {
		if err := w.narrowRowPtr(); err != nil {
			return err
		}
	}
	h := NewHeader()
	h.Arrays = []ArrayInfo{
		{Name: ArrayData, Length: w.nnz, DType: w.dataDT},
		{Name: ArrayRowPtr, Length: uint64(w.rows) + 1, DType: w.rowDT},
		{Name: ArrayColPtr, Length: w.nnz, DType: w.colDT},
	}
	h.FeatureIndices = w.opts.FeatureIndices
	hb, err := h.MarshalBinary()
	if err != nil {
		var e *Error
		if errors.As(err, &e) {
			e.Path = filepath.Join(w.dir, HeaderFile)
		}
		return err
	}
	for _, fi := range h.FeatureIndices {
		for _, f := range fi.Files {
			if !w.added[f] {
				return w.invalid("the header lists %s in feature index %s, but no such file was added", human.Name(f), human.Name(fi.Name))
			}
		}
	}
	if err := w.checkCumSum(); err != nil {
		return err
	}
	files := []struct {
		name string
		data []byte
	}{
		{HeaderFile, hb},
		{MetadataFile, []byte(`{"num_rows": ` + strconv.Itoa(w.rows) + `}`)},
		{VersionFile, []byte(strconv.Quote(PackageVersion))},
	}
	for _, f := range files {
		if w.added[f.name] {
			continue
		}
		if err := os.WriteFile(filepath.Join(w.tmp, f.name), f.data, 0o644); err != nil {
			return err
		}
		if err := syncFile(filepath.Join(w.tmp, f.name)); err != nil {
			return err
		}
	}
	for _, f := range []*os.File{w.dataF, w.colF, w.rowF} {
		if err := syncOpen(f); err != nil {
			return err
		}
		if err := f.Close(); err != nil {
			return err
		}
	}
	w.dataF, w.colF, w.rowF = nil, nil, nil
	if err := os.Chmod(w.tmp, 0o755); err != nil {
		return err
	}
	syncDir(w.tmp)
	// Exclusive: rename(2) would replace an empty directory, and one that
	// appeared meanwhile (another run into the same new archive) is never
	// replaced.
	if err := safefile.RenameNoReplace(w.tmp, w.dir); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return errorf(w.dir, -1, ErrInvalid, "appeared while the archive was written (not replaced)")
		}
		return err
	}
	syncDir(filepath.Dir(w.dir))
	return nil
}

// narrowRowPtr rewrites the uint64 spool of row offsets as row_ptr.npy in
// the smallest unsigned dtype that holds nnz.
func (w *Writer) narrowRowPtr() error {
	w.rowDT = SmallestUint(w.nnz)
	spool := w.rowF
	out, err := os.OpenFile(filepath.Join(w.tmp, RowPtrFile), os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	w.rowF = out
	bw := bufio.NewWriterSize(out, syswrite.MaxWrite)
	size := w.rowDT.ItemSize()
	in := make([]byte, 8*chunkElems)
	buf := make([]byte, size*chunkElems)
	for off := int64(0); off < 8*int64(w.rows+1); {
		n, err := spool.ReadAt(in, off)
		if n == 0 {
			if err == nil {
				err = io.ErrUnexpectedEOF
			}
			spool.Close()
			return fmt.Errorf("reading back %s: %w", rowSpoolFile, err)
		}
		k := n / 8
		for i := range k {
			putUint(w.rowDT, buf, i, binary.LittleEndian.Uint64(in[8*i:]))
		}
		if _, err := bw.Write(buf[:k*size]); err != nil {
			spool.Close()
			return err
		}
		off += int64(8 * k)
	}
	spool.Close()
	if err := os.Remove(filepath.Join(w.tmp, rowSpoolFile)); err != nil {
		return err
	}
	return bw.Flush()
}

// checkCumSum checks a var_features/cumulative_sum_index.npy given with
// AddFile against the rows written and BlockRows.
func (w *Writer) checkCumSum() error {
	for _, fdir := range []string{VarFeatures, Features} {
		rel := fdir + "/" + CumSumFile
		if !w.added[rel] {
			continue
		}
		csum, err := readInt64NPY(filepath.Join(w.tmp, filepath.FromSlash(rel)))
		if err != nil {
			var e *Error
			if errors.As(err, &e) {
				e.Path = rel
			}
			return err
		}
		want := []int64{-1, int64(w.rows)}
		if w.opts.BlockRows != nil {
			want = want[:1]
			var total int64
			for _, n := range w.opts.BlockRows {
				total += int64(n)
				want = append(want, total)
			}
		}
		if !slices.Equal(csum, want) {
			return w.invalid("%s is %v, but the rows written make %v", rel, csum, want)
		}
	}
	return nil
}

// CumSumIndex returns the bytes of a cumulative_sum_index.npy for blocks
// of these numbers of rows, byte for byte as bionemo (numpy.save) writes
// it: a 1-D int64 array [-1, r0, r0+r1, ...].
func CumSumIndex(blockRows []int) []byte {
	b := appendNPYHeader(nil, "<i8", len(blockRows)+1)
	b = binary.LittleEndian.AppendUint64(b, ^uint64(0))
	var total int64
	for _, n := range blockRows {
		total += int64(n)
		b = binary.LittleEndian.AppendUint64(b, uint64(total))
	}
	return b
}

// Abort removes everything written. It is a no-op after a successful
// Close, so it can be deferred.
func (w *Writer) Abort() {
	if w.done {
		return
	}
	w.done = true
	for _, f := range []*os.File{w.dataF, w.colF, w.rowF} {
		if f != nil {
			f.Close()
		}
	}
	if w.tmp != "" {
		os.RemoveAll(w.tmp)
	}
}

// syncFiles makes Close sync every file and directory before and after the
// rename, so that a crash cannot leave an archive under its name with data
// missing. Tests turn it off: it is not what they check, and on a busy disk
// it costs them seconds.
var syncFiles = true

func syncOpen(f *os.File) error {
	if !syncFiles {
		return nil
	}
	return f.Sync()
}

func syncFile(path string) error {
	if !syncFiles {
		return nil
	}
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	err = f.Sync()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

func syncDir(path string) {
	if syncFiles {
		safefile.SyncDir(path)
	}
}
