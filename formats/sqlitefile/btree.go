package sqlitefile

import (
	"encoding/binary"
	"fmt"
)

// B-tree page types (the first byte of a page's header).
const (
	interiorIndex = 2
	interiorTable = 5
	leafIndex     = 10
	leafTable     = 13
)

// page is a b-tree page being filled: cells are laid from the end of the
// page downwards, in key order, with no gaps (so no freeblocks and no
// fragmented bytes); the header and the cell pointer array are written
// when the page is done, at offset 0 or, on page 1, after the file header.
type page struct {
	b    []byte
	ptrs []uint16 // cell offsets, in key order
	top  int      // start of the cell content area
}

func newPage(size int) page { return page{b: make([]byte, size), top: size} }

func (p *page) reset() { p.ptrs, p.top = p.ptrs[:0], len(p.b) }

// fits says whether one more cell of n bytes fits beside a header of hdr
// bytes (the page header and, for sqlite_schema, the file header).
func (p *page) fits(n, hdr int) bool {
	return p.top-hdr-2*(len(p.ptrs)+1) >= max(n, 4)
}

// cell makes room for one more cell of n bytes and gives it. SQLite counts
// a cell of fewer than 4 bytes as 4 bytes long: so does this.
func (p *page) cell(n int) []byte {
	p.top -= max(n, 4)
	p.ptrs = append(p.ptrs, uint16(p.top))
	c := p.b[p.top : p.top+max(n, 4)]
	clear(c[n:])
	return c[:n]
}

// finish writes the page header at off, of page type kind with right-most
// child right (interior pages), and the cell pointers; it clears the free
// space between them and the cells.
func (p *page) finish(kind byte, off int, right uint32) []byte {
	b := p.b
	h := b[off:]
	h[0] = kind
	h[1], h[2] = 0, 0 // no freeblock
	binary.BigEndian.PutUint16(h[3:], uint16(len(p.ptrs)))
	binary.BigEndian.PutUint16(h[5:], uint16(p.top)) // 65536 is written 0
	h[7] = 0                                         // no fragmented bytes
	q := off + 8
	if kind == interiorIndex || kind == interiorTable {
		binary.BigEndian.PutUint32(h[8:], right)
		q += 4
	}
	for _, c := range p.ptrs {
		binary.BigEndian.PutUint16(b[q:], c)
		q += 2
	}
	clear(b[q:p.top])
	return b
}

// headerSize is the size of a b-tree page header of kind.
func headerSize(kind byte) int {
	if kind == interiorIndex || kind == interiorTable {
		return 12
	}
	return 8
}

// local is how much of a payload of p bytes a cell keeps on its page, the
// rest going to overflow pages, for a page kind whose most is maxLocal.
func (w *Writer) local(p, maxLocal int) int {
	if p <= maxLocal {
		return p
	}
	k := w.minLocal + (p-w.minLocal)%(w.usable-4)
	if k <= maxLocal {
		return k
	}
	return w.minLocal
}

// spill writes the part of payload past its first n bytes to a chain of
// overflow pages and gives the first one's number. Pages are numbered in
// the order they are written, so the chain is consecutive.
func (w *Writer) spill(payload []byte, n int) (uint32, error) {
	rest := payload[n:]
	first := w.npages + 1
	for len(rest) > 0 {
		b := w.ovfl
		k := copy(b[4:], rest)
		rest = rest[k:]
		next := uint32(0)
		if len(rest) > 0 {
			next = w.npages + 2
		}
		binary.BigEndian.PutUint32(b, next)
		clear(b[4+k:])
		if _, err := w.emit(b); err != nil {
			return 0, err
		}
	}
	return first, nil
}

// child is a page of a b-tree level and, in table b-trees, the largest
// rowid under it.
type child struct {
	pg  uint32
	key int64
}

// span is a run [lo, hi) of a level's items that go to one page.
type span struct{ lo, hi int }

// tableTree is a table b-tree being loaded: rows go to the current leaf,
// a full leaf goes to the file and up to the interior levels, which are
// built as their children come, so memory holds a few pages per level
// whatever the rows. Each interior cell holds a child and the largest
// rowid under it; a page's last child goes to its right-most pointer.
type tableTree struct {
	leaf   page
	levels []level // interior levels, from the leaves' parents up
	leaves int     // leaves written
	last   int64   // rowid of the last row
	hdr    int     // room kept before each page header: 100 for sqlite_schema, whose root is page 1
}

// level is an interior level of a table b-tree being filled. An interior
// page needs a cell (two children), and a level's last page is only known
// at the end: so a full page is held back until the next one has a cell,
// and at the end a last page with one child takes the held page's last
// one (a page holds many interior cells: that one keeps plenty).
type level struct {
	cur     page  // cells for cur's children but the last
	last    child // cur's last child (n > 0), the right-most pointer to be
	n       int   // cur's children
	held    page  // the full page before cur, not yet written
	heldTop child // held's right-most child
	hasHeld bool
}

// push adds a child to interior level lv of t, writing the pages that
// fill (and the levels above) as it goes.
func (w *Writer) push(t *tableTree, lv int, c child) error {
	if lv == len(t.levels) {
		t.levels = append(t.levels, level{cur: newPage(w.pageSize), held: newPage(w.pageSize)})
	}
	l := &t.levels[lv]
	if l.n == 0 {
		l.last, l.n = c, 1
		return nil
	}
	sz := 4 + varintLen(uint64(l.last.key))
	if !l.cur.fits(sz, t.hdr+12) {
		// cur is full (so an earlier held page was written): hold it.
		l.cur, l.held = l.held, l.cur
		l.heldTop, l.hasHeld = l.last, true
		l.cur.reset()
		l.last, l.n = c, 1
		return nil
	}
	putChild(l.cur.cell(sz), l.last)
	l.last = c
	l.n++
	if l.hasHeld {
		// cur has a cell now: the held page is not the level's last.
		l.hasHeld = false
		return w.pushPage(t, lv, &l.held, l.heldTop)
	}
	return nil
}

// pushPage writes an interior page of level lv, of right-most child top,
// and adds it to the level above.
func (w *Writer) pushPage(t *tableTree, lv int, p *page, top child) error {
	pg, err := w.emit(p.finish(interiorTable, 0, top.pg))
	if err != nil {
		return err
	}
	return w.push(t, lv+1, child{pg, top.key})
}

func putChild(b []byte, c child) {
	binary.BigEndian.PutUint32(b, c.pg)
	putVarint(b[4:], uint64(c.key))
}

// popChild takes the last cell off an interior page: its child.
func popChild(p *page) child {
	b := p.b[p.top:]
	key, n := getVarint(b[4:])
	p.ptrs = p.ptrs[:len(p.ptrs)-1]
	p.top += max(4+n, 4)
	return child{binary.BigEndian.Uint32(b), int64(key)}
}

// makeRoom writes the current leaf out if a cell of n bytes does not fit
// in it, and starts a new one.
func (w *Writer) makeRoom(t *tableTree, n int) error {
	if t.leaf.fits(n, t.hdr+8) {
		return nil
	}
	pg, err := w.emit(t.leaf.finish(leafTable, 0, 0))
	if err != nil {
		return err
	}
	t.leaves++
	t.leaf.reset()
	return w.push(t, 0, child{pg, t.last})
}

// addRecord adds a row whose record is rec, spilling what does not fit
// in its cell to overflow pages.
func (w *Writer) addRecord(t *tableTree, rowid int64, rec []byte) error {
	n := w.local(len(rec), w.maxLocalTable)
	sz := varintLen(uint64(len(rec))) + varintLen(uint64(rowid)) + n
	if n < len(rec) {
		sz += 4
	}
	if err := w.makeRoom(t, sz); err != nil {
		return err
	}
	var ovfl uint32
	if n < len(rec) {
		var err error
		if ovfl, err = w.spill(rec, n); err != nil {
			return err
		}
	}
	c := t.leaf.cell(sz)
	k := putVarint(c, uint64(len(rec)))
	k += putVarint(c[k:], uint64(rowid))
	k += copy(c[k:], rec[:n])
	if n < len(rec) {
		binary.BigEndian.PutUint32(c[k:], ovfl)
	}
	t.last = rowid
	return nil
}

// finishTable writes the last leaf and the interior levels and gives the
// root page: at1 asks for it to be left in w.page1 instead. A table
// without rows is one empty leaf.
func (w *Writer) finishTable(t *tableTree, at1 bool) (uint32, error) {
	if t.leaves == 0 {
		if at1 {
			copy(w.page1[t.hdr:], t.leaf.finish(leafTable, t.hdr, 0)[t.hdr:])
			return 1, nil
		}
		return w.emit(t.leaf.finish(leafTable, 0, 0))
	}
	pg, err := w.emit(t.leaf.finish(leafTable, 0, 0))
	if err == nil {
		err = w.push(t, 0, child{pg, t.last})
	}
	for lv := 0; err == nil; lv++ {
		l := &t.levels[lv]
		if lv == len(t.levels)-1 && !l.hasHeld {
			// The top level, never written: its page is the root. (A
			// level gets at least two children: a lower one that wrote
			// a page during the load writes one more at the end.)
			if at1 {
				copy(w.page1[t.hdr:], l.cur.finish(interiorTable, t.hdr, l.last.pg)[t.hdr:])
				return 1, nil
			}
			return w.emit(l.cur.finish(interiorTable, 0, l.last.pg))
		}
		if l.hasHeld {
			// cur has one child and no cell: the held page's last child
			// comes over, with the cell that holds it.
			moved := l.heldTop
			l.heldTop = popChild(&l.held)
			putChild(l.cur.cell(4+varintLen(uint64(moved.key))), moved)
			w.rebalanced[2]++
			if err = w.pushPage(t, lv, &l.held, l.heldTop); err != nil {
				break
			}
		}
		err = w.pushPage(t, lv, &l.cur, l.last)
	}
	return 0, fmt.Errorf("interior pages: %w", err)
}
