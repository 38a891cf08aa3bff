package tbl

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"

	"github.com/itarconv/itarconv/dataset"
	"github.com/itarconv/itarconv/internal/sharedrec"
)

// A task written in place (WriteRange) counts the whole dataset, as one
// run does, before it writes a sample: over thousands of shards that
// count is most of a task. The first task of the run to finish it leaves
// it in the run's directory as a record (package sharedrec), under a
// digest of the shards (names, sizes, modification times) and of the
// options that shape the count; a later task of the run reads it rather
// than counting again, so that tasks run in waves count once a wave.
// What a task then places is checked as before: against its own samples
// (ErrChanged), and by the merge against the other parts.

// The record's name: "shared-" is the prefix package partition gives
// the files a run's tasks share, removed once no part needs them.
const countRecordPrefix = "shared-tbl-"

// maxCountRecord bounds a count record: a few bytes a shard.
const maxCountRecord = 64 << 20

// shardsDigest digests the options that shape the count and every
// shard's name, and size and modification time where it is a file; where
// the caller names the run (opts.Run), whose name digests those, the
// shards are not looked at again.
func shardsDigest(src dataset.PayloadSource, opts RowsOptions) ([]byte, error) {
	h := sha256.New()
	fmt.Fprintf(h, "tbl-in-place 2 v%d lz4=%v nonames=%v nometa=%v %d\n", opts.Version, opts.LZ4, opts.NoNames, opts.NoMetaMembers, src.NumShards())
	files, _ := src.(dataset.ShardFiles)
	if opts.Run != "" {
		fmt.Fprintf(h, "run %q\n", opts.Run)
		files = nil
	}
	var b [8]byte
	for k := range src.NumShards() {
		name := src.ShardName(k)
		binary.LittleEndian.PutUint64(b[:], uint64(len(name)))
		h.Write(b[:])
		h.Write([]byte(name))
		if files != nil {
			f, err := files.ShardFile(k)
			if err != nil {
				return nil, err
			}
			fi, err := f.Stat()
			f.Close()
			if err != nil {
				return nil, err
			}
			fmt.Fprintf(h, " %d %d", fi.Size(), fi.ModTime().UnixNano())
		}
		h.Write([]byte{'\n'})
	}
	return h.Sum(nil), nil
}

// layoutOf names the layout a count gives: the shards' digest and every
// shard's samples and bytes.
func layoutOf(digest []byte, shards []shardCount) string {
	h := sha256.New()
	h.Write(digest)
	for _, c := range shards {
		fmt.Fprintf(h, "%d %d\n", c.samples, c.bytes)
	}
	return hex.EncodeToString(h.Sum(nil)[:12])
}

func countRecordName(digest []byte) string {
	return countRecordPrefix + hex.EncodeToString(digest[:12]) + ".count"
}

// wholeCount is what a task's count of the whole dataset gives the
// placement: the samples selected, their bytes, and each shard's counts.
type wholeCount struct {
	samples, bytes int64
	shards         []shardCount
}

func (c *wholeCount) encode() []byte {
	b := binary.AppendUvarint(nil, uint64(c.samples))
	b = binary.AppendUvarint(b, uint64(c.bytes))
	b = binary.AppendUvarint(b, uint64(len(c.shards)))
	for _, s := range c.shards {
		b = binary.AppendUvarint(b, uint64(s.samples))
		b = binary.AppendUvarint(b, uint64(s.bytes))
		b = binary.AppendVarint(b, int64(s.pendingFrom))
		var flags byte
		if s.memberAtEnd {
			flags |= 1
		}
		if s.paired {
			flags |= 2
		}
		b = append(b, flags)
	}
	return b
}

// decodeCount reads a count of n shards, or nil where b is not one whose
// figures add up.
func decodeCount(b []byte, n int) *wholeCount {
	next := func() (uint64, bool) {
		v, k := binary.Uvarint(b)
		if k <= 0 || v > 1<<62 {
			return 0, false
		}
		b = b[k:]
		return v, true
	}
	samples, ok1 := next()
	bytes, ok2 := next()
	shards, ok3 := next()
	if !ok1 || !ok2 || !ok3 || shards != uint64(n) {
		return nil
	}
	c := &wholeCount{samples: int64(samples), bytes: int64(bytes), shards: make([]shardCount, 0, min(n, len(b)/4))}
	var sumS, sumB uint64
	for range n {
		s, ok1 := next()
		by, ok2 := next()
		from, k := binary.Varint(b)
		if !ok1 || !ok2 || k <= 0 || len(b) < k+1 || from < -1 || from >= int64(n) || b[k] > 3 {
			return nil
		}
		flags := b[k]
		b = b[k+1:]
		c.shards = append(c.shards, shardCount{samples: int64(s), bytes: int64(by), pendingFrom: int(from), memberAtEnd: flags&1 != 0, paired: flags&2 != 0})
		if sumS, sumB = sumS+s, sumB+by; sumS > samples || sumB > bytes {
			return nil
		}
	}
	if len(b) != 0 || sumS != samples || sumB != bytes {
		return nil
	}
	return c
}

// loadCount reads the run's record of the count, or nil.
func loadCount(dir string, digest []byte, n int) *wholeCount {
	b := sharedrec.Get(dir, countRecordName(digest), maxCountRecord)
	if b == nil {
		return nil
	}
	return decodeCount(b, n)
}

// storeCount leaves the count for the run's later tasks.
func storeCount(dir string, digest []byte, c *wholeCount) {
	if b := c.encode(); len(b) <= maxCountRecord {
		sharedrec.Put(dir, countRecordName(digest), countRecordPrefix+"tmp-", b)
	}
}
