package sqlitefile

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"os"
	"slices"
	"strings"
)

// index is an index b-tree to build at Close: the key of every row (the
// indexed columns' values and the rowid, as an SQLite record) is kept as
// rows come, in chunks of bytes the garbage collector does not scan, then
// sorted (if the rows did not come in key order) and written bottom up.
//
// Keys that come nearly in order are put in order as they come (see
// keep), in the chunks themselves: sorting them at Close would mean an
// array of refs to every key and a pass over keys no longer in the cache,
// and fresh memory costs more than the comparisons (on the virtual
// machines we measured on, the first write to a 4 KiB page costs some
// 14 µs, more than sorting the couple of hundred keys it holds).
type index struct {
	name   string
	sql    string // "" for an automatic index (sql NULL)
	t      *Table
	cols   []int
	unique bool

	chunks [][]byte // full chunks of records, each after its length (a uvarint); in key order once sorted
	cur    []byte   // the chunk being filled, the last one
	n      int      // keys

	// If tail is not nil, the chunks are in key order only for their
	// first inOrder keys; the others are tail, in key order, each with its
	// place among the first: the number of them before it, in pre.
	tail []entry

	// While the keys are in order (ordered), recent holds the offsets in
	// cur of the last keys (nrecent of them, up to nearReach+1), a ring
	// whose newest is at head-1, for keep to compare each key with.
	ordered bool
	inOrder int // keys in order in the chunks, once not all of them
	recent  [2 * nearReach]int
	head    int
	nrecent int
	tmp     []byte // scratch: a key being moved
	root    uint32

	pending *pending // the keys gathered early, if they are (KeysEarly)
	// noRowid: the keys are a WITHOUT ROWID table's records, the key
	// columns first, no rowid after them.
	noRowid bool
	// stat, if not nil, counts for sqlite_stat1 (Writer.Analyze) the
	// distinct values of the first i+1 columns, as plan goes through the
	// keys in order.
	stat []int64
	// runs are the keys written out past the memory budget, spilled
	// their number (see spill.go).
	runs    []keyRun
	spilled int
	runFile *os.File
	// order, if not nil, is the keys' order (a spill's sort leaves the
	// keys where they are); free holds emptied chunks for newChunk.
	order []entry
	free  [][]byte
}

const chunkSize = 4 << 20

// add keeps the key of a row, whose values have serial types rowSt (the
// rowid column's, if any, being the rowid's), and says how many bytes
// it took.
func (x *index) add(vals []Value, rowSt []uint64, alias int, rowid int64) int {
	sum, body := 1, 0 // the rowid's serial type takes 1 byte
	for _, c := range x.cols {
		s := rowSt[c]
		sum += varintLen(s)
		body += serialSize(s)
	}
	rs, rn := intSerial(rowid)
	body += rn
	hdr := headerLen(sum)
	size := hdr + body

	off, b := x.room(uvarintLen(size) + size) // the length, then the record
	b = b[putUvarint(b, uint64(size)):]
	// The header and the bodies as the columns come; a number's body is
	// written 8 bytes at once, the bytes past it being the next field's
	// or keySlack.
	h, d := putVarint(b, uint64(hdr)), hdr
	for _, c := range x.cols {
		s := rowSt[c]
		h += putVarint(b[h:], s)
		if s >= 12 {
			d += copy(b[d:], vals[c].s)
			continue
		}
		v := rowid
		if c != alias {
			v = vals[c].n
		}
		n := int(fixedSize[s&15])
		binary.BigEndian.PutUint64(b[d:], uint64(v)<<(64-8*uint(n)))
		d += n
	}
	b[h] = byte(rs)
	binary.BigEndian.PutUint64(b[d:], uint64(rowid)<<(64-8*uint(rn)))
	x.n++
	if x.ordered {
		x.keep(off)
	}
	return size + 2
}

// keySlack is room past a key's end that add may scribble on (it writes
// a number's body 8 bytes at once): room leaves it in the chunk.
const keySlack = 8

// room gives room for a key of n bytes at the end of cur, its offset and
// the bytes (and keySlack more). Chunks double from 64 KiB to 4 MiB: small
// for small tables, few for large ones. While the keys are in order, a new
// chunk takes over the last keys of the one before, those a key may still
// have to go before (see keep).
func (x *index) room(n int) (int, []byte) {
	off := len(x.cur)
	if cap(x.cur)-off < n+keySlack {
		x.newChunk(n + keySlack)
		off = len(x.cur)
	}
	x.cur = x.cur[:off+n]
	return off, x.cur[off : off+n+keySlack]
}

// newChunk starts a chunk with room for n more bytes than the keys it
// carries over from cur (those keep may still have to move a key before,
// while the keys are in order), and leaves cur among the full chunks.
func (x *index) newChunk(n int) {
	size := 64 << 10
	if x.cur != nil {
		size = min(2*cap(x.cur), chunkSize)
	}
	from := len(x.cur) // the keys carried over: cur[from:]
	if x.ordered && x.nrecent > 0 {
		from = x.recentAt(x.nrecent)
		if len(x.cur)-from > chunkSize/8 {
			// Keys too large to carry: sort them at Close.
			x.disorder(x.n)
			from = len(x.cur)
		}
	}
	carry := x.cur[from:]
	var ch []byte
	if k := len(x.free) - 1; k >= 0 && cap(x.free[k]) >= len(carry)+n {
		// After a spill: the chunks of before, largest first.
		ch = x.free[k][:len(carry)]
		x.free = x.free[:k]
	}
	if ch == nil {
		ch = make([]byte, len(carry), max(size, len(carry)+n))
	}
	copy(ch, carry)
	if x.cur != nil {
		x.chunks = append(x.chunks, x.cur[:from])
	}
	x.cur = ch
	for i := range x.recent {
		x.recent[i] -= from
	}
}

// recentAt is the offset of the k-th newest recent key (k from 1).
func (x *index) recentAt(k int) int { return x.recent[(x.head-k)&(len(x.recent)-1)] }

// disorder says the keys are not all in order, but for the first
// inOrder: Close sorts them.
func (x *index) disorder(inOrder int) {
	x.ordered = false
	x.inOrder = inOrder
	x.nrecent = 0
}

// keep keeps the keys in order as they come, if they come nearly in
// order: the key just written at off in cur is compared with the key
// before it and, if it is smaller, moved back among the recent keys to
// its place, at most nearReach places back. A key that belongs further
// back ends it: the keys are then sorted at Close.
//
// This is where the keys of a tar's members are put in order, as they
// usually come in order but for the parts of a sample, which come in the
// tar's order ("jpg" then "cls"). The key before is in the cache, and
// nothing but the chunks is needed.
func (x *index) keep(off int) {
	cur := x.cur
	r := record(cur[off:])
	m := x.nrecent
	if m == 0 || cmpRecords(record(cur[x.recentAt(1):]), r, -1) <= 0 {
		x.push(off)
		return
	}
	// r goes before the j newest keys.
	j := 1
	for j < m && cmpRecords(record(cur[x.recentAt(j+1):]), r, -1) > 0 {
		j++
	}
	if j == m && m < x.n-1 {
		// Maybe further back than the recent keys: give up.
		x.disorder(x.n - 1)
		return
	}
	// Move the key's bytes to where the j-th newest starts, and those
	// after them up.
	at, l := x.recentAt(j), len(cur)-off
	x.tmp = append(x.tmp[:0], cur[off:]...)
	copy(cur[at+l:], cur[at:off])
	copy(cur[at:], x.tmp)
	if cap(x.tmp) > 64<<10 {
		x.tmp = nil
	}
	// The ring takes one more slot: the j newest move up one, shifted
	// by l, and the new key goes below them.
	mask := len(x.recent) - 1
	for k := 1; k <= j; k++ {
		x.recent[(x.head+1-k)&mask] = x.recent[(x.head-k)&mask] + l
	}
	x.recent[(x.head-j)&mask] = at
	x.head++
	x.nrecent = min(m+1, nearReach+1)
}

// push adds the key at off to the recent ones, the oldest going out.
func (x *index) push(off int) {
	x.recent[x.head&(len(x.recent)-1)] = off
	x.head++
	x.nrecent = min(x.nrecent+1, nearReach+1)
}

// record is the record at the start of b, after its length.
func record(b []byte) []byte {
	n, k := uvarint(b)
	return b[k : k+int(n)]
}

// seal adds cur to the chunks, for the passes of Close.
func (x *index) seal() {
	if x.cur != nil {
		x.chunks = append(x.chunks, x.cur)
		x.cur = nil
	}
	x.nrecent = 0
}

func uvarintLen(n int) int {
	if n < 0x80 {
		return 1
	}
	var b [binary.MaxVarintLen64]byte
	return binary.PutUvarint(b[:], uint64(n))
}

// putUvarint is binary.PutUvarint, the one-byte case inline.
func putUvarint(b []byte, v uint64) int {
	if v < 0x80 {
		b[0] = byte(v)
		return 1
	}
	return binary.PutUvarint(b, v)
}

// uvarint is binary.Uvarint, the one-byte case inline.
func uvarint(b []byte) (uint64, int) {
	if b[0] < 0x80 {
		return uint64(b[0]), 1
	}
	return binary.Uvarint(b)
}

// alloc gives room for n bytes at the end of the chunks, for keys copied
// in order (see radixSorted).
func (x *index) alloc(n int) []byte {
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
	return ch[off : off+n]
}

// at is the record at ref.
func (x *index) at(ref uint64) []byte {
	return record(x.chunks[ref>>32][uint32(ref):])
}

var errStop = errors.New("stop")

// each calls f with every record, in key order once sorted (the order
// of the chunks before), and stops at f's first error.
func (x *index) each(f func(ref uint64, r []byte) error) error {
	if x.order != nil {
		for _, e := range x.order {
			if err := f(e.ref, x.at(e.ref)); err != nil {
				return err
			}
		}
		return nil
	}
	if x.tail == nil {
		return x.chunked(-1, f)
	}
	t, c := 0, uint64(0) // tail keys given, keys of the chunks given
	tail := func(upto uint64) error {
		for ; t < len(x.tail) && x.tail[t].pre <= upto; t++ {
			if err := f(x.tail[t].ref, x.at(x.tail[t].ref)); err != nil {
				return err
			}
		}
		return nil
	}
	err := x.chunked(x.inOrder, func(ref uint64, r []byte) error {
		if err := tail(c); err != nil {
			return err
		}
		c++
		return f(ref, r)
	})
	if err != nil {
		return err
	}
	return tail(uint64(x.inOrder))
}

// chunked calls f with the first n records of the chunks (all of them
// for n < 0), in their order, and stops at f's first error.
func (x *index) chunked(n int, f func(ref uint64, r []byte) error) error {
	for ci, ch := range x.chunks {
		for off := 0; off < len(ch); {
			if n == 0 {
				return nil
			}
			n--
			l, k := uvarint(ch[off:])
			if err := f(uint64(ci)<<32|uint64(off), ch[off+k:off+k+int(l)]); err != nil {
				return err
			}
			off += k + int(l)
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

// entry is a key being sorted: ref locates it (the chunk in the high 32
// bits, the offset in it); for the radix sort, pre is a prefix of its
// first varying field mapped to a number that orders as the key does
// (equal prefixes say nothing); in a tail, its place (see place).
type entry struct {
	pre uint64
	ref uint64
}

// sort orders the keys as SQLite does (all keys differ: the rowid ends
// them), at Close.
//
// The keys of a tar's members mostly come in order, or nearly (see keep),
// and are in order by then: nothing is left to do. Otherwise the keys
// from the first that keep could not place on (the tail) may still be
// nearly in order: a few rows that came late, the rows of a few shards in
// long stretches, each in order but for its samples' parts. sortNearly
// puts such keys in order in a pass and a few merges, and place finds
// where they go among the keys before them, which stay where they are:
// the index is then read from the chunks, the tail's keys slipped in.
// Keys far from their places (a random order) make it give up early, for
// radixSorted.
//
// It says which way the keys went: 0 they were in order, 1 sortNearly,
// 2 radixSorted.
func (x *index) sort() int { return x.sortKeys(true) }

// sortKeys is sort; unless move, keys the radix sort orders stay where
// they are, their order in x.order (a spill reads them once: a copy in
// order would cost as much memory again).
func (x *index) sortKeys(move bool) int {
	x.seal()
	if x.ordered {
		return 0
	}
	// The keys after the first inOrder, nearly in order, are sorted
	// alone, then placed among the first ones: only they need refs.
	tail := make([]entry, 0, x.n-x.inOrder)
	i := 0
	x.chunked(-1, func(ref uint64, _ []byte) error {
		if i >= x.inOrder {
			tail = append(tail, entry{ref: ref})
		}
		i++
		return nil
	})
	if sortNearly(tail, 1, x.cmpEnt) {
		x.place(tail)
		return 1
	}
	tail = nil
	ents := make([]entry, 0, x.n)
	x.chunked(-1, func(ref uint64, _ []byte) error {
		ents = append(ents, entry{ref: ref})
		return nil
	})
	x.radixSorted(ents, move)
	return 2
}

// place makes tail, sorted, the index's tail: each key's place among the
// keys in order in the chunks is found by walking them as far as the last
// key of tail goes, not further (ratarmount's late rows, its generated
// parent directories, go near the front).
func (x *index) place(tail []entry) {
	t, c := 0, 0
	x.chunked(x.inOrder, func(_ uint64, r []byte) error {
		for t < len(tail) && cmpRecords(x.at(tail[t].ref), r, -1) < 0 {
			tail[t].pre = uint64(c)
			t++
		}
		if t == len(tail) {
			return errStop
		}
		c++
		return nil
	})
	for ; t < len(tail); t++ {
		tail[t].pre = uint64(x.inOrder)
	}
	x.tail = tail
}

// cmpEnt compares the keys of two entries.
func (x *index) cmpEnt(a, b entry) int { return cmpRecords(x.at(a.ref), x.at(b.ref), -1) }

// Bounds of keep and sortNearly: how far back a key may go into place,
// and how many runs of keys in order sortNearly may leave to merge. They
// bound the work in the worst case to 16 comparisons a key and 6 merge
// passes, some 22 comparisons a key (a full sort of a million keys makes
// 20); keys more out of order than that go to the radix sort, whose work
// does not depend on the order.
const (
	nearReach = 16
	nearRuns  = 64
)

// sortNearly sorts ents, whose first k are in order, if they are nearly
// in order, and says whether it did; if not, ents are left in some order.
// Each key that is out of order is moved back among the keys before it,
// as an insertion sort does, but by nearReach places at most: a key that
// belongs further back starts a new run instead. The runs, if more than
// one, are merged, each merge skipping the keys already in their places.
// More than nearRuns runs is too much disorder, and it gives up at once.
func sortNearly(ents []entry, k int, cmp func(a, b entry) int) bool {
	runs := []int{0} // where each run starts
	start := 0       // the current run's start
	for i := max(k, 1); i < len(ents); i++ {
		e := ents[i]
		if cmp(ents[i-1], e) <= 0 {
			continue
		}
		// e goes before ents[i-1]: find j, e's place in the run.
		lo := max(start, i-nearReach)
		j := i - 1
		for j > lo && cmp(ents[j-1], e) > 0 {
			j--
		}
		if j == lo && lo > start && cmp(ents[lo-1], e) > 0 {
			// Too far back: e starts a run.
			if len(runs) == nearRuns {
				return false
			}
			start = i
			runs = append(runs, i)
			continue
		}
		copy(ents[j+1:i+1], ents[j:i])
		ents[j] = e
	}
	if len(runs) == 1 {
		return true
	}
	var buf []entry
	runs = append(runs, len(ents))
	for len(runs) > 2 {
		// Merge runs pairwise, each pair into one.
		n := 0
		for r := 0; r < len(runs)-1; r += 2 {
			if r+2 < len(runs) {
				buf = merge(ents[runs[r]:runs[r+2]], runs[r+1]-runs[r], buf, cmp)
			}
			runs[n] = runs[r]
			n++
		}
		runs[n] = len(ents)
		runs = runs[:n+1]
	}
	return true
}

// merge merges s[:mid] and s[mid:], each in order, in place, through buf
// (given back, grown as needed). The keys of s[:mid] that are not above
// s[mid] and those of s[mid:] that are not below s[mid-1] are already in
// their places and are skipped, found by binary search: two runs that
// barely overlap merge in a few comparisons. Of what is left, the shorter
// side goes to buf, so that a few keys that came late (ratarmount's rows
// of generated parent directories, after all the members) cost no copy of
// the long run before them.
func merge(s []entry, mid int, buf []entry, cmp func(a, b entry) int) []entry {
	if cmp(s[mid-1], s[mid]) <= 0 {
		return buf
	}
	lo, _ := slices.BinarySearchFunc(s[:mid], s[mid], func(a, t entry) int {
		if cmp(a, t) > 0 {
			return 1
		}
		return -1
	})
	hi, _ := slices.BinarySearchFunc(s[mid:], s[mid-1], func(b, t entry) int {
		if cmp(b, t) > 0 {
			return 1
		}
		return -1
	})
	hi += mid
	if mid-lo <= hi-mid {
		// From the front, s[lo:mid] set aside.
		buf = append(buf[:0], s[lo:mid]...)
		p, a, b := lo, 0, mid
		for a < len(buf) && b < hi {
			if cmp(s[b], buf[a]) < 0 {
				s[p] = s[b]
				b++
			} else {
				s[p] = buf[a]
				a++
			}
			p++
		}
		copy(s[p:], buf[a:]) // what is left of s[mid:hi] is in place already
		return buf
	}
	// From the back, s[mid:hi] set aside.
	buf = append(buf[:0], s[mid:hi]...)
	p, a, b := hi-1, mid-1, len(buf)-1
	for a >= lo && b >= 0 {
		if cmp(buf[b], s[a]) < 0 {
			s[p] = s[a]
			a--
		} else {
			s[p] = buf[b]
			b--
		}
		p--
	}
	copy(s[lo:], buf[:b+1]) // what is left of s[lo:mid] is in place already
	return buf
}

// radixSorted sorts the keys of ents, in no useful order, and copies them
// to new chunks in their order, so that the passes that follow (the
// UNIQUE check, the b-tree's) read memory in order instead of missing the
// cache at every key. Each key gets a 64-bit prefix of its first field
// that varies (after the bytes all its TEXT and BLOB values share), the
// keys are sorted by it with a radix sort, and runs of equal prefixes by
// the whole key: nearly in order, as often (the prefix may be that of a
// column of a few values, the shard's number), by sortNearly, or else
// fully.
func (x *index) radixSorted(ents []entry, move bool) {
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
	for i := 0; i < len(ents); {
		j := i + 1
		for j < len(ents) && ents[j].pre == ents[i].pre {
			j++
		}
		if run := ents[i:j]; len(run) > 1 {
			k := 1
			for k < len(run) && x.cmpEnt(run[k-1], run[k]) <= 0 {
				k++
			}
			if k < len(run) && !sortNearly(run, k, x.cmpEnt) {
				slices.SortFunc(run, x.cmpEnt)
			}
		}
		i = j
	}
	if !move {
		x.order = ents
		return
	}

	var sorted index
	for _, e := range ents {
		ch := x.chunks[e.ref>>32][uint32(e.ref):]
		n, k := uvarint(ch)
		copy(sorted.alloc(k+int(n)), ch[:k+int(n)])
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
	e := &UniqueError{
		Index:  x.name,
		Table:  x.t.name,
		Values: va[:nk],
	}
	if !x.noRowid {
		e.Rowids = [2]int64{va[nk].n, vb[nk].n}
	}
	return e
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

// keySource gives an index's keys in order, for plan and write: n of
// them; each calls f with every key in order (ref locating it for at, r
// valid during the call only), stable gives a ref that at can take after
// the pass (for the keys that divide the leaves).
type keySource struct {
	n      int
	each   func(f func(ref uint64, r []byte) error) error
	stable func(ref uint64, r []byte) uint64
	at     func(ref uint64) []byte
}

// source is the keys of x, sorted, in its chunks.
func (x *index) source() keySource {
	return keySource{n: x.n, each: x.each, at: x.at, stable: func(ref uint64, _ []byte) uint64 { return ref }}
}

// indexPlan is an index b-tree planned, not yet written: which keys go to
// which leaf, the interior levels above, and how many pages it all takes,
// so that indexes can be written side by side, each at its own pages (see
// buildParallel).
type indexPlan struct {
	leaves []span
	divs   []int    // keys between the leaves
	levels []level2 // interior levels, from the leaves' parents up
	pages  uint32   // pages the tree takes, overflow pages included
	fixed  [2]int   // levels whose last page took from the page before: leaves, interior
}

// level2 is an interior level of a planned index: its pages' spans of
// children and the dividers that go up.
type level2 struct {
	spans []span
	up    []int
}

// plan checks a UNIQUE index's keys, given by ks, and plans its b-tree.
func (w *Writer) plan(x *index, ks keySource) (*indexPlan, error) {
	pl := &indexPlan{}
	if ks.n == 0 {
		pl.pages = 1
		return pl, nil
	}
	nk := len(x.cols)
	// The leaves are planned as the keys go by, keeping the sizes of the
	// dividers only: memory per leaf, not per key.
	lp := leafPlanner{room: w.usable - 8}
	var prev []byte
	first := true
	ovfl := 0
	clear(x.stat)
	err := ks.each(func(_ uint64, r []byte) error {
		if err := w.canceled(lp.n); err != nil {
			return err
		}
		if x.unique && !first && cmpRecords(prev, r, nk) == 0 && !hasNull(r, nk) {
			return x.uniqueError(prev, r)
		}
		if x.stat != nil {
			// A new value of the first i+1 columns from the first
			// column that differs on.
			k := 0
			for !first && k < nk && cmpRecords(prev, r, k+1) == 0 {
				k++
			}
			for i := k; i < nk; i++ {
				x.stat[i]++
			}
		}
		if x.unique || x.stat != nil {
			prev = append(prev[:0], r...) // r may not outlive the call
			first = false
		}
		lp.add(uint16(w.indexCellSize(len(r))))
		// Every key lies once in the tree, in a leaf or as a divider,
		// and its overflow pages with it.
		ovfl += w.overflowPages(len(r), w.maxLocalIndex)
		return nil
	})
	if err != nil {
		return pl, err
	}
	leaves, divs, dsz, fixed := lp.finish()
	if fixed {
		pl.fixed[0]++
	}
	pl.leaves, pl.divs = leaves, divs
	pages := len(leaves) + ovfl
	for kids := len(leaves); kids > 1; {
		spans, up, fixed := planInterior(dsz, w.usable-12)
		if fixed {
			pl.fixed[1]++
		}
		pl.levels = append(pl.levels, level2{spans, up})
		pages += len(spans)
		nsz := make([]uint16, len(up))
		for j, d := range up {
			nsz[j] = dsz[d]
		}
		kids, dsz = len(spans), nsz
	}
	pl.pages = uint32(pages)
	return pl, nil
}

// overflowPages is how many overflow pages a payload of p bytes takes in
// a cell of a page kind whose most is maxLocal.
func (w *Writer) overflowPages(p, maxLocal int) int {
	n := w.local(p, maxLocal)
	if n == p {
		return 0
	}
	return (p - n + w.usable - 5) / (w.usable - 4)
}

// write writes an index b-tree as planned, its keys given by ks, and
// gives its root.
func (w *Writer) write(pl *indexPlan, ks keySource) (uint32, error) {
	p := &w.tmp
	p.reset()
	if ks.n == 0 {
		return w.emit(p.finish(leafIndex, 0, 0))
	}
	leaves, divs := pl.leaves, pl.divs

	// The leaves, walking the keys again; the dividers' places are kept.
	kids := make([]uint32, 0, len(leaves))
	dref := make([]uint64, len(divs))
	i, li, di := 0, 0, 0
	err := ks.each(func(ref uint64, r []byte) error {
		k := i
		i++
		if err := w.canceled(k); err != nil {
			return err
		}
		if di < len(divs) && divs[di] == k {
			dref[di] = ks.stable(ref, r)
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

	for _, lv := range pl.levels {
		next := make([]uint32, 0, len(lv.spans))
		for _, s := range lv.spans {
			p.reset()
			for i := s.lo; i < s.hi-1; i++ {
				if err := w.indexCell(p, ks.at(dref[i]), kids[i], true); err != nil {
					return 0, err
				}
			}
			pg, err := w.emit(p.finish(interiorIndex, 0, kids[s.hi-1]))
			if err != nil {
				return 0, err
			}
			next = append(next, pg)
		}
		nref := make([]uint64, len(lv.up))
		for j, d := range lv.up {
			nref[j] = dref[d]
		}
		kids, dref = next, nref
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
	lp := leafPlanner{room: room}
	for _, s := range sizes {
		lp.add(s)
	}
	leaves, divs, _, fixed = lp.finish()
	return leaves, divs, fixed
}

// leafPlanner is planLeaves as the keys go by: it keeps the leaves, the
// dividers and their sizes, not every key's size.
type leafPlanner struct {
	room         int
	n, lo, used  int
	leaves       []span
	divs         []int
	dsz          []uint16 // the dividers' cell sizes
	last         uint16   // the size of the key before this one
	beforeLatest uint16   // the size of the key before the latest divider
}

func (lp *leafPlanner) add(s uint16) {
	i := lp.n
	lp.n++
	defer func() { lp.last = s }()
	sz := 2 + max(int(s), 4)
	if lp.used+sz > lp.room {
		lp.leaves = append(lp.leaves, span{lp.lo, i})
		lp.divs, lp.dsz = append(lp.divs, i), append(lp.dsz, s)
		lp.beforeLatest = lp.last
		lp.lo, lp.used = i+1, 0
		return
	}
	lp.used += sz
}

// finish gives the plan: a last leaf left empty takes the last key back,
// and the key before it divides instead.
func (lp *leafPlanner) finish() (leaves []span, divs []int, dsz []uint16, fixed bool) {
	leaves, divs, dsz = append(lp.leaves, span{lp.lo, lp.n}), lp.divs, lp.dsz
	if n := len(leaves); n > 1 && leaves[n-1].lo == leaves[n-1].hi {
		leaves[n-2].hi--
		divs[n-2]--
		dsz[n-2] = lp.beforeLatest
		leaves[n-1].lo--
		fixed = true
	}
	return leaves, divs, dsz, fixed
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
