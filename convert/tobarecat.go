package convert

import (
	"context"
	"fmt"

	"github.com/itarconv/itarconv/dataset"
	"github.com/itarconv/itarconv/formats/barecat"
	"github.com/itarconv/itarconv/formats/tbl"
)

// ToBarecat converts any source into a Barecat archive at out, in one pass
// (barecat.WriteRows). Tar shards have their own converter, TarToBarecat,
// with duplicate policies, hard links and --wrap.
func ToBarecat(ctx context.Context, src dataset.PayloadSource, out string, opts BarecatOptions) (*BarecatStats, error) {
	if opts.Wrap || opts.OnDuplicate != DuplicateError {
		return nil, fmt.Errorf("wrapping and duplicate policies apply to tar shards")
	}
	if s, ok := src.(*tbl.Source); ok && s.NameChanged == nil {
		s.NameChanged = barecatChanges // names come back as they were
	}
	st, err := barecat.WriteRows(ctx, src, out, barecat.RowsOptions{ShardSize: opts.ShardSize, Overwrite: opts.Overwrite,
		Workers: opts.Workers, Progress: opts.Progress, Memory: opts.Memory})
	if err != nil {
		return nil, err
	}
	return &BarecatStats{Output: st.Output, Files: st.Files, Dirs: st.Dirs, Bytes: st.Bytes, Skipped: st.Skipped, Shards: st.Shards}, nil
}
