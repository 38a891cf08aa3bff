package fold

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
	"unsafe"

	"github.com/itarconv/itarconv/dataset"
	"github.com/itarconv/itarconv/formats/tarfile"
	"github.com/itarconv/itarconv/formats/taridx"
	"github.com/itarconv/itarconv/internal/safefile"
	"github.com/itarconv/itarconv/spool"
)

// IndexOptions tune BuildIndex.
type IndexOptions struct {
	// CompatGLZN reproduces glzn's indexer: every header block is a row,
	// named by its 100-byte name field, whatever its type.
	CompatGLZN bool
	Stem       taridx.StemMode
	Contiguous bool
	Workers    int
	Scan       tarfile.Options
	Progress   func(dataset.Progress)
	// Loaders are other loaders' indexes (DALI, energon, ...; package
	// loaders), written from the same pass over the headers: each shard's
	// as soon as it is read; what spans the dataset when the caller
	// finishes them, after every fold of the dataset is indexed.
	Loaders LoaderIndexes
	// Memory bounds what the TARIDX writer holds of the members until the
	// end (rows, and stems for its tables): past it they spill to
	// temporary files beside the output. 0: taridx's defaults (24 MiB).
	Memory int64
	// ShardSizes are the shards' sizes where the caller knows them
	// (BuildIndex: its caller stat'ed the shards; MergeIndexParts: the
	// tasks recorded them, and the merge found them unchanged), for the
	// index's manifest; nil: each shard is stat'ed for it. A remote
	// shard's is not taken (its manifest entry is what the reads saw).
	ShardSizes []int64
}

// writerOptions gives the TARIDX writer a quarter of the memory budget
// for rows and half for stems (the rest is the scan's).
func (o IndexOptions) writerOptions() taridx.WriterOptions {
	w := taridx.WriterOptions{Contiguous: o.Contiguous}
	if o.Memory > 0 {
		w.SpoolMemory, w.StemMemory = int(max(o.Memory/4, 4096)), int(max(o.Memory/2, 4096))
	}
	return w
}

// IndexStats describes a finished index.
type IndexStats struct {
	Output     string   `json:"output"`
	Shards     int      `json:"shards"`
	Members    int64    `json:"members"` // tar entries seen (header blocks with CompatGLZN)
	Rows       uint64   `json:"rows"`
	Stems      uint64   `json:"stems"`
	Exts       []string `json:"extensions"`
	Crash      int      `json:"crash_stems"`
	Contiguous bool     `json:"contiguous"`
	Bytes      int64    `json:"payload_bytes"` // payload bytes the rows address
	// Rows left out, by reason, and a few example names for each.
	NotRegular    map[string]int64 `json:"not_regular"` // by kind
	NoExt         int64            `json:"skipped_no_extension"`
	SpaceInExt    int64            `json:"skipped_space_in_extension"`
	Sparse        int64            `json:"skipped_sparse"`
	SkippedNames  []string         `json:"skipped_examples"`
	SparseNames   []string         `json:"sparse_examples"`
	HardlinkNames []string         `json:"hardlink_examples"`
	Reads         int64            `json:"read_calls,omitempty"`
	ReadBytes     int64            `json:"read_bytes,omitempty"`
	// Elapsed is the caller's to report (the index command prints seconds).
	Elapsed       time.Duration `json:"-"`
	MembersPerSec float64       `json:"members_per_second,omitempty"`
}

// BuildIndex indexes the tar shards (in fid order) into a TARIDX file at out.
// out appears only when complete; on error nothing new is left behind.
// Shards that glzn would not find beside out, as they are, in that order,
// are named in a manifest beside it (ManifestPath).
func BuildIndex(ctx context.Context, shards []string, out string, opts IndexOptions) (*IndexStats, error) {
	start := time.Now()
	w, st, err := indexShards(ctx, shards, out, opts, nil)
	if err != nil {
		return nil, err
	}
	if w != nil {
		if err := closeWithManifest(w, out, shards, opts.ShardSizes); err != nil {
			return nil, err
		}
	}
	st.timed(start)
	return st, nil
}

// closeWithManifest puts the index w wrote at out into place, with the
// manifest naming its shards where one is needed.
func closeWithManifest(w *taridx.Writer, out string, shards []string, sizes []int64) error {
	manifest, err := stageManifest(out, shards, sizes)
	if err != nil {
		w.Abort()
		return err
	}
	if err := w.Close(); err != nil {
		if manifest != nil {
			manifest.Abort()
		}
		return err
	}
	return commitManifest(out, manifest)
}

// timed records the time since start, and the rate of members it gives.
func (st *IndexStats) timed(start time.Time) {
	st.Elapsed = time.Since(start)
	if secs := st.Elapsed.Seconds(); secs > 0 {
		st.MembersPerSec = float64(st.Members) / secs
	}
}

// indexShards indexes the shards into a TARIDX writer of out, and leaves
// it for the caller to close (or finish, commit, abort); with no out, it
// writes no TARIDX, only opts.Loaders' (and returns no writer).
// Compressed shards are read through spool's copies.
func indexShards(ctx context.Context, shards []string, out string, opts IndexOptions, sp *spool.Spool) (*taridx.Writer, *IndexStats, error) {
	if out == "" && opts.Loaders == nil {
		return nil, nil, errors.New("no index to write")
	}
	var w *taridx.Writer
	if out != "" {
		if len(shards) > taridx.MaxShards {
			return nil, nil, fmt.Errorf("%d shards: a TARIDX fid addresses at most %d: %w", len(shards), taridx.MaxShards, ErrTooManyShards)
		}
		var err error
		if w, err = taridx.Create(out, opts.writerOptions()); err != nil {
			return nil, nil, err
		}
	}
	scan := opts.Scan
	scan.HeaderBlocks = opts.CompatGLZN
	src := NewTarShards(shards, scan)
	src.Spool = sp
	var sink dataset.Sink = noSink{}
	tx := &taridxSink{rules: indexRules{compat: opts.CompatGLZN, stem: opts.Stem}, shardNames: shards}
	if w != nil {
		tx.w = w
		sink = tx
	}
	var files *safefile.Group
	if opts.Loaders != nil {
		opts.Loaders.Plan(shards)
		files = loaderFiles(ctx, src, opts.Loaders)
	}
	err := dataset.Run(ctx, src, sink, dataset.Options{Workers: opts.Workers, Progress: opts.Progress})
	err = commitLoaderFiles(files, err)
	if err != nil {
		if w != nil {
			w.Abort()
		}
		return nil, nil, err
	}
	st := &IndexStats{Output: out}
	if w != nil {
		if err := w.Tables(); err != nil {
			w.Abort()
			return nil, nil, fmt.Errorf("%s: %w", out, err)
		}
		st = tx.tally.stats(out, w)
	}
	st.Shards = len(shards)
	addScanStats(st, src)
	return w, st, nil
}

// loaderFiles hands the loaders each shard's members (src.Members), under
// a context whose group takes the files they write of each shard:
// committed thousands at a time, the last once the pass is over
// (commitLoaderFiles), their syncs side by side rather than two a file,
// one after the other.
func loaderFiles(ctx context.Context, src *TarShards, l LoaderIndexes) *safefile.Group {
	files := new(safefile.Group)
	lctx := safefile.WithGroup(ctx, files)
	src.Members = func(path string) MemberSink { return l.Shard(lctx, path) }
	return files
}

// commitLoaderFiles puts the loaders' files of a pass that ended with err
// in place, or removes them if it failed; files may be nil (no loaders).
func commitLoaderFiles(files *safefile.Group, err error) error {
	if files == nil {
		return err
	}
	if err != nil {
		files.Abort()
		return err
	}
	return files.Commit()
}

// indexRules decide, row by row, what a TARIDX holds: with glzn's
// compatibility every row; by default regular files with a usable
// extension, keyed by the stem of their full name.
type indexRules struct {
	compat bool
	stem   taridx.StemMode
}

type skip struct {
	kind   dataset.Kind
	reason int // 0 not regular, 1 no extension, 2 white space in extension
	name   string
}

// entry gives a row's entry (Fid and Offset left for the caller), or why
// the row is left out. It keeps no state: workers call it in parallel.
func (ir indexRules) entry(r *dataset.Row) (taridx.Entry, skip, bool) {
	if !ir.compat && r.Kind != dataset.KindFile {
		sk := skip{kind: r.Kind, reason: 0}
		if r.Kind == dataset.KindHardlink {
			sk.name = taridx.DecodeName(r.Name)
		}
		return taridx.Entry{}, sk, false
	}
	name := nameView(r.Name)
	stem, ext := taridx.SplitName(name, ir.stem)
	if !ir.compat {
		switch taridx.JudgeExt(ext) {
		case taridx.ExtMissing:
			return taridx.Entry{}, skip{reason: 1, name: strings.Clone(name)}, false
		case taridx.ExtSpace:
			return taridx.Entry{}, skip{reason: 2, name: strings.Clone(name)}, false
		}
	}
	return taridx.Entry{Size: uint64(r.Size), Stem: stem, Ext: ext, KeyHash: taridx.KeyHash(stem)}, skip{}, true
}

// nameView is a row's name as DecodeName gives it, without copying it
// when it is valid UTF-8 (then the two are equal): a string allocated per
// member was a tenth of an index's work. The view is only read while the
// batch is prepared: the rows' names are never written again, and what
// outlives the batch is copied (taridx.Writer.Prepare copies stems and
// extensions; skipped names are cloned).
func nameView(b []byte) string {
	if utf8.Valid(b) {
		return unsafe.String(unsafe.SliceData(b), len(b))
	}
	return taridx.DecodeName(b)
}

// indexTally counts what an index left out, with a few examples.
type indexTally struct {
	bytes         int64
	notRegular    map[string]int64
	noExt         int64
	spaceExt      int64
	skippedNames  []string
	hardlinkNames []string
}

func (t *indexTally) skipped(k skip) {
	switch k.reason {
	case 0:
		if t.notRegular == nil {
			t.notRegular = map[string]int64{}
		}
		t.notRegular[k.kind.String()]++
		if k.kind == dataset.KindHardlink && len(t.hardlinkNames) < maxReportedNames {
			t.hardlinkNames = append(t.hardlinkNames, k.name)
		}
		return
	case 1:
		t.noExt++
	case 2:
		t.spaceExt++
	}
	if len(t.skippedNames) < maxReportedNames {
		t.skippedNames = append(t.skippedNames, k.name)
	}
}

// stats describes the index w wrote.
func (t *indexTally) stats(out string, w *taridx.Writer) *IndexStats {
	notRegular := t.notRegular
	if notRegular == nil {
		notRegular = map[string]int64{}
	}
	return &IndexStats{
		Output: out, Rows: w.Rows(), Stems: w.NStems(), Exts: append([]string(nil), w.Exts()...),
		Crash: len(w.CrashStems()), Contiguous: w.Contiguous(), Bytes: t.bytes,
		NotRegular: notRegular, NoExt: t.noExt, SpaceInExt: t.spaceExt,
		SkippedNames: t.skippedNames, HardlinkNames: t.hardlinkNames,
	}
}

// taridxSink turns rows of tar shards into TARIDX entries. Prepare decodes
// names, hashes stems and encodes the rows on the workers; Write hands
// them to the writer in order, which numbers extensions and copies them.
type taridxSink struct {
	w *taridx.Writer // the index, written in batches
	// entries holds slices of entries that Prepare gathers a batch in
	// and the writer encodes: reused, since a fresh one for each batch
	// of 4,096 rows is 300 KB of new memory to fault in and zero.
	entries sync.Pool
	add     func(taridx.Entry) error // or a part's entries, one at a time
	// fidBase is the fid of the first shard the source scans: a task of
	// a partitioned run scans a range of the dataset's shards.
	fidBase    int
	rules      indexRules
	shardNames []string
	tally      indexTally
}

type preparedEntries struct {
	entries []taridx.Entry
	batch   *taridx.Batch // the entries, encoded for s.w
	bytes   int64
	skipped []skip
}

func (s *taridxSink) Prepare(b *dataset.Batch) error {
	p := &preparedEntries{}
	if s.w != nil {
		if ep, _ := s.entries.Get().(*[]taridx.Entry); ep != nil {
			p.entries = (*ep)[:0]
		}
	}
	if cap(p.entries) < len(b.Rows) {
		p.entries = make([]taridx.Entry, 0, len(b.Rows))
	}
	for i := range b.Rows {
		r := &b.Rows[i]
		e, sk, ok := s.rules.entry(r)
		if !ok {
			p.skipped = append(p.skipped, sk)
			continue
		}
		e.Fid, e.Offset = uint16(s.fidBase+b.Shard), uint64(r.Offset)
		p.entries = append(p.entries, e)
		p.bytes += int64(e.Size)
	}
	if s.w != nil {
		p.batch = s.w.Prepare(p.entries)
		// The batch holds them, encoded. A pooled slice keeps its last
		// batch's names alive until it is reused: a batch's worth for
		// each slice in the pool, as many as batches prepared at once.
		ents := p.entries
		p.entries = nil
		s.entries.Put(&ents)
	}
	b.Prep = p
	return nil
}

// PreparedBytes makes the index a dataset.CompactSink: a prepared batch
// needs its rows no more, only its encoded entries (32 bytes a row), so
// workers scan ahead of the ordered writer without holding rows. A part's
// entries, added one at a time, still need them.
func (s *taridxSink) PreparedBytes(b *dataset.Batch) int64 {
	p := b.Prep.(*preparedEntries)
	if p.batch == nil {
		return -1
	}
	n := p.batch.MemSize() + int64(cap(p.skipped))*40
	for _, k := range p.skipped {
		n += int64(len(k.name))
	}
	return n
}

func (s *taridxSink) Write(b *dataset.Batch) error {
	p := b.Prep.(*preparedEntries)
	if p.batch != nil {
		if err := s.w.AddBatch(p.batch); err != nil {
			var ee *taridx.EntryError
			if errors.As(err, &ee) {
				return fmt.Errorf("%s: offset %d: %w", s.shardNames[b.Shard], p.batch.Offset(ee.Entry), err)
			}
			return fmt.Errorf("%s: %w", s.shardNames[b.Shard], err)
		}
	} else {
		for _, e := range p.entries {
			if err := s.add(e); err != nil {
				return fmt.Errorf("%s: offset %d: %w", s.shardNames[b.Shard], e.Offset, err)
			}
		}
	}
	s.tally.bytes += p.bytes
	for _, k := range p.skipped {
		s.tally.skipped(k)
	}
	return nil
}

func (s *taridxSink) EndShard(int) error { return nil }

// NotIndexed says which entries (unit: "members", "files", ...) the index
// leaves out and why, or "": the index keys a sample by its name's
// extension, so a name without one, or with white space in it, has no row.
func NotIndexed(st *IndexStats, unit string) string {
	if st == nil || st.NoExt+st.SpaceInExt == 0 {
		return ""
	}
	quoted := make([]string, len(st.SkippedNames))
	for i, n := range st.SkippedNames {
		quoted[i] = strconv.Quote(n)
	}
	return fmt.Sprintf("%d %s not indexed (%d without an extension, %d with white space in it; glzn's loader cannot read them), e.g. %s",
		st.NoExt+st.SpaceInExt, unit, st.NoExt, st.SpaceInExt, strings.Join(quoted, ", "))
}

// noSink takes the rows of a pass that writes only loaders' indexes (from
// the members the source hands them directly).
type noSink struct{}

func (noSink) Prepare(*dataset.Batch) error { return nil }
func (noSink) Write(*dataset.Batch) error   { return nil }
func (noSink) EndShard(int) error           { return nil }

// PreparedBytes: the loaders take the members on the workers, as they are
// scanned, so batches need nothing once prepared.
func (noSink) PreparedBytes(*dataset.Batch) int64 { return 0 }
