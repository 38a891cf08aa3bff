package bench

import "github.com/itarconv/itarconv/formatcompare/shardgen"

// Dataset describes a set of generated shards (see shardgen.Dataset).
type Dataset = shardgen.Dataset

// The benchmark's datasets. A has few, large members: the cost of an index
// is its read calls. B has many tiny ones: the cost is per-header CPU work
// and the per-row memory of the index writer.
var (
	DatasetA = Dataset{Name: "A", Fold: "train", Members: 100_000, Shards: 8, MinSize: 1 << 10, MaxSize: 20 << 10, Seed: 1}
	DatasetB = Dataset{Name: "B", Fold: "train", Members: 1_000_000, Shards: 8, MinSize: 0, MaxSize: 400, Seed: 2}
)
