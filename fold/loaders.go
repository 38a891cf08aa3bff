package fold

import "context"

// LoaderIndexes are other data loaders' indexes of the shards (DALI's,
// energon's, ...), built from the same pass over the headers as the
// fold's TARIDX. Package loaders writes them; the fold only hands them
// each shard's members, and keeps their state in a partitioned run's
// parts.
type LoaderIndexes interface {
	// Plan adds shards to the dataset, in order: the shards of one fold
	// (a call per fold, or per task's share of it), which the loaders
	// keep apart from other folds' (energon's split parts, wids' index
	// per fold), naming it as shardset.FoldName names its shards.
	Plan(shards []string)
	// Shard starts the indexes of the shard at path; its sink runs on the
	// worker that scans the shard, under ctx, the scan's.
	Shard(ctx context.Context, path string) MemberSink
	// SavePart writes to the file at path what the indexes keep of shards
	// (a task's share of a partitioned run) for the merge to finish them.
	SavePart(path string, shards []string) error
	// LoadPart restores what SavePart wrote at path.
	LoadPart(path string) error
}
