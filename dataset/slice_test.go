package dataset

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"
)

// lettersSource has shards of rows named <shard>-<i>, whose payload is the
// name; its shard files are a temporary file each.
type lettersSource struct {
	rows     []int
	released []int
}

func (s *lettersSource) NumShards() int             { return len(s.rows) }
func (s *lettersSource) ShardName(shard int) string { return fmt.Sprint("shard", shard) }
func (s *lettersSource) ShardSize(shard int) int64  { return int64(10 * (shard + 1)) }
func (s *lettersSource) Scan(_ context.Context, shard int, emit func([]Row) error) error {
	var rows []Row
	for i := range s.rows[shard] {
		name := fmt.Appendf(nil, "%d-%d", shard, i)
		rows = append(rows, Row{Name: name, Size: int64(len(name)), DataFile: shard})
	}
	return emit(rows)
}
func (s *lettersSource) OpenPayload(r *Row) (io.Reader, error) {
	return strings.NewReader(string(r.Name)), nil
}
func (s *lettersSource) Release(b *Batch) { s.released = append(s.released, b.Shard) }
func (s *lettersSource) ShardFile(shard int) (*os.File, error) {
	return nil, fmt.Errorf("file of shard %d", shard)
}

func TestSlice(t *testing.T) {
	src := &lettersSource{rows: []int{1, 2, 3, 4}}
	sl, err := Slice(src, 1, 3)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := sl.(ShardFiles); !ok {
		t.Error("a slice of a source with shard files has none")
	}
	if _, ok := sl.(FileRegions); ok {
		t.Error("a slice claims file regions its source has not")
	}
	if got := ShardSizes(sl); fmt.Sprint(got) != "[20 30]" {
		t.Errorf("sizes %v, want [20 30]", got)
	}
	if _, err := sl.(ShardFiles).ShardFile(1); err == nil || err.Error() != "file of shard 2" {
		t.Errorf("ShardFile(1): %v, want the source's shard 2", err)
	}
	var names []string
	err = Run(context.Background(), sl, RowFunc(func(shard int, r *Row) error {
		b, err := ReadPayload(sl, r)
		names = append(names, fmt.Sprintf("%d:%s", shard, b))
		return err
	}), Options{Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := strings.Join(names, " "), "0:1-0 0:1-1 1:2-0 1:2-1 1:2-2"; got != want {
		t.Errorf("rows %q, want %q", got, want)
	}
	if got := fmt.Sprint(src.released); got != "[1 2]" {
		t.Errorf("released shards %s of the source, want [1 2]", got)
	}
	for _, r := range [][2]int{{-1, 1}, {2, 1}, {0, 5}} {
		if _, err := Slice(src, r[0], r[1]); !errors.Is(err, errBadSlice) {
			t.Errorf("Slice(%d, %d): %v", r[0], r[1], err)
		}
	}
	if empty, err := Slice(src, 4, 4); err != nil || empty.NumShards() != 0 {
		t.Errorf("an empty slice: %v", err)
	}
	if got := ShardSizes(&Concat{base: []int{0}}); len(got) != 0 {
		t.Errorf("sizes of no shards: %v", got)
	}
}
