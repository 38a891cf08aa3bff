package taridx

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/itarconv/itarconv/testing/testutil"
)

// describeIndexByMaps is the straightforward account of an index, with a
// map of every key: the reference describeIndex must agree with.
func describeIndexByMaps(x *Index) (keys, runs, shards, nDup int, dups []DupInfo) {
	type rowKey struct {
		key Key
		ext uint16
	}
	seenKeys := map[Key]bool{}
	count := map[rowKey]int{}
	fids := map[uint16]bool{}
	var last Key
	for i := 0; i < x.Len(); i++ {
		r := x.Row(i)
		if i == 0 || r.Key() != last {
			runs++
			last = r.Key()
		}
		seenKeys[r.Key()] = true
		fids[r.Fid] = true
		count[rowKey{r.Key(), r.ExtID}]++
	}
	listed := map[rowKey]int{}
	dups = []DupInfo{}
	for i := 0; i < x.Len(); i++ {
		r := x.Row(i)
		rk := rowKey{r.Key(), r.ExtID}
		if count[rk] < 2 {
			continue
		}
		k, ok := listed[rk]
		if !ok {
			nDup++
			k = -1
			if len(dups) < maxListedDuplicates {
				k = len(dups)
				dups = append(dups, DupInfo{KeyHash: fmt.Sprintf("%016x", r.KeyHash), CrashID: r.CrashID, Ext: x.Exts[r.ExtID]})
			}
			listed[rk] = k
		}
		if k >= 0 {
			dups[k].Rows = append(dups[k].Rows, i)
		}
	}
	return len(seenKeys), runs, len(fids), nDup, dups
}

func TestDescribeIndexAgreesWithMaps(t *testing.T) {
	var paths []string
	for _, set := range []string{"taridx", "taridx-synthetic"} {
		m, _ := filepath.Glob(filepath.Join(testutil.Conformance(t, set), "*", "*.taridx"))
		paths = append(paths, m...)
	}
	paths = append(paths, generatedIndex(t))
	if len(paths) < 20 {
		t.Fatalf("only %d indexes", len(paths))
	}
	withDups := 0
	for _, p := range paths {
		x, err := ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		info := describe(x)
		keys, runs, shards, nDup, dups := describeIndexByMaps(x)
		if info.Keys != keys || info.Runs != runs || info.Shards != shards || info.NDuplicates != nDup {
			t.Errorf("%s: keys %d runs %d shards %d dups %d, want %d %d %d %d", p,
				info.Keys, info.Runs, info.Shards, info.NDuplicates, keys, runs, shards, nDup)
		}
		if !reflect.DeepEqual(info.Duplicates, dups) {
			t.Errorf("%s: duplicates\n%v\nwant\n%v", p, info.Duplicates, dups)
		}
		if nDup > 0 {
			withDups++
		}
	}
	if withDups < 2 {
		t.Errorf("only %d indexes with duplicate keys: the test checks too little", withDups)
	}
}

// generatedIndex writes an index of 5,000 rows over 300 stems and 3
// extensions in random order: many duplicates (more than are listed),
// keys in several runs, rows over several shards.
func generatedIndex(t *testing.T) string {
	p := filepath.Join(t.TempDir(), "gen.taridx")
	w, err := Create(p, WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	exts := []string{"jpg", "cls", "json"}
	for i := 0; i < 5000; i++ {
		stem := fmt.Sprintf("s%03d", rng.IntN(300))
		err := w.Add(Entry{Fid: uint16(i / 1000), Offset: uint64(i) * 1024, Size: uint64(rng.IntN(100)),
			Stem: stem, Ext: exts[rng.IntN(3)], KeyHash: KeyHash(stem)})
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestInspectCancelled: Inspect takes the caller's context.
func TestInspectCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	path := generatedIndex(t)
	if _, err := Inspect(ctx, path); !errors.Is(err, context.Canceled) {
		t.Errorf("Inspect, cancelled: %v", err)
	}
	x, err := ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := describeContext(ctx, x); !errors.Is(err, context.Canceled) {
		t.Errorf("describe, cancelled: %v", err)
	}
	if _, err := Inspect(context.Background(), path); err != nil {
		t.Error(err)
	}
}
