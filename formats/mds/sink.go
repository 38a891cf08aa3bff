package mds

import (
	"bytes"
	"cmp"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"unicode/utf8"

	"github.com/itarconv/itarconv/dataset"
	"github.com/itarconv/itarconv/formats/registry"
	"github.com/itarconv/itarconv/internal/mapped"
)

// The writer streams each shard to its file as its samples come, as
// MosaicML's writer cannot (it holds a shard whole), and the ordered
// writer never touches a payload: a sample's values are spans of the
// source's shard files (windows of a few MiB), which a goroutine of its
// own (flusher) maps and writes out with the sizes between (pwritev): the
// kernel copies them from the source's pages to the shard's, the one copy
// (read where they cannot be mapped).
// A shard's first flushSize bytes of samples wait: a shard that ends
// within them is written as MosaicML writes it, byte for byte. Past
// them, the header (its samples' count and offsets, and the writer's
// configuration) cannot be known before the samples, and room is kept
// for it: offsets for twice the samples the limit takes at the average
// size so far. The header is written last; what the configuration leaves
// of the room is spaces after its JSON, which JSON readers skip
// (MosaicML's reader does not read the configuration at all). A shard
// whose room is full closes early.
//
// A column's encoding is chosen when its shard begins, from what the
// values of its name allowed so far in the run (Prepare looks at each
// value, on the workers): a value that the encoding cannot hold as it is
// (an "07" in an int column) closes the shard, and its column takes a
// plainer encoding from then on.
//
// A shard's file, once written, is completed (its header, its hashes,
// its compression) by a goroutine of its own (completer), so that the
// flusher, whose goroutine bounds the run, writes the next shard
// meanwhile.
//
// Memory is the sample being read and the windows of the jobs waiting
// for the flusher (flushDepth jobs of flushSize bytes): nothing grows
// with the members or the shards' size.

// flushSize is the bytes of samples a job of the flusher's holds, and
// flushDepth how many wait for it.
const (
	flushSize  = 4 << 20
	flushDepth = 4
)

// maxPreallocate bounds the disk reserved for a shard as it opens (its
// size limit, at most this).
const maxPreallocate = 256 << 20

// writer is the sink: rows of one key become a sample, samples of the
// same columns a shard. Workers classify the payloads (Prepare); the
// ordered writer groups them into samples and shards; the flusher writes.
type writer struct {
	dir   string
	comp  *compression
	algos []string
	limit int64
	src   dataset.PayloadSource
	files dataset.ShardFiles // when the source's shards hold the payloads
	st    WriteStats

	// allow is what the values of each column name allowed so far.
	allow map[string]choice

	// The sample being read: its key, its columns, their values and
	// what they allow, and the windows holding them.
	open     bool
	key      []byte
	sampCols []string
	sampVals []val
	sampOK   []choice
	sampWins []*window

	sh    *shardOut // the shard being written, or nil
	cur   *job      // the job being filled, of sh
	arena []byte    // keys, sizes and numbers the jobs write

	jobs      chan *job
	iov       [][]byte       // the flusher's
	pool      chan []byte    // windows' buffers
	written   chan *shardOut // shards the flusher wrote, to complete
	flushed   chan struct{}  // closed when the flusher is done
	completed chan struct{}  // closed when the completer is done
	failed    chan struct{}  // closed on the first error of either
	failOnce  sync.Once
	err       error // the first error, read once failed is closed

	opened int         // shards opened
	shards []ShardInfo // shards completed, by the completer
	names  []string    // their files, synced before the commit
}

// shardOut is a shard being written.
type shardOut struct {
	info    ShardInfo
	f       *os.File
	fixed   []bool   // columns of a fixed size (int)
	cfg     int      // the configuration's length
	room    int64    // the header's room, once kept (else 0)
	maxN    int      // the samples the room holds offsets for
	offsets []uint32 // of the samples, from the first one's
	end     int64    // where its samples end so far, from the first one's
	waiting []*job   // jobs filled before the room was kept
}

// header is the size of sh's header with n samples: its room, once kept.
func (sh *shardOut) header(n int) int64 {
	if sh.room > 0 {
		return sh.room
	}
	return int64(4 + 4*(n+1) + sh.cfg)
}

// val is a value a job writes: bytes of the writer's (a key, sizes, a
// number, a payload it read), or n bytes at off of a window of a
// source's file, which the flusher reads when it writes them. num is the
// value as an integer, where it is one (canInt).
type val struct {
	b   []byte
	win *window
	off int64
	n   int
	num int64
}

func (v val) len() int {
	if v.win != nil {
		return v.n
	}
	return len(v.b)
}

// job is the flusher's: pieces to write from an offset of a shard's file
// (from its first sample's until the room is kept), the windows they lie
// in, to release once written; or (close) the shard's header, after
// which its file is complete.
type job struct {
	sh     *shardOut
	off    int64
	pieces []val
	size   int64
	wins   []*window
	close  bool
}

func (j *job) release() {
	for _, w := range j.wins {
		w.release()
	}
	j.wins = nil
}

// window is a span of a source's shard file, which the flusher maps (or,
// where it cannot, reads) once, when it first writes values of it; held
// by the view that made it and by the samples and jobs whose values lie
// in it. Mapped, its bytes go from the page cache to the shard's file in
// one copy, the kernel's, instead of two (read, then written).
type window struct {
	f      *sharedFile
	lo, hi int64
	m      *mapped.Region // mapped by the flusher
	buf    []byte         // else read by the flusher
	pool   chan []byte    // buffers of viewWindow bytes, reused
	refs   atomic.Int32
}

func (w *window) hold() { w.refs.Add(1) }

func (w *window) release() {
	if w.refs.Add(-1) == 0 {
		w.m.Close()
		w.m = nil
		if cap(w.buf) == viewWindow {
			select {
			case w.pool <- w.buf:
			default:
			}
		}
		w.buf = nil
		w.f.release()
	}
}

// bytes returns the window's bytes [off, off+n), mapping or reading the
// window first (the flusher's goroutine only). Mapped bytes are handed
// only to the kernel (pwritev), which reports a file cut short since as
// an error (EFAULT), not a fault.
func (w *window) bytes(off int64, n int) ([]byte, error) {
	if w.m == nil && w.buf == nil {
		if m, err := mapped.Map(w.f.f, w.lo, w.hi-w.lo); err == nil {
			w.m = m
		}
	}
	if w.m != nil {
		return w.m.Bytes(off, int64(n)), nil
	}
	if w.buf == nil {
		var buf []byte
		select {
		case buf = <-w.pool:
		default:
			buf = make([]byte, viewWindow)
		}
		if w.hi-w.lo > viewWindow {
			buf = make([]byte, w.hi-w.lo) // one value larger than a window
		}
		buf = buf[:w.hi-w.lo]
		if _, err := w.f.f.ReadAt(buf, w.lo); err != nil {
			return nil, fmt.Errorf("%s: offset %d: %w", w.f.f.Name(), w.lo, err)
		}
		w.buf = buf
	}
	i := off - w.lo
	return w.buf[i : i+int64(n) : i+int64(n)], nil
}

// sharedFile is a source's shard file, open while windows of it are held.
type sharedFile struct {
	f    *os.File
	refs atomic.Int32
}

func (f *sharedFile) release() {
	if f.refs.Add(-1) == 0 {
		f.f.Close()
	}
}

func newWriter(o Options, shardSize int64) (*writer, error) {
	w := &writer{limit: cmp.Or(shardSize, DefaultShardSize), algos: o.Hashes, allow: map[string]choice{}}
	if w.limit < 0 || w.limit > maxUint32 {
		return nil, fmt.Errorf("shard size %d: MDS's offsets (uint32) reach 4 GiB: %w", w.limit, ErrUnsupported)
	}
	if w.algos == nil {
		w.algos = []string{"xxh64"}
	}
	if err := checkHashes(w.algos); err != nil {
		return nil, err
	}
	if o.Compression != "" {
		c, err := lookupCompression(o.Compression)
		if err != nil {
			return nil, err
		}
		if !c.writable() {
			return nil, fmt.Errorf("compression %q is read, not written: %w", o.Compression, ErrUnsupported)
		}
		w.comp = &c
	}
	return w, nil
}

func (w *writer) run(ctx context.Context, in registry.Input, o registry.CreateOptions) (*WriteStats, error) {
	src, err := in.Rows(false)
	if err != nil {
		return nil, err
	}
	defer registry.CloseSource(src)
	w.src = src
	w.files, _ = src.(dataset.ShardFiles)
	w.jobs = make(chan *job, flushDepth)
	w.pool = make(chan []byte, 2*flushDepth+4)
	w.written = make(chan *shardOut, 2)
	w.flushed, w.completed, w.failed = make(chan struct{}), make(chan struct{}), make(chan struct{})
	go w.flusher()
	go w.completer()
	err = dataset.Run(ctx, src, w, dataset.Options{Workers: o.Workers, Progress: o.Progress})
	if err == nil {
		err = w.endSample()
	}
	if err == nil {
		err = w.closeShard()
	}
	close(w.jobs)
	<-w.flushed
	<-w.completed
	w.drop()
	if err == nil && w.isFailed() {
		err = w.err
	}
	if err == nil {
		err = writeIndex(w.dir, w.shards)
	}
	if err == nil {
		err = syncFiles(w.dir, append(w.names, IndexFile))
	}
	if err == nil {
		err = ctx.Err()
	}
	if err != nil {
		return nil, err
	}
	w.st.Shards = len(w.shards)
	return &w.st, nil
}

// drop releases what a run that failed left held: the sample's windows,
// the shard's jobs not handed over, its file.
func (w *writer) drop() {
	for _, win := range w.sampWins {
		win.release()
	}
	w.sampWins = nil
	if sh := w.sh; sh != nil {
		for _, j := range sh.waiting {
			j.release()
		}
		if w.cur != nil {
			w.cur.release()
		}
		sh.f.Close()
		w.sh, w.cur = nil, nil
	}
}

func (w *writer) EndShard(int) error { return nil }

func (w *writer) Write(b *dataset.Batch) error {
	p := b.Prep.(*prepared)
	v := &spans{b: b, files: w.files, pool: w.pool}
	defer v.close()
	for i := range b.Rows {
		r := &b.Rows[i]
		if p.keyEnd[i] < 0 {
			w.st.Skipped++
			continue
		}
		val, err := v.val(i)
		if err != nil {
			return err
		}
		switch {
		case val.win != nil: // the source's bytes, read when written
		case r.Inline != nil:
			val.b = bytes.Clone(r.Inline) // the source's, until Write returns
		case r.Size == 0:
			val.b = []byte{}
		default:
			if val.b, err = dataset.ReadPayload(w.src, r); err != nil {
				return fmt.Errorf("%q: %w", r.Name, err)
			}
		}
		allow, num := p.allow[i], p.num[i]
		if !p.known[i] {
			allow = allowed(string(r.Name[p.keyEnd[i]+1:]), val.b)
			num, _ = parseInt(val.b, allow)
		}
		val.num = num
		if err := w.add(r.Name[:p.keyEnd[i]], r.Name[p.keyEnd[i]+1:], val, allow); err != nil {
			return fmt.Errorf("%q: %w", r.Name, err)
		}
	}
	return nil
}

// add adds a member's value to the sample of its key, starting a new
// sample at a new key.
func (w *writer) add(key, ext []byte, v val, allow choice) error {
	if !w.open || !bytes.Equal(key, w.key) {
		if err := w.endSample(); err != nil {
			return err
		}
		w.open = true
		w.key = w.keep(key)
		w.sampCols, w.sampVals, w.sampOK = w.sampCols[:0], w.sampVals[:0], w.sampOK[:0]
	}
	// The column's name: the shard's string where it is the same.
	n := len(w.sampCols)
	var col string
	if sh := w.sh; sh != nil && n+1 < len(sh.info.ColumnNames) && sh.info.ColumnNames[n+1] == string(ext) && (n == 0 || w.sampCols[n-1] == sh.info.ColumnNames[n]) {
		col = sh.info.ColumnNames[n+1]
	} else {
		col = string(ext)
	}
	if slices.Contains(w.sampCols, col) {
		return fmt.Errorf("a second .%s in sample %q (MDS keeps one value a column): %w", ext, key, ErrUnkeepable)
	}
	if win := v.win; win != nil && (len(w.sampWins) == 0 || w.sampWins[len(w.sampWins)-1] != win) {
		win.hold()
		w.sampWins = append(w.sampWins, win)
	}
	w.sampCols = append(w.sampCols, col)
	w.sampVals = append(w.sampVals, v)
	w.sampOK = append(w.sampOK, allow)
	w.st.Members++
	w.st.Bytes += int64(v.len())
	return nil
}

// keep copies b (a key, sizes, a number) into the arena, which the jobs
// write from: a new arena when it is full, the old one left to them.
func (w *writer) keep(b []byte) []byte {
	if len(w.arena)+len(b) > cap(w.arena) {
		w.arena = make([]byte, 0, max(64<<10, len(b)))
	}
	at := len(w.arena)
	w.arena = append(w.arena, b...)
	return w.arena[at:len(w.arena):len(w.arena)]
}

// value is the sample's value of column c (0: the key).
func (w *writer) value(c int) val {
	if c == 0 {
		return val{b: w.key}
	}
	return w.sampVals[c-1]
}

// endSample writes the sample being read into the shard, after closing
// the shard first where the sample does not fit it: other columns, a
// value its encoding cannot hold, no room left.
func (w *writer) endSample() error {
	if !w.open {
		return nil
	}
	w.open = false
	keyOK := choice(0)
	if utf8.Valid(w.key) {
		keyOK = canStr
	}
	w.allow[KeyColumn] = w.allowed(KeyColumn) & keyOK
	for i, c := range w.sampCols {
		w.allow[c] = w.allowed(c) & w.sampOK[i]
	}
	size := w.sampleSize(w.sh)
	if sh := w.sh; sh != nil && !w.fits(sh, size) {
		if err := w.closeShard(); err != nil {
			return err
		}
	}
	if w.sh == nil {
		if err := w.openShard(); err != nil {
			return err
		}
		size = w.sampleSize(w.sh)
	}
	sh := w.sh
	if int64(size) > maxUint32-sh.end-sh.header(len(sh.offsets)+1) {
		return fmt.Errorf("sample %q: %d bytes, past what MDS's offsets reach: %w", w.key, size, ErrUnkeepable)
	}
	w.encode(sh, size)
	sh.offsets = append(sh.offsets, uint32(sh.end))
	sh.end += int64(size)
	sh.info.Samples++
	w.st.Samples++
	return nil
}

func (w *writer) allowed(col string) choice {
	if a, ok := w.allow[col]; ok {
		return a
	}
	return ^choice(0)
}

func (w *writer) fits(sh *shardOut, size int) bool {
	cols := sh.info.ColumnNames
	if len(cols) != len(w.sampCols)+1 || !slices.Equal(cols[1:], w.sampCols) || (sh.room > 0 && len(sh.offsets) >= sh.maxN) {
		return false
	}
	for c, enc := range sh.info.ColumnEncodings {
		ok := canStr
		if c > 0 {
			ok = w.sampOK[c-1]
		} else if !utf8.Valid(w.key) {
			ok = 0
		}
		if need := encodingNeeds(enc); need != 0 && ok&need == 0 {
			return false
		}
	}
	return sh.header(len(sh.offsets)+1)+sh.end+int64(size) <= w.limit
}
func encodingNeeds(enc string) choice {
	switch enc {
	case "int":
		return canInt
	case "json":
		return canJSON
	case "jpeg":
		return canJPEG
	case "png":
		return canPNG
	case "str":
		return canStr
	}
	return 0
}

// sampleSize is the sample's size in sh's encodings (or, with no shard,
// as plain values).
func (w *writer) sampleSize(sh *shardOut) int {
	size := 0
	for c := 0; c <= len(w.sampCols); c++ {
		if sh != nil && c < len(sh.fixed) && sh.fixed[c] {
			size += 8
		} else {
			size += 4 + w.value(c).len()
		}
	}
	return size
}

// openShard begins a shard for the sample being read: its columns, each
// of the encoding its name's values allowed so far.
func (w *writer) openShard() error {
	sh := &shardOut{info: ShardInfo{ColumnNames: append([]string{KeyColumn}, w.sampCols...), Format: "mds",
		Hashes: append([]string{}, w.algos...), Version: 2}}
	limit := w.limit
	sh.info.SizeLimit = &limit
	for _, c := range sh.info.ColumnNames {
		name := w.allow[c].name()
		sh.info.ColumnEncodings = append(sh.info.ColumnEncodings, name)
		if name == "int" {
			eight := int64(8)
			sh.info.ColumnSizes = append(sh.info.ColumnSizes, &eight)
		} else {
			sh.info.ColumnSizes = append(sh.info.ColumnSizes, nil)
		}
		sh.fixed = append(sh.fixed, name == "int")
	}
	if w.comp != nil {
		name := w.comp.family
		if c, _ := lookupCompression(name); c.level != w.comp.level {
			name = fmt.Sprintf("%s:%d", name, w.comp.level)
		}
		sh.info.Compression = &name
	}
	sh.cfg = len(sh.info.appendConfig(nil))
	name := fmt.Sprintf("shard.%05d.mds", w.opened)
	f, err := os.OpenFile(filepath.Join(w.dir, name), os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	preallocate(f, min(w.limit, maxPreallocate))
	sh.f = f
	sh.info.RawData = &FileInfo{Basename: name}
	w.sh = sh
	w.opened++
	return nil
}

// encode adds the sample, in sh's encodings, to the job being filled:
// its values' sizes (columns of variable size), then its values. The job
// takes over the windows the sample holds.
func (w *writer) encode(sh *shardOut, size int) {
	if w.cur == nil {
		w.cur = &job{sh: sh, off: sh.end}
	}
	j := w.cur
	var head [64]byte
	h := head[:0]
	for c := range sh.fixed {
		if !sh.fixed[c] {
			h = binary.LittleEndian.AppendUint32(h, uint32(w.value(c).len()))
			if len(h) > len(head)-4 {
				j.pieces = append(j.pieces, val{b: w.keep(h)})
				h = h[:0]
			}
		}
	}
	if len(h) > 0 {
		j.pieces = append(j.pieces, val{b: w.keep(h)})
	}
	for c := range sh.fixed {
		switch v := w.value(c); {
		case sh.fixed[c]:
			j.pieces = append(j.pieces, val{b: w.keep(binary.LittleEndian.AppendUint64(h[:0], uint64(v.num)))})
		case v.len() > 0:
			j.pieces = append(j.pieces, v)
		}
	}
	j.wins = append(j.wins, w.sampWins...)
	w.sampWins = w.sampWins[:0]
	j.size += int64(size)
	if j.size >= flushSize || len(j.pieces) >= 4096 {
		w.cur = nil
		w.hand(sh, j)
	}
}

// hand hands a full job of sh to the flusher; its shard's room is kept
// first, if it is not yet (the shard is past flushSize bytes).
func (w *writer) hand(sh *shardOut, j *job) {
	if sh.room == 0 {
		w.keepRoom(sh)
	}
	sh.waiting = append(sh.waiting, j)
	w.sendWaiting(sh)
}

// sendWaiting sends sh's waiting jobs, their offsets now known.
func (w *writer) sendWaiting(sh *shardOut) {
	for _, j := range sh.waiting {
		j.off += sh.room
		w.send(j)
	}
	sh.waiting = sh.waiting[:0]
}

// keepRoom keeps room for sh's header before its samples: offsets for
// twice the samples the limit takes at their average size so far (at
// least 16 more than it holds, at most a million: 4 MiB).
func (w *writer) keepRoom(sh *shardOut) {
	n := len(sh.offsets)
	avg := max(sh.end/int64(max(n, 1)), 1)
	sh.maxN = int(min(max(2*w.limit/avg, int64(n+16)), 1<<20))
	sh.maxN = max(sh.maxN, n+1)
	sh.room = int64(4 + 4*(sh.maxN+1) + sh.cfg)
}

// send hands a job to the flusher; after its failure, jobs are dropped
// (its error ends the run).
func (w *writer) send(j *job) {
	select {
	case w.jobs <- j:
	case <-w.failed:
		j.release()
	}
}

// closeShard hands the shard's last samples and its header to the
// flusher, which completes its file: a shard whose room was not kept has
// a header of its exact size.
func (w *writer) closeShard() error {
	sh := w.sh
	if sh == nil {
		return nil
	}
	select {
	case <-w.failed:
		return w.err
	default:
	}
	sh.room = sh.header(len(sh.offsets))
	if w.cur != nil {
		sh.waiting = append(sh.waiting, w.cur)
		w.cur = nil
	}
	w.sendWaiting(sh)
	sh.info.RawData.Bytes = sh.room + sh.end
	w.send(&job{sh: sh, close: true})
	w.sh = nil
	return nil
}

// fail records the run's first error, which ends it.
func (w *writer) fail(err error) {
	w.failOnce.Do(func() {
		w.err = err
		close(w.failed)
	})
}

func (w *writer) isFailed() bool {
	select {
	case <-w.failed:
		return true
	default:
		return false
	}
}

// flusher writes the jobs' pieces, and hands each shard, once closed and
// its samples written, to the completer.
func (w *writer) flusher() {
	defer close(w.flushed)
	defer close(w.written)
	for j := range w.jobs {
		switch {
		case j.close && w.isFailed():
			j.sh.f.Close()
		case j.close:
			w.written <- j.sh // the completer takes every shard, also after a failure
		case !w.isFailed():
			if err := w.writeJob(j); err != nil {
				w.fail(err)
			}
		}
		j.release()
	}
}

// completer completes each shard's file that the flusher wrote: its
// header, its hashes, its compression.
func (w *writer) completer() {
	defer close(w.completed)
	for sh := range w.written {
		if w.isFailed() {
			sh.f.Close()
			continue
		}
		if err := w.complete(sh); err != nil {
			w.fail(err)
		}
	}
}

// writeJob writes a job's pieces, reading the windows they lie in.
func (w *writer) writeJob(j *job) error {
	iov := w.iov[:0]
	for _, p := range j.pieces {
		b := p.b
		if p.win != nil {
			var err error
			if b, err = p.win.bytes(p.off, p.n); err != nil {
				return err
			}
		}
		iov = append(iov, b)
	}
	w.iov = iov[:0]
	err := mapped.WritePieces(j.sh.f, iov, j.off)
	var ge *mapped.GoneError
	if errors.As(err, &ge) {
		// Name the source whose mapping lost the bytes, not the shard.
		for _, win := range j.wins {
			if name, off, ok := win.m.Where(ge.Piece); ok {
				return fmt.Errorf("%s: offset %d, writing %s: %w", name, off, filepath.Base(j.sh.f.Name()), mapped.ErrGone)
			}
		}
	}
	return err
}

// complete writes a shard's header into its room, hashes its file (and
// compresses it, the plain file then removed) and closes it.
func (w *writer) complete(sh *shardOut) error {
	f := sh.f
	defer f.Close()
	n := len(sh.offsets)
	head := make([]byte, 0, sh.room)
	head = binary.LittleEndian.AppendUint32(head, uint32(n))
	for _, off := range sh.offsets {
		head = binary.LittleEndian.AppendUint32(head, uint32(sh.room)+off)
	}
	head = binary.LittleEndian.AppendUint32(head, uint32(sh.room+sh.end))
	head = sh.info.appendConfig(head)
	for int64(len(head)) < sh.room {
		head = append(head, ' ')
	}
	if _, err := f.WriteAt(head, 0); err != nil {
		return err
	}
	// Frees what was preallocated past the shard's end.
	if err := f.Truncate(sh.room + sh.end); err != nil {
		return err
	}
	hs := make([]hash.Hash, len(w.algos))
	ws := make([]io.Writer, len(w.algos))
	for i, a := range w.algos {
		hs[i] = hashes[a]()
		ws[i] = hs[i]
	}
	name := sh.info.RawData.Basename
	if w.comp != nil {
		// The plain file, hashed as it is read, compressed into the
		// compressed one, hashed as it is written; then removed.
		name += "." + w.comp.family
		zf, err := os.OpenFile(filepath.Join(w.dir, name), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if err != nil {
			return err
		}
		zhs := make([]hash.Hash, len(w.algos))
		zws := []io.Writer{zf}
		for i, a := range w.algos {
			zhs[i] = hashes[a]()
			zws = append(zws, zhs[i])
		}
		cw := &countWriter{w: io.MultiWriter(zws...)}
		raw := io.TeeReader(io.NewSectionReader(f, 0, sh.room+sh.end), io.MultiWriter(ws...))
		err = w.comp.compressStream(cw, raw, sh.room+sh.end)
		if cerr := zf.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return fmt.Errorf("%s: %w", zf.Name(), err)
		}
		sh.info.RawData.Hashes = hexes(w.algos, hs)
		sh.info.ZipData = &FileInfo{Basename: name, Bytes: cw.n, Hashes: hexes(w.algos, zhs)}
		if err := os.Remove(f.Name()); err != nil {
			return err
		}
	} else {
		if len(hs) > 0 {
			if err := hashFile(f, sh.room+sh.end, io.MultiWriter(ws...)); err != nil {
				return err
			}
		}
		sh.info.RawData.Hashes = hexes(w.algos, hs)
		startWriteback(f)
	}
	if err := f.Close(); err != nil {
		return err
	}
	w.shards = append(w.shards, sh.info)
	w.names = append(w.names, name)
	return nil
}

func hexes(algos []string, hs []hash.Hash) map[string]string {
	m := make(map[string]string, len(algos))
	for i, a := range algos {
		m[a] = fmt.Sprintf("%x", hs[i].Sum(nil))
	}
	return m
}

// hashFile hashes the first size bytes of f, just written: mapped, a
// window at a time (what is mapped stays small), which reads the pages
// where they are; else read.
func hashFile(f *os.File, size int64, h io.Writer) error {
	const window = 16 << 20
	for off := int64(0); off < size; off += window {
		n := min(window, size-off)
		r, err := mapped.Map(f, off, n)
		if err != nil {
			_, err = io.CopyBuffer(h, io.NewSectionReader(f, off, size-off), make([]byte, 1<<20))
			if err != nil {
				return fmt.Errorf("%s: %w", f.Name(), err)
			}
			return nil
		}
		err = mapped.Guard(func() error {
			_, err := h.Write(r.Bytes(off, n))
			return err
		})
		r.Close()
		if err != nil {
			return fmt.Errorf("%s: offset %d: %w", f.Name(), off, err)
		}
	}
	return nil
}

// spans gives the writer the values of a batch's rows that lie in their
// shard's file, as spans of it (windows) that the flusher reads when it
// writes them: a window holds a row and the rows after it while they lie
// in order within viewWindow bytes, so that it is read at once.
type spans struct {
	pool   chan []byte
	b      *dataset.Batch
	files  dataset.ShardFiles
	f      *sharedFile
	win    *window
	lo, hi int64
}

const viewWindow = 4 << 20

// val returns row i's value as a span of a window, or the zero val where
// its bytes are not in its shard's file (Inline ones, or a source whose
// shards are not files).
func (v *spans) val(i int) (val, error) {
	r := &v.b.Rows[i]
	if r.Inline != nil || r.Size == 0 || v.files == nil || r.DataOffset < 0 {
		return val{}, nil
	}
	if v.win == nil || r.DataOffset < v.lo || r.DataOffset+r.Size > v.hi {
		if v.f == nil {
			f, err := v.files.ShardFile(v.b.Shard)
			if err != nil {
				return val{}, err
			}
			v.f = &sharedFile{f: f}
			v.f.refs.Add(1)
		}
		if v.win != nil {
			v.win.release()
		}
		lo, hi := r.DataOffset, r.DataOffset+r.Size
		for j := i + 1; j < len(v.b.Rows); j++ {
			q := &v.b.Rows[j]
			if q.Inline != nil || q.Size == 0 {
				continue
			}
			if q.DataOffset < hi || q.DataOffset+q.Size-lo > viewWindow {
				break
			}
			hi = q.DataOffset + q.Size
		}
		v.win = &window{f: v.f, lo: lo, hi: hi, pool: v.pool}
		v.win.hold()
		v.f.refs.Add(1)
		v.lo, v.hi = lo, hi
	}
	return val{win: v.win, off: r.DataOffset, n: int(r.Size)}, nil
}

func (v *spans) close() {
	if v.win != nil {
		v.win.release()
	}
	if v.f != nil {
		v.f.release()
	}
}

// countWriter counts the bytes written through it.
type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}
