package fold

import (
	"bufio"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/itarconv/itarconv/dataset"
	"github.com/itarconv/itarconv/formats/taridx"

	"github.com/itarconv/itarconv/internal/pathguard"
)

// A partitioned index run: each task indexes its range of the shards into
// a part (IndexPart), and MergeIndexParts joins the parts into the files
// one run over every shard writes. A shard's own loader indexes (DALI's,
// energon's .tar.idx, ratarmount's) depend on that shard alone: the task
// writes them in place. What spans the dataset is kept in the part: the
// TARIDX entries, in order (entriesFile), the loaders' per-shard states
// (loadersFile) and the task's figures (tallyFile).
const (
	entriesFile = "taridx.entries"
	loadersFile = "loaders.gob"
	tallyFile   = "stats.json"
)

// ErrPart: a part's file is not what a task of this version writes.
var ErrPart = errors.New("malformed part of a partitioned index")

// entriesMagic starts an entries file; its last byte is the layout's
// version.
var entriesMagic = []byte("ITARCONV-ENTRIES\x01")

// IndexPart indexes shards[lo:hi], one task's share of a partitioned run
// over shards, into the part directory dir: TARIDX entries (when
// withTARIDX) and what opts.Loaders need of these shards to write the
// dataset's files, while the shards' own loader indexes are written in
// place. Entries carry their fid in the whole list of shards.
func IndexPart(ctx context.Context, shards []string, lo, hi int, withTARIDX bool, dir string, opts IndexOptions) (*IndexStats, error) {
	if len(shards) > taridx.MaxShards && withTARIDX {
		return nil, fmt.Errorf("%d shards: a TARIDX fid addresses at most %d: %w", len(shards), taridx.MaxShards, ErrTooManyShards)
	}
	mine := shards[lo:hi]
	scan := opts.Scan
	scan.HeaderBlocks = opts.CompatGLZN
	src := NewTarShards(mine, scan)
	var sink dataset.Sink = noSink{}
	var rec *entryRecorder
	if withTARIDX {
		f, err := os.Create(filepath.Join(dir, entriesFile))
		if err != nil {
			return nil, err
		}
		defer f.Close()
		rec = newEntryRecorder(f)
		sink = &taridxSink{add: rec.add, fidBase: lo, rules: indexRules{compat: opts.CompatGLZN, stem: opts.Stem}, shardNames: mine}
	}
	if opts.Loaders != nil {
		opts.Loaders.Plan(mine)
		src.Members = func(path string) MemberSink { return opts.Loaders.Shard(ctx, path) }
	}
	if err := dataset.Run(ctx, src, sink, dataset.Options{Workers: opts.Workers, Progress: opts.Progress}); err != nil {
		return nil, err
	}
	st := &IndexStats{}
	if rec != nil {
		if err := rec.close(); err != nil {
			return nil, err
		}
		st = sink.(*taridxSink).tally.partStats()
	}
	addScanStats(st, src)
	st.Shards = len(mine)
	if err := writeJSONFile(filepath.Join(dir, tallyFile), partTally{Index: st}); err != nil {
		return nil, err
	}
	if opts.Loaders != nil {
		if err := opts.Loaders.SavePart(filepath.Join(dir, loadersFile), mine); err != nil {
			return nil, err
		}
	}
	return st, nil
}

// MergeIndexParts writes what one run of BuildIndex over shards writes at
// out (nothing when out is ""), from the parts of its tasks (their
// directories, in task order), and restores the loaders' states of every
// shard into opts.Loaders, whose Finish the caller then calls as after a
// run over every fold.
func MergeIndexParts(ctx context.Context, shards []string, parts []string, out string, opts IndexOptions) (*IndexStats, error) {
	start := time.Now()
	st := &IndexStats{Output: out, Shards: len(shards), NotRegular: map[string]int64{}}
	if opts.Loaders != nil {
		opts.Loaders.Plan(shards)
	}
	for _, p := range parts {
		var pt partTally
		if err := readJSONFile(filepath.Join(p, tallyFile), &pt); err != nil {
			return nil, err
		}
		if pt.Index == nil {
			return nil, fmt.Errorf("%s: no figures: %w", filepath.Join(p, tallyFile), ErrPart)
		}
		st.add(pt.Index)
		if opts.Loaders != nil {
			if err := opts.Loaders.LoadPart(filepath.Join(p, loadersFile)); err != nil {
				return nil, err
			}
		}
	}
	if out != "" {
		w, err := taridx.Create(out, opts.writerOptions())
		if err != nil {
			return nil, err
		}
		paths := make([]string, len(parts))
		for i, p := range parts {
			paths[i] = filepath.Join(p, entriesFile)
		}
		if err := replayParts(ctx, paths, len(shards), w, opts.Workers); err != nil {
			w.Abort()
			return nil, err
		}
		if err := w.Tables(); err != nil {
			w.Abort()
			return nil, fmt.Errorf("%s: %w", out, err)
		}
		ws := (&indexTally{}).stats(out, w)
		st.Rows, st.Stems, st.Exts, st.Crash, st.Contiguous = ws.Rows, ws.Stems, ws.Exts, ws.Crash, ws.Contiguous
		if err := closeWithManifest(w, out, shards); err != nil {
			return nil, err
		}
	}
	st.timed(start)
	return st, nil
}

// partTally is a part's figures (the loaders keep theirs in their own
// file, loadersFile).
type partTally struct {
	Index *IndexStats `json:"index"`
}

// partStats are the tally's figures, as a part records them.
func (t *indexTally) partStats() *IndexStats {
	return &IndexStats{Bytes: t.bytes, NotRegular: t.notRegular, NoExt: t.noExt, SpaceInExt: t.spaceExt,
		SkippedNames: t.skippedNames, HardlinkNames: t.hardlinkNames}
}

// add sums a part's figures into st, keeping the first few names of all,
// as one run keeps them.
func (st *IndexStats) add(p *IndexStats) {
	st.Members += p.Members
	st.Sparse += p.Sparse
	st.Reads += p.Reads
	st.ReadBytes += p.ReadBytes
	st.Bytes += p.Bytes
	st.NoExt += p.NoExt
	st.SpaceInExt += p.SpaceInExt
	for k, n := range p.NotRegular {
		st.NotRegular[k] += n
	}
	st.SkippedNames = firstNames(st.SkippedNames, p.SkippedNames)
	st.HardlinkNames = firstNames(st.HardlinkNames, p.HardlinkNames)
	st.SparseNames = firstNames(st.SparseNames, p.SparseNames)
}

func firstNames(have, more []string) []string {
	for _, n := range more {
		if len(have) >= maxReportedNames {
			break
		}
		have = append(have, n)
	}
	return have
}

// addScanStats adds what the scan of src counted to st.
func addScanStats(st *IndexStats, src *TarShards) {
	for _, s := range src.Stats {
		st.Members += s.Members
		st.Sparse += s.Sparse
		st.Reads += s.Reads
		st.ReadBytes += s.ReadBytes
		st.SparseNames = firstNames(st.SparseNames, s.SparseNames)
	}
}

// entryRecorder writes TARIDX entries as a part keeps them: per entry a
// flags byte (1: the stem of the entry before; 2: an extension not seen
// before follows), the fid, offset and size as uvarints, the extension's
// number in order of first appearance, and unless flag 1 the stem (length
// and bytes) and its key hash.
type entryRecorder struct {
	f        *os.File
	w        *bufio.Writer
	exts     map[string]uint64
	lastStem string
	n        uint64
	buf      []byte
}

func newEntryRecorder(f *os.File) *entryRecorder {
	r := &entryRecorder{f: f, w: bufio.NewWriterSize(f, 1<<20), exts: map[string]uint64{}}
	r.w.Write(entriesMagic)
	return r
}

func (r *entryRecorder) add(e taridx.Entry) error {
	b := r.buf[:0]
	var flags byte
	if r.n > 0 && e.Stem == r.lastStem {
		flags |= 1
	}
	id, ok := r.exts[e.Ext]
	if !ok {
		flags |= 2
		id = uint64(len(r.exts))
		r.exts[e.Ext] = id
	}
	b = append(b, flags)
	if flags&2 != 0 {
		b = binary.AppendUvarint(b, uint64(len(e.Ext)))
		b = append(b, e.Ext...)
	}
	b = binary.AppendUvarint(b, uint64(e.Fid))
	b = binary.AppendUvarint(b, e.Offset)
	b = binary.AppendUvarint(b, e.Size)
	b = binary.AppendUvarint(b, id)
	if flags&1 == 0 {
		b = binary.AppendUvarint(b, uint64(len(e.Stem)))
		b = append(b, e.Stem...)
		b = binary.LittleEndian.AppendUint64(b, e.KeyHash)
		r.lastStem = e.Stem
	}
	r.n++
	r.buf = b
	_, err := r.w.Write(b)
	return err
}

func (r *entryRecorder) close() error {
	if err := r.w.Flush(); err != nil {
		return err
	}
	return r.f.Sync()
}

// replayEntries reads an entries file and hands each entry to add, its
// fid checked against the number of shards.
// replayParts adds the entries of the parts' entries files to w, in
// order. Up to workers parts at a time are decoded and their batches
// prepared (taridx.Writer.Prepare) on goroutines of their own, a few
// batches ahead, while this goroutine adds them part after part: the
// merge costs a copy of the rows, not a pass over every entry, in order.
func replayParts(ctx context.Context, paths []string, shards int, w *taridx.Writer, workers int) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	defer wg.Wait()
	type replay struct {
		batches chan *taridx.Batch
		err     error // set before batches closes
	}
	replays := make([]*replay, len(paths))
	start := func(i int) {
		r := &replay{batches: make(chan *taridx.Batch, 4)}
		replays[i] = r
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer close(r.batches)
			r.err = prepareEntries(ctx, paths[i], shards, w, r.batches)
		}()
	}
	workers = max(workers, 1)
	for i := range min(workers, len(paths)) {
		start(i)
	}
	for i, path := range paths {
		r := replays[i]
		for b := range r.batches {
			if err := w.AddBatch(b); err != nil {
				return fmt.Errorf("%s: %w", path, err)
			}
		}
		if r.err != nil {
			return r.err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if i+workers < len(paths) {
			start(i + workers)
		}
	}
	return nil
}

// prepareEntries decodes the entries file at path into batches for w.
func prepareEntries(ctx context.Context, path string, shards int, w *taridx.Writer, out chan<- *taridx.Batch) error {
	const batch = 4096
	entries := make([]taridx.Entry, 0, batch)
	send := func() error {
		b := w.Prepare(entries)
		entries = entries[:0] // Prepare keeps none of them
		select {
		case out <- b:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	err := replayEntries(path, shards, func(e taridx.Entry) error {
		entries = append(entries, e)
		if len(entries) == batch {
			return send()
		}
		return nil
	})
	if err == nil && len(entries) > 0 {
		err = send()
	}
	return err
}

func replayEntries(path string, shards int, add func(taridx.Entry) error) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	return decodeEntries(bufio.NewReaderSize(f, 1<<20), shards, func(e taridx.Entry) error {
		if err := add(e); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		return nil
	}, path)
}

// countingReader counts the bytes read, for the offsets errors give.
type countingReader struct {
	r *bufio.Reader
	n int64
}

func (c *countingReader) ReadByte() (byte, error) {
	b, err := c.r.ReadByte()
	if err == nil {
		c.n++
	}
	return b, err
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := io.ReadFull(c.r, p)
	c.n += int64(n)
	return n, err
}

func decodeEntries(br *bufio.Reader, shards int, add func(taridx.Entry) error, name string) error {
	d, err := newEntryDecoder(br, shards, name)
	if err != nil {
		return err
	}
	for {
		e, err := d.next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if err := add(e); err != nil {
			return err
		}
	}
}

// entryDecoder reads what an entryRecorder wrote, entry by entry.
type entryDecoder struct {
	r      *countingReader
	name   string
	shards int
	exts   []string
	stem   string
	hash   uint64
	n      int
}

func newEntryDecoder(br *bufio.Reader, shards int, name string) (*entryDecoder, error) {
	d := &entryDecoder{r: &countingReader{r: br}, name: name, shards: shards}
	magic := make([]byte, len(entriesMagic))
	if _, err := d.r.Read(magic); err != nil || string(magic) != string(entriesMagic) {
		return nil, d.bad("not an entries file of this version", err)
	}
	return d, nil
}

func (d *entryDecoder) bad(what string, err error) error { return partError(d.name, d.r.n, what, err) }

// partError reports what is wrong at byte off of a part's file name,
// wrapping ErrPart (and the cause, a read cut short at an end of file).
func partError(name string, off int64, what string, err error) error {
	if errors.Is(err, io.EOF) {
		err = io.ErrUnexpectedEOF
	}
	if err != nil {
		return fmt.Errorf("%s: byte %d: %s: %w: %w", name, off, what, ErrPart, err)
	}
	return fmt.Errorf("%s: byte %d: %s: %w", name, off, what, ErrPart)
}

func (d *entryDecoder) str(what string, limit uint64) (string, error) {
	n, err := binary.ReadUvarint(d.r)
	if err != nil {
		return "", d.bad(what+" length", err)
	}
	if n > limit {
		return "", d.bad(fmt.Sprintf("%s of %d bytes", what, n), nil)
	}
	b := make([]byte, n)
	if _, err := d.r.Read(b); err != nil {
		return "", d.bad(what, err)
	}
	return string(b), nil
}

// next returns the next entry, or io.EOF after the last.
func (d *entryDecoder) next() (taridx.Entry, error) {
	flags, err := d.r.ReadByte()
	if err == io.EOF {
		return taridx.Entry{}, io.EOF
	}
	if err != nil {
		return taridx.Entry{}, d.bad("entry", err)
	}
	if flags&^3 != 0 || (d.n == 0 && flags&1 != 0) {
		return taridx.Entry{}, d.bad(fmt.Sprintf("flags %#x", flags), nil)
	}
	d.n++
	if flags&2 != 0 {
		ext, err := d.str("extension", 1<<16)
		if err != nil {
			return taridx.Entry{}, err
		}
		d.exts = append(d.exts, ext)
	}
	var v [4]uint64
	for i, what := range []string{"fid", "offset", "size", "extension number"} {
		if v[i], err = binary.ReadUvarint(d.r); err != nil {
			return taridx.Entry{}, d.bad(what, err)
		}
	}
	if v[0] >= uint64(d.shards) {
		return taridx.Entry{}, d.bad(fmt.Sprintf("fid %d of %d shards", v[0], d.shards), nil)
	}
	if v[3] >= uint64(len(d.exts)) {
		return taridx.Entry{}, d.bad(fmt.Sprintf("extension %d of %d", v[3], len(d.exts)), nil)
	}
	if flags&1 == 0 {
		if d.stem, err = d.str("stem", 1<<20); err != nil {
			return taridx.Entry{}, err
		}
		var h [8]byte
		if _, err := d.r.Read(h[:]); err != nil {
			return taridx.Entry{}, d.bad("key hash", err)
		}
		d.hash = binary.LittleEndian.Uint64(h[:])
	}
	return taridx.Entry{Fid: uint16(v[0]), Offset: v[1], Size: v[2], Ext: d.exts[v[3]], Stem: d.stem, KeyHash: d.hash}, nil
}

func writeJSONFile(path string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return os.WriteFile(path, b, 0o644)
}

func readJSONFile(path string, v any) error {
	b, err := pathguard.ReadFile(path)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("%s: %w: %w", path, ErrPart, err)
	}
	return nil
}
