package dali

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/itarconv/itarconv/fold"
	"github.com/itarconv/itarconv/formats/dali"
	"github.com/itarconv/itarconv/formats/tarfile"
	"github.com/itarconv/itarconv/internal/pathguard"
	"github.com/itarconv/itarconv/loaders"
)

// New is DALI's webdataset index of each shard, named as wds2idx names
// it: beside the shard, or in outDir when it is not "".
func New(outDir string) loaders.Loader { return daliLoader{outDir: outDir} }

// NewWith is New with the options' output directory, and a shard's index
// text kept in memory up to o.ShardMemory() (past it, in a temporary file
// beside the index).
func NewWith(o loaders.Options) loaders.Loader {
	return daliLoader{outDir: o.OutDir, memory: o.ShardMemory()}
}

type daliLoader struct {
	outDir string
	memory int // a shard's text kept in memory; 0 all of it
}

func (daliLoader) Name() string { return "dali" }

func (d daliLoader) path(shard string) string {
	return loaders.BesideOrIn(dali.IndexPath(shard), d.outDir)
}

func (d daliLoader) Outputs(shards []string) []string {
	var outs []string
	for _, s := range shards {
		outs = append(outs, d.path(s))
	}
	return outs
}

func (d daliLoader) Shard(ctx context.Context, path string) loaders.ShardIndexer {
	out := d.path(path)
	x := &daliIndexer{ctx: ctx, out: out}
	x.b.Memory, x.b.TempDir = d.memory, loaders.TempDir(out)
	return x
}

func (daliLoader) Finish(context.Context, []string) (int, error) { return 0, nil }

type daliIndexer struct {
	ctx context.Context // the scan's: End's file is committed with its group
	out string          // "" for an index kept in memory
	b   dali.Builder
}

// Member takes the regular files, as wds2idx lists them.
func (d *daliIndexer) Member(m *tarfile.Member) {
	if m.IsRegular() {
		d.b.AddBytes(m.Name, m.DataOffset, m.Size)
	}
}

// End writes the index; an indexer of no path (a check's) keeps it.
func (d *daliIndexer) End(int64) (int, error) {
	if d.out == "" {
		return 0, nil
	}
	defer d.b.Release()
	if d.b.Samples() == 0 {
		return 0, fmt.Errorf("%w: %w", loaders.ErrNoIndex, dali.ErrEmpty)
	}
	return 1, loaders.WriteFileTo(d.ctx, d.out, &d.b)
}

// ShardFile is the index of the shard.
func (d daliLoader) ShardFile(shard string) string { return d.path(shard) }

func init() {
	loaders.Register(&loaders.Plugin{Name: "dali", Order: 30, Help: "DALI's <shard>.idx beside each shard",
		New:     NewWith,
		Indexes: []*loaders.Index{index}})
}

var index = &loaders.Index{
	Unit: "components",
	Detect: func(path string) bool {
		return strings.HasSuffix(path, ".idx") && loaders.StartsWith(path, dali.Version+" ")
	},
	Shards: func(ctx context.Context, path string) ([]string, error) {
		return loaders.SiblingShard(path, dali.IndexPath)
	},
	Read: func(ctx context.Context, path string, shards []string) ([]loaders.Entry, error) {
		b, err := pathguard.ReadFile(path)
		if err != nil {
			return nil, err
		}
		es, err := daliEntries(b, shards[0])
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		return es, nil
	},
	Expect: func(ctx context.Context, _ string, shards []string) (func(string) fold.MemberSink, func() ([]loaders.Entry, error)) {
		return loaders.PerShard(shards, func(string) *daliIndexer { return &daliIndexer{} },
			func(shard string, d *daliIndexer) ([]loaders.Entry, error) {
				var out bytes.Buffer
				if _, err := d.b.WriteTo(&out); errors.Is(err, dali.ErrEmpty) {
					return nil, nil
				} else if err != nil {
					return nil, err
				}
				return daliEntries(out.Bytes(), shard)
			})
	},
}

// daliEntries are an index's components, by name.
func daliEntries(b []byte, shard string) ([]loaders.Entry, error) {
	samples, err := dali.Parse(bytes.NewReader(b))
	if err != nil {
		return nil, &loaders.FormatError{Err: err}
	}
	var es []loaders.Entry
	for _, s := range samples {
		for _, c := range s {
			es = append(es, loaders.Entry{Shard: shard, Name: c.Name, What: loaders.OffsetSize(c.Offset, c.Size) + ", extension " + strconv.Quote(c.Ext)})
		}
	}
	return es, nil
}
