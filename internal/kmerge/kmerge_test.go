package kmerge

import (
	"errors"
	"math/rand/v2"
	"slices"
	"testing"
)

type run struct {
	items []int
	i, id int
}

// TestMerge: any number of sorted runs come out as one sorted sequence,
// equal items in run order, every item once.
func TestMerge(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 500 {
		var heads []*run
		var want []int
		for id := range r.IntN(12) {
			items := make([]int, r.IntN(20))
			for i := range items {
				items[i] = r.IntN(30)
			}
			slices.Sort(items)
			want = append(want, items...)
			if len(items) > 0 {
				heads = append(heads, &run{items: items, id: id})
			}
		}
		slices.Sort(want)
		var got []int
		var ids []int
		less := func(a, b *run) bool {
			x, y := a.items[a.i], b.items[b.i]
			return x < y || x == y && a.id < b.id
		}
		err := Merge(heads, less, func(c *run) error {
			got, ids = append(got, c.items[c.i]), append(ids, c.id)
			return nil
		}, func(c *run) (bool, error) {
			c.i++
			return c.i < len(c.items), nil
		})
		if err != nil || !slices.Equal(got, want) {
			t.Fatalf("merged %v, want %v (%v)", got, want, err)
		}
		for k := 1; k < len(got); k++ {
			if got[k] == got[k-1] && ids[k] < ids[k-1] {
				t.Fatalf("equal items out of run order: %v runs %v", got, ids)
			}
		}
	}
}

// TestMergeErrors: an error from emit or advance stops the merge and is
// returned.
func TestMergeErrors(t *testing.T) {
	boom := errors.New("boom")
	heads := []*run{{items: []int{1, 2}}, {items: []int{3}}}
	less := func(a, b *run) bool { return a.items[a.i] < b.items[b.i] }
	if err := Merge(heads, less, func(*run) error { return boom }, func(*run) (bool, error) { return false, nil }); err != boom {
		t.Errorf("emit's error: %v", err)
	}
	heads = []*run{{items: []int{1, 2}}, {items: []int{3}}}
	if err := Merge(heads, less, func(*run) error { return nil }, func(*run) (bool, error) { return false, boom }); err != boom {
		t.Errorf("advance's error: %v", err)
	}
}
