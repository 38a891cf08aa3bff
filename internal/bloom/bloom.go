package bloom

import "math/bits"

const (
	blockWords = 8  // a block is 512 bits, one cache line: one miss per lookup
	probes     = 8  // bits set per element, all in its block
	bitsPer    = 48 // bits per element at capacity: about 3e-7 false positives
	firstCap   = 1 << 20
)

// Filter holds hashes. Its levels double in capacity as it fills (a full
// level is kept and read, the new one takes the additions), so that no
// size need be known in advance and the false-positive rate stays low at
// any count. The zero value is ready to use.
type Filter struct {
	levels []level
}

type level struct {
	words []uint64
	mask  uint64 // blocks - 1
	n, c  int
}

func newLevel(capacity int) level {
	blocks := uint64(1) << bits.Len64(uint64(capacity*bitsPer/512-1))
	return level{words: make([]uint64, blocks*blockWords), mask: blocks - 1, c: capacity}
}

// mix spreads h's bits (the finalizer of splitmix64), for the probes.
func mix(h uint64) uint64 {
	h ^= h >> 30
	h *= 0xbf58476d1ce4e5b9
	h ^= h >> 27
	h *= 0x94d049bb133111eb
	return h ^ h>>31
}

// probeBits derives the probes' bits from h (whose low bits pick the
// block): 9 bits a probe, 3 for the word and 6 for the bit.
func probeBits(h uint64) (p, q uint64) {
	return mix(h), mix(h ^ 0x9e3779b97f4a7c15)
}

// probe is the i-th probe's 9 bits: seven from p, the rest from q.
func probe(p, q uint64, i int) uint64 {
	if i < 7 {
		return p >> (9 * i)
	}
	return q >> (9 * (i - 7))
}

// Add records h.
func (f *Filter) Add(h uint64) {
	if len(f.levels) == 0 || f.levels[len(f.levels)-1].n >= f.levels[len(f.levels)-1].c {
		c := firstCap
		if len(f.levels) > 0 {
			c = 2 * f.levels[len(f.levels)-1].c
		}
		f.levels = append(f.levels, newLevel(c))
	}
	l := &f.levels[len(f.levels)-1]
	b := l.words[(h&l.mask)*blockWords:][:blockWords]
	p, q := probeBits(h)
	for i := range probes {
		v := probe(p, q, i)
		b[v>>6&7] |= 1 << (v & 63)
	}
	l.n++
}

// MayContain reports whether h may have been added: false means never.
func (f *Filter) MayContain(h uint64) bool {
	p, q := probeBits(h)
	for i := range f.levels {
		l := &f.levels[i]
		b := l.words[(h&l.mask)*blockWords:][:blockWords]
		hit := true
		for j := range probes {
			if v := probe(p, q, j); b[v>>6&7]&(1<<(v&63)) == 0 {
				hit = false
				break
			}
		}
		if hit {
			return true
		}
	}
	return false
}

// Len is the number of additions.
func (f *Filter) Len() int {
	n := 0
	for _, l := range f.levels {
		n += l.n
	}
	return n
}
