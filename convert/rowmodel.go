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

// smallRuns calls fn for each run of consecutive rows whose regular files
// hold at most maxInline bytes each and lie within span bytes of the run's
// first payload, with lo and hi bounding those payloads. Other rows do not
// end a run; a larger file does, and is in none.
func smallRuns(rows []Row, span int64, fn func(i, j int, lo, hi int64) error) error {
	small := func(r *Row) bool { return r.Kind == KindFile && r.Size <= maxInline }
	for i := 0; i < len(rows); {
		if !small(&rows[i]) {
			i++
			continue
		}
		lo, hi := rows[i].DataOffset, rows[i].DataOffset+rows[i].Size
		j := i + 1
		for ; j < len(rows); j++ {
			r := &rows[j]
			if r.Kind != KindFile {
				continue
			}
			if !small(r) || r.DataOffset+r.Size-lo > span {
				break
			}
			hi = r.DataOffset + r.Size
		}
		if err := fn(i, j, lo, hi); err != nil {
			return err
		}
		i = j
	}
	return nil
}
