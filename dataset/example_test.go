package dataset_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/itarconv/itarconv/dataset"
)

// letters is a toy source: two shards of rows it makes itself, each with
// its bytes inline.
type letters struct{ shards [][]string }

func (l letters) NumShards() int             { return len(l.shards) }
func (l letters) ShardName(shard int) string { return fmt.Sprintf("letters %d", shard) }
func (l letters) Scan(ctx context.Context, shard int, emit func([]dataset.Row) error) error {
	var rows []dataset.Row
	for _, s := range l.shards[shard] {
		rows = append(rows, dataset.Row{Name: []byte(s + ".txt"), Kind: dataset.KindFile,
			Size: int64(len(s)), Offset: -1, Inline: []byte(strings.ToUpper(s))})
	}
	return emit(rows)
}

// upper is a toy sink: it prints each row, in dataset order.
type upper struct{}

func (upper) Prepare(b *dataset.Batch) error { return nil } // per-row work, on the workers
func (upper) Write(b *dataset.Batch) error { // one goroutine, in order
	for _, r := range b.Rows {
		fmt.Printf("%s %s\n", r.Name, r.Inline)
	}
	return nil
}
func (upper) EndShard(shard int) error { return nil }

// A source lists each shard's rows; a sink consumes them. Run scans shards
// in parallel and writes them in order, whatever the number of workers.
func Example_rowModel() {
	src := letters{shards: [][]string{{"a", "b"}, {"c"}}}
	if err := dataset.Run(context.Background(), src, upper{}, dataset.Options{Workers: 2}); err != nil {
		fmt.Println(err)
	}
	// Output:
	// a.txt A
	// b.txt B
	// c.txt C
}
