package energon

import (
	"bytes"
	"encoding/gob"
	"strings"
	"testing"

	"github.com/itarconv/itarconv/formats/energon"
)

// TestLoadShardOtherLayout: a shard's rows kept in a layout this build
// does not write (an older part, whose fields gob would leave at zero) are
// refused, not taken for a shard of no samples; the layout written loads.
func TestLoadShardOtherLayout(t *testing.T) {
	p, err := energon.Prepare(energon.ShardSamples{End: 2048,
		Samples: []energon.Sample{{Key: "k", Offset: 0, Size: 2048}},
		Parts:   []energon.Part{{Sample: 0, Name: "jpg", Offset: 512, Size: 3}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	rows, err := p.Compact()
	if err != nil {
		t.Fatal(err)
	}
	for _, format := range []int{0, 1, energonPartFormat} {
		var b bytes.Buffer
		if err := gob.NewEncoder(&b).Encode(energonPart{Format: format, Rows: rows, End: 2048}); err != nil {
			t.Fatal(err)
		}
		e := New(t.TempDir()).(*energonLoader)
		err := e.LoadShard(gob.NewDecoder(&b), "a.tar")
		switch {
		case format == energonPartFormat && err != nil:
			t.Errorf("layout %d: %v", format, err)
		case format != energonPartFormat && (err == nil || !strings.Contains(err.Error(), "another version")):
			t.Errorf("layout %d: %v, want it refused", format, err)
		}
	}
}
