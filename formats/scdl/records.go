package scdl

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/itarconv/itarconv/internal/sharedrec"
)

// records are what the tasks of a run written in place (WriteRange) tell
// each other in the run's directory (package sharedrec), so that a task
// need not count what another counted: the values of the cells' members
// in a range of the dataset's shards (a task's own shards, or those it
// counted before its own), and the dataset's header, or that it has
// none. Records that disagree are all ignored. The merge checks that each part's cells start where the part before
// ends, so a record that lied could not go unnoticed.
type records struct {
	dir    string
	prefix string // "shared-scdl-<key>."
}

// The files a run's tasks share begin with "shared-" (package
// partition's SharedPrefix), which the parts directory's cleaning
// removes once no part is left.
const (
	recordPrefix = "shared-scdl-"
	valuesRecord = "values-"
	headerRecord = "header"
)

// maxRecord bounds the records read: a header and its framing.
const maxRecord = maxHeaderFile + 1

func openRecords(dir, key string) *records {
	return &records{dir: dir, prefix: recordPrefix + key + "."}
}

func (r *records) open(name string) []byte { return sharedrec.Get(r.dir, name, maxRecord) }

func (r *records) put(name string, content []byte) {
	sharedrec.Put(r.dir, name, r.prefix+"tmp-", content)
}

func (r *records) valuesName(lo, hi int) string {
	return r.prefix + valuesRecord + strconv.Itoa(lo) + "-" + strconv.Itoa(hi)
}

// putValues records that shards lo..hi-1 hold n values.
func (r *records) putValues(lo, hi int, n uint64) {
	if lo < hi {
		r.put(r.valuesName(lo, hi), binary.LittleEndian.AppendUint64(nil, n))
	}
}

// chain finds, from the records, the values of shards 0..from-1, with
// from as far as the records reach without passing lo.
func (r *records) chain(lo int) (from int, values uint64) {
	ents, err := os.ReadDir(r.dir)
	if err != nil {
		return 0, 0
	}
	type span struct {
		lo, hi int
		n      uint64
	}
	var spans []span
	for _, e := range ents {
		rest, ok := strings.CutPrefix(e.Name(), r.prefix+valuesRecord)
		if !ok {
			continue
		}
		a, b, ok := strings.Cut(rest, "-")
		l, err1 := strconv.Atoi(a)
		h, err2 := strconv.Atoi(b)
		if !ok || err1 != nil || err2 != nil || l < 0 || h <= l || h > lo || e.Name() != r.valuesName(l, h) {
			continue
		}
		if c := r.open(e.Name()); len(c) == 8 {
			spans = append(spans, span{l, h, binary.LittleEndian.Uint64(c)})
		}
	}
	// Every span goes forward: in the order of their starts, each
	// extends the shards reached from 0.
	slices.SortFunc(spans, func(a, b span) int { return a.lo - b.lo })
	reached := map[int]uint64{0: 0}
	for _, s := range spans {
		v, ok := reached[s.lo]
		if !ok {
			continue
		}
		if w, seen := reached[s.hi]; seen && w != v+s.n {
			return 0, 0 // records that disagree: count it all
		}
		reached[s.hi] = v + s.n
	}
	for k, v := range reached {
		if k > from {
			from, values = k, v
		}
	}
	return from, values
}

// putHeader records the dataset's header, or (nil) that it has none.
func (r *records) putHeader(h []byte) {
	if h == nil {
		r.put(r.prefix+headerRecord, []byte{0})
		return
	}
	r.put(r.prefix+headerRecord, append([]byte{1}, h...))
}

// header returns the recorded header, or whether a record says there is
// none.
func (r *records) header() (h []byte, none bool) {
	c := r.open(r.prefix + headerRecord)
	switch {
	case len(c) == 1 && c[0] == 0:
		return nil, true
	case len(c) > 1 && c[0] == 1:
		return c[1:], false
	}
	return nil, false
}

// removeRecords removes the records of dir, once their run is merged. A
// task of another run into the same output counts again what it needs.
func removeRecords(dir string) {
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		rest, ok := strings.CutPrefix(e.Name(), recordPrefix)
		if !ok {
			continue
		}
		if _, kind, ok := strings.Cut(rest, "."); ok && (strings.HasPrefix(kind, valuesRecord) || kind == headerRecord) {
			os.Remove(filepath.Join(dir, e.Name()))
		}
	}
}
