package tbl

import (
	"github.com/itarconv/itarconv/dataset"
)

// countSink is WriteRows's first pass: it counts the samples, which the
// index, first in the file, needs before any is written. Each batch's
// rows are judged on the worker that scanned it (Prepare); the ordered
// writer only adds up each batch's count, and follows the rows one by
// one only around metadata members, whose pairing with the row after
// them may cross batches.
type countSink struct {
	sel           *selector // its n and skipped are the writer's
	src           dataset.PayloadSource
	noMetaMembers bool
	targets       map[string]*dataset.Row
	pairing       metaPairing
	// bytes adds up the samples' sizes: without LZ4 and hard links (whose
	// bytes are their target's), where the data ends, and the metadata
	// section starts.
	bytes   int64
	pending int64 // the size of the metadata member pairing waits on

	// shards, if not nil, gets each shard's samples and bytes (a
	// metadata member that turns out a sample counts in its own shard),
	// for WriteRange.
	shards       []shardCount
	pendingShard int   // the shard of the member pairing waits on
	pendingEnds  []int // the shards it was waiting at the end of
}

// shardCount is what one shard gives the file, as one run counts it.
type shardCount struct {
	samples, bytes int64
	// memberAtEnd: a metadata member of this shard or an earlier one was
	// waiting at its end (pendingFrom is its shard), and paired whether
	// it went to the sample after it.
	memberAtEnd bool
	pendingFrom int
	paired      bool
}

// counted adds a sample of size bytes, of shard, to the counts.
func (c *countSink) counted(shard int, size int64) {
	c.sel.n++
	c.bytes += size
	if c.shards != nil {
		c.shards[shard].samples++
		c.shards[shard].bytes += size
	}
}

// resolved records what became of the waiting member at the ends of the
// shards it waited at.
func (c *countSink) resolved(paired bool) {
	for _, s := range c.pendingEnds {
		c.shards[s].paired = paired
	}
	c.pendingEnds = c.pendingEnds[:0]
}

// Row flags of a counted batch.
const (
	countSample = 1 << iota // the row becomes a sample (or is a metadata member)
	countMeta               // a metadata member
	countLate               // may be a metadata member: its first bytes are read by the writer
)

// countBatch is what Prepare worked out for a batch.
type countBatch struct {
	flags   []uint8 // by row
	samples int64   // rows that are samples and no metadata member
	bytes   int64   // their sizes
	special bool    // some row is (or may be) a metadata member
	skipped map[string]int64
	links   []string // the paths hard links name
}

func (c *countSink) Prepare(b *dataset.Batch) error {
	p := &countBatch{flags: make([]uint8, len(b.Rows))}
	b.Prep = p
	var files dataset.ShardFiles = c.sel.files
	where := c.src.ShardName(b.Shard)
	for i := range b.Rows {
		r := &b.Rows[i]
		why, err := c.sel.reason(b.Shard, r)
		if err != nil {
			return err
		}
		if why != "" {
			if p.skipped == nil {
				p.skipped = map[string]int64{}
			}
			p.skipped[why]++
			continue
		}
		// Refused before anything is written, as every target refuses it.
		if err := CheckName(where, r); err != nil {
			return err
		}
		p.flags[i] = countSample
		if r.Kind == dataset.KindHardlink {
			p.links = append(p.links, linkPath(r.Linkname))
		}
		if c.noMetaMembers || r.Kind != dataset.KindFile || !IsMetaMember(r.Name, r.Size, []byte(MetaMagic)) {
			p.samples++
			p.bytes += r.Size
			continue
		}
		p.special = true
		if r.Inline == nil && files == nil {
			// Read through OpenPayload, which is the writer's alone.
			p.flags[i] |= countLate
			continue
		}
		meta, err := c.sel.isMetaMember(b.Shard, r)
		if err != nil {
			return err
		}
		if meta {
			p.flags[i] |= countMeta
		} else {
			p.samples++
			p.bytes += r.Size
		}
	}
	return nil
}

func (c *countSink) Write(b *dataset.Batch) error {
	p := b.Prep.(*countBatch)
	for why, n := range p.skipped {
		c.sel.skipped[why] += n
	}
	for _, l := range p.links {
		c.targets[l] = nil
	}
	if !p.special && c.pairing.pending == nil {
		c.sel.n += p.samples
		c.bytes += p.bytes
		if c.shards != nil {
			c.shards[b.Shard].samples += p.samples
			c.shards[b.Shard].bytes += p.bytes
		}
		return nil
	}
	for i := range b.Rows {
		r, f := &b.Rows[i], p.flags[i]
		if f&countLate != 0 {
			meta, err := c.sel.isMetaMember(b.Shard, r)
			if err != nil {
				return err
			}
			if meta {
				f |= countMeta
			}
		}
		sample, meta := f&countSample != 0, f&countMeta != 0
		// A metadata member is no sample when the sample it extends follows.
		res, _ := c.pairing.next(r.Name, sample, meta, nil)
		if res == pairedFlushed {
			c.counted(c.pendingShard, c.pending)
		}
		if res != pairedNone && c.shards != nil {
			c.resolved(res == pairedMatched)
		}
		if sample && !meta {
			c.counted(b.Shard, r.Size)
		}
		if meta {
			c.pending, c.pendingShard = r.Size, b.Shard
		}
	}
	return nil
}

func (c *countSink) EndShard(shard int) error {
	if c.shards != nil && c.pairing.pending != nil {
		c.shards[shard].memberAtEnd, c.shards[shard].pendingFrom = true, c.pendingShard
		c.pendingEnds = append(c.pendingEnds, shard)
	}
	return nil
}
