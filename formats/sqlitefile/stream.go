package sqlitefile

import "errors"

// errDisorder: keys given again (KeysFrom) came further out of order than
// a stream mends.
var errDisorder = errors.New("sqlitefile: keys too far out of order to stream")

// streamWindow is how many keys a stream holds back to put them in order:
// enough for the parts of a sample, which come in a tar's order, not the
// order of their names.
const streamWindow = 64

// stream is the keys of x, from the table's rows given again (KeysFrom),
// in order, kept nowhere: each pass builds them anew as the rows come, and
// puts them in order through a window of the last streamWindow keys. A key
// that would go before one given already ends the pass with errDisorder
// (the keys are then gathered and sorted in memory). Only the keys that
// divide the leaves are kept, for the interior pages: the memory an index
// takes is then its leaves' dividers, whatever its keys.
func (t *Table) stream(x *index) keySource {
	return dividerKeys(int(t.rows), func(f func(ref uint64, r []byte) error) error { return t.streamPass(x, f) })
}

// dividerKeys is a source of n keys that each pass makes anew (each), and
// that keeps only the keys stable is asked for (the leaves' dividers), in
// chunks of its own.
func dividerKeys(n int, each func(func(ref uint64, r []byte) error) error) keySource {
	div := &index{}
	return keySource{
		n:    n,
		each: each,
		stable: func(_ uint64, r []byte) uint64 {
			b := div.alloc(uvarintLen(len(r)) + len(r))
			copy(b[putUvarint(b, uint64(len(r))):], r)
			ci := len(div.chunks) - 1
			return uint64(ci)<<32 | uint64(len(div.chunks[ci])-len(b))
		},
		at: div.at,
	}
}

// streamPass calls f with each key of x, in order (ref 0, r valid during
// the call only).
//
// The window is win[head:], in order; keys are taken from its front by
// moving head, and the slice is moved down only when head reaches
// streamWindow, so that a key costs no shift of the window. A key not
// below the window's last (keys in order, the common case) is appended
// after one comparison.
func (t *Table) streamPass(x *index, f func(ref uint64, r []byte) error) error {
	scratch := &index{name: x.name, t: t, cols: x.cols}
	win := make([][]byte, 0, 2*streamWindow+1)
	head := 0
	var free [][]byte
	var last []byte // the last key given to f
	given := false
	var ferr error
	emit := func() {
		r := win[head]
		if ferr == nil {
			ferr = f(0, r)
		}
		last = append(last[:0], r...)
		given = true
		win[head] = nil
		head++
		free = append(free, r[:0])
		if head == streamWindow {
			n := copy(win, win[head:])
			clear(win[n:])
			win, head = win[:n], 0
		}
	}
	n, err := t.keys(x.cols, func(values []Value, st []uint64, rowid int64) {
		if ferr != nil {
			return
		}
		scratch.cur, scratch.chunks = scratch.cur[:0], scratch.chunks[:0]
		scratch.add(values, st, t.alias, rowid)
		r := record(scratch.cur)
		var k []byte
		if n := len(free); n > 0 {
			k, free = free[n-1], free[:n-1]
		}
		k = append(k, r...)
		i := len(win)
		if i > head && cmpRecords(win[i-1], k, -1) > 0 {
			if given && cmpRecords(last, k, -1) > 0 {
				ferr = errDisorder
				return
			}
			for i > head && cmpRecords(win[i-1], k, -1) > 0 {
				i--
			}
		} else if i == head && given && cmpRecords(last, k, -1) > 0 {
			ferr = errDisorder
			return
		}
		win = append(win, nil)
		copy(win[i+1:], win[i:])
		win[i] = k
		if len(win)-head > streamWindow {
			emit()
		}
	})
	for err == nil && ferr == nil && len(win) > head {
		emit()
	}
	if err == nil && ferr == nil {
		err = t.counted(n)
	}
	if err != nil {
		return err
	}
	return ferr
}
