package convert

import (
	"context"

	"github.com/itarconv/itarconv/dataset"
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
