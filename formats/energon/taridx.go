// Package energon writes and reads the per-shard sample index that
// Megatron-Energon's `energon prepare` writes beside each tar shard,
// <shard>.tar.idx, as energon's own code writes it: a flat array of
// little-endian uint64, entry i the offset in the shard where sample i's
// first member begins (its own header, or the pax or GNU long-name header
// before it), then one more entry, the offset where the archive's content
// ends (its end-of-archive blocks): N samples give N+1 entries.
//
// A sample is a run of consecutive regular members with the same key: the
// name up to the first dot of its basename, directory included. A member
// whose name has no such key (no dot in its basename, or nothing before
// the dot), or which starts with a "__...__" component (energon's
// metadata), is no part of a sample.
package energon

import (
	"encoding/binary"
	"errors"
	"fmt"
	"regexp"
	"strings"
)

// IdxSuffix follows a shard's name to name its index.
const IdxSuffix = ".idx"

// ErrFormat: bytes that are no .tar.idx.
var ErrFormat = errors.New("not an energon .tar.idx")

// metaName matches the members energon's prepare skips, at the start of
// a name: "__key__", "__meta__/x".
var metaName = regexp.MustCompile(`^__[^/]*__($|/)`)

// SplitName gives a member's sample key and part, as energon splits them;
// ok is false for a member that is no part of a sample.
func SplitName(name string) (key, part string, ok bool) {
	if metaName.MatchString(name) {
		return "", "", false
	}
	slash := strings.LastIndexByte(name, '/')
	base := name[slash+1:]
	dot := strings.IndexByte(base, '.')
	if dot <= 0 {
		return "", "", false
	}
	return name[:slash+1+dot], base[dot+1:], true
}

// IdxBuilder gathers a shard's regular members, in tar order, into the
// offsets of its samples.
type IdxBuilder struct {
	offsets []uint64
	last    string
}

// Add takes the next regular member of the shard: its name and the offset
// of the first header block of its chain.
func (b *IdxBuilder) Add(name string, firstOffset int64) {
	key, _, ok := SplitName(name)
	if !ok {
		return
	}
	if len(b.offsets) == 0 || key != b.last {
		b.offsets = append(b.offsets, uint64(firstOffset))
		b.last = key
	}
}

// Samples is the number of samples so far.
func (b *IdxBuilder) Samples() int { return len(b.offsets) }

// Bytes is the index of a shard whose content ends at end.
func (b *IdxBuilder) Bytes(end int64) []byte {
	out := make([]byte, 0, 8*(len(b.offsets)+1))
	for _, o := range b.offsets {
		out = binary.LittleEndian.AppendUint64(out, o)
	}
	return binary.LittleEndian.AppendUint64(out, uint64(end))
}

// ParseIdx reads an index: the samples' start offsets and the end, in
// increasing order.
func ParseIdx(b []byte) (starts []uint64, end uint64, err error) {
	if len(b) == 0 || len(b)%8 != 0 {
		return nil, 0, fmt.Errorf("%w: %d bytes, not a whole, non-empty number of uint64", ErrFormat, len(b))
	}
	n := len(b) / 8
	var prev uint64
	for i := range n {
		v := binary.LittleEndian.Uint64(b[8*i:])
		if i > 0 && v <= prev && !(i == n-1 && v == prev) {
			return nil, 0, fmt.Errorf("%w: entry %d (%d) does not follow entry %d (%d)", ErrFormat, i, v, i-1, prev)
		}
		if i < n-1 {
			starts = append(starts, v)
		}
		prev = v
	}
	return starts, prev, nil
}

// IdxPath names a shard's index: <shard>.idx beside a .tar (energon
// replaces the shard's suffix with .tar.idx).
func IdxPath(shard string) string {
	if i := strings.LastIndexByte(shard, '.'); i > strings.LastIndexByte(shard, '/')+1 {
		return shard[:i] + ".tar" + IdxSuffix
	}
	return shard + ".tar" + IdxSuffix
}
