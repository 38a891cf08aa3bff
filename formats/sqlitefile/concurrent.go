package sqlitefile

import "sync/atomic"

// Options.Concurrent: the keys a table's rows give its indexes are made
// beside the appends, each index's on goroutines of its own, in the
// rows' order (a batch's goroutine for an index waits for the one of the
// batch before), from copies of the rows' values in batches. Append then
// only writes the table's pages. The keys, so their b-trees, are those
// Append would make itself.

// keyBatchRows rows go to the indexes' goroutines at once; keyBatches
// batches of a table may be in flight.
const (
	keyBatchRows = 256
	keyBatches   = 8
)

// keyBatch is rows' values for the indexes: each row's values and their
// serial types (the rowid column's being the rowid's), ncol a row.
type keyBatch struct {
	vals   []Value
	st     []uint64
	rowids []int64
	ncol   []int // values of each row
	left   atomic.Int32
}

// keyFeed is a table's batches on their way to its indexes.
type keyFeed struct {
	cur   *keyBatch
	free  chan *keyBatch
	slots chan struct{}   // in-flight batches
	last  []chan struct{} // per index, closed when its latest batch is done
}

func newKeyFeed(nidx int) *keyFeed {
	f := &keyFeed{free: make(chan *keyBatch, keyBatches), slots: make(chan struct{}, keyBatches), last: make([]chan struct{}, nidx)}
	for i := range f.last {
		f.last[i] = make(chan struct{})
		close(f.last[i])
	}
	return f
}

// feedKeys is addKeys for a table whose keys are made concurrently.
func (t *Table) feedKeys(values []Value, st []uint64, rowid int64) error {
	f := t.feed
	b := f.cur
	if b == nil {
		select {
		case b = <-f.free:
		default:
			b = &keyBatch{}
		}
		f.cur = b
	}
	// The columns the indexes read (t.need of them, the rowid's alias
	// among them or after), no more.
	m := min(len(values), t.need)
	n := max(m, t.alias+1)
	b.vals = append(b.vals, values[:m]...)
	b.st = append(b.st, st[:m]...)
	for range n - m {
		b.vals = append(b.vals, Value{})
		b.st = append(b.st, 0)
	}
	if t.alias >= 0 {
		b.st[len(b.st)-n+t.alias], _ = intSerial(rowid)
	}
	b.rowids = append(b.rowids, rowid)
	b.ncol = append(b.ncol, n)
	if len(b.rowids) == keyBatchRows {
		t.sendKeys()
	}
	if w := t.w; w.spillAt > 0 && w.keyBytesA.Load() > w.spillAt {
		t.w.drainKeys()
		w.keyBytes = w.keyBytesA.Swap(0)
		return w.spillKeys()
	}
	return nil
}

// sendKeys hands the batch being filled to the indexes' goroutines.
func (t *Table) sendKeys() {
	f := t.feed
	b := f.cur
	if b == nil || len(b.rowids) == 0 {
		return
	}
	f.cur = nil
	f.slots <- struct{}{}
	b.left.Store(int32(len(t.idx)))
	for i, x := range t.idx {
		prev, done := f.last[i], make(chan struct{})
		f.last[i] = done
		go func() {
			<-prev
			var n int64
			off := 0
			for r, rowid := range b.rowids {
				k := b.ncol[r]
				n += int64(x.add(b.vals[off:off+k], b.st[off:off+k], t.alias, rowid))
				off += k
			}
			t.w.keyBytesA.Add(n)
			close(done)
			if b.left.Add(-1) == 0 {
				clear(b.vals)
				b.vals, b.st, b.rowids, b.ncol = b.vals[:0], b.st[:0], b.rowids[:0], b.ncol[:0]
				<-f.slots
				select {
				case f.free <- b:
				default:
				}
			}
		}()
	}
}

// drainKeys hands over every batch and waits until the indexes hold
// their keys.
func (w *Writer) drainKeys() {
	for _, t := range w.tables {
		if t.feed == nil {
			continue
		}
		t.sendKeys()
		for _, done := range t.feed.last {
			<-done
		}
	}
}
