package convert

import (
	"context"

	"github.com/itarconv/itarconv/dataset"
	"github.com/itarconv/itarconv/fold"
	"github.com/itarconv/itarconv/formats/barecat"
	"github.com/itarconv/itarconv/formats/tarfile"
	"github.com/itarconv/itarconv/formats/tbl"
)

// The row model and the engine live in package dataset, which knows no
// format; convert's conversions are built on them, under these names.
type (
	Kind          = dataset.Kind
	Row           = dataset.Row
	Batch         = dataset.Batch
	Source        = dataset.Source
	PayloadSource = dataset.PayloadSource
	FileRegions   = dataset.FileRegions
	Releaser      = dataset.Releaser
	Sink          = dataset.Sink
	Options       = dataset.Options
	Progress      = dataset.Progress
	Part          = dataset.Part
	Concat        = dataset.Concat
)

// The kinds of rows.
const (
	KindFile     = dataset.KindFile
	KindDir      = dataset.KindDir
	KindSymlink  = dataset.KindSymlink
	KindHardlink = dataset.KindHardlink
	KindOther    = dataset.KindOther
)

// Run is dataset.Run: it moves a source's rows to a sink.
func Run(ctx context.Context, src Source, sink Sink, opts Options) error {
	return dataset.Run(ctx, src, sink, opts)
}

// NewConcat is dataset.NewConcat.
func NewConcat(parts ...Part) *Concat { return dataset.NewConcat(parts...) }

// The tar fold's source, index and writer live in package fold, the
// indexed tar fold's one place; convert keeps their names.
type (
	TarShards     = fold.TarShards
	TarShardStats = fold.ShardStats
	IndexOptions  = fold.IndexOptions
	IndexStats    = fold.IndexStats
	FoldOptions   = fold.WriteOptions
	FoldStats     = fold.WriteStats
	PendingFold   = fold.Pending
)

var (
	ErrFoldExists    = fold.ErrExists
	ErrTooManyShards = fold.ErrTooManyShards
)

// NewTarShards is fold.NewTarShards.
func NewTarShards(paths []string, opts tarfile.Options) *TarShards {
	return fold.NewTarShards(paths, opts)
}

// BuildIndex is fold.BuildIndex.
func BuildIndex(ctx context.Context, shards []string, out string, opts IndexOptions) (*IndexStats, error) {
	return fold.BuildIndex(ctx, shards, out, opts)
}

// WriteFold is fold.Write.
func WriteFold(ctx context.Context, src PayloadSource, opts FoldOptions) (*FoldStats, error) {
	return fold.Write(ctx, src, opts)
}

// StageFold is fold.Stage.
func StageFold(ctx context.Context, src PayloadSource, opts FoldOptions) (*PendingFold, error) {
	return fold.Stage(ctx, src, opts)
}

// CommitFolds is fold.CommitAll.
func CommitFolds(folds ...*PendingFold) ([]*FoldStats, error) { return fold.CommitAll(folds...) }

// BarecatSource is barecat.Source: a Barecat archive as rows.
type BarecatSource = barecat.Source

// TBLSource is tbl.Source: a TBL file as rows.
type TBLSource = tbl.Source

// StreamStats describes a tar stream (fold.StreamStats).
type StreamStats = fold.StreamStats
