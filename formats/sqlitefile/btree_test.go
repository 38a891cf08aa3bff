package sqlitefile

import (
	"math/rand/v2"
	"reflect"
	"testing"
)

// TestPlans: the index level planners cover every key or child once, fill
// no page past its room, and leave no leaf empty and no interior page
// without a cell, whatever the sizes.
func TestPlans(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for range 2000 {
		n := 1 + r.IntN(300)
		sizes := make([]uint16, n)
		for i := range sizes {
			sizes[i] = uint16(3 + r.IntN(120)) // up to a 512-byte page's largest index cell
		}
		leaves, divs, _ := planLeaves(sizes, 504)
		next := 0
		for i, l := range leaves {
			used := 0
			for _, s := range sizes[l.lo:l.hi] {
				used += 2 + max(int(s), 4)
			}
			if l.lo != next || l.hi <= l.lo || used > 504 {
				t.Fatalf("leaf %d of %v: %v, used %d", i, leaves, l, used)
			}
			next = l.hi
			if i < len(divs) {
				if divs[i] != l.hi {
					t.Fatalf("divider %d is %d, leaf ends at %d", i, divs[i], l.hi)
				}
				next++
			}
		}
		if next != n || len(divs) != len(leaves)-1 {
			t.Fatalf("leaves %v divs %v over %d keys", leaves, divs, n)
		}
		// The interior levels, up to the root.
		dsz := make([]uint16, len(divs))
		for i, d := range divs {
			dsz[i] = sizes[d]
		}
		for kids := len(leaves); kids > 1; {
			spans, up, _ := planInterior(dsz, 500)
			next := 0
			for j, s := range spans {
				used := 0
				for i := s.lo; i < s.hi-1; i++ {
					used += 2 + 4 + int(dsz[i])
				}
				if s.lo != next || s.hi-s.lo < 2 || used > 500 {
					t.Fatalf("page %d of %v: used %d", j, spans, used)
				}
				if j < len(up) && up[j] != s.hi-1 {
					t.Fatalf("page %d sends up divider %d, not %d", j, up[j], s.hi-1)
				}
				next = s.hi
			}
			if next != kids || len(up) != len(spans)-1 {
				t.Fatalf("spans %v over %d children", spans, kids)
			}
			up2 := make([]uint16, len(up))
			for j, d := range up {
				up2[j] = dsz[d]
			}
			kids, dsz = len(spans), up2
		}

	}
}

// TestLevelEdges: the row counts at which a level's last page has to take
// from the page before (an index leaf, an index interior page, a table
// interior page) give databases sqlite reads whole.
func TestLevelEdges(t *testing.T) {
	fill := func(w *Writer, n int) {
		tb := w.Table("e", "CREATE TABLE e(k TEXT UNIQUE, pad BLOB)")
		tb.AutoIndex(0)
		pad := make([]byte, 100)
		for i := range n {
			if err := tb.Append(Text(key(i)), Blob(pad)); err != nil {
				t.Fatal(err)
			}
		}
	}
	found := map[int]int{} // kind -> row count
	for n := 1; len(found) < 3 && n < 5000; n++ {
		w, _ := New(&memFile{}, Options{PageSize: 512})
		fill(w, n)
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		for k, c := range w.rebalanced {
			if _, ok := found[k]; !ok && c > 0 {
				found[k] = n
			}
		}
	}
	if len(found) < 3 {
		t.Fatalf("found only %v", found)
	}
	t.Logf("row counts: %v", found)
	for kind, n := range found {
		path := create(t, Options{PageSize: 512}, func(w *Writer) { fill(w, n) })
		checkIntegrity(t, path)
		db := open(t, path)
		want := make([][]any, n)
		for i := range want {
			want[i] = []any{key(i)}
		}
		if got := query(t, db, "SELECT k FROM e INDEXED BY sqlite_autoindex_e_1 ORDER BY k"); !reflect.DeepEqual(got, want) {
			t.Fatalf("kind %d, %d rows: keys through the index differ", kind, n)
		}
		if got := query(t, db, "SELECT k FROM e"); !reflect.DeepEqual(got, want) {
			t.Fatalf("kind %d, %d rows: rows differ", kind, n)
		}
	}
}

// TestLeafPlannerDividerSizes: planning as the keys go by keeps only the
// dividers' sizes (memory per leaf, not per key), yet gives the plan made
// over every key's size at once (referenceLeaves), and the dividers' sizes
// are those of the keys it makes dividers, the last leaf's fix-up included.
func TestLeafPlannerDividerSizes(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	fixed := 0
	for range 3000 {
		n := 1 + r.IntN(300)
		sizes := make([]uint16, n)
		for i := range sizes {
			sizes[i] = uint16(3 + r.IntN(120))
		}
		lp := leafPlanner{room: 504}
		for _, s := range sizes {
			lp.add(s)
		}
		leaves, divs, dsz, fix := lp.finish()
		if fix {
			fixed++
		}
		wantLeaves, wantDivs, wantFix := referenceLeaves(sizes, 504)
		if !reflect.DeepEqual(leaves, wantLeaves) || !reflect.DeepEqual(divs, wantDivs) || fix != wantFix {
			t.Fatalf("plan differs from the reference: %v %v against %v %v", leaves, divs, wantLeaves, wantDivs)
		}
		for i, d := range divs {
			if dsz[i] != sizes[d] {
				t.Fatalf("divider %d (key %d) has size %d, want %d", i, d, dsz[i], sizes[d])
			}
		}
	}
	if fixed == 0 {
		t.Fatal("no plan needed the last leaf's fix-up: the case is untested")
	}
}

// referenceLeaves is the plan over every key's size at once, as the writer
// made it when it kept them all: greedy leaves, and a last leaf left empty
// taking the last key back.
func referenceLeaves(sizes []uint16, room int) (leaves []span, divs []int, fixed bool) {
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
