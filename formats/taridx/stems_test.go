package taridx

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
)

// naiveIndex is glzn's rules spelled out with maps, every stem held: the
// reference the spilling, parallel writer must match byte for byte.
func naiveIndex(entries []Entry, contiguous bool) []byte {
	extIDs := map[string]uint16{}
	var exts []string
	canon := map[uint64]string{}
	crashIDs := map[string]uint32{}
	var crash []string
	rows := make([]Row, len(entries))
	stems := map[string]bool{}
	runs := 0
	for i, e := range entries {
		id, ok := extIDs[e.Ext]
		if !ok {
			id = uint16(len(exts))
			extIDs[e.Ext] = id
			exts = append(exts, e.Ext)
		}
		var cid uint32
		if c, ok := canon[e.KeyHash]; !ok {
			canon[e.KeyHash] = e.Stem
		} else if c != e.Stem {
			if cid, ok = crashIDs[e.Stem]; !ok {
				crash = append(crash, e.Stem)
				cid = uint32(len(crash))
				crashIDs[e.Stem] = cid
			}
		}
		stems[e.Stem] = true
		rows[i] = Row{Fid: e.Fid, Offset: e.Offset, Size: e.Size, ExtID: id, CrashID: cid, KeyHash: e.KeyHash}
		if i == 0 || rows[i].Key() != rows[i-1].Key() {
			runs++
		}
	}
	if contiguous {
		slices.SortStableFunc(rows, func(a, b Row) int {
			return compareKeys(seqRow{Row: a}, seqRow{Row: b})
		})
	}
	eb, cb := strings.Join(exts, "\n"), strings.Join(crash, "\n")
	h := Header{Major: Major, Minor: Minor, RecSize: RecordSize, HdrSize: HeaderSize,
		NStems: uint64(len(stems)), NRows: uint64(len(rows)), NExt: uint32(len(exts)), NCrash: uint32(len(crash)),
		OffCrash: HeaderSize + uint64(len(eb)), OffArr: HeaderSize + uint64(len(eb)+len(cb))}
	if contiguous || len(rows) < 2 || runs == len(stems) {
		h.Flags = FlagContiguous
	}
	out, _ := h.MarshalBinary()
	out = append(append(out, eb...), cb...)
	var b [RecordSize]byte
	for _, r := range rows {
		PutRow(b[:], r)
		out = append(out, b[:]...)
	}
	return out
}

// stemEntries makes n entries of samples with one to three files, a few
// hash crashes (hashes of few bits), stems that come back later, and
// extensions that appear late.
func stemEntries(n int, seed uint64) []Entry {
	rng := rand.New(rand.NewPCG(seed, 1))
	var entries []Entry
	for len(entries) < n {
		s := rng.IntN(n / 2)
		stem := fmt.Sprintf("dir/s%06d", s)
		hash := KeyHash(stem)
		if s%7 == 0 {
			hash = uint64(s % 5) // collides with other stems: crashes
		}
		if rng.IntN(50) == 0 {
			stem, hash = "", 3
		}
		files := 1 + rng.IntN(3)
		for f := range files {
			ext := []string{"jpg", "cls", "json"}[f]
			if len(entries) > n*3/4 && rng.IntN(100) == 0 {
				ext = fmt.Sprintf("late%d", rng.IntN(3))
			}
			entries = append(entries, Entry{Fid: uint16(len(entries) / 1000), Offset: uint64(len(entries)%1000) * 1024,
				Size: uint64(rng.IntN(1000)), Stem: stem, Ext: ext, KeyHash: hash})
		}
	}
	return entries[:n]
}

// TestWriterMatchesNaive: whether entries come one at a time or in
// batches prepared on several goroutines, with memory for everything or
// with rows and stems spilled at every turn, the file is the one glzn's
// rules give, crashes and late extensions included.
func TestWriterMatchesNaive(t *testing.T) {
	for _, n := range []int{0, 1, 2, 100, 20_000} {
		entries := stemEntries(max(n, 2), uint64(n))[:n]
		for _, contiguous := range []bool{false, true} {
			want := naiveIndex(entries, contiguous)
			for _, opts := range []WriterOptions{
				{Contiguous: contiguous},
				{Contiguous: contiguous, SpoolMemory: 1024, StemMemory: 1},
				{Contiguous: contiguous, SpoolMemory: 4096, StemMemory: 3000},
			} {
				for _, batched := range []bool{false, true} {
					name := fmt.Sprintf("n%d/contiguous=%v/spool%d/stems%d/batched=%v", n, contiguous, opts.SpoolMemory, opts.StemMemory, batched)
					t.Run(name, func(t *testing.T) {
						dir := t.TempDir()
						var got []byte
						if batched {
							got = writeBatched(t, dir, opts, entries)
						} else {
							got = writeIndex(t, dir, "x.taridx", opts, entries)
						}
						if !bytes.Equal(got, want) {
							x, _ := Parse("x", got)
							t.Fatalf("output differs: %d bytes, want %d; got %+v", len(got), len(want), x)
						}
						if names := listDir(t, dir); !slices.Equal(names, []string{"x.taridx"}) {
							t.Errorf("directory holds %q", names)
						}
					})
				}
			}
		}
	}
}

// writeBatched writes entries in batches of odd sizes, prepared four at a
// time on goroutines of their own and added in order.
func writeBatched(t *testing.T, dir string, opts WriterOptions, entries []Entry) []byte {
	t.Helper()
	path := filepath.Join(dir, "x.taridx")
	w, err := Create(path, opts)
	if err != nil {
		t.Fatal(err)
	}
	var parts [][]Entry
	for rest := entries; len(rest) > 0; {
		k := min(len(rest), 1+len(parts)*37%500)
		parts, rest = append(parts, rest[:k]), rest[k:]
	}
	batches := make([]*Batch, len(parts))
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := len(parts) - 1 - g; i >= 0; i -= 4 {
				batches[i] = w.Prepare(parts[i])
			}
		}()
	}
	wg.Wait()
	for i, b := range batches {
		if err := w.AddBatch(b); err != nil {
			t.Fatalf("batch %d: %v", i, err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// TestWriterStemMemoryFlat: past StemMemory the records spill, so the
// memory a writer holds does not follow the number of stems.
func TestWriterStemMemoryFlat(t *testing.T) {
	w, err := Create(filepath.Join(t.TempDir(), "x.taridx"), WriterOptions{StemMemory: 64 << 10})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Abort()
	for i := range 100_000 {
		stem := fmt.Sprintf("s%07d", i)
		if err := w.Add(Entry{Stem: stem, Ext: "jpg", KeyHash: KeyHash(stem)}); err != nil {
			t.Fatal(err)
		}
	}
	held := 0
	for i := range w.stems.parts {
		held += cap(w.stems.parts[i].recs) * stemRecSize
	}
	held += len(w.stems.log.segs) * logSegment
	// Each partition's slice may grow to twice its share; the log keeps one segment.
	if held > 2*(64<<10)+logSegment+stemParts*64*stemRecSize*2 {
		t.Errorf("%d bytes of stems held in memory", held)
	}
	if w.NStems() != 100_000 || len(w.CrashStems()) != 0 || !w.Contiguous() {
		t.Errorf("%d stems, %d crashes, contiguous %v", w.NStems(), len(w.CrashStems()), w.Contiguous())
	}
}

// TestWriterBatchNeverAdded: a prepared batch that was never added (its
// stems in the tables, its rows not) fails the tables, whichever it was.
func TestWriterBatchNeverAdded(t *testing.T) {
	w, err := Create(filepath.Join(t.TempDir(), "x.taridx"), WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Abort()
	var bs []*Batch
	for i := range 3 {
		stem := fmt.Sprint(i)
		bs = append(bs, w.Prepare([]Entry{{Stem: stem, Ext: "jpg", KeyHash: KeyHash(stem)}}))
	}
	if err := w.AddBatch(bs[0]); err != nil {
		t.Fatal(err)
	}
	if err := w.AddBatch(bs[2]); err != nil {
		t.Fatal(err)
	}
	if err := w.Tables(); err == nil {
		t.Error("tables made with a prepared batch never added")
	}
}
