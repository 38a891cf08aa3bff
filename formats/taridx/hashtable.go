package taridx

// hashTable maps a key hash to a stemRef: an open-addressing table with
// linear probing. The keys are xxhash values, uniformly spread already, so
// their low bits pick the slot; a writer looks one up per row, and Go's
// map spent a third of the indexer's time on it (B of indexbench).
type hashTable struct {
	slots []hashSlot // len a power of two; an empty slot has ref 0
	n     int
	// zero holds the entry of hash 0, kept aside so that probing never
	// compares with a hash that an empty slot also has.
	zero    stemRef
	hasZero bool
}

type hashSlot struct {
	hash uint64
	ref  stemRef // used | the stem's ref
}

// used marks a slot as holding an entry (a stemRef uses 60 bits).
const used stemRef = 1 << 63

func (t *hashTable) get(h uint64) (stemRef, bool) {
	if h == 0 {
		return t.zero, t.hasZero
	}
	if len(t.slots) == 0 {
		return 0, false
	}
	mask := uint64(len(t.slots) - 1)
	for i := h & mask; ; i = (i + 1) & mask {
		s := &t.slots[i]
		if s.ref == 0 {
			return 0, false
		}
		if s.hash == h {
			return s.ref &^ used, true
		}
	}
}

// put adds h, which the table does not hold.
func (t *hashTable) put(h uint64, ref stemRef) {
	if h == 0 {
		t.zero, t.hasZero = ref, true
		t.n++
		return
	}
	if 4*(t.n+1) > 3*len(t.slots) { // at most 3/4 full
		t.grow()
	}
	t.insert(h, ref|used)
	t.n++
}

func (t *hashTable) insert(h uint64, ref stemRef) {
	mask := uint64(len(t.slots) - 1)
	i := h & mask
	for t.slots[i].ref != 0 {
		i = (i + 1) & mask
	}
	t.slots[i] = hashSlot{h, ref}
}

func (t *hashTable) grow() {
	old := t.slots
	t.slots = make([]hashSlot, max(2*len(old), 1<<10))
	for _, s := range old {
		if s.ref != 0 {
			t.insert(s.hash, s.ref)
		}
	}
}

// len is the number of entries.
func (t *hashTable) len() int { return t.n }
