package scdl

import (
	"bytes"
	"cmp"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/itarconv/itarconv/dataset"
	"github.com/itarconv/itarconv/internal/filecopy"
	"github.com/itarconv/itarconv/internal/human"
	"github.com/itarconv/itarconv/internal/syswrite"
)

// MergeStats describes how MergeParts made the archive: what it copied,
// linked and wrote itself.
type MergeStats struct {
	Parts int `json:"parts"`
	// CopiedBytes are the parts' array bytes (values, gene indices) copied
	// into the archive by range, in the kernel where the system allows, and
	// files copied whole where a hard link was refused.
	CopiedBytes int64 `json:"copied_bytes"`
	// LinkedFiles became files of the archive unchanged, as hard links.
	LinkedFiles int   `json:"linked_files"`
	LinkedBytes int64 `json:"linked_bytes"`
	// WrittenBytes the merge wrote itself: row_ptr.npy (each part's offsets
	// shifted by the values before it, in the archive's dtype), the cells
	// at the parts' edges, gene indices converted, and a fresh archive's
	// header, metadata and var_features index.
	WrittenBytes int64 `json:"written_bytes"`
	// ConvertedParts are the parts (by their index in the list) whose gene
	// indices were rewritten in the archive's col_ptr dtype: the part chose
	// another from its own cells. ConvertedBytes are the bytes written so.
	ConvertedParts []int `json:"converted_parts,omitempty"`
	ConvertedBytes int64 `json:"converted_bytes"`
}

// mergePart is a part opened for the merge, its description checked
// against its files.
type mergePart struct {
	dir  string
	meta *partMeta
}

func (p *mergePart) path(name string) string { return filepath.Join(p.dir, filepath.FromSlash(name)) }

func (p *mergePart) errorf(file string, off int64, format string, args ...any) error {
	where := p.path(file)
	if off >= 0 {
		where += ": offset " + strconv.FormatInt(off, 10)
	}
	return fmt.Errorf("SCDL part %s: %s: %w", where, fmt.Sprintf(format, args...), ErrPart)
}

// partNames names a part in the errors about its rows: the rows' own
// names (shard, offset, name) follow.
type partNames string

func (p partNames) NumShards() int       { return 1 }
func (p partNames) ShardName(int) string { return string(p) }
func (p partNames) Scan(context.Context, int, func([]dataset.Row) error) error {
	return nil
}

// maxPartMeta bounds PartMetaFile: it holds a few fields a file and a
// cell's edge, not a table per cell.
const maxPartMeta = 1 << 30

// loadPart reads a part's description and checks its files' sizes.
func loadPart(dir string) (*mergePart, error) {
	p := &mergePart{dir: dir}
	f, err := os.Open(p.path(PartMetaFile))
	if errors.Is(err, os.ErrNotExist) {
		if _, serr := os.Stat(dir); serr != nil {
			return nil, fmt.Errorf("SCDL part %s: %v: %w", dir, unwrapPathErr(serr), ErrPart)
		}
		return nil, p.errorf(PartMetaFile, -1, "missing: not a finished part")
	}
	if err != nil {
		return nil, fmt.Errorf("SCDL part %s: %w", dir, err)
	}
	b, err := io.ReadAll(io.LimitReader(f, maxPartMeta+1))
	f.Close()
	if err != nil {
		return nil, fmt.Errorf("SCDL part %s: %w", p.path(PartMetaFile), err)
	}
	if len(b) > maxPartMeta {
		return nil, p.errorf(PartMetaFile, -1, "more than %d bytes", maxPartMeta)
	}
	if p.meta, err = decodePartMeta(b); err != nil {
		return nil, fmt.Errorf("SCDL part %s: %w", p.path(PartMetaFile), err)
	}
	m := p.meta
	dataSize, colSize := int64(m.nnz)*int64(m.dataDT.ItemSize()), int64(m.nnz)*int64(m.colDT.ItemSize())
	atLeast := false // the run's data file, which values placed alone make as long as they reach
	if pl := m.place; pl != nil && pl.valuesOnly() {
		dataSize, atLeast = int64(pl.first+m.nnz)*int64(pl.dataDT.ItemSize()), true
	} else if pl != nil {
		// Links to the run's files, which hold every task's cells.
		dataSize, colSize = int64(pl.total)*int64(pl.dataDT.ItemSize()), int64(pl.total)*int64(pl.colDT.ItemSize())
	}
	want := []struct {
		name string
		size int64
	}{
		{partDataFile, dataSize},
		{partColFile, colSize},
		{partRowEndFile, 8 * int64(m.cells)},
		{partEdgeFile, m.edgesBytes},
	}
	for i, f := range m.files {
		want = append(want, struct {
			name string
			size int64
		}{partFilesDir + "/" + strconv.Itoa(i), f.size})
	}
	for _, w := range want {
		st, err := os.Stat(p.path(w.name))
		switch {
		case err != nil:
			return nil, p.errorf(w.name, -1, "%v", unwrapPathErr(err))
		case !st.Mode().IsRegular():
			return nil, p.errorf(w.name, -1, "not a regular file")
		case st.Size() < w.size:
			return nil, p.errorf(w.name, st.Size(), "the file ends, %d bytes short of the %d the part describes: truncated", w.size-st.Size(), w.size)
		case st.Size() > w.size && !(atLeast && w.name == partDataFile):
			return nil, p.errorf(w.name, w.size, "%d bytes more than the %d the part describes", st.Size()-w.size, w.size)
		}
	}
	return p, nil
}

// MergeParts joins the parts (their directories, in task order) into out:
// byte for byte what WriteRows writes over all the rows, or the error it
// gives. It writes to temporary names and renames into place only when
// complete (opts.Overwrite as for WriteRows), never changes the parts, and
// moves or concatenates payload bytes without rewriting them: ranges of
// the parts' arrays are copied with internal/filecopy (copy_file_range,
// in-kernel), and files beside the cells become the archive's as hard links.
// What the whole dataset decides is decided here, from the parts'
// descriptions: the layout, the header's dtypes or a fresh archive's, the
// row offsets (each part's shifted by the values before it), the cells at
// the parts' edges (joined from their members). A part's gene indices are
// rewritten only when the archive's col_ptr dtype is not the one it chose,
// and MergeStats says so. It returns the same RowsStats WriteRows would.
// opts.Workers and opts.Progress are not used: the merge is sequential.
//
// Parts written in place (WriteRange) hold the run's array files, whose
// whole cells are where the archive has them: the merge writes only the
// edge cells into them and row_ptr.npy beside them, makes them the
// archive's data.npy and col_ptr.npy (hard links; CopiedBytes stays 0;
// in a fresh archive only data.npy, the gene indices copied as above),
// and removes the run's names of them once the archive is in place. Such
// parts share their files with the archive, so they are used up by the
// merge. A part whose files are not the first part's (gathered from
// another machine) has its share copied. Parts of both kinds are refused.
func MergeParts(ctx context.Context, parts []string, out string, opts RowsOptions) (*RowsStats, *MergeStats, error) {
	if len(parts) == 0 {
		return nil, nil, fmt.Errorf("SCDL merge into %s: no parts: %w", out, ErrPart)
	}
	ps := make([]*mergePart, len(parts))
	for i, dir := range parts {
		p, err := loadPart(dir)
		if err != nil {
			return nil, nil, err
		}
		ps[i] = p
	}
	var placed, other *mergePart
	for _, p := range ps {
		if p.meta.place != nil {
			placed = cmp.Or(placed, p)
		} else {
			other = cmp.Or(other, p)
		}
	}
	if placed != nil && other != nil {
		return nil, nil, fmt.Errorf("SCDL merge into %s: %s and %s: %w: %w", out, placed.dir, other.dir, errMixedParts, ErrPart)
	}
	mg := &merger{ctx: ctx, parts: ps, ms: &MergeStats{Parts: len(ps)}, inPlace: placed != nil}
	st, err := replacingDir(out, opts.Overwrite, func(tmp string) (*RowsStats, error) {
		st, err := mg.run(tmp)
		if err != nil {
			return nil, err
		}
		st.Output = out
		return st, nil
	})
	if err != nil {
		return nil, nil, err
	}
	if mg.inPlace {
		// The run's names of its files: a task run again must not write
		// into the archive's arrays.
		// Nor a task of a run to come rely on the run's records.
		dirs := map[string]bool{}
		for _, p := range ps {
			for _, name := range []string{p.meta.place.data, p.meta.place.col} {
				if name != "" {
					os.Remove(name)
					dirs[filepath.Dir(name)] = true
				}
			}
		}
		for dir := range dirs {
			removeRecords(dir)
		}
	}
	return st, mg.ms, nil
}

// merger joins parts into one archive directory.
type merger struct {
	ctx     context.Context
	parts   []*mergePart
	ms      *MergeStats
	buf     []byte
	inPlace bool // the parts were written in place (WriteRange)
}

// run takes WriteRows' decisions over the parts' rows and writes the
// archive in the new directory out.
func (mg *merger) run(out string) (*RowsStats, error) {
	o, err := newOutDir(out)
	if err != nil {
		return nil, err
	}
	defer o.abort()
	st := &RowsStats{Output: out}
	name := "the source"
	var members uint64
	var meta, other int
	var firstCell, firstMeta, firstOther string
	for _, p := range mg.parts {
		if p.meta.shards > 0 {
			name = p.meta.source // the whole source's first shard
			break
		}
	}
	for _, p := range mg.parts {
		if p.meta.members > 0 && members == 0 {
			firstCell = p.meta.firstCell
		}
		members += min(p.meta.members, math.MaxUint32)
		for _, f := range p.meta.files {
			if bytes.HasPrefix(f.name, []byte(MetaPrefix)) {
				if meta++; meta == 1 {
					firstMeta = f.where
				}
			} else if other++; other == 1 {
				firstOther = f.where
			}
		}
	}
	// The layout, as WriteRows' listing pass decides it from the counts
	// of the whole dataset's cells' members, scdlmeta/ files and others.
	switch {
	case members == 0 && other == 0 && meta == 0:
		return nil, fmt.Errorf("%s: no cells and no files: %w", name, ErrEmpty)
	case members == 0 && other == 0:
		return nil, fmt.Errorf("%s: the archive's other files (%s...) but no cells: %w", name, firstMeta, ErrEmpty)
	case members == 0:
		// Archive mode: every file under its path, scdlmeta/ included.
		if err := mg.placeFiles(o, ""); err != nil {
			return nil, err
		}
		st.Mode = ModeArchive
		return st, commitArchive(o, st)
	case other > 0:
		return nil, fmt.Errorf("%s: beside cells (%s): %w", firstOther, firstCell, ErrNotCell)
	case mg.inPlace:
		// Tasks that saw the header placed the gene indices too; those
		// that saw none, the values alone.
		for _, p := range mg.parts {
			if p.meta.place.valuesOnly() != (meta == 0) {
				return nil, p.errorf(PartMetaFile, -1, "written in place as if the dataset had %s%s (%v), but the parts carry %d files under %s",
					MetaPrefix, HeaderFile, !p.meta.place.valuesOnly(), meta, MetaPrefix)
			}
		}
	}
	if meta == 0 {
		return mg.fresh(o, name, st)
	}
	// Cells with the archive's other files: those as they are, the arrays
	// in the dtypes of their header.sch.
	if err := mg.placeFiles(o, MetaPrefix); err != nil {
		return nil, err
	}
	newWriter := newArrayWriter
	if mg.inPlace {
		newWriter = mg.placedArrays
	}
	w, err := newWriter(o)
	if err != nil {
		return nil, err
	}
	defer w.close()
	cells, err := mg.cells(w)
	if err != nil {
		return nil, err
	}
	if err := w.finish(cells); err != nil {
		return nil, err
	}
	st.Mode = ModeCells
	return st, commitArchive(o, st)
}

// placeFiles makes every part's files the archive's, under their names
// without prefix (which all have): hard links to the parts' files, or
// copies where the file system refuses a link. Beside cells (a prefix),
// the three arrays are refused, as WriteRows refuses them.
func (mg *merger) placeFiles(o *outDir, prefix string) error {
	for _, p := range mg.parts {
		for i, f := range p.meta.files {
			rel := string(f.name[len(prefix):])
			where := string(partNames(p.dir)) + ": " + f.where
			if prefix != "" && arrayFileSet[rel] {
				return fmt.Errorf("%s: %s is made from the cells, not kept beside them", where, rel)
			}
			if err := mg.place(o, rel, p, partFilesDir+"/"+strconv.Itoa(i), f.size); err != nil {
				return fmt.Errorf("%s: %w", where, err)
			}
		}
	}
	return nil
}

// linkFile is os.Link; tests make it fail to take the copying path.
var linkFile = os.Link

// place makes the part's file src the archive's file rel.
func (mg *merger) place(o *outDir, rel string, p *mergePart, src string, size int64) error {
	if !filepath.IsLocal(filepath.FromSlash(rel)) || strings.Contains(rel, "\\") {
		return fmt.Errorf("%s is not a path inside the archive", human.Name(rel))
	}
	dst := filepath.Join(o.tmp, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	err := linkFile(p.path(src), dst)
	switch {
	case err == nil:
		mg.ms.LinkedFiles++
		mg.ms.LinkedBytes += size
		return nil
	case errors.Is(err, os.ErrExist):
		return fmt.Errorf("%s: the file comes twice", rel)
	}
	// No hard links here (another file system, or one without them): copy.
	in, err := os.Open(p.path(src))
	if err != nil {
		return err
	}
	defer in.Close()
	f, err := o.create(rel)
	if err != nil {
		return err
	}
	_, err = filecopy.Range(f, 0, in, 0, size)
	if cerr := closeFile(f); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	mg.ms.CopiedBytes += size
	return nil
}

// cells writes every part's cells into w in row order: the edge cells
// through the assembler, which joins a cell's members from neighbouring
// parts, and the whole cells by ranges. It returns the number of cells.
func (mg *merger) cells(w *arrayWriter) (int64, error) {
	var asm cellAssembler
	asm.done = func(v, g, j *cellPart) error {
		mg.ms.WrittenBytes += int64(len(v.data) + g.n*w.colDT.ItemSize() + w.rowDT.ItemSize())
		return w.add(v, g, j)
	}
	for k, p := range mg.parts {
		if err := mg.ctx.Err(); err != nil {
			return 0, err
		}
		m := p.meta
		if len(m.edges) == 0 {
			continue
		}
		edges, err := os.Open(p.path(partEdgeFile))
		if err != nil {
			return 0, fmt.Errorf("SCDL part %s: %w", p.dir, err)
		}
		err = mg.partCells(k, p, edges, &asm, w)
		edges.Close()
		if err != nil {
			return 0, err
		}
	}
	if err := asm.flush(); err != nil {
		return 0, err
	}
	return asm.next, nil
}

// partCells writes one part's cells: its head, its whole cells, its tail.
func (mg *merger) partCells(k int, p *mergePart, edges *os.File, asm *cellAssembler, w *arrayWriter) error {
	m := p.meta
	feed := func(e edgeCell) error {
		for _, x := range e.members {
			c, err := mg.edgePart(p, edges, e.row, x)
			if err != nil {
				return err
			}
			if err := asm.add(c); err != nil {
				return err
			}
		}
		return nil
	}
	rest := m.edges
	if m.cells > 0 {
		if err := feed(rest[0]); err != nil {
			return err
		}
		if err := asm.flush(); err != nil {
			return err
		}
		if asm.next != m.firstRow {
			return p.errorf(PartMetaFile, -1, "whole cells from row %d, but the cells before them end at row %d", m.firstRow, asm.next-1)
		}
		if err := mg.whole(k, p, w); err != nil {
			return err
		}
		asm.next += int64(m.cells)
		rest = rest[1:]
	}
	for _, e := range rest {
		if err := feed(e); err != nil {
			return err
		}
	}
	return nil
}

// edgePart reads an edge cell's member back as the cellPart parsing it
// gave.
func (mg *merger) edgePart(p *mergePart, edges *os.File, row int64, x edgeMember) (*cellPart, error) {
	c := &cellPart{row: row, part: x.kind, dtype: x.dtype, signed: x.signed, n: int(x.n), nGenes: int(x.nGenes),
		ref: rowRef{src: partNames(p.dir), name: []byte(x.where), off: -1}}
	if x.size > 0 {
		c.data = make([]byte, x.size)
		if n, err := edges.ReadAt(c.data, x.off); n < len(c.data) {
			return nil, p.errorf(partEdgeFile, x.off+int64(n), "reading %d bytes: %v", x.size, err)
		}
	}
	return c, nil
}

// whole writes a part's whole cells: values and (in the archive's dtype)
// gene indices copied by range, row offsets shifted by the values before
// them.
func (mg *merger) whole(k int, p *mergePart, w *arrayWriter) error {
	m := p.meta
	if m.place != nil && !m.place.valuesOnly() {
		return mg.placed(p, w)
	}
	if m.place != nil {
		return mg.valuesPlaced(k, p, w)
	}
	if m.dataDT != w.dataDT {
		return fmt.Errorf("%s: %s: values of dtype %v, but the archive's data dtype is %v", p.dir, m.dataWhere, m.dataDT, w.dataDT)
	}
	if err := mg.copyRange(w.data, w.files[0], p, partDataFile); err != nil {
		return err
	}
	if m.colDT == w.colDT {
		if err := mg.copyRange(w.colPtr, w.files[2], p, partColFile); err != nil {
			return err
		}
	} else if err := mg.convertGenes(k, p, w); err != nil {
		return err
	}
	return mg.shiftRowEnds(p, w)
}

// copyRange appends a part's file to an array file after what its buffer
// holds.
func (mg *merger) copyRange(b *bufWriter, dst *os.File, p *mergePart, name string) error {
	if err := b.flush(); err != nil {
		return err
	}
	src, err := os.Open(p.path(name))
	if err != nil {
		return fmt.Errorf("SCDL part %s: %w", p.dir, err)
	}
	defer src.Close()
	st, err := src.Stat()
	if err != nil {
		return err
	}
	if err := filecopy.Append(dst, src, 0, st.Size()); err != nil {
		return fmt.Errorf("SCDL part %s: %w", p.path(name), err)
	}
	mg.ms.CopiedBytes += st.Size()
	return nil
}

// chunked reads a part's file of fixed-size elements a chunk at a time.
func (mg *merger) chunked(p *mergePart, name string, size int, each func(off int64, b []byte) error) error {
	f, err := os.Open(p.path(name))
	if err != nil {
		return fmt.Errorf("SCDL part %s: %w", p.dir, err)
	}
	defer f.Close()
	if mg.buf == nil {
		mg.buf = make([]byte, 1<<20)
	}
	buf := mg.buf[:len(mg.buf)/size*size]
	for off := int64(0); ; {
		n, err := io.ReadFull(f, buf)
		n -= n % size
		if n > 0 {
			if err := each(off, buf[:n]); err != nil {
				return err
			}
			off += int64(n)
		}
		switch {
		case err == io.EOF || err == io.ErrUnexpectedEOF:
			return nil
		case err != nil:
			return fmt.Errorf("SCDL part %s: %w", p.path(name), err)
		}
	}
}

// convertGenes writes a part's gene indices in the archive's col_ptr dtype,
// checking that each fits, as WriteRows converts a cell's.
func (mg *merger) convertGenes(k int, p *mergePart, w *arrayWriter) error {
	m := p.meta
	size := m.colDT.ItemSize()
	limit := maxOf(w.colDT)
	err := mg.chunked(p, partColFile, size, func(off int64, b []byte) error {
		for i := range len(b) / size {
			x := getUint(m.colDT, b, i)
			if x > limit {
				return fmt.Errorf("SCDL part %s: offset %d: gene index %d does not fit col_ptr's dtype %v (the header's)", p.path(partColFile), off+int64(i*size), x, w.colDT)
			}
			w.colPtr.putUint(w.colDT, x)
		}
		return nil
	})
	if err != nil {
		return err
	}
	n := int64(m.nnz) * int64(w.colDT.ItemSize())
	mg.ms.ConvertedParts = append(mg.ms.ConvertedParts, k)
	mg.ms.ConvertedBytes += n
	mg.ms.WrittenBytes += n
	return nil
}

// shiftRowEnds writes a part's row ends, shifted by the values before
// the part, in row_ptr's dtype.
func (mg *merger) shiftRowEnds(p *mergePart, w *arrayWriter) error {
	m := p.meta
	var prev uint64
	base := w.total
	limit := maxOf(w.rowDT)
	err := mg.chunked(p, partRowEndFile, 8, func(off int64, b []byte) error {
		for i := 0; i < len(b); i += 8 {
			e := binary.LittleEndian.Uint64(b[i:])
			if e < prev || e > m.nnz {
				return p.errorf(partRowEndFile, off+int64(i), "a cell ends at value %d, after one ending at %d, of %d", e, prev, m.nnz)
			}
			prev = e
			if base+e > limit {
				return fmt.Errorf("%s: %s: %d values do not fit row_ptr's dtype %v (the header's)", p.dir, m.dataWhere, base+e, w.rowDT)
			}
			w.rowPtr.putUint(w.rowDT, base+e)
		}
		return nil
	})
	if err != nil {
		return err
	}
	if prev != m.nnz {
		return p.errorf(partRowEndFile, -1, "the last cell ends at value %d, but the part has %d", prev, m.nnz)
	}
	w.total += m.nnz
	mg.ms.WrittenBytes += int64(m.cells) * int64(w.rowDT.ItemSize())
	return nil
}

// fresh writes a new archive from cells alone, as WriteRows does: the
// dtypes from every part's figures first, then the cells, then the header,
// metadata and a var_features index of one block.
func (mg *merger) fresh(o *outDir, name string, st *RowsStats) (*RowsStats, error) {
	plan, err := mg.freshPlan(name)
	if err != nil {
		return nil, err
	}
	w := &arrayWriter{dataDT: plan.dataDT, rowDT: SmallestUint(plan.nnz), colDT: SmallestUint(uint64(plan.nGenes - 1)),
		nrows: uint64(plan.cells), nnz: plan.nnz}
	var bufs [3]*bufWriter
	for i, name := range []string{DataFile, RowPtrFile, ColPtrFile} {
		create := o.create
		if i == 0 && mg.inPlace {
			create = mg.runData(o)
		}
		f, err := create(name)
		if err != nil {
			w.close()
			return nil, err
		}
		w.files[i], bufs[i] = f, newBufWriter(f)
	}
	w.data, w.rowPtr, w.colPtr = bufs[0], bufs[1], bufs[2]
	defer w.close()
	w.rowPtr.putUint(w.rowDT, 0)
	cells, err := mg.cells(w)
	if err != nil {
		return nil, err
	}
	if mg.inPlace {
		// The run's file may reach past the values (a stale run's).
		if err := w.data.flush(); err != nil {
			return nil, err
		}
		if err := w.files[0].Truncate(int64(w.total) * int64(w.dataDT.ItemSize())); err != nil {
			return nil, err
		}
	}
	if err := w.finish(cells); err != nil {
		return nil, err
	}
	names := make([]string, plan.nGenes)
	for i := range names {
		names[i] = strconv.Itoa(i)
	}
	features, err := OneBlockFeatureIndex(VarFeatures, int(cells), names)
	if err != nil {
		return nil, err
	}
	var rels []string
	for _, f := range features {
		rels = append(rels, f.Rel)
	}
	h := NewHeader()
	h.Arrays = []ArrayInfo{
		{Name: ArrayData, Length: w.total, DType: w.dataDT},
		{Name: ArrayRowPtr, Length: uint64(cells) + 1, DType: w.rowDT},
		{Name: ArrayColPtr, Length: w.total, DType: w.colDT},
	}
	h.FeatureIndices = []FeatureIndexInfo{{Name: VarFeatures, Length: uint64(cells), DType: StringArray, Files: rels}}
	hb, err := h.MarshalBinary()
	if err != nil {
		return nil, err
	}
	small := append([]FeatureFile{
		{HeaderFile, hb},
		{MetadataFile, []byte(`{"num_rows": ` + strconv.FormatInt(cells, 10) + `}`)},
		{VersionFile, []byte(strconv.Quote(PackageVersion))},
	}, features...)
	for _, f := range small {
		if err := writeSmall(o, f.Rel, f.Data); err != nil {
			return nil, err
		}
		mg.ms.WrittenBytes += int64(len(f.Data))
	}
	if err := o.commit(); err != nil {
		return nil, err
	}
	st.Mode, st.Fresh = ModeCells, true
	st.Cells, st.NNZ, st.Files = int(cells), w.total, 6
	return st, nil
}

func writeSmall(o *outDir, rel string, data []byte) error {
	f, err := o.create(rel)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if cerr := closeFile(f); err == nil {
		err = cerr
	}
	return err
}

// freshPlan is what a fresh archive's first pass finds, from the parts'
// figures and their edge cells.
type freshPlan struct {
	dataDT DType
	nnz    uint64
	cells  int64
	nGenes int
}

func (mg *merger) freshPlan(name string) (*freshPlan, error) {
	var plan freshPlan
	var firstWhere string
	var maxGene, nGenes uint64
	var anyGene bool
	lastRow := int64(-1)
	dtype := func(dt DType, where string) error {
		if plan.dataDT == 0 {
			plan.dataDT, firstWhere = dt, where
		} else if dt != plan.dataDT {
			return fmt.Errorf("%s: values of dtype %v, but %s has %v: an archive has one data dtype", where, dt, firstWhere, plan.dataDT)
		}
		return nil
	}
	gene := func(x uint64) {
		if x > maxGene || !anyGene {
			maxGene, anyGene = max(x, maxGene), true
		}
	}
	for _, p := range mg.parts {
		m := p.meta
		var edges *os.File
		if m.edgesBytes > 0 {
			var err error
			if edges, err = os.Open(p.path(partEdgeFile)); err != nil {
				return nil, fmt.Errorf("SCDL part %s: %w", p.dir, err)
			}
		}
		edge := func(e edgeCell) error {
			if e.row != lastRow {
				plan.cells++
				lastRow = e.row
			}
			for _, x := range e.members {
				c, err := mg.edgePart(p, edges, e.row, x)
				if err != nil {
					return err
				}
				switch x.kind {
				case 'v':
					if err := dtype(x.dtype, c.where()); err != nil {
						return err
					}
					plan.nnz += x.n
				case 'g':
					for i := range c.n {
						g, err := c.geneAt(i)
						if err != nil {
							return err
						}
						gene(g)
					}
				case 'j':
					if x.nGenes > 0 {
						nGenes = max(nGenes, uint64(x.nGenes))
					}
				}
			}
			return nil
		}
		err := func() error {
			rest := m.edges
			if m.cells > 0 {
				if err := edge(rest[0]); err != nil {
					return err
				}
				if err := dtype(m.dataDT, string(partNames(p.dir))+": "+m.dataWhere); err != nil {
					return err
				}
				plan.nnz += m.nnz
				plan.cells += int64(m.cells)
				lastRow = m.firstRow + int64(m.cells) - 1
				if m.anyGene {
					gene(m.maxGene)
				}
				nGenes = max(nGenes, m.nGenes)
				rest = rest[1:]
			}
			for _, e := range rest {
				if err := edge(e); err != nil {
					return err
				}
			}
			return nil
		}()
		if edges != nil {
			edges.Close()
		}
		if err != nil {
			return nil, err
		}
	}
	switch {
	case plan.nnz == 0:
		return nil, fmt.Errorf("%s: %d cells but no non-zero value: bionemo-scdl cannot write or open an archive of 0 values: %w", name, plan.cells, ErrEmpty)
	case maxGene >= maxFreshGenes:
		return nil, fmt.Errorf("%s: gene index %d: more genes than a var_features index is made for (%d): %w", name, maxGene, maxFreshGenes, ErrUnsupported)
	case nGenes > maxFreshGenes:
		// As many names as genes are made: one cell's n_genes is not a
		// reason to allocate gigabytes.
		return nil, fmt.Errorf("%s: n_genes %d: more genes than a var_features index is made for (%d): %w", name, nGenes, maxFreshGenes, ErrUnsupported)
	}
	plan.nGenes = max(int(nGenes), int(maxGene)+1)
	return &plan, nil
}

// runData opens data.npy as the run's data file, linked from the first
// part's link (or, on another file system, made empty, every part's
// share then copied).
func (mg *merger) runData(o *outDir) func(rel string) (*os.File, error) {
	return func(rel string) (*os.File, error) {
		dst := filepath.Join(o.tmp, rel)
		if err := linkFile(mg.parts[0].path(partDataFile), dst); err != nil {
			return o.create(rel)
		}
		st, err := os.Stat(dst)
		if err != nil {
			return nil, err
		}
		mg.ms.LinkedFiles++
		mg.ms.LinkedBytes += st.Size()
		return os.OpenFile(dst, os.O_WRONLY, 0)
	}
}

// valuesPlaced takes a part's whole cells whose values alone were
// written in place (a fresh archive): the values are in data.npy (a part
// gathered from another machine has its share copied), the gene indices
// are copied or converted from col.bin as any part's, the row ends
// shifted; the writer moves on past the values.
func (mg *merger) valuesPlaced(k int, p *mergePart, w *arrayWriter) error {
	m, pl := p.meta, p.meta.place
	if m.dataDT != w.dataDT {
		return fmt.Errorf("%s: %s: values of dtype %v, but the archive's data dtype is %v", p.dir, m.dataWhere, m.dataDT, w.dataDT)
	}
	if pl.first != w.total {
		return p.errorf(PartMetaFile, -1, "its whole cells were written at value %d, but the cells before them end at value %d: the tasks did not see the same dataset", pl.first, w.total)
	}
	if err := w.data.flush(); err != nil {
		return err
	}
	item := int64(w.dataDT.ItemSize())
	same, err := sameFile(w.files[0], p.path(partDataFile))
	if err != nil {
		return fmt.Errorf("SCDL part %s: %w", p.dir, err)
	}
	if !same && m.nnz > 0 {
		if err := mg.copyShare(w.files[0], p, partDataFile, int64(pl.first)*item, int64(m.nnz)*item); err != nil {
			return err
		}
	}
	if m.colDT == w.colDT {
		if err := mg.copyRange(w.colPtr, w.files[2], p, partColFile); err != nil {
			return err
		}
	} else if err := mg.convertGenes(k, p, w); err != nil {
		return err
	}
	if err := mg.shiftRowEnds(p, w); err != nil {
		return err
	}
	w.data.w = io.NewOffsetWriter(syswrite.File{File: w.files[0]}, int64(w.total)*item)
	return nil
}

// placedArrays is newArrayWriter for parts written in place: data.npy and
// col_ptr.npy are the run's files (links to the first part's links),
// which already hold the whole cells; the writer writes the edge cells
// between them, where each belongs (placed moves it on past each part's
// whole cells). Where the output cannot link to them (another file
// system), they are made empty and every part's share is copied.
func (mg *merger) placedArrays(o *outDir) (*arrayWriter, error) {
	p0 := mg.parts[0]
	w, err := arrayWriterFor(o, func(rel string) (*os.File, error) {
		src := map[string]string{DataFile: partDataFile, ColPtrFile: partColFile}[rel]
		if src == "" {
			return o.create(rel)
		}
		dst := filepath.Join(o.tmp, rel)
		if err := linkFile(p0.path(src), dst); err != nil {
			return o.create(rel)
		}
		st, err := os.Stat(dst)
		if err != nil {
			return nil, err
		}
		mg.ms.LinkedFiles++
		mg.ms.LinkedBytes += st.Size()
		return os.OpenFile(dst, os.O_WRONLY, 0)
	})
	if err != nil {
		return nil, err
	}
	for _, p := range mg.parts {
		pl := p.meta.place
		if pl.dataDT != w.dataDT || pl.colDT != w.colDT || pl.total != w.nnz {
			w.close()
			return nil, p.errorf(PartMetaFile, -1, "written in place into arrays of %d values of dtypes %v and %v, but %s%s describes %d of %v and %v",
				pl.total, pl.dataDT, pl.colDT, MetaPrefix, HeaderFile, w.nnz, w.dataDT, w.colDT)
		}
	}
	return w, nil
}

// placed takes a part's whole cells, written in place: where the run's
// files are the archive's arrays, they are there already; a part whose
// files are others (gathered from another machine) has its share copied
// into them. The row ends are shifted as for any part, and the writer
// moves on past the cells.
func (mg *merger) placed(p *mergePart, w *arrayWriter) error {
	m, pl := p.meta, p.meta.place
	if pl.first != w.total {
		return p.errorf(PartMetaFile, -1, "its whole cells were written at value %d, but the cells before them end at value %d: the tasks did not see the same dataset", pl.first, w.total)
	}
	for _, a := range []struct {
		b    *bufWriter
		f    *os.File
		name string
		dt   DType
	}{{w.data, w.files[0], partDataFile, w.dataDT}, {w.colPtr, w.files[2], partColFile, w.colDT}} {
		if err := a.b.flush(); err != nil {
			return err
		}
		same, err := sameFile(a.f, p.path(a.name))
		if err != nil {
			return fmt.Errorf("SCDL part %s: %w", p.dir, err)
		}
		if !same && m.nnz > 0 {
			if err := mg.copyShare(a.f, p, a.name, int64(pl.first)*int64(a.dt.ItemSize()), int64(m.nnz)*int64(a.dt.ItemSize())); err != nil {
				return err
			}
		}
	}
	if err := mg.shiftRowEnds(p, w); err != nil {
		return err
	}
	w.data.w = io.NewOffsetWriter(syswrite.File{File: w.files[0]}, int64(w.total)*int64(w.dataDT.ItemSize()))
	w.colPtr.w = io.NewOffsetWriter(syswrite.File{File: w.files[2]}, int64(w.total)*int64(w.colDT.ItemSize()))
	return nil
}

// copyShare copies n bytes at off of a part's file to the same place in dst.
func (mg *merger) copyShare(dst *os.File, p *mergePart, name string, off, n int64) error {
	src, err := os.Open(p.path(name))
	if err != nil {
		return fmt.Errorf("SCDL part %s: %w", p.dir, err)
	}
	defer src.Close()
	if _, err := filecopy.RangeContext(mg.ctx, dst, off, src, off, n); err != nil {
		return fmt.Errorf("SCDL part %s: offset %d: %w", p.path(name), off, err)
	}
	mg.ms.CopiedBytes += n
	return nil
}

// sameFile reports whether f is the file at name.
func sameFile(f *os.File, name string) (bool, error) {
	a, err := f.Stat()
	if err != nil {
		return false, err
	}
	b, err := os.Stat(name)
	if err != nil {
		return false, err
	}
	return os.SameFile(a, b), nil
}
