package mds

import (
	"bytes"
	"cmp"
	"context"
	"encoding/binary"
	"fmt"
	"hash"
	"io"
	"os"
	"path/filepath"
	"slices"
	"unicode/utf8"

	"github.com/itarconv/itarconv/dataset"
	"github.com/itarconv/itarconv/formats/registry"
	"github.com/itarconv/itarconv/internal/mapped"
)

// The writer streams each shard to its file as its samples come, as
// MosaicML's writer cannot (it holds a shard whole). A shard's first
// chunkSize bytes of samples wait in memory: a shard that ends within
// them is written as MosaicML writes it, byte for byte. Past them, the
// header (its samples' count and offsets, and the writer's configuration)
// can no longer be known before the samples, and room is kept for it:
// offsets for twice the samples the limit takes at the average size so
// far. The header is written last; what the configuration leaves of the
// room is spaces after its JSON, which JSON readers skip (MosaicML's
// reader does not read the configuration at all). A shard whose room is
// full closes early.
//
// A column's encoding is chosen when its shard begins, from what the
// values of its name allowed so far in the run: a value that the
// encoding cannot hold as it is (an "07" in an int column) closes the
// shard, and its column takes a plainer encoding from then on.
//
// Memory is the sample being read and a few buffers of samples on their
// way to the file (flushDepth of chunkSize): nothing grows with the
// members or the shards' size.

// chunkSize is the size of the buffers samples are encoded into, and
// flushDepth how many wait for the goroutine that writes them.
const (
	chunkSize  = 4 << 20
	flushDepth = 4
)

// writer is the sink: rows of one key become a sample, samples of the
// same columns a shard. Workers classify the payloads (Prepare); the
// ordered writer groups and encodes them; a goroutine of its own writes
// the bytes (flusher).
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

	// The sample being read: its key, its columns, and its values, copied
	// one after the other.
	open     bool
	key      []byte
	sampCols []string
	sampEnds []int // where each value ends in sampBuf
	sampBuf  []byte
	sampOK   []choice

	sh    *shardOut // the shard being written, or nil
	chunk []byte    // samples encoded, not yet handed to the flusher
	at    int64     // the file offset of chunk[0]

	jobs    chan job
	free    chan []byte
	flushed chan struct{} // closed when the flusher is done
	failed  chan struct{} // closed on the flusher's first error
	err     error         // the flusher's, read once flushed or failed is closed

	opened int         // shards opened
	shards []ShardInfo // shards completed, by the flusher
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
}

// header is the size of sh's header with n samples: its room, once kept.
func (sh *shardOut) header(n int) int64 {
	if sh.room > 0 {
		return sh.room
	}
	return int64(4 + 4*(n+1) + sh.cfg)
}

// job is the flusher's: bytes to write at an offset of a shard's file,
// or (close) the shard's header, after which the file is complete.
type job struct {
	sh    *shardOut
	off   int64
	data  []byte
	close bool
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
	w.jobs, w.free = make(chan job, flushDepth), make(chan []byte, flushDepth+2)
	w.flushed, w.failed = make(chan struct{}), make(chan struct{})
	go w.flusher()
	err = dataset.Run(ctx, src, w, dataset.Options{Workers: o.Workers, Progress: o.Progress})
	if err == nil {
		err = w.endSample()
	}
	if err == nil {
		err = w.closeShard()
	}
	close(w.jobs)
	<-w.flushed
	if w.sh != nil {
		w.sh.f.Close() // a shard left open by an error
	}
	if err == nil {
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

func (w *writer) EndShard(int) error { return nil }

func (w *writer) Write(b *dataset.Batch) error {
	p := b.Prep.(*prepared)
	v := w.newView(b)
	defer v.close()
	return mapped.Guard(func() error {
		for i := range b.Rows {
			r := &b.Rows[i]
			if p.keyEnd[i] < 0 {
				w.st.Skipped++
				continue
			}
			data, ok, err := v.bytes(i)
			if err != nil {
				return err
			}
			if !ok {
				if data, err = dataset.ReadPayload(w.src, r); err != nil {
					return fmt.Errorf("%q: %w", r.Name, err)
				}
			}
			if !p.known[i] {
				p.allow[i] = allowed(string(r.Name[p.keyEnd[i]+1:]), data)
			}
			if err := w.add(r.Name[:p.keyEnd[i]], r.Name[p.keyEnd[i]+1:], data, p.allow[i]); err != nil {
				return fmt.Errorf("%q: %w", r.Name, err)
			}
		}
		return nil
	})
}

// add adds a member's value to the sample of its key, starting a new
// sample at a new key.
func (w *writer) add(key, ext, v []byte, allow choice) error {
	if !w.open || !bytes.Equal(key, w.key) {
		if err := w.endSample(); err != nil {
			return err
		}
		w.open = true
		w.key = append(w.key[:0], key...)
		w.sampCols, w.sampEnds, w.sampOK, w.sampBuf = w.sampCols[:0], w.sampEnds[:0], w.sampOK[:0], w.sampBuf[:0]
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
	w.sampCols = append(w.sampCols, col)
	w.sampBuf = append(w.sampBuf, v...)
	w.sampEnds = append(w.sampEnds, len(w.sampBuf))
	w.sampOK = append(w.sampOK, allow)
	w.st.Members++
	w.st.Bytes += int64(len(v))
	return nil
}

// value is the sample's value of column c (0: the key).
func (w *writer) value(c int) []byte {
	if c == 0 {
		return w.key
	}
	start := 0
	if c > 1 {
		start = w.sampEnds[c-2]
	}
	return w.sampBuf[start:w.sampEnds[c-1]]
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

// fits tells whether the sample (size bytes in sh's encodings) goes into
// sh: its columns, each value one its column's encoding holds, room for
// its offset, and the shard's limit.
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

// encodingNeeds is the choice bit an encoding needs of a value.
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
			size += 4 + len(w.value(c))
		}
	}
	return size
}

// openShard begins a shard for the sample being read: its columns, each
// of the encoding its name's values allowed so far, and room for its
// header before the first sample.
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
	sh.f = f
	sh.info.RawData = &FileInfo{Basename: name}
	w.sh, w.at, w.chunk = sh, 0, w.newChunk()
	w.opened++
	return nil
}

// encode appends the sample, in sh's encodings, to the chunk: its
// values' sizes (columns of variable size), then its values.
func (w *writer) encode(sh *shardOut, size int) {
	if len(w.chunk)+size > cap(w.chunk) {
		if len(w.chunk) > 0 {
			if sh.room == 0 {
				w.keepRoom(sh)
			}
			w.send(job{sh: sh, off: sh.room + w.at, data: w.chunk})
			w.at += int64(len(w.chunk))
			w.chunk = w.newChunk()
		}
		if size > cap(w.chunk) {
			w.chunk = make([]byte, 0, size)
		}
	}
	for c := range sh.fixed {
		if !sh.fixed[c] {
			w.chunk = binary.LittleEndian.AppendUint32(w.chunk, uint32(len(w.value(c))))
		}
	}
	for c := range sh.fixed {
		if sh.fixed[c] {
			w.chunk = putInt64(w.chunk, w.value(c))
		} else {
			w.chunk = append(w.chunk, w.value(c)...)
		}
	}
}

// keepRoom keeps room for sh's header before its samples: offsets for
// twice the samples the limit takes at their average size so far (at
// least 16 more than it holds, at most a million: 4 MiB).
func (w *writer) keepRoom(sh *shardOut) {
	n := len(sh.offsets)
	avg := max(sh.end/int64(max(n, 1)), 1)
	sh.maxN = int(min(max(2*w.limit/avg, int64(n+16)), 1<<20))
	sh.maxN = max(sh.maxN, n)
	sh.room = int64(4 + 4*(sh.maxN+1) + sh.cfg)
}

// newChunk returns a buffer the flusher is done with, or a new one.
func (w *writer) newChunk() []byte {
	select {
	case b := <-w.free:
		return b[:0]
	default:
		return make([]byte, 0, chunkSize)
	}
}

// send hands a job to the flusher; after its failure, jobs are dropped
// (its error ends the run).
func (w *writer) send(j job) {
	select {
	case w.jobs <- j:
	case <-w.failed:
	}
}

// closeShard hands the shard's last samples and its header to the
// flusher, which completes its file.
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
	room := sh.header(len(sh.offsets))
	w.send(job{sh: sh, off: room + w.at, data: w.chunk})
	w.chunk = nil
	sh.room = room
	sh.info.RawData.Bytes = room + sh.end
	w.send(job{sh: sh, close: true})
	w.sh = nil
	return nil
}

// flusher writes the jobs' bytes, and completes each shard's file when
// it is closed: its header, its hashes, its compression.
func (w *writer) flusher() {
	defer close(w.flushed)
	for j := range w.jobs {
		if w.err != nil {
			continue
		}
		var err error
		if j.close {
			err = w.complete(j.sh)
		} else if len(j.data) > 0 {
			_, err = j.sh.f.WriteAt(j.data, j.off)
		}
		if j.data != nil {
			select {
			case w.free <- j.data:
			default:
			}
		}
		if err != nil {
			w.err = err
			close(w.failed)
		}
	}
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
	hs := make([]hash.Hash, len(w.algos))
	ws := make([]io.Writer, len(w.algos))
	for i, a := range w.algos {
		hs[i] = hashes[a]()
		ws[i] = hs[i]
	}
	name := sh.info.RawData.Basename
	if w.comp != nil {
		raw := make([]byte, sh.room+sh.end)
		if _, err := f.ReadAt(raw, 0); err != nil {
			return fmt.Errorf("%s: %w", f.Name(), err)
		}
		sh.info.RawData.Hashes = digests(w.algos, raw)
		z, err := w.comp.compress(raw)
		if err != nil {
			return err
		}
		name += "." + w.comp.family
		sh.info.ZipData = &FileInfo{Basename: name, Bytes: int64(len(z)), Hashes: digests(w.algos, z)}
		if err := os.WriteFile(filepath.Join(w.dir, name), z, 0o644); err != nil {
			return err
		}
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

// hashFile hashes the first size bytes of f, just written: mapped, which
// reads the pages where they are, else read.
func hashFile(f *os.File, size int64, h io.Writer) error {
	if size == 0 {
		return nil
	}
	if r, err := mapped.Map(f, 0, size); err == nil {
		defer r.Close()
		if err := mapped.Guard(func() error {
			_, err := h.Write(r.Bytes(0, size))
			return err
		}); err != nil {
			return fmt.Errorf("%s: %w", f.Name(), err)
		}
		return nil
	}
	if _, err := io.CopyBuffer(h, io.NewSectionReader(f, 0, size), make([]byte, 1<<20)); err != nil {
		return fmt.Errorf("%s: %w", f.Name(), err)
	}
	return nil
}
