package fold

import (
	"context"
	"errors"
	"path/filepath"
	"testing"

	"github.com/itarconv/itarconv/formats/tarfile"
)

// TestWalkShardStopsOnRowError: the error at returns ends the walk and is
// returned as is, both for a row where no header starts (verify's "no
// header at offset") and for a row at a header; rows after it are not
// visited.
func TestWalkShardStopsOnRowError(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s_0.tar")
	writeTarFile(t, path, [][2]string{{"a.txt", "one"}, {"b.txt", "two"}})
	// Headers at 0 and 1024; a row at 512 points inside a.txt's payload.
	stop := errors.New("stop")
	for _, c := range []struct {
		name    string
		offs    []uint64
		stopAt  int
		wantNil bool // at gets nil (no header) at the stopping row
	}{
		{"row with no header", []uint64{512, 1024}, 0, true},
		{"row at a header", []uint64{0, 1024}, 0, false},
		{"second row at a header", []uint64{0, 1024}, 1, false},
	} {
		var seen []int
		err := walkShard(context.Background(), path, tarfile.Options{}, len(c.offs), func(k int) uint64 { return c.offs[k] },
			func(k int, v *headerView) error {
				seen = append(seen, k)
				if k == c.stopAt {
					if (v == nil) != c.wantNil {
						t.Errorf("%s: row %d: view %+v, want nil %v", c.name, k, v, c.wantNil)
					}
					return stop
				}
				return nil
			}, nil)
		if !errors.Is(err, stop) {
			t.Errorf("%s: err = %v, want the row's error", c.name, err)
		}
		if len(seen) != c.stopAt+1 {
			t.Errorf("%s: rows visited %v, want 0..%d", c.name, seen, c.stopAt)
		}
	}
}
