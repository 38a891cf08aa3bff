package loaders

import (
	"context"
	"path/filepath"
	"slices"
	"testing"

	"github.com/itarconv/itarconv/dataset"
	"github.com/itarconv/itarconv/fold"
	"github.com/itarconv/itarconv/formats/tarfile"
	"github.com/itarconv/itarconv/testing/testutil"
)

// checkKeys runs a KeyCheck over a conformance case's shards.
func checkKeys(t *testing.T, name string) *KeyReport {
	t.Helper()
	shards, err := filepath.Glob(filepath.Join(testutil.Conformance(t, "taridx"), name, "*.tar"))
	if err != nil || len(shards) == 0 {
		t.Fatalf("%s: no shards (%v)", name, err)
	}
	slices.Sort(shards)
	keys := NewKeyCheck()
	src := fold.NewTarShards(shards, tarfile.Options{})
	src.Members = keys.Shard
	if err := dataset.Run(context.Background(), src, noSink{}, dataset.Options{Workers: 2}); err != nil {
		t.Fatal(err)
	}
	return keys.Report(shards)
}

func TestKeyCheck(t *testing.T) {
	tests := []struct {
		name             string
		members, samples int64
		split, repeated  []string // the keys (Examples without their shard)
		unusable         map[string]int64
	}{
		{name: "ustar_basic", members: 18, samples: 8, unusable: map[string]int64{}},
		// a.jpg a.jpg a.cls b.jpg c.jpg b.jpg | c.jpg c.cls
		{name: "duplicates", members: 8, samples: 5, split: []string{"b"}, repeated: []string{"c"}, unusable: map[string]int64{}},
		// a.jpg b.jpg a.cls b.cls c.jpg | d.jpg c.cls d.cls
		{name: "noncontiguous", members: 8, samples: 8, split: []string{"a", "b", "d"}, repeated: []string{"c"}, unusable: map[string]int64{}},
		// Names in pax records: wids reads the header's own name field.
		{name: "pax_py", members: 6, samples: 5, unusable: map[string]int64{KeyLongName: 5}},
		{name: "gnu_longname_py", members: 5, samples: 5, unusable: map[string]int64{KeyLongName: 2}},
		{name: "ustar_prefix", members: 4, samples: 2, unusable: map[string]int64{KeyLongName: 4}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := checkKeys(t, tt.name)
			if r.Members != tt.members || r.Samples != tt.samples {
				t.Errorf("%d members, %d samples; want %d, %d", r.Members, r.Samples, tt.members, tt.samples)
			}
			var split []string
			for _, e := range r.Split.Examples {
				split = append(split, e[len(filepath.Dir(e))+len("/train_0000.tar: "):])
			}
			if r.Split.Count != int64(len(tt.split)) || !slices.Equal(split, tt.split) {
				t.Errorf("split keys %+v, want %q", r.Split, tt.split)
			}
			if r.Repeated.Count != int64(len(tt.repeated)) {
				t.Errorf("repeated keys %+v, want %q", r.Repeated, tt.repeated)
			}
			for i, k := range tt.repeated {
				if e := r.Repeated.Examples[i]; e[:len(k)+2] != k+" (" {
					t.Errorf("repeated key %q, want %q", e, k)
				}
			}
			got := map[string]int64{}
			for why, f := range r.Unusable {
				got[why] = f.Count
			}
			if len(got) != len(tt.unusable) {
				t.Errorf("unusable %v, want %v", got, tt.unusable)
			}
			for why, n := range tt.unusable {
				if got[why] != n {
					t.Errorf("unusable %v, want %v", got, tt.unusable)
				}
			}
			if r.OK() != (len(tt.split)+len(tt.repeated)+len(tt.unusable) == 0) {
				t.Errorf("OK() = %v", r.OK())
			}
		})
	}
}
