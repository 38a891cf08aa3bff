package sqlitefile

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// TestSortNearly: sortNearly sorts what is nearly in order (keys a few
// places out, a few runs), gives up on the rest, and in every case leaves
// a permutation of its input.
func TestSortNearly(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	cmp := func(a, b entry) int { return cmp3(int64(a.ref), int64(b.ref)) }
	shapes := []struct {
		name string
		vals func(n int) []int
		ok   bool // sortNearly sorts it
	}{
		{"sorted", func(n int) []int { return seq(n) }, true},
		{"pairs swapped", func(n int) []int { return blocksReversed(n, 2) }, true},
		{"blocks of 16 reversed", func(n int) []int { return blocksReversed(n, nearReach) }, true},
		{"blocks of 17 reversed", func(n int) []int { return blocksReversed(n, nearReach+1) }, true},
		{"blocks of 18 reversed", func(n int) []int { return blocksReversed(n, nearReach+2) }, false},
		{"displaced up to 15", func(n int) []int { return displaced(r, n, nearReach-1) }, true},
		{"8 streams, 60 stretches", func(n int) []int { return interleaved(n, 8, n/60+1) }, true},
		{"8 streams, 600 stretches", func(n int) []int { return interleaved(n, 8, n/600+1) }, false},
		{"a few late", func(n int) []int { return late(r, n, 20) }, true},
		{"random", func(n int) []int { return r.Perm(n) }, false},
		{"reversed", func(n int) []int { return blocksReversed(n, n) }, false},
	}
	for _, s := range shapes {
		for _, n := range []int{1, 2, 17, 100, 5000} {
			vals := s.vals(n)
			ents := make([]entry, n)
			for i, v := range vals {
				ents[i].ref = uint64(v)
			}
			k := 1
			for k < n && vals[k-1] <= vals[k] {
				k++
			}
			ok := sortNearly(ents, k, cmp)
			got := make([]int, n)
			for i, e := range ents {
				got[i] = int(e.ref)
			}
			if ok && !slices.IsSorted(got) {
				t.Fatalf("%s, %d: not sorted: %v", s.name, n, clipInts(got))
			}
			slices.Sort(got)
			if !slices.Equal(got, seq(n)) {
				t.Fatalf("%s, %d: not a permutation", s.name, n)
			}
			if n == 5000 && ok != s.ok {
				t.Errorf("%s, %d: sortNearly says %v", s.name, n, ok)
			}
		}
	}
}

// TestMerge: merge gives the runs merged, whatever their overlap.
func TestMerge(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	cmp := func(a, b entry) int { return cmp3(int64(a.ref), int64(b.ref)) }
	var buf []entry
	for range 2000 {
		n := 2 + r.IntN(60)
		mid := 1 + r.IntN(n-1)
		vals := r.Perm(n)
		switch r.IntN(3) { // runs apart, barely overlapping, or mixed
		case 0:
			vals = seq(n)
		case 1:
			vals = seq(n)
			vals[mid-1], vals[mid] = vals[mid], vals[mid-1]
		}
		slices.Sort(vals[:mid])
		slices.Sort(vals[mid:])
		s := make([]entry, n)
		for i, v := range vals {
			s[i].ref = uint64(v)
		}
		buf = merge(s, mid, buf, cmp)
		for i := range s {
			if s[i].ref != uint64(i) {
				t.Fatalf("%v split at %d: merged to %v", vals, mid, s)
			}
		}
	}
}

func seq(n int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = i
	}
	return s
}

// blocksReversed is 0..n-1 with each block of k reversed.
func blocksReversed(n, k int) []int {
	s := seq(n)
	for i := 0; i < n; i += k {
		slices.Reverse(s[i:min(i+k, n)])
	}
	return s
}

// displaced is 0..n-1 with each value moved by up to d places.
func displaced(r *rand.Rand, n, d int) []int {
	s := seq(n)
	for i := 0; i+d < n; i += d + 1 {
		slices.Reverse(s[i : i+1+r.IntN(d+1)])
	}
	return s
}

// interleaved is 0..n-1 split in k streams (value mod k), taken in turns
// by stretches of l.
func interleaved(n, k, l int) []int {
	var s []int
	next := make([]int, k)
	for i := range next {
		next[i] = i
	}
	for len(s) < n {
		for j := range k {
			for range l {
				if next[j] < n {
					s = append(s, next[j])
					next[j] += k
				}
			}
		}
	}
	return s
}

// late is 0..n-1 with m values moved to random places further on.
func late(r *rand.Rand, n, m int) []int {
	s := seq(n)
	for range m {
		if n < 2 {
			break
		}
		i := r.IntN(n - 1)
		j := i + r.IntN(n-i)
		v := s[i]
		copy(s[i:j], s[i+1:j+1])
		s[j] = v
	}
	return s
}

func clipInts(s []int) []int {
	if len(s) > 40 {
		return s[:40]
	}
	return s
}

// sortShape is an order of rows for TestIndexSort: the rows of a table
// t(a, b, c), in the order they are appended, and the way the index's
// keys are expected to be sorted (see Writer.sorted).
type sortShape struct {
	name string
	rows [][]Value
	way  int
}

// sortShapes are rows nearly in the order of the index on t(a, b, c) in
// several ways, and some far from it.
func sortShapes() []sortShape {
	r := rand.New(rand.NewPCG(13, 14))
	var shapes []sortShape
	add := func(name string, way int, rows [][]Value) {
		shapes = append(shapes, sortShape{name, rows, way})
	}

	// energon's sample_parts: each sample's parts in the tar's order.
	var rows [][]Value
	for s := range 3000 {
		for _, ext := range []string{"jpg", "cls"} {
			rows = append(rows, []Value{Int(int64(s / 1000)), Int(int64(s)), Text(ext)})
		}
	}
	add("parts jpg, cls", 0, rows)

	// Samples of up to 6 parts in any order, keys long enough that the
	// chunks roll over, with the parts crossing the chunks' ends.
	rows = nil
	exts := []string{"jpg", "cls", "json", "txt", "png", "mp4"}
	for s := range 4000 {
		k := 1 + r.IntN(len(exts))
		for _, e := range r.Perm(k) {
			rows = append(rows, []Value{Text(fmt.Sprintf("shard-%04d/%s", s/500, strings.Repeat("x", 20))), Int(int64(s)), Text(exts[e])})
		}
	}
	add("parts in any order, chunks", 0, rows)

	// The first keys in descending order: each goes first.
	rows = nil
	for i := range nearReach + 1 {
		rows = append(rows, []Value{Int(int64(100 - i)), Null(), Null()})
	}
	for i := range 200 {
		rows = append(rows, []Value{Int(int64(101 + i)), Null(), Null()})
	}
	add("descending start", 0, rows)

	// Equal keys, ordered by rowid, as they come; and then with other
	// values among them, in places as far as they like.
	rows = nil
	for i := range 3000 {
		rows = append(rows, []Value{Int(int64(i / 700)), Text("same"), Null()})
	}
	add("equal keys", 0, rows)
	rows = nil
	for i := range 3000 {
		rows = append(rows, []Value{Int(int64(5 - 2*(i%2))), Text("same"), Null()})
	}
	add("equal keys interleaved", 2, rows)

	// Values of every kind, in SQLite's order (NULLs, numbers of both
	// kinds by value, TEXT, BLOB) but for each being up to 15 places out,
	// and with many equal values.
	vals := make([]Value, 6000)
	for i := range vals {
		vals[i] = mixedOrder(r)
	}
	slices.SortStableFunc(vals, func(a, b Value) int {
		return cmpRecords(testKey([]Value{a}), testKey([]Value{b}), -1)
	})
	rows = nil
	for _, o := range displaced(r, len(vals), nearReach-1) {
		rows = append(rows, []Value{vals[o], Int(int64(o)), mixedOrder(r)})
	}
	add("mixed kinds displaced", 0, rows)

	// The same values in blocks of 20 reversed: too far for keep; 600
	// runs, too many for sortNearly.
	rows = nil
	for _, o := range blocksReversed(len(vals), 20) {
		rows = append(rows, []Value{vals[o], Int(int64(o)), Null()})
	}
	add("mixed kinds blocks reversed", 2, rows)

	// Shards whose rows come in stretches, the parts of each sample in
	// the tar's order: a few rounds of stretches are runs to merge; many
	// go to the radix sort, whose prefix (the shard) leaves runs of keys
	// nearly in order.
	for _, c := range []struct {
		stretch, way int
	}{{100, 1}, {5, 2}} {
		rows = nil
		for _, s := range interleaved(8*600, 8, c.stretch) {
			shard, sample := s%8, s/8
			for _, ext := range []string{"jpg", "cls"} {
				rows = append(rows, []Value{Int(int64(shard)), Int(int64(sample)), Text(ext)})
			}
		}
		add(fmt.Sprintf("shards in stretches of %d", c.stretch), c.way, rows)
	}

	// In order but for a few rows that come late.
	rows = nil
	for _, i := range late(r, 5000, 10) {
		rows = append(rows, []Value{Text(key(i)), Null(), Null()})
	}
	add("a few late", 1, rows)

	// Keys too large to carry to the next chunk, slightly out of order:
	// sorted at Close.
	rows = nil
	big := strings.Repeat("b", 40000)
	for _, i := range blocksReversed(60, 2) {
		rows = append(rows, []Value{Text(fmt.Sprintf("%04d%s", i, big)), Null(), Null()})
	}
	add("large keys", 1, rows)

	// No order at all.
	rows = nil
	for _, i := range r.Perm(5000) {
		rows = append(rows, []Value{Int(int64(i % 50)), Text(key(i)), Real(float64(i) / 3)})
	}
	add("random", 2, rows)
	return shapes
}

// TestIndexSort: indexes whose rows come nearly in order, in the ways
// tar members do, and far from it, are in SQLite's order: sqlite's
// integrity_check agrees, and a scan of each index gives the rows in the
// order modernc's own index gives them. Each shape goes the expected way
// (in order as the keys came, sortNearly, the radix sort).
func TestIndexSort(t *testing.T) {
	schema := []stmt{
		{sql: "CREATE TABLE t(a, b, c)", table: "t"},
		{sql: "CREATE INDEX t_abc ON t(a, b, c)", table: "t", index: "t_abc", cols: []int{0, 1, 2}},
		{sql: "CREATE INDEX t_a ON t(a)", table: "t", index: "t_a", cols: []int{0}},
	}
	for _, s := range sortShapes() {
		t.Run(s.name, func(t *testing.T) {
			data := map[string][][]Value{"t": s.rows}
			var w *Writer
			got := create(t, Options{PageSize: 1024}, func(wr *Writer) {
				w = wr
				tables := declare(t, wr, schema)
				for _, r := range s.rows {
					if err := tables["t"].Append(r...); err != nil {
						t.Fatal(err)
					}
				}
			})
			if w.sorted[s.way] == 0 {
				t.Errorf("no index went way %d: %v", s.way, w.sorted)
			}
			checkIntegrity(t, got)
			want := twin(t, schema, data)
			g, wd := open(t, got), open(t, want)
			for _, q := range []string{
				"SELECT rowid FROM t INDEXED BY t_abc ORDER BY a, b, c",
				"SELECT rowid FROM t INDEXED BY t_a ORDER BY a",
			} {
				if p := plan(t, g, q); strings.Contains(p, "TEMP B-TREE") {
					t.Fatalf("%s: plan %s", q, p)
				}
				if gr, wr := query(t, g, q), query(t, wd, q); !reflect.DeepEqual(gr, wr) {
					t.Fatalf("%s:\n got %v\nwant %v", q, clip(gr), clip(wr))
				}
			}
		})
	}
}

// TestIndexSortFull: the keys of each shape, sorted whichever way, are
// in the order of a plain sort of them all, and the chunks, once keep
// has moved keys about, hold each key once.
func TestIndexSortFull(t *testing.T) {
	for _, s := range sortShapes() {
		w, _ := New(&memFile{}, Options{})
		tb := w.Table("t", "CREATE TABLE t(a, b, c)")
		if err := w.Index("i", "t", "CREATE INDEX i ON t(a, b, c)", []int{0, 1, 2}, false); err != nil {
			t.Fatal(err)
		}
		var want [][]byte
		for i, r := range s.rows {
			if err := tb.Append(r...); err != nil {
				t.Fatal(err)
			}
			want = append(want, testKey(append(slices.Clone(r), Int(int64(i+1)))))
		}
		slices.SortFunc(want, func(a, b []byte) int { return cmpRecords(a, b, -1) })
		x := tb.idx[0]
		x.sort()
		var got [][]byte
		x.each(func(_ uint64, r []byte) error {
			got = append(got, r)
			return nil
		})
		if len(got) != len(want) {
			t.Fatalf("%s: %d keys, want %d", s.name, len(got), len(want))
		}
		for i := range got {
			if string(got[i]) != string(want[i]) {
				t.Fatalf("%s: key %d: %v, want %v", s.name, i, decodeRecord(got[i]), decodeRecord(want[i]))
			}
		}
	}
}

// testKey is the record of values.
func testKey(vals []Value) []byte {
	st := make([]uint64, len(vals))
	sum, body := 0, 0
	for i := range vals {
		var n int
		st[i], n = vals[i].serial()
		sum += varintLen(st[i])
		body += n
	}
	h := headerLen(sum)
	b := make([]byte, h+body)
	putRecord(b, vals, st, h)
	return b
}

// TestUniqueNearly: a UNIQUE index whose keys came nearly in order finds
// a key twice, if there is one, among the keys keep moved or those that
// came late.
func TestUniqueNearly(t *testing.T) {
	swapped := blocksReversed(3000, 3)
	twice := slices.Clone(swapped)
	twice[1500] = 1499
	for _, c := range []struct {
		order []int
		dup   int // the key twice, or -1
		way   int
	}{
		{swapped, -1, 0},
		{twice, 1499, 0},
		{append(seq(3000), 1498), 1498, 1},
		{append(seq(3000), 5000, 1499), 1499, 1},
	} {
		w, _ := New(&memFile{}, Options{})
		tb := w.Table("u", "CREATE TABLE u(k UNIQUE)")
		tb.AutoIndex(0)
		for _, k := range c.order {
			if err := tb.Append(Text(key(k))); err != nil {
				t.Fatal(err)
			}
		}
		err := w.Close()
		var ue *UniqueError
		if (c.dup >= 0) != errors.As(err, &ue) || c.dup >= 0 && ue.Values[0].Text() != key(c.dup) {
			t.Errorf("key %d twice: %v", c.dup, err)
		}
		if w.sorted[c.way] != 1 {
			t.Errorf("key %d twice: sorted %v", c.dup, w.sorted)
		}
	}
}

// TestCmpRecords: cmpRecords orders records as a plain comparison of
// their values does (SQLite's rules), integers of every size and sign,
// REALs, TEXT and BLOB among them, the same serial types or not.
func TestCmpRecords(t *testing.T) {
	r := rand.New(rand.NewPCG(15, 16))
	value := func() Value {
		switch r.IntN(4) {
		case 0:
			return mixedOrder(r)
		case 1:
			return Int(someInts[r.IntN(len(someInts))])
		case 2:
			return Int(r.Int64() >> r.IntN(64))
		}
		return Int(-r.Int64() >> r.IntN(64))
	}
	for range 200000 {
		n := 1 + r.IntN(3)
		a, b := make([]Value, n), make([]Value, n)
		for i := range n {
			a[i], b[i] = value(), value()
			if r.IntN(2) == 0 {
				b[i] = a[i]
			}
		}
		want := 0
		for i := 0; i < n && want == 0; i++ {
			want = cmpValues(a[i], b[i])
		}
		if got := cmpRecords(testKey(a), testKey(b), -1); got != want {
			t.Fatalf("%v, %v: %d, want %d", a, b, got, want)
		}
	}
}

// cmpValues compares two values by SQLite's rules, plainly.
func cmpValues(a, b Value) int {
	class := func(v Value) int {
		switch v.k {
		case KindNull:
			return 0
		case KindInt, KindReal:
			return 1
		case KindText:
			return 2
		}
		return 3
	}
	if ca, cb := class(a), class(b); ca != cb {
		return cmp3(int64(ca), int64(cb))
	}
	switch {
	case a.k == KindNull:
		return 0
	case a.k == KindInt && b.k == KindInt:
		return cmp3(a.n, b.n)
	case a.k == KindReal && b.k == KindReal:
		x, y := a.Float64(), b.Float64()
		if x < y {
			return -1
		}
		if x > y {
			return 1
		}
		return 0
	case a.k == KindInt:
		return cmpIntReal(a.n, b.Float64())
	case b.k == KindInt:
		return -cmpIntReal(b.n, a.Float64())
	}
	return strings.Compare(a.s, b.s)
}
