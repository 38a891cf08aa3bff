package tbl

import (
	"reflect"
	"testing"
)

// FuzzDecodeCount: a count record decodes only into figures that add up,
// for the number of shards asked, and encodes back to the same bytes.
func FuzzDecodeCount(f *testing.F) {
	c := &wholeCount{samples: 7, bytes: 900, shards: []shardCount{{samples: 3, bytes: 100}, {samples: 0, bytes: 0, memberAtEnd: true}, {samples: 4, bytes: 800, pendingFrom: 1, paired: true}}}
	f.Add(c.encode(), 3)
	f.Add(c.encode()[:5], 3)
	f.Add([]byte{0, 0, 0}, 0)
	f.Fuzz(func(t *testing.T, b []byte, n int) {
		if n < 0 || n > 1<<16 {
			return
		}
		d := decodeCount(b, n)
		if d == nil {
			return
		}
		var s, by int64
		for _, sc := range d.shards {
			s, by = s+sc.samples, by+sc.bytes
		}
		if len(d.shards) != n || s != d.samples || by != d.bytes {
			t.Fatalf("decoded %+v from %x for %d shards", d, b, n)
		}
		if e := d.encode(); !reflect.DeepEqual(decodeCount(e, n), d) {
			t.Fatalf("%+v does not round-trip", d)
		}
	})
}
