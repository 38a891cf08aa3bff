package kmerge

// Merge walks k sorted runs in order. heads are the runs that have an item
// loaded (their first); less orders two runs by their loaded items (break
// ties, by run number say, for a stable merge); emit receives the run whose
// item is the smallest; advance loads that run's next item, or reports
// false when the run is done. Memory is the heads, whatever the runs hold.
func Merge[C any](heads []C, less func(a, b C) bool, emit func(C) error, advance func(C) (bool, error)) error {
	h := heads
	down := func(i int) {
		for {
			l := 2*i + 1
			if l >= len(h) {
				return
			}
			if r := l + 1; r < len(h) && less(h[r], h[l]) {
				l = r
			}
			if !less(h[l], h[i]) {
				return
			}
			h[i], h[l] = h[l], h[i]
			i = l
		}
	}
	for i := len(h)/2 - 1; i >= 0; i-- {
		down(i)
	}
	for len(h) > 0 {
		c := h[0]
		if err := emit(c); err != nil {
			return err
		}
		ok, err := advance(c)
		if err != nil {
			return err
		}
		if !ok {
			h[0] = h[len(h)-1]
			h = h[:len(h)-1]
		}
		down(0)
	}
	return nil
}
