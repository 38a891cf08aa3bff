package energon

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"
	"unsafe"

	"github.com/cespare/xxhash/v2"

	"github.com/itarconv/itarconv/formats/sqlitefile"
	"github.com/itarconv/itarconv/internal/safefile"
)

// PreparedShard is a shard's rows of index.sqlite in a compact form, with
// the checks WriteMeta makes of each shard's keys already made, so that
// what spans the dataset (WritePrepared) is a join of the shards' parts
// rather than a pass over every sample of them. Prepare makes one on the
// worker that read the shard, as soon as the shard is read: the work
// grows with the shard, not the dataset.
//
// Its rows take some 10 bytes a part and the key and 10 bytes a sample,
// and 8 bytes a sample for its key's hash; a Spool keeps the rows in a
// temporary file once they pass its budget.
type PreparedShard struct {
	// Name is the shard's path relative to the dataset's directory, as
	// in ShardSamples: the caller sets it before WritePrepared.
	Name string
	// End is where the archive's content ends.
	End int64

	samples, parts int
	// The first sample whose key, and part whose name or sample, energon
	// cannot take, for the error WritePrepared reports (with Name).
	bad *badRow
	// hashes are the keys' hashes, sorted: duplicateKeys looks at the
	// samples again only when two are equal.
	hashes []uint64
	// runs are the hashes kept in spool (hashes nil): sorted runs of
	// them, which together are the shard's.
	runs  []hashRun
	names []string // part names, by number (see encode)
	data  []byte   // the rows, the samples' then the parts', or nil if spooled
	split int      // where the parts' rows start in data
	spool *Spool   // where the rows are if data is nil
	off   int64    // in spool's file
	size  int
}

// hashRun is a sorted run of hashes in a spool's file, from off, and
// where each range of repeatedHashes starts in it (1<<hashBits+1 entries,
// the last its length).
type hashRun struct {
	off int64
	at  []int32
}

// badRow is a row whose text energon cannot take.
type badRow struct {
	part       bool
	text       string
	offset     int64
	sample     int // part: its sample_index, and samples the shard's count
	outOfRange bool
}

// Samples is the shard's number of samples.
func (p *PreparedShard) Samples() int { return p.samples }

// Prepare gives the shard's rows prepared for WritePrepared, keeping them
// in spool past its budget (nil: in memory). s is not kept.
func Prepare(s ShardSamples, spool *Spool) (*PreparedShard, error) {
	p := &PreparedShard{Name: s.Name, End: s.End, samples: len(s.Samples), parts: len(s.Parts)}
	p.hashes = make([]uint64, len(s.Samples))
	n := 0
	for i, x := range s.Samples {
		if p.bad == nil && !utf8.ValidString(x.Key) {
			p.bad = &badRow{text: x.Key, offset: x.Offset}
		}
		p.hashes[i] = xxhash.Sum64String(x.Key)
		n += len(x.Key) + 12
	}
	slices.Sort(p.hashes)
	if p.bad == nil {
		for _, x := range s.Parts {
			if !utf8.ValidString(x.Name) {
				p.bad = &badRow{part: true, text: x.Name, offset: x.Offset}
				break
			}
			if x.Sample < 0 || x.Sample >= len(s.Samples) {
				p.bad = &badRow{part: true, text: x.Name, offset: x.Offset, sample: x.Sample, outOfRange: true}
				break
			}
		}
	}
	b := make([]byte, 0, n+10*len(s.Parts))
	for _, x := range s.Samples {
		b = binary.AppendUvarint(b, uint64(len(x.Key)))
		b = append(b, x.Key...)
		b = binary.AppendVarint(b, x.Offset)
		b = binary.AppendVarint(b, x.Size)
	}
	p.split = len(b)
	// A part's name is mostly one of a few ("jpg", "cls"): a number
	// names it, 0 saying that the name itself follows.
	ids := map[string]int{}
	for _, x := range s.Parts {
		b = binary.AppendUvarint(b, uint64(x.Sample))
		id, ok := ids[x.Name]
		if !ok && len(p.names) < maxInterned {
			p.names = append(p.names, x.Name)
			id, ok = len(p.names), true
			ids[x.Name] = id
		}
		if ok {
			b = binary.AppendUvarint(b, uint64(id))
		} else {
			b = append(b, 0)
			b = binary.AppendUvarint(b, uint64(len(x.Name)))
			b = append(b, x.Name...)
		}
		b = binary.AppendVarint(b, x.Offset)
		b = binary.AppendVarint(b, x.Size)
	}
	p.data = b
	if spool != nil {
		if err := spool.keep(p); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// Compact is a PreparedShard's rows as Prepare keeps them: what a task of
// a partitioned run saves of a shard, for the merge to take back with
// PrepareCompact, without decoding and encoding every row again.
type Compact struct {
	Samples, Parts int
	Split          int      // where the parts' rows start in Data
	Names          []string // the part names rows name by number
	Data           []byte
}

// Compact gives p's rows as they are kept (read back, if p's spool holds
// them).
func (p *PreparedShard) Compact() (Compact, error) {
	c := Compact{Samples: p.samples, Parts: p.parts, Split: p.split, Names: p.names, Data: p.data}
	if c.Data == nil && p.size > 0 {
		c.Data = make([]byte, p.size) // the rows this process wrote
		if err := p.spool.readAt(c.Data, p.off); err != nil {
			return Compact{}, err
		}
	}
	return c, nil
}

// PrepareCompact is Prepare of the rows Compact gave (read back from a
// part, so checked as they are decoded: rows cut short, or bytes past the
// last, are ErrFormat). c.Data is kept.
func PrepareCompact(name string, end int64, c Compact, spool *Spool) (*PreparedShard, error) {
	bad := func(what string) (*PreparedShard, error) {
		return nil, fmt.Errorf("energon: shard %s: %w: prepared rows %s", name, ErrFormat, what)
	}
	if c.Samples < 0 || c.Parts < 0 || c.Split < 0 || c.Split > len(c.Data) || len(c.Names) > maxInterned {
		return bad(fmt.Sprintf("of %d samples and %d parts, split at %d of %d bytes, %d names", c.Samples, c.Parts, c.Split, len(c.Data), len(c.Names)))
	}
	p := &PreparedShard{Name: name, End: end, samples: c.Samples, parts: c.Parts, names: c.Names, data: c.Data, split: c.Split}
	// A row takes three bytes at least: no more hashes than that allows,
	// whatever the count claims.
	p.hashes = make([]uint64, 0, min(c.Samples, c.Split/3))
	r := c.Data[:c.Split]
	var x Sample
	for range c.Samples {
		n := decodeSample(r, &x)
		if n == 0 {
			return bad("cut short")
		}
		if p.bad == nil && !utf8.ValidString(x.Key) {
			p.bad = &badRow{text: strings.Clone(x.Key), offset: x.Offset}
		}
		p.hashes = append(p.hashes, xxhash.Sum64String(x.Key))
		r = r[n:]
	}
	if len(r) > 0 {
		return bad("past the last sample")
	}
	slices.Sort(p.hashes)
	r = c.Data[c.Split:]
	var y Part
	for range c.Parts {
		n := decodePart(r, c.Names, &y)
		if n == 0 {
			return bad("cut short")
		}
		if n < 0 {
			return bad(fmt.Sprintf("naming a part name past the %d kept", len(c.Names)))
		}
		if p.bad == nil {
			if !utf8.ValidString(y.Name) {
				p.bad = &badRow{part: true, text: strings.Clone(y.Name), offset: y.Offset}
			} else if y.Sample < 0 || y.Sample >= c.Samples {
				p.bad = &badRow{part: true, text: strings.Clone(y.Name), offset: y.Offset, sample: y.Sample, outOfRange: true}
			}
		}
		r = r[n:]
	}
	if len(r) > 0 {
		return bad("past the last part")
	}
	if spool != nil {
		if err := spool.keep(p); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// Shard gives the rows back as a ShardSamples (a task of a partitioned
// run keeps them so).
func (p *PreparedShard) Shard() (ShardSamples, error) {
	s := ShardSamples{Name: p.Name, End: p.End, Samples: make([]Sample, 0, p.samples), Parts: make([]Part, 0, p.parts)}
	err := p.rows(nil, func(x Sample) error {
		x.Key = string([]byte(x.Key))
		s.Samples = append(s.Samples, x)
		return nil
	}, func(x Part) error {
		x.Name = string([]byte(x.Name))
		s.Parts = append(s.Parts, x)
		return nil
	})
	return s, err
}

// rows calls sample with each sample and part with each part (either may
// be nil), in tar order. The strings they get are valid during the call
// only: they lie in buf (given back grown) or in p. Rows kept in a spool
// are read a window at a time, not whole.
func (p *PreparedShard) rows(buf *[]byte, sample func(Sample) error, part func(Part) error) error {
	bad := func() error {
		return fmt.Errorf("energon: shard %s: %w: its prepared rows are cut short", p.Name, ErrFormat)
	}
	if sample != nil {
		rr := p.region(buf, 0, p.split)
		var x Sample
		for range p.samples {
			n := decodeSample(rr.r, &x)
			for n == 0 {
				if err := rr.fill(bad); err != nil {
					return err
				}
				n = decodeSample(rr.r, &x)
			}
			rr.r = rr.r[n:]
			if err := sample(x); err != nil {
				return err
			}
		}
	}
	if part != nil {
		rr := p.region(buf, p.split, -1)
		var x Part
		for range p.parts {
			n := decodePart(rr.r, p.names, &x)
			for n == 0 {
				if err := rr.fill(bad); err != nil {
					return err
				}
				n = decodePart(rr.r, p.names, &x)
			}
			if n < 0 {
				return bad()
			}
			rr.r = rr.r[n:]
			if err := part(x); err != nil {
				return err
			}
		}
	}
	return nil
}

// region reads the rows from lo to hi (-1: the end), in p.data or in the
// spool.
func (p *PreparedShard) region(buf *[]byte, lo, hi int) *regionReader {
	if p.data != nil {
		if hi < 0 {
			hi = len(p.data)
		}
		return &regionReader{r: p.data[lo:hi]}
	}
	if hi < 0 {
		hi = p.size
	}
	var tmp []byte
	if buf == nil {
		buf = &tmp
	}
	return &regionReader{f: p.spool, off: p.off + int64(lo), end: p.off + int64(hi), buf: buf}
}

// regionWindow is how much of a spooled shard's rows is read at once.
const regionWindow = 256 << 10

// regionReader gives rows from memory (r) or from the spool's file,
// through a window of buf.
type regionReader struct {
	r        []byte // the rows read and not yet decoded
	f        *Spool // nil: r is all there is
	off, end int64  // what is left to read in f
	buf      *[]byte
}

// fill reads more of the rows into the window, for a row that r does not
// hold whole; bad is the error of rows cut short.
func (rr *regionReader) fill(bad func() error) error {
	if rr.f == nil || rr.off >= rr.end {
		return bad()
	}
	b := *rr.buf
	if cap(b) < regionWindow || len(rr.r) >= cap(b)/2 {
		b = make([]byte, max(regionWindow, 2*cap(b)))
	}
	b = b[:cap(b)]
	k := copy(b, rr.r)
	n := int(min(int64(len(b)-k), rr.end-rr.off))
	if err := rr.f.readAt(b[k:k+n], rr.off); err != nil {
		return err
	}
	rr.off += int64(n)
	rr.r = b[:k+n]
	*rr.buf = b
	return nil
}

// decodeSample reads the sample row at the start of r into x, and says
// its length, or 0 if r does not hold it whole.
func decodeSample(r []byte, x *Sample) int {
	n, k := binary.Uvarint(r)
	if k <= 0 || uint64(len(r)-k) < n {
		return 0
	}
	key := r[k : k+int(n)]
	at := k + int(n)
	off, size, k := decodeOffsetSize(r[at:])
	if k == 0 {
		return 0
	}
	*x = Sample{Key: unsafeString(key), Offset: off, Size: size}
	return at + k
}

// decodeOffsetSize reads the offset and size that end a row, and their
// length in bytes (0: r is cut short).
func decodeOffsetSize(r []byte) (off, size int64, n int) {
	off, k1 := binary.Varint(r)
	if k1 <= 0 {
		return 0, 0, 0
	}
	size, k2 := binary.Varint(r[k1:])
	if k2 <= 0 {
		return 0, 0, 0
	}
	return off, size, k1 + k2
}

// decodePart reads the part row at the start of r into x, as
// decodeSample; a number past names is -1.
func decodePart(r []byte, names []string, x *Part) int {
	idx, k := binary.Uvarint(r)
	if k <= 0 {
		return 0
	}
	at := k
	id, k := binary.Uvarint(r[at:])
	if k <= 0 {
		return 0
	}
	at += k
	if id > uint64(len(names)) {
		return -1
	}
	var name string
	if id > 0 {
		name = names[id-1]
	} else {
		n, k := binary.Uvarint(r[at:])
		if k <= 0 || uint64(len(r)-at-k) < n {
			return 0
		}
		name = unsafeString(r[at+k : at+k+int(n)])
		at += k + int(n)
	}
	off, size, k := decodeOffsetSize(r[at:])
	if k == 0 {
		return 0
	}
	*x = Part{Sample: int(idx), Name: name, Offset: off, Size: size}
	return at + k
}

// unsafeString is b as a string without a copy, for rows that go on to
// SQLite's pages and the digest, both of which copy them: a copy of every
// key would be an allocation a sample.
func unsafeString(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(&b[0], len(b))
}

// A Spool keeps prepared shards' rows in a temporary file once those in
// memory pass its budget, so that the memory the rows of a dataset take
// does not grow with the dataset. The file is removed as soon as it is
// made (where the system allows: elsewhere by Close), so that nothing is
// left of it however the run ends. Its methods are safe for concurrent
// use.
type Spool struct {
	dir    string
	budget int64

	mu   sync.Mutex
	held int64 // bytes of rows in memory
	f    *os.File
	end  int64
	err  error
}

// DefaultSpoolBudget is the memory a Spool of budget 0 keeps rows in.
const DefaultSpoolBudget = 64 << 20

// NewSpool makes a spool whose file, once needed, is made in dir ("" the
// system's temporary directory), keeping up to budget bytes of rows in
// memory (0: DefaultSpoolBudget; negative: none).
func NewSpool(dir string, budget int64) *Spool {
	if budget == 0 {
		budget = DefaultSpoolBudget
	}
	return &Spool{dir: dir, budget: max(budget, 0)}
}

// keep writes p's rows to the file if they do not fit in the budget.
func (s *Spool) keep(p *PreparedShard) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.held+int64(len(p.data)) <= s.budget {
		s.held += int64(len(p.data))
		return nil
	}
	if err := s.open(); err != nil {
		return err
	}
	if _, err := s.f.WriteAt(p.data, s.end); err != nil {
		s.err = fmt.Errorf("energon: spool of rows %s at %d: %w", s.f.Name(), s.end, err)
		return s.err
	}
	p.spool, p.off, p.size = s, s.end, len(p.data)
	s.end += int64(len(p.data))
	p.data = nil
	// The keys' hashes too, with where each range of repeatedHashes
	// starts among them.
	run, err := s.writeHashes(p.hashes)
	if err != nil {
		return err
	}
	p.runs, p.hashes = []hashRun{run}, nil
	return nil
}

// open makes the spool's file, if not yet made; s.mu is held.
func (s *Spool) open() error {
	if s.err != nil {
		return s.err
	}
	if s.f == nil {
		f, err := safefile.Scratch(s.dir, "energon-rows")
		if err != nil {
			s.err = fmt.Errorf("energon: spool of rows: %w", err)
			return s.err
		}
		s.f = f
	}
	return nil
}

// keepSpilled moves the rows and hash runs a builder spilled into its
// file src (see IdxBuilder) to the spool's file, the samples' rows then
// the parts', as keep writes p.data.
func (s *Spool) keepSpilled(p *PreparedShard, src *os.File, samples, parts []extent, runs []hashRun) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.open(); err != nil {
		return err
	}
	buf := make([]byte, 1<<20)
	move := func(x extent) error {
		for done := int64(0); done < x.size; {
			b := buf[:min(int64(len(buf)), x.size-done)]
			if _, err := src.ReadAt(b, x.off+done); err != nil {
				return fmt.Errorf("energon: rows of shard in %s at %d: %w", src.Name(), x.off+done, err)
			}
			if _, err := s.f.WriteAt(b, s.end); err != nil {
				s.err = fmt.Errorf("energon: spool of rows %s at %d: %w", s.f.Name(), s.end, err)
				return s.err
			}
			done += int64(len(b))
			s.end += int64(len(b))
		}
		return nil
	}
	p.spool, p.off = s, s.end
	for _, xs := range [][]extent{samples, parts} {
		for _, x := range xs {
			if err := move(x); err != nil {
				return err
			}
		}
	}
	p.split = int(total(samples))
	p.size = int(s.end - p.off)
	for _, r := range runs {
		at := s.end
		if err := move(extent{r.off, 8 * int64(r.at[len(r.at)-1])}); err != nil {
			return err
		}
		p.runs = append(p.runs, hashRun{off: at, at: r.at})
	}
	return nil
}

// extent is a stretch of a file.
type extent struct{ off, size int64 }

func total(xs []extent) (n int64) {
	for _, x := range xs {
		n += x.size
	}
	return n
}

// writeHashes writes sorted hashes at the end of the file, as a run;
// s.mu is held.
func (s *Spool) writeHashes(hashes []uint64) (hashRun, error) {
	run, end, err := writeRun(s.f, s.end, hashes)
	s.end = end
	if err != nil {
		s.err = fmt.Errorf("energon: spool of rows %s: %w", s.f.Name(), err)
	}
	return run, s.err
}

// writeRun writes sorted hashes to f at off, as a run, and says where it
// ends.
func writeRun(f *os.File, off int64, hashes []uint64) (hashRun, int64, error) {
	h := make([]byte, 0, min(8*len(hashes), 1<<20))
	run := hashRun{off: off, at: rangeStarts(hashes)}
	for i, v := range hashes {
		h = binary.LittleEndian.AppendUint64(h, v)
		if len(h) == cap(h) || i == len(hashes)-1 {
			if _, err := f.WriteAt(h, off); err != nil {
				return run, off, fmt.Errorf("at %d: %w", off, err)
			}
			off += int64(len(h))
			h = h[:0]
		}
	}
	return run, off, nil
}

// rangeStarts says where each range of repeatedHashes starts among sorted
// hashes.
func rangeStarts(hashes []uint64) []int32 {
	at := make([]int32, 1<<hashBits+1)
	for r := 1; r < 1<<hashBits; r++ {
		i, _ := slices.BinarySearch(hashes, uint64(r)<<(64-hashBits))
		at[r] = int32(i)
	}
	at[1<<hashBits] = int32(len(hashes))
	return at
}

// readAt reads the spool's file at off.
func (s *Spool) readAt(b []byte, off int64) error {
	if _, err := s.f.ReadAt(b, off); err != nil {
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return fmt.Errorf("energon: spool of rows %s at %d: %w", s.f.Name(), off, err)
	}
	return nil
}

// Close removes the spool's file; the shards prepared with it are not to
// be used after.
func (s *Spool) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.f == nil {
		return nil
	}
	name := s.f.Name()
	err := s.f.Close()
	os.Remove(name) // where it could not be removed while open
	s.f = nil
	return err
}

// Spooled says how many bytes of rows the spool's file holds.
func (s *Spool) Spooled() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.end
}

// WritePrepared is WriteMetaContext for shards prepared by Prepare (each
// named, in energon's order): the same files, byte for byte. The checks
// of the shards' keys were made by Prepare; the repeated keys are found
// from the keys' hashes, merged side by side.
func WritePrepared(ctx context.Context, datasetDir string, shards []*PreparedShard, opts MetaOptions) error {
	return writeMeta(ctx, datasetDir, shards, opts)
}

// prepareAll prepares shards for writeMeta, side by side.
func prepareAll(shards []ShardSamples) ([]*PreparedShard, error) {
	ps := make([]*PreparedShard, len(shards))
	errs := make([]error, len(shards))
	var wg sync.WaitGroup
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	for i := range shards {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			ps[i], errs[i] = Prepare(shards[i], nil)
		}()
	}
	wg.Wait()
	return ps, errors.Join(errs...)
}

// preparedTables is tables for prepared shards: the rows of index.sqlite
// in the order energon inserts them.
func preparedTables(shards []*PreparedShard, fn func(table int, row []sqlitefile.Value) error) error {
	for _, t := range []int{samplesTable, samplePartsTable} {
		if err := preparedTable(shards, t, func(row []sqlitefile.Value) error { return fn(t, row) }); err != nil {
			return err
		}
	}
	return nil
}

// preparedTable gives the rows of one table of index.sqlite, in order.
// Calls may run at once: each reads the shards' rows on its own.
func preparedTable(shards []*PreparedShard, table int, fn func(row []sqlitefile.Value) error) error {
	row := make([]sqlitefile.Value, 5)
	var buf []byte
	for id, s := range shards {
		var err error
		if table == samplesTable {
			i := 0
			err = s.rows(&buf, func(x Sample) error {
				row[0], row[1], row[2], row[3], row[4] = sqlitefile.Int(int64(id)), sqlitefile.Text(x.Key), sqlitefile.Int(int64(i)), sqlitefile.Int(x.Offset), sqlitefile.Int(x.Size)
				i++
				return fn(row)
			}, nil)
		} else {
			err = s.rows(&buf, nil, func(p Part) error {
				row[0], row[1], row[2], row[3], row[4] = sqlitefile.Int(int64(id)), sqlitefile.Int(int64(p.Sample)), sqlitefile.Text(p.Name), sqlitefile.Int(p.Offset), sqlitefile.Int(p.Size)
				return fn(row)
			})
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// hashBits: repeatedHashes splits the hashes into 1<<hashBits ranges.
const hashBits = 6

// repeatedHashes finds the hashes that occur more than once among the
// shards' keys. The hashes are split by their top bits into ranges, and
// each range's hashes, gathered from every shard (each shard's in order
// already, in memory or in its spool), are sorted and looked at apart,
// the ranges side by side: a range's hashes at a time are in memory.
func repeatedHashes(shards []*PreparedShard) (map[uint64]bool, error) {
	// Each shard's hashes, or runs of them, and where each range
	// starts in them.
	type run struct {
		s      *PreparedShard
		hashes []uint64 // nil: in s's spool, from off
		off    int64
		at     []int32
	}
	var runs []run
	for _, s := range shards {
		if s.hashes != nil || len(s.runs) == 0 {
			runs = append(runs, run{s: s, hashes: s.hashes, at: rangeStarts(s.hashes)})
		}
		for _, r := range s.runs {
			runs = append(runs, run{s: s, off: r.off, at: r.at})
		}
	}
	found := make([][]uint64, 1<<hashBits)
	errs := make([]error, 1<<hashBits)
	var wg sync.WaitGroup
	next := make(chan int, 1<<hashBits)
	for r := range 1 << hashBits {
		next <- r
	}
	close(next)
	for range runtime.GOMAXPROCS(0) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var buf []uint64
			var raw []byte
			for r := range next {
				buf = buf[:0]
				for _, x := range runs {
					lo, hi := x.at[r], x.at[r+1]
					if lo == hi {
						continue
					}
					if x.hashes != nil {
						buf = append(buf, x.hashes[lo:hi]...)
						continue
					}
					raw = slices.Grow(raw[:0], 8*int(hi-lo))[:8*int(hi-lo)]
					if err := x.s.spool.readAt(raw, x.off+8*int64(lo)); err != nil {
						errs[r] = err
						break
					}
					for k := 0; k < len(raw); k += 8 {
						buf = append(buf, binary.LittleEndian.Uint64(raw[k:]))
					}
				}
				slices.Sort(buf)
				for i := 1; i < len(buf); i++ {
					if buf[i] == buf[i-1] && (len(found[r]) == 0 || found[r][len(found[r])-1] != buf[i]) {
						found[r] = append(found[r], buf[i])
					}
				}
			}
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	var repeated map[uint64]bool
	for _, f := range found {
		for _, h := range f {
			if repeated == nil {
				repeated = make(map[uint64]bool)
			}
			repeated[h] = true
		}
	}
	return repeated, nil
}

// rowSizes are about how many bytes the records of each table of
// index.sqlite take (sqlitefile's KeysEarly): the prepared rows' bytes and
// what a record adds to them (its header, the numbers a prepared row does
// not hold, a part's name where a prepared row has its number).
func rowSizes(shards []*PreparedShard) []int64 {
	var samples, parts int64
	for _, p := range shards {
		size := len(p.data)
		if p.data == nil {
			size = p.size
		}
		samples += int64(p.split) + 20*int64(p.samples)
		parts += int64(size-p.split) + 24*int64(p.parts)
	}
	return []int64{samples, parts}
}
