package dataset

import (
	"context"
	"errors"
	"fmt"
	"io"
)

// Part is one source of a Concat, with the prefix its row names get.
type Part struct {
	Source PayloadSource
	// Prefix is put before every row name (a directory, "scdlmeta/").
	Prefix string
}

// Concat is one source made of several, one after the other: the shards of
// the first part, then those of the second, and so on. It forwards Release
// and Close to its parts.
type Concat struct {
	parts []Part
	base  []int // the first shard of each part, and the total at the end
}

// NewConcat joins parts into one source.
func NewConcat(parts ...Part) *Concat {
	c := &Concat{parts: parts, base: make([]int, len(parts)+1)}
	for i, p := range parts {
		c.base[i+1] = c.base[i] + p.Source.NumShards()
	}
	return c
}

// part finds the part holding shard and the shard's number within it.
func (c *Concat) part(shard int) (int, int) {
	k := 0
	for k+1 < len(c.parts) && shard >= c.base[k+1] {
		k++
	}
	return k, shard - c.base[k]
}

func (c *Concat) NumShards() int { return c.base[len(c.parts)] }

func (c *Concat) ShardName(shard int) string {
	k, s := c.part(shard)
	return c.parts[k].Source.ShardName(s)
}

// Scan scans the shard in its part. Row names get the part's prefix, and
// DataFile records the part (DataFile*parts + part) so that OpenPayload
// finds it again; Release and OpenPayload undo both.
func (c *Concat) Scan(ctx context.Context, shard int, emit func([]Row) error) error {
	k, s := c.part(shard)
	p := c.parts[k]
	n := len(c.parts)
	return p.Source.Scan(ctx, s, func(rows []Row) error {
		if p.Prefix != "" {
			size := 0
			for i := range rows {
				size += len(p.Prefix) + len(rows[i].Name)
			}
			names := make([]byte, 0, size)
			for i := range rows {
				start := len(names)
				names = append(append(names, p.Prefix...), rows[i].Name...)
				rows[i].Name = names[start:len(names):len(names)]
			}
		}
		for i := range rows {
			rows[i].DataFile = rows[i].DataFile*n + k
		}
		return emit(rows)
	})
}

// Release gives a written batch back to its part, which knows it by its
// first row, the same row it emitted.
func (c *Concat) Release(b *Batch) {
	k, s := c.part(b.Shard)
	if r, ok := c.parts[k].Source.(Releaser); ok {
		r.Release(&Batch{Shard: s, Rows: b.Rows, Prep: b.Prep, Bytes: b.Bytes})
	}
}

// OpenPayload opens the row in its part, under the name the part gave it.
func (c *Concat) OpenPayload(r *Row) (io.Reader, error) {
	n := len(c.parts)
	k := r.DataFile % n
	if k < 0 {
		return nil, fmt.Errorf("row %q: data file %d is not one of this source's", r.Name, r.DataFile)
	}
	orig := *r
	orig.DataFile = r.DataFile / n
	orig.Name = r.Name[len(c.parts[k].Prefix):]
	return c.parts[k].Source.OpenPayload(&orig)
}

// Close closes the parts that have a Close.
func (c *Concat) Close() error {
	var errs []error
	for _, p := range c.parts {
		if cl, ok := p.Source.(io.Closer); ok {
			errs = append(errs, cl.Close())
		}
	}
	return errors.Join(errs...)
}
