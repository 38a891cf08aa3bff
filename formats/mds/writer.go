package mds

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"encoding/binary"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"unicode/utf8"

	"github.com/itarconv/itarconv/dataset"
	"github.com/itarconv/itarconv/formats/registry"
	"github.com/itarconv/itarconv/internal/human"
	"github.com/itarconv/itarconv/internal/mapped"
	"github.com/itarconv/itarconv/internal/safefile"
)

// Options are MDS's own options for writing
// (registry.CreateOptions.Format).
type Options struct {
	// Compression compresses each shard as MosaicML names it: "zstd",
	// "zstd:19", "gz", "gz:6", "snappy"; "" writes plain shards.
	Compression string
	// Hashes are the hashes of each shard file the index records, sorted
	// ("sha1", "xxh64", ...). nil records xxh64's, which costs little and
	// lets Verify check every byte; an empty, non-nil slice records none.
	Hashes []string
}

// DefaultShardSize is the size past which a shard is closed, as
// MosaicML's writer's size_limit defaults (64 MiB).
const DefaultShardSize = 1 << 26

// WriteStats are what Write wrote.
type WriteStats struct {
	Output  string `json:"output"`
	Shards  int    `json:"shards"`
	Samples int64  `json:"samples"`
	Members int64  `json:"members"`
	Bytes   int64  `json:"bytes"`
	// Skipped counts the rows that are not files (directories, links),
	// which MDS has no place for.
	Skipped int64 `json:"skipped"`
}

// Write writes the rows of in as an MDS dataset in the directory out,
// which must not exist unless overwrite is set (it is then replaced, if
// it is an MDS dataset, once the new one is complete). shardSize bounds
// each shard's bytes (0: DefaultShardSize).
func Write(ctx context.Context, in registry.Input, out string, o registry.CreateOptions) (*WriteStats, error) {
	opts, err := registry.FormatOptions[Options]("MDS", o.Format)
	if err != nil {
		return nil, err
	}
	w, err := newWriter(opts, o.ShardSize)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", out, err)
	}
	tmp, err := stage(out, o.Overwrite)
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp) // nothing, once committed
	w.dir = tmp
	st, err := w.run(ctx, in, o)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", out, err)
	}
	st.Output = out
	if err := commit(tmp, out, o.Overwrite); err != nil {
		return nil, err
	}
	return st, nil
}

// stage makes the temporary directory a dataset at out is written in,
// beside it, after checking that out may be written: it does not exist,
// or overwrite is set and it is an MDS dataset.
func stage(out string, overwrite bool) (string, error) {
	if _, err := os.Lstat(out); err == nil {
		if !overwrite {
			return "", fmt.Errorf("%s: %w", out, fs.ErrExist)
		}
		if !Detect(out) && !claims(out) {
			return "", fmt.Errorf("%s exists and is not an MDS dataset: not replaced: %w", out, fs.ErrExist)
		}
	}
	parent, base := filepath.Split(filepath.Clean(out))
	parent = cmp.Or(parent, ".")
	safefile.SweepLeftovers(parent)
	return os.MkdirTemp(parent, safefile.TempName(base))
}

// commit puts the complete dataset tmp in place as out.
func commit(tmp, out string, overwrite bool) error {
	if overwrite {
		return safefile.ReplaceDir(tmp, out)
	}
	return safefile.CommitDir(tmp, out)
}

// writer is the sink: rows of one key become a sample, samples of the
// same columns a shard, held whole until it is written. Workers read and
// classify the payloads (Prepare); the ordered writer only groups them.
type writer struct {
	dir   string
	comp  *compression
	algos []string
	limit int64
	src   dataset.PayloadSource
	files dataset.ShardFiles // when the source's shards hold the payloads
	st    WriteStats

	// The shard being filled: its columns (the key's first), what their
	// values allow, its samples' values one after the other (a sample's
	// key, then its columns'), and its keys' bytes.
	cols    []string
	allow   []choice
	vals    [][]byte
	keys    []byte
	chunk   []byte // where values are copied (keep)
	samples int
	est     int64 // an upper bound of the shard's bytes

	// The sample being read: where it starts in vals, its key and
	// columns.
	open      bool
	start     int
	sampMatch bool // its columns so far are the shard's first ones
	key       []byte
	sampCols  []string
	sampAllow []choice

	// Shards are written by a goroutine of their own (flusher) while the
	// next fills.
	toFlush  chan *pending
	flushed  chan struct{} // closed when the flusher is done
	flushErr error         // the flusher's, read once flushed or failed is closed
	failed   chan struct{} // closed on the flusher's first error

	shards []ShardInfo
	names  []string // the shards' files, synced before the commit
}

// pending is a shard handed to the flusher: its columns, what their
// values allow, and its samples' values.
type pending struct {
	cols  []string
	allow []choice
	vals  [][]byte
	n     int
}

func newWriter(o Options, shardSize int64) (*writer, error) {
	w := &writer{limit: cmp.Or(shardSize, DefaultShardSize), algos: o.Hashes}
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
	w.toFlush = make(chan *pending)
	w.flushed, w.failed = make(chan struct{}), make(chan struct{})
	go w.flusher()
	err = dataset.Run(ctx, src, w, dataset.Options{Workers: o.Workers, Progress: o.Progress})
	if err == nil {
		err = w.endSample()
	}
	if err == nil && w.samples > 0 {
		err = w.handOff(w.samples)
	}
	close(w.toFlush)
	<-w.flushed
	if err == nil {
		err = w.flushErr
	}
	if err == nil {
		err = w.writeIndex()
	}
	if err == nil {
		err = w.sync()
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

// prepared is what Prepare made of a batch: each row's payload where it
// could be seen (Row.Inline, or the batch's span of its shard's file,
// mapped), what it allows its column, and where its key ends in its name
// (-1: not a file).
type prepared struct {
	vals   [][]byte
	allow  []choice
	keyEnd []int
	region *mapped.Region // unmapped once the batch is written
}

// Prepare checks each row's name and classifies its payload, on the
// workers: the ordered writer then only copies the bytes.
func (w *writer) Prepare(b *dataset.Batch) error {
	p := &prepared{vals: make([][]byte, len(b.Rows)), allow: make([]choice, len(b.Rows)), keyEnd: make([]int, len(b.Rows))}
	lo, hi := int64(-1), int64(0) // the span of the payloads not inline
	for i := range b.Rows {
		r := &b.Rows[i]
		p.keyEnd[i] = -1
		if r.Kind != dataset.KindFile {
			continue
		}
		key, _, err := checkName(r)
		if err != nil {
			return err
		}
		p.keyEnd[i] = len(key)
		if r.Inline == nil && r.DataOffset >= 0 && r.Size > 0 && w.files != nil {
			if lo < 0 || r.DataOffset < lo {
				lo = r.DataOffset
			}
			hi = max(hi, r.DataOffset+r.Size)
		}
	}
	b.Prep = p
	if lo >= 0 {
		f, err := w.files.ShardFile(b.Shard)
		if err != nil {
			return err
		}
		// Mapping is only a way to see the bytes: where it fails, Write
		// reads them.
		p.region, _ = mapped.Map(f, lo, hi-lo)
		f.Close()
	}
	return mapped.Guard(func() error {
		for i := range b.Rows {
			r := &b.Rows[i]
			switch {
			case p.keyEnd[i] < 0:
				continue
			case r.Inline != nil:
				p.vals[i] = r.Inline
			case r.Size == 0:
				p.vals[i] = []byte{}
			case p.region != nil && r.DataOffset >= 0:
				p.vals[i] = p.region.Bytes(r.DataOffset, r.Size)
			default:
				continue
			}
			p.allow[i] = allowed(string(r.Name[p.keyEnd[i]+1:]), p.vals[i])
		}
		return nil
	})
}

// chunkSize is the size of the buffers a shard's values are copied into.
const chunkSize = 4 << 20

// keep copies a value into the shard's buffers, and returns the copy.
func (w *writer) keep(v []byte) []byte {
	if len(v) > chunkSize/4 {
		return bytes.Clone(v)
	}
	if len(w.chunk)+len(v) > cap(w.chunk) {
		w.chunk = make([]byte, 0, chunkSize)
	}
	at := len(w.chunk)
	w.chunk = append(w.chunk, v...)
	return w.chunk[at:len(w.chunk):len(w.chunk)]
}

func (w *writer) EndShard(int) error { return nil }

func (w *writer) Write(b *dataset.Batch) error {
	p := b.Prep.(*prepared)
	defer p.region.Close()
	return mapped.Guard(func() error {
		for i := range b.Rows {
			r := &b.Rows[i]
			if p.keyEnd[i] < 0 {
				w.st.Skipped++
				continue
			}
			v := p.vals[i]
			if v == nil {
				var err error
				if v, err = dataset.ReadPayload(w.src, r); err != nil {
					return fmt.Errorf("%q: %w", r.Name, err)
				}
				p.allow[i] = allowed(string(r.Name[p.keyEnd[i]+1:]), v)
			} else {
				v = w.keep(v)
			}
			if err := w.add(r.Name[:p.keyEnd[i]], r.Name[p.keyEnd[i]+1:], v, p.allow[i]); err != nil {
				return fmt.Errorf("%q: %w", r.Name, err)
			}
		}
		return nil
	})
}

// split cuts a member's name into its key and extension as WebDataset
// does: the extension is all past the first dot of the last element.
func split(name []byte) (key, ext []byte, ok bool) {
	slash := bytes.LastIndexByte(name, '/') + 1
	dot := bytes.IndexByte(name[slash:], '.')
	if dot < 0 {
		return nil, nil, false
	}
	return name[:slash+dot], name[slash+dot+1:], true
}

// checkName splits a file's name, refusing what MDS cannot keep.
func checkName(r *dataset.Row) (key, ext []byte, err error) {
	key, ext, ok := split(r.Name)
	switch {
	case !ok:
		return nil, nil, fmt.Errorf("%q: no extension, which MDS needs to name its column: %w", r.Name, ErrUnkeepable)
	case !utf8.Valid(ext):
		return nil, nil, fmt.Errorf("%q: an extension that is not UTF-8 (a column's name is text): %w", r.Name, ErrUnkeepable)
	case string(ext) == KeyColumn:
		return nil, nil, fmt.Errorf("%q: the extension %s is the key's column: %w", r.Name, KeyColumn, ErrUnkeepable)
	case r.Size > maxUint32-4096:
		return nil, nil, fmt.Errorf("%q: %d bytes, past MDS's 4 GiB: %w", r.Name, r.Size, ErrUnkeepable)
	}
	return key, ext, nil
}

// add adds a member's value to the sample of its key, starting a new
// sample at a new key.
func (w *writer) add(key, ext, v []byte, allow choice) error {
	if !w.open || !bytes.Equal(key, w.key) {
		if err := w.endSample(); err != nil {
			return err
		}
		w.open, w.start, w.sampMatch = true, len(w.vals), w.samples > 0
		w.key = append(w.key[:0], key...)
		w.sampCols, w.sampAllow = w.sampCols[:0], w.sampAllow[:0]
		at := len(w.keys)
		w.keys = append(w.keys, key...)
		w.vals = append(w.vals, w.keys[at:len(w.keys):len(w.keys)])
	}
	// The column's name: the shard's string where it is the same.
	var col string
	if n := len(w.sampCols) + 1; w.sampMatch && n < len(w.cols) && w.cols[n] == string(ext) {
		col = w.cols[n]
	} else {
		w.sampMatch = false
		if slices.Contains(w.sampCols, string(ext)) {
			return fmt.Errorf("a second .%s in sample %q (MDS keeps one value a column): %w", ext, key, ErrUnkeepable)
		}
		col = string(ext)
	}
	w.vals = append(w.vals, v)
	w.sampCols = append(w.sampCols, col)
	w.sampAllow = append(w.sampAllow, allow)
	w.st.Members++
	w.st.Bytes += int64(len(v))
	return nil
}

// endSample closes the sample being read: into the shard, after writing
// the shard first when the sample's columns differ from its, or the
// sample would take it past the limit.
func (w *writer) endSample() error {
	if !w.open {
		return nil
	}
	w.open = false
	var est int64 = 4 // its offset
	for _, v := range w.vals[w.start:] {
		est += max(int64(len(v))+4, 8)
	}
	if w.samples > 0 && (!slices.Equal(w.sampCols, w.cols[1:]) || w.est+est > w.limit) {
		if err := w.handOff(w.samples); err != nil {
			return err
		}
	}
	keyAllow := choice(0)
	if utf8.Valid(w.key) {
		keyAllow = canStr
	}
	if w.samples == 0 {
		w.cols = append(append(w.cols[:0:0], KeyColumn), w.sampCols...)
		w.allow = append(append(w.allow[:0:0], keyAllow), w.sampAllow...)
		w.est = 1024
		for _, c := range w.cols {
			w.est += int64(len(c)) + 32
		}
	} else {
		w.allow[0] &= keyAllow
		for i, a := range w.sampAllow {
			w.allow[i+1] &= a
		}
	}
	w.samples++
	w.est += est
	return nil
}

// handOff hands the shard's first n samples (all but the one being
// read) to the flusher, and keeps the one being read.
func (w *writer) handOff(n int) error {
	size := n * len(w.cols)
	p := &pending{cols: w.cols, allow: w.allow, vals: w.vals[:size:size], n: n}
	select {
	case w.toFlush <- p:
	case <-w.failed:
		return w.flushErr
	}
	rest := append([][]byte(nil), w.vals[size:]...)
	w.keys = nil
	if len(rest) > 0 {
		w.keys = append(w.keys, rest[0]...)
		rest[0] = w.keys[:len(w.keys):len(w.keys)]
	}
	w.vals = rest
	w.start -= size
	w.samples = 0
	w.st.Samples += int64(n)
	return nil
}

// flusher writes the shards handed to it, in order, and gives their
// buffers back.
func (w *writer) flusher() {
	defer close(w.flushed)
	for p := range w.toFlush {
		if w.flushErr != nil {
			continue
		}
		if err := w.writeShard(p); err != nil {
			w.flushErr = err
			close(w.failed)
		}
	}
}

// sync makes the shards and the index durable before the commit.
func (w *writer) sync() error { return syncFiles(w.dir, append(w.names, IndexFile)) }

// syncFiles syncs the named files of dir.
func syncFiles(dir string, names []string) error {
	for _, name := range names {
		f, err := os.OpenFile(filepath.Join(dir, name), os.O_WRONLY, 0)
		if err != nil {
			return err
		}
		err = f.Sync()
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// writeShard writes a shard file.
func (w *writer) writeShard(p *pending) error {
	n, ncols := p.n, len(p.cols)
	info := ShardInfo{ColumnNames: p.cols, Format: "mds", Hashes: slices.Clone(w.algos), Samples: int64(n), Version: 2}
	limit := w.limit
	info.SizeLimit = &limit
	if info.Hashes == nil {
		info.Hashes = []string{}
	}
	fixed := make([]bool, ncols)
	for c := range p.cols {
		name := p.allow[c].name()
		info.ColumnEncodings = append(info.ColumnEncodings, name)
		if name == "int" {
			eight := int64(8)
			info.ColumnSizes = append(info.ColumnSizes, &eight)
			fixed[c] = true
		} else {
			info.ColumnSizes = append(info.ColumnSizes, nil)
		}
	}
	if w.comp != nil {
		name := w.comp.family
		if c, _ := lookupCompression(name); c.level != w.comp.level {
			name = fmt.Sprintf("%s:%d", name, w.comp.level)
		}
		info.Compression = &name
	}
	cfg := info.appendConfig(nil)

	// The samples' sizes give their offsets.
	offsets := make([]byte, 0, 4*(n+2))
	offsets = binary.LittleEndian.AppendUint32(offsets, uint32(n))
	at := int64(4 + 4*(n+1) + len(cfg))
	for s := 0; s < n; s++ {
		offsets = binary.LittleEndian.AppendUint32(offsets, uint32(at))
		for c, v := range p.vals[s*ncols : (s+1)*ncols] {
			if fixed[c] {
				at += 8
			} else {
				at += 4 + int64(len(v))
			}
		}
		if at > maxUint32 {
			return fmt.Errorf("sample %q: shard %d would pass 4 GiB, which MDS's offsets cannot reach: %w", p.sampleKey(s), len(w.shards), ErrUnkeepable)
		}
	}
	offsets = binary.LittleEndian.AppendUint32(offsets, uint32(at))

	rawName := fmt.Sprintf("shard.%05d.mds", len(w.shards))
	info.RawData = &FileInfo{Basename: rawName, Bytes: at}
	hs := make([]hash.Hash, len(w.algos))
	for i, a := range w.algos {
		hs[i] = hashes[a]()
	}
	var raw bytes.Buffer
	var file *os.File
	var bw *bufio.Writer
	var dst io.Writer
	if w.comp != nil {
		raw.Grow(int(at))
		dst = &raw
	} else {
		f, err := os.OpenFile(filepath.Join(w.dir, rawName), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if err != nil {
			return err
		}
		file = f
		defer f.Close()
		bw = bufio.NewWriterSize(f, 1<<20)
		dst = bw
	}
	out := io.MultiWriter(append([]io.Writer{dst}, asWriters(hs)...)...)
	out.Write(offsets)
	out.Write(cfg)
	var head []byte
	for s := 0; s < n; s++ {
		head = head[:0]
		vals := p.vals[s*ncols : (s+1)*ncols]
		for c, v := range vals {
			if !fixed[c] {
				head = binary.LittleEndian.AppendUint32(head, uint32(len(v)))
			}
		}
		out.Write(head)
		for c, v := range vals {
			if fixed[c] {
				out.Write(putInt64(head[:0], v))
			} else {
				out.Write(v)
			}
		}
	}
	info.RawData.Hashes = hexes(w.algos, hs)
	if w.comp != nil {
		z, err := w.comp.compress(raw.Bytes())
		if err != nil {
			return err
		}
		zipName := rawName + "." + w.comp.family
		info.ZipData = &FileInfo{Basename: zipName, Bytes: int64(len(z)), Hashes: digests(w.algos, z)}
		if err := os.WriteFile(filepath.Join(w.dir, zipName), z, 0o644); err != nil {
			return err
		}
	} else {
		if err := bw.Flush(); err != nil {
			return err
		}
		startWriteback(file)
		if err := file.Close(); err != nil {
			return err
		}
	}
	w.shards = append(w.shards, info)
	w.names = append(w.names, rawName)
	if info.ZipData != nil {
		w.names[len(w.names)-1] = info.ZipData.Basename
	}
	return nil
}

// sampleKey is the key of sample s of the shard.
func (p *pending) sampleKey(s int) string { return string(p.vals[s*len(p.cols)]) }

func asWriters(hs []hash.Hash) []io.Writer {
	ws := make([]io.Writer, len(hs))
	for i, h := range hs {
		ws[i] = h
	}
	return ws
}

func hexes(algos []string, hs []hash.Hash) map[string]string {
	m := make(map[string]string, len(algos))
	for i, a := range algos {
		m[a] = fmt.Sprintf("%x", hs[i].Sum(nil))
	}
	return m
}

// writeIndex writes index.json, the shards written.
func (w *writer) writeIndex() error { return writeIndex(w.dir, w.shards) }

// writeIndex writes dir's index.json, of these shards.
func writeIndex(dir string, shards []ShardInfo) error {
	b := appendIndexHead(nil)
	for i := range shards {
		if i > 0 {
			b = append(b, ", "...)
		}
		b = shards[i].appendShard(b)
	}
	b = appendIndexTail(b)
	return os.WriteFile(filepath.Join(dir, IndexFile), b, 0o644)
}

// Result reports a dataset written from what (the source, as a person
// names it).
func Result(st *WriteStats, what string) *registry.Result {
	res := &registry.Result{Output: st.Output, Members: st.Members, Bytes: st.Bytes, Stats: st,
		Summary: fmt.Sprintf("%s: %d samples (%d members, %s) in %d shards from %s", st.Output, st.Samples, st.Members, human.Bytes(st.Bytes), st.Shards, what)}
	if st.Skipped > 0 {
		res.Warnings = append(res.Warnings, fmt.Sprintf("%s: %d rows that are not files (directories, links) left out: MDS holds files only", st.Output, st.Skipped))
	}
	return res
}
