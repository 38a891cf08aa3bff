package sqlitefile

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
)

// index is an index b-tree to build at Close: the key of every row (the
// indexed columns' values and the rowid, as an SQLite record) is kept as
// rows come, in chunks of bytes the garbage collector does not scan, then
// sorted (if the rows did not come in key order) and written bottom up.
type index struct {
	name   string
	sql    string // "" for an automatic index (sql NULL)
	t      *Table
	cols   []int
	unique bool

	chunks [][]byte // records, each after its length (a uvarint), in key order once sorted
	n      int      // keys
	st     []uint64 // scratch: serial types of a key
	root   uint32
}

const chunkSize = 4 << 20

// add keeps the key of a row, whose values have serial types rowSt (the
// rowid column's, if any, being the rowid's).
func (x *index) add(vals []Value, rowSt []uint64, alias int, rowid int64) {
	st := x.st[:0]
	sum, body := 0, 0
	for _, c := range x.cols {
		s := rowSt[c]
		st = append(st, s)
		sum += varintLen(s)
		body += serialSize(s)
	}
	rs, rn := intSerial(rowid)
	st = append(st, rs)
	sum += varintLen(rs)
	body += rn
	x.st = st
	hdr := headerLen(sum)
	size := hdr + body

	_, b := x.alloc(uvarintLen(size) + size) // the length, then the record
	k := binary.PutUvarint(b, uint64(size))
	k += putVarint(b[k:], uint64(hdr))
	for _, s := range st {
		k += putVarint(b[k:], s)
	}
	for i, c := range x.cols {
		if c == alias {
			k += putInt(b[k:], rowid, st[i])
		} else {
			k += putBody(b[k:], &vals[c], st[i])
		}
	}
	putInt(b[k:], rowid, rs)
	x.n++
}

func uvarintLen(n int) int {
	var b [binary.MaxVarintLen64]byte
	return binary.PutUvarint(b[:], uint64(n))
}

// alloc gives room for n bytes at the end of the chunks, and its ref: the
// chunk (high 32 bits) and the offset in it. Chunks double from 64 KiB to
// 4 MiB: small for small tables, few for large ones.
func (x *index) alloc(n int) (uint64, []byte) {
	ci := len(x.chunks) - 1
	if ci < 0 || cap(x.chunks[ci])-len(x.chunks[ci]) < n {
		size := 64 << 10
		if ci >= 0 {
			size = min(2*cap(x.chunks[ci]), chunkSize)
		}
		x.chunks = append(x.chunks, make([]byte, 0, max(size, n)))
		ci++
	}
	ch := x.chunks[ci]
	off := len(ch)
	x.chunks[ci] = ch[:off+n]
	return uint64(ci)<<32 | uint64(off), ch[off : off+n]
}

// at is the record at ref.
func (x *index) at(ref uint64) []byte {
	ch := x.chunks[ref>>32][uint32(ref):]
	n, k := binary.Uvarint(ch)
	return ch[k : k+int(n)]
}

var errStop = errors.New("stop")

// each calls f with every record, in the order of the chunks, and stops
// at f's first error.
func (x *index) each(f func(ref uint64, r []byte) error) error {
	for ci, ch := range x.chunks {
		for off := 0; off < len(ch); {
			n, k := binary.Uvarint(ch[off:])
			if err := f(uint64(ci)<<32|uint64(off), ch[off+k:off+k+int(n)]); err != nil {
				return err
			}
			off += k + int(n)
		}
	}
	return nil
}

// field gives field f of record r: its serial type and body.
func field(r []byte, f int) (uint64, []byte) {
	h, i := getVarint(r)
	d := int(h)
	for {
		st, n := getVarint(r[i:])
		i += n
		l := serialSize(st)
		if f == 0 {
			return st, r[d : d+l]
		}
		d += l
		f--
	}
}

// entry is a key being sorted: ref locates it, pre is a prefix of its
// first varying field mapped to a number that orders as the key does
// (equal prefixes say nothing).
type entry struct {
	pre uint64
	ref uint64
}

// sort orders the keys as SQLite does. The keys of a tar's members mostly
// come in order already, which one pass sees, and then nothing more is
// done. Otherwise each key gets a 64-bit prefix of its first field that
// varies (after the bytes all its TEXT and BLOB values share), the keys
// are sorted by it with a radix sort, runs of equal prefixes by the whole
// key, and the keys are copied to new chunks in their order, so that the
// passes that follow (the UNIQUE check, the b-tree's) read memory in order
// instead of missing the cache at every key.
func (x *index) sort() {
	var prev []byte
	if x.each(func(_ uint64, r []byte) error {
		if prev != nil && cmpRecords(prev, r, -1) > 0 {
			return errStop
		}
		prev = r
		return nil
	}) == nil {
		return
	}

	ents := make([]entry, 0, x.n)
	x.each(func(ref uint64, _ []byte) error {
		ents = append(ents, entry{ref: ref})
		return nil
	})
	nf := len(x.cols) + 1
	f := 0 // the first field whose bytes differ between keys
	for ; f < nf-1; f++ {
		s0, b0 := field(x.at(ents[0].ref), f)
		same := true
		for _, e := range ents[1:] {
			s, b := field(x.at(e.ref), f)
			if s != s0 || string(b) != string(b0) {
				same = false
				break
			}
		}
		if !same {
			break
		}
	}
	lcp := -1 // bytes shared by all TEXT and BLOB values of field f
	var first []byte
	for _, e := range ents {
		st, b := field(x.at(e.ref), f)
		if st < 12 {
			continue
		}
		if lcp < 0 {
			first, lcp = b, len(b)
			continue
		}
		n := min(lcp, len(b))
		i := 0
		for i < n && b[i] == first[i] {
			i++
		}
		lcp = i
		if lcp == 0 {
			break
		}
	}
	lcp = max(lcp, 0)
	for i := range ents {
		st, b := field(x.at(ents[i].ref), f)
		ents[i].pre = prefix(st, b, lcp)
	}
	radixSort(ents)
	cmpEnt := func(a, b entry) int { return cmpRecords(x.at(a.ref), x.at(b.ref), -1) }
	for i := 0; i < len(ents); {
		j := i + 1
		for j < len(ents) && ents[j].pre == ents[i].pre {
			j++
		}
		if run := ents[i:j]; len(run) > 1 && !slices.IsSortedFunc(run, cmpEnt) {
			slices.SortFunc(run, cmpEnt)
		}
		i = j
	}

	var sorted index
	for _, e := range ents {
		ch := x.chunks[e.ref>>32][uint32(e.ref):]
		n, k := binary.Uvarint(ch)
		_, b := sorted.alloc(k + int(n))
		copy(b, ch[:k+int(n)])
	}
	x.chunks = sorted.chunks
}

// prefix maps a field to 64 bits that order as SQLite orders the values,
// ties allowed: 2 bits of storage class, then for a number its value as a
// float64 made to sort as an unsigned integer (an INTEGER's conversion may
// round, which only makes ties), for TEXT and BLOB the 8 bytes after the
// lcp bytes all share.
func prefix(st uint64, b []byte, lcp int) uint64 {
	c := uint64(class(st))
	var v uint64
	switch c {
	case 1:
		var f float64
		if st == 7 {
			f = math.Float64frombits(binary.BigEndian.Uint64(b))
		} else {
			f = float64(getInt(b, st))
		}
		if f == 0 {
			f = 0 // -0 equals 0
		}
		u := math.Float64bits(f)
		if u>>63 == 1 {
			v = ^u
		} else {
			v = u | 1<<63
		}
	case 2, 3:
		var p [8]byte
		copy(p[:], b[lcp:])
		v = binary.BigEndian.Uint64(p[:])
	}
	return c<<62 | v>>2
}

// radixSort sorts entries by pre, stably, a byte at a time from the
// lowest, skipping the bytes all entries share.
func radixSort(ents []entry) {
	var counts [8][256]int
	for _, e := range ents {
		for d := 0; d < 8; d++ {
			counts[d][byte(e.pre>>(8*d))]++
		}
	}
	buf := make([]entry, len(ents))
	src, dst := ents, buf
	for d := 0; d < 8; d++ {
		c := &counts[d]
		if c[byte(src[0].pre>>(8*d))] == len(ents) {
			continue
		}
		sum := 0
		for i := range c {
			c[i], sum = sum, sum+c[i]
		}
		for _, e := range src {
			k := byte(e.pre >> (8 * d))
			dst[c[k]] = e
			c[k]++
		}
		src, dst = dst, src
	}
	if &src[0] != &ents[0] {
		copy(ents, src)
	}
}

// hasNull says whether one of the first nf fields of record r is NULL.
func hasNull(r []byte, nf int) bool {
	_, i := getVarint(r)
	for ; nf > 0; nf-- {
		st, n := getVarint(r[i:])
		if st == 0 {
			return true
		}
		i += n
	}
	return false
}

// uniqueError is the error for keys a and b, equal in a UNIQUE index.
func (x *index) uniqueError(a, b []byte) error {
	nk := len(x.cols)
	va, vb := decodeRecord(a), decodeRecord(b)
	return &UniqueError{
		Index:  x.name,
		Table:  x.t.name,
		Values: va[:nk],
		Rowids: [2]int64{va[nk].n, vb[nk].n},
	}
}

// UniqueError is a UNIQUE constraint that the rows break: two of them
// have the same key in a UNIQUE index, an automatic one (for a UNIQUE or
// PRIMARY KEY constraint of the table) or a CREATE UNIQUE INDEX. It is
// ErrUnique for errors.Is.
type UniqueError struct {
	Index  string   // the index's name
	Table  string   // its table's name
	Values []Value  // the duplicate key: the indexed columns' values
	Rowids [2]int64 // two rows that hold it
}

func (e *UniqueError) Error() string {
	vs := make([]string, len(e.Values))
	for i, v := range e.Values {
		vs[i] = v.String()
	}
	return fmt.Sprintf("%v: index %q on table %q: (%s) in rows %d and %d",
		ErrUnique, e.Index, e.Table, strings.Join(vs, ", "), e.Rowids[0], e.Rowids[1])
}

// Unwrap makes a UniqueError ErrUnique.
func (e *UniqueError) Unwrap() error { return ErrUnique }

// build writes the sorted keys as an index b-tree and gives its root; for
// a UNIQUE index it fails on two rows with the same key (NULLs apart: SQLite
// lets any number of rows hold a NULL in a UNIQUE column).
//
// The leaves are filled in order; the key that does not fit in a full
// leaf goes up to the level above as the divider between that leaf and
// the next, and so on up each level, the standard layout of a bulk load.
// Each level is planned (which keys go where) before it is written: the
// last page of a level must not be left empty (a leaf) or without a cell
// (an interior page), so it takes one from the page before.
func (w *Writer) build(x *index) (uint32, error) {
	p := &w.tmp
	p.reset()
	if x.n == 0 {
		return w.emit(p.finish(leafIndex, 0, 0))
	}
	nk := len(x.cols)
	sizes := make([]uint16, 0, x.n) // cells are smaller than pages
	var prev []byte
	err := x.each(func(_ uint64, r []byte) error {
		if x.unique && prev != nil && cmpRecords(prev, r, nk) == 0 && !hasNull(r, nk) {
			return x.uniqueError(prev, r)
		}
		prev = r
		sizes = append(sizes, uint16(w.indexCellSize(len(r))))
		return nil
	})
	if err != nil {
		return 0, err
	}
	leaves, divs, fixed := planLeaves(sizes, w.usable-8)
	if fixed {
		w.rebalanced[0]++
	}

	// The leaves, walking the keys again; the dividers' places are kept.
	kids := make([]uint32, 0, len(leaves))
	dsz := make([]uint16, len(divs))
	dref := make([]uint64, len(divs))
	i, li, di := 0, 0, 0
	err = x.each(func(ref uint64, r []byte) error {
		k := i
		i++
		if di < len(divs) && divs[di] == k {
			dsz[di], dref[di] = sizes[k], ref
			di++
			return nil
		}
		if err := w.indexCell(p, r, 0, false); err != nil {
			return err
		}
		if k == leaves[li].hi-1 {
			pg, err := w.emit(p.finish(leafIndex, 0, 0))
			if err != nil {
				return err
			}
			kids = append(kids, pg)
			p.reset()
			li++
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	sizes = nil

	for len(kids) > 1 {
		spans, up, fixed := planInterior(dsz, w.usable-12)
		if fixed {
			w.rebalanced[1]++
		}
		next := make([]uint32, 0, len(spans))
		for _, s := range spans {
			p.reset()
			for i := s.lo; i < s.hi-1; i++ {
				if err := w.indexCell(p, x.at(dref[i]), kids[i], true); err != nil {
					return 0, err
				}
			}
			pg, err := w.emit(p.finish(interiorIndex, 0, kids[s.hi-1]))
			if err != nil {
				return 0, err
			}
			next = append(next, pg)
		}
		nsz, nref := make([]uint16, len(up)), make([]uint64, len(up))
		for j, d := range up {
			nsz[j], nref[j] = dsz[d], dref[d]
		}
		kids, dsz, dref = next, nsz, nref
	}
	return kids[0], nil
}

// indexCellSize is the size of an index leaf cell for a key of p bytes
// (an interior cell adds the 4-byte child).
func (w *Writer) indexCellSize(p int) int {
	n := w.local(p, w.maxLocalIndex)
	if n < p {
		n += 4
	}
	return uvarintLen(p) + n
}

// planLeaves splits the sorted keys of an index, of cell sizes sizes,
// into leaves of room bytes and the keys that divide them (divs[i] between
// leaves i and i+1): the key that does not fit in a full leaf divides it
// from the next. A last leaf left empty (the last key went up) takes the
// last key back, the leaf before giving its own last key up instead.
func planLeaves(sizes []uint16, room int) (leaves []span, divs []int, fixed bool) {
	lo, used := 0, 0
	for i, s := range sizes {
		sz := 2 + max(int(s), 4)
		if used+sz > room {
			leaves = append(leaves, span{lo, i})
			divs = append(divs, i)
			lo, used = i+1, 0
			continue
		}
		used += sz
	}
	leaves = append(leaves, span{lo, len(sizes)})
	if n := len(leaves); n > 1 && leaves[n-1].lo == leaves[n-1].hi {
		leaves[n-2].hi--
		divs[n-2]--
		leaves[n-1].lo--
		fixed = true
	}
	return leaves, divs, fixed
}

// planInterior splits an interior level of an index b-tree into pages of
// room bytes. Its children are divided by keys of leaf cell sizes dsz
// (divider i between children i and i+1): a page takes cells (child i,
// divider i) while they fit; the child of the one that does not is the
// page's right-most and its divider goes up (up[j], after page j). A last
// page left with one child (no cell) takes the previous page's last child
// and divider.
func planInterior(dsz []uint16, room int) (spans []span, up []int, fixed bool) {
	lo, used := 0, 0
	for i, s := range dsz {
		sz := 2 + 4 + int(s)
		if used+sz > room {
			spans = append(spans, span{lo, i + 1})
			up = append(up, i)
			lo, used = i+1, 0
			continue
		}
		used += sz
	}
	spans = append(spans, span{lo, len(dsz) + 1})
	if n := len(spans); n > 1 && spans[n-1].hi-spans[n-1].lo == 1 {
		spans[n-2].hi--
		up[n-2] = spans[n-2].hi - 1
		spans[n-1].lo--
		fixed = true
	}
	return spans, up, fixed
}

// indexCell adds the cell of key rec to p, which has room for it: a leaf
// cell, or an interior one with its left child.
func (w *Writer) indexCell(p *page, rec []byte, left uint32, interior bool) error {
	n := w.local(len(rec), w.maxLocalIndex)
	sz := varintLen(uint64(len(rec))) + n
	if n < len(rec) {
		sz += 4
	}
	if interior {
		sz += 4
	}
	var ovfl uint32
	if n < len(rec) {
		var err error
		if ovfl, err = w.spill(rec, n); err != nil {
			return err
		}
	}
	c := p.cell(sz)
	k := 0
	if interior {
		binary.BigEndian.PutUint32(c, left)
		k = 4
	}
	k += putVarint(c[k:], uint64(len(rec)))
	k += copy(c[k:], rec[:n])
	if n < len(rec) {
		binary.BigEndian.PutUint32(c[k:], ovfl)
	}
	return nil
}
