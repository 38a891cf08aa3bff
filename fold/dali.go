package fold

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/itarconv/itarconv/formats/dali"
	"github.com/itarconv/itarconv/formats/tarfile"
	"github.com/itarconv/itarconv/internal/safefile"

	"github.com/itarconv/itarconv/internal/pathguard"
)

// DALI is DALI's webdataset index of each shard (package dali), named as
// wds2idx names it: beside the shard, or in outDir when it is not "".
func DALI(outDir string) Loader { return daliLoader{outDir} }

type daliLoader struct{ outDir string }

func (daliLoader) Name() string { return "dali" }

func (d daliLoader) path(shard string) string { return besideOrIn(dali.IndexPath(shard), d.outDir) }

func (d daliLoader) Outputs(shards []string) []string {
	var outs []string
	for _, s := range shards {
		outs = append(outs, d.path(s))
	}
	return outs
}

func (d daliLoader) Shard(_ context.Context, path string) ShardIndexer {
	return &daliIndexer{out: d.path(path)}
}

func (daliLoader) Finish(context.Context, []string) (int, error) { return 0, nil }

type daliIndexer struct {
	out string // "" for an index kept in memory
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
	var out bytes.Buffer
	if _, err := d.b.WriteTo(&out); err != nil {
		if errors.Is(err, dali.ErrEmpty) {
			err = fmt.Errorf("%w: %w", ErrNoIndex, err)
		}
		return 0, err
	}
	return 1, writeFile(d.out, out.Bytes())
}

// writeFile writes b to path through a temporary file renamed into place
// when complete.
func writeFile(path string, b []byte) error {
	f, err := safefile.Create(path)
	if err != nil {
		return err
	}
	if _, err := f.Write(b); err != nil {
		f.Abort()
		return fmt.Errorf("writing %s: %w", f.Target(), err)
	}
	return f.CommitReplace()
}

func (d daliLoader) shardOutput(shard string) string { return d.path(shard) }

func init() {
	loaderKinds = append(loaderKinds, &loaderKind{
		name: "dali", unit: "components",
		detect: func(path string) bool {
			return strings.HasSuffix(path, ".idx") && startsWith(path, dali.Version+" ")
		},
		shards: func(ctx context.Context, path string) ([]string, error) { return siblingShard(path, dali.IndexPath) },
		read: func(ctx context.Context, path string, shards []string) ([]loaderEntry, error) {
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
		expect: func(ctx context.Context, _ string, shards []string) (func(string) MemberSink, func() ([]loaderEntry, error)) {
			return perShard(shards, func(string) *daliIndexer { return &daliIndexer{} },
				func(shard string, d *daliIndexer) ([]loaderEntry, error) {
					var out bytes.Buffer
					if _, err := d.b.WriteTo(&out); errors.Is(err, dali.ErrEmpty) {
						return nil, nil
					} else if err != nil {
						return nil, err
					}
					return daliEntries(out.Bytes(), shard)
				})
		},
	})
}

// daliEntries are an index's components, by name.
func daliEntries(b []byte, shard string) ([]loaderEntry, error) {
	samples, err := dali.Parse(bytes.NewReader(b))
	if err != nil {
		return nil, &loaderFormatError{err}
	}
	var es []loaderEntry
	for _, s := range samples {
		for _, c := range s {
			es = append(es, loaderEntry{shard: shard, name: c.Name, what: offsetSize(c.Offset, c.Size) + ", extension " + strconv.Quote(c.Ext)})
		}
	}
	return es, nil
}
