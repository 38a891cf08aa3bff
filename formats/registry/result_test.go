package registry

import (
	"encoding/json"
	"testing"
)

type figures struct {
	Files int `json:"files"`
}

// TestStatsAs: a result's figures come back typed, a merge's too, and a
// merge's print as {"<format>": ..., "merge": ...}.
func TestStatsAs(t *testing.T) {
	r := &Result{Stats: &figures{Files: 3}}
	if st, ok := StatsAs[*figures](r); !ok || st.Files != 3 {
		t.Errorf("StatsAs = %v %v", st, ok)
	}
	if _, ok := StatsAs[*Result](r); ok {
		t.Errorf("StatsAs of another type succeeded")
	}
	m := &Result{Stats: &MergedStats{Format: "toy", Stats: &figures{Files: 5}, Merge: map[string]int{"parts": 2}}}
	if st, ok := StatsAs[*figures](m); !ok || st.Files != 5 {
		t.Errorf("StatsAs of a merge = %v %v", st, ok)
	}
	b, err := json.Marshal(m.Stats)
	if err != nil || string(b) != `{"merge":{"parts":2},"toy":{"files":5}}` {
		t.Errorf("merge as JSON: %s %v", b, err)
	}
}
