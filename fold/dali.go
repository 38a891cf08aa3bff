package fold

import (
	"bytes"
	"errors"
	"fmt"

	"github.com/itarconv/itarconv/formats/dali"
	"github.com/itarconv/itarconv/formats/tarfile"
	"github.com/itarconv/itarconv/internal/safefile"
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

func (d daliLoader) Shard(path string) ShardIndexer {
	return &daliIndexer{out: d.path(path)}
}

func (daliLoader) Finish([]string) (int, error) { return 0, nil }

type daliIndexer struct {
	out string
	b   dali.Builder
}

// Member takes the regular files, as wds2idx lists them.
func (d *daliIndexer) Member(m *tarfile.Member) {
	if m.IsRegular() {
		d.b.Add(string(m.Name), m.DataOffset, m.Size)
	}
}

func (d *daliIndexer) End(int64) error {
	var out bytes.Buffer
	if _, err := d.b.WriteTo(&out); err != nil {
		if errors.Is(err, dali.ErrEmpty) {
			err = fmt.Errorf("%w: %w", ErrNoIndex, err)
		}
		return err
	}
	return writeFile(d.out, out.Bytes())
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
	return f.Commit()
}
