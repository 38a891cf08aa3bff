package tbl

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"

	"os"
	"path/filepath"
	"runtime"

	"github.com/itarconv/itarconv/dataset"
	"github.com/itarconv/itarconv/formats/registry"
)

// A partitioned run may write its TBL file in place: every task counts
// the whole dataset's samples as one run does (the header-only first
// pass, which places every sample: its number, and without LZ4 or hard
// links its offset), then writes the index entries and bytes of its own
// share straight into one data file that all the tasks of the run share,
// where the finished file has them. The part holds that file as a hard
// link (data.tbl), the blocks that follow the data (its samples'
// metadata, part.meta) and its record. The merge then writes the
// metadata section after the data and the header over the first bytes,
// and makes the file the output: no sample byte is copied, on any file
// system that several processes can write one file of (a local one, NFS;
// the tasks write disjoint ranges). Parts gathered from several machines
// (each part's data.tbl a file of its own, holding its share) are merged
// too, each share copied into the first part's file.
//
// The data file is named after a digest of the layout (the options, and
// every shard's name, size, modification time and count), so that the
// tasks of one run meet in one file and another run's tasks do not; every
// task makes it as long as the data's end, which they all know alike, so
// that its size stays what each part records while the others write.
//
// Where a metadata member at the end of one task's share pairs with the
// first sample of the next, the first task leaves the member out (the
// count says it is no sample), and records its blocks as a part does
// (trailing.meta); the merge gives them to the next task's first sample
// (its index entry is rewritten in place, its blocks replaced).

const (
	partMetaName = "part.meta"
	partDataName = "data.tbl" // a hard link to the run's data file
)

// inPlace is the record of a part written in place.
type inPlace struct {
	Data        string `json:"data"`   // the shared data file, absolute
	Layout      string `json:"layout"` // the layout's digest, the same for every task of a run
	Total       int64  `json:"total_samples"`
	DataSize    int64  `json:"data_size"` // every sample's stored bytes
	First       int64  `json:"first_sample"`
	DataOffset  int64  `json:"data_offset"` // where its first sample's bytes are
	DataBytes   int64  `json:"data_bytes"`  // its samples' stored bytes
	MetaSize    int64  `json:"meta_size"`   // part.meta's size
	TrailPaired bool   `json:"trailing_paired,omitempty"`
}

// CanWriteInPlace tells whether WriteRange writes a part in place with
// opts, where the dataset has no hard link: with LZ4 a sample's stored
// size is known only once compressed, so no task can know where its
// share starts before the others have written theirs.
func CanWriteInPlace(opts RowsOptions) bool { return !opts.LZ4 }

// WriteRange writes task's part of a partitioned run into dir (an empty
// directory the caller made), writing the samples of shards lo..hi-1 of
// the dataset newSource makes (the whole dataset, in both passes) in
// place, into the data file the run's tasks share in dataDir (a
// directory on the file system of the output, the same for every task).
// Where the samples cannot be placed before they are written (LZ4, hard
// links), it writes the part as WritePart does over those shards, which
// MergeParts merges by copying. MergeParts merges either kind; the
// tasks of one run must all be given the same dataset, options and
// dataDir.
func WriteRange(ctx context.Context, newSource func(counting bool) (dataset.PayloadSource, error), lo, hi int, dir, dataDir string, opts RowsOptions) (*PartStats, error) {
	if opts.Version == 0 {
		opts.Version = 2
	}
	if opts.Compat != "" {
		return nil, fmt.Errorf("%s: %q: %w", dir, opts.Compat, ErrCompat)
	}
	whole := opts.Select // for the count, over the whole dataset
	if sel := opts.Select; sel != nil {
		// The task's passes see shards lo..hi-1 as 0..hi-lo-1; Select
		// sees them as the whole dataset numbers them (as the count).
		opts.Select = func(shard int, r *dataset.Row) (string, error) { return sel(lo+shard, r) }
	}
	sliced := func(counting bool) (dataset.PayloadSource, error) {
		src, err := newSource(counting)
		if err != nil {
			return nil, err
		}
		part, err := dataset.Slice(src, lo, hi)
		if err != nil {
			registry.CloseSource(src)
			return nil, err
		}
		return part, nil
	}
	if !CanWriteInPlace(opts) {
		return WritePart(ctx, sliced, dir, opts)
	}
	if _, err := os.Stat(filepath.Join(dir, partInfoName)); err == nil {
		return nil, fmt.Errorf("writing a TBL part in %s: it already holds one", dir)
	}
	counting, err := newSource(true)
	if err != nil {
		return nil, err
	}
	if lo < 0 || hi < lo || hi > counting.NumShards() {
		registry.CloseSource(counting)
		return nil, fmt.Errorf("writing a TBL part in %s: shards %d to %d of %d", dir, lo, hi, counting.NumShards())
	}
	digest, err := shardsDigest(counting, opts)
	if err != nil {
		registry.CloseSource(counting)
		return nil, err
	}
	sel := &selector{sel: whole, skipped: map[string]int64{}, src: counting}
	sel.files, _ = counting.(dataset.ShardFiles)
	targets := map[string]*dataset.Row{}
	cs := &countSink{sel: sel, src: counting, noMetaMembers: opts.NoMetaMembers, targets: targets,
		shards: make([]shardCount, counting.NumShards())}
	// Records of shards that are files, whose sizes and modification
	// times the digest holds (or the run's name does); a selection (a
	// function) is not in it: such a run counts in every task.
	rec := opts.Select == nil && (sel.files != nil || opts.Run != "")
	var c *wholeCount
	if rec {
		c = loadCount(dataDir, digest, counting.NumShards())
	}
	if c != nil {
		sel.n, cs.bytes, cs.shards = c.samples, c.bytes, c.shards
	} else {
		err = dataset.Run(ctx, counting, cs, dataset.Options{Workers: opts.Workers})
		if err == nil && cs.pairing.pending != nil {
			cs.counted(cs.pendingShard, cs.pending)
			cs.resolved(false)
		}
		if err == nil && rec && len(targets) == 0 {
			storeCount(dataDir, digest, &wholeCount{samples: sel.n, bytes: cs.bytes, shards: cs.shards})
		}
	}
	registry.CloseSource(counting)
	if err != nil {
		return nil, err
	}
	if len(targets) > 0 {
		// A hard link's bytes are its target's, which may lie in another
		// task's share: placed by the merge.
		return WritePart(ctx, sliced, dir, opts)
	}
	layout := layoutOf(digest, cs.shards)
	limit := int64(MaxSamplesV2)
	if opts.Version == 1 {
		limit = MaxSamplesV1
	}
	if sel.n > limit {
		return nil, fmt.Errorf("%s: %d samples: a v%d index holds at most %d (its size is a 32-bit field): %w", dir, sel.n, opts.Version, limit, ErrUnrepresentable)
	}
	hdr, ent := int64(headerLen(opts.Version)), int64(entryLen(opts.Version))
	ip := &inPlace{Layout: layout, Total: sel.n, DataSize: cs.bytes, DataOffset: hdr + sel.n*ent}
	var own int64
	for k, c := range cs.shards {
		switch {
		case k < lo:
			ip.First += c.samples
			ip.DataOffset += c.bytes
		case k < hi:
			own += c.samples
			ip.DataBytes += c.bytes
		}
	}
	if hi > lo {
		c := cs.shards[hi-1]
		ip.TrailPaired = c.memberAtEnd && c.pendingFrom >= lo && c.paired
	}
	// "shared-": the prefix package partition gives the files a run's
	// tasks share in its parts directory, removed once no part needs them.
	abs, err := filepath.Abs(filepath.Join(dataDir, "shared-tbl-"+layout+".data"))
	if err != nil {
		return nil, err
	}
	ip.Data = abs
	data, err := os.OpenFile(abs, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, err
	}
	defer data.Close()
	// Every task of the run makes the file as long as the data's end,
	// which they all know alike: its size then stays the same while they
	// write (each part records it), and no task's truncate cuts another's
	// bytes.
	if fi, err := data.Stat(); err != nil {
		return nil, err
	} else if fi.Size() < hdr+sel.n*ent+cs.bytes {
		if err := data.Truncate(hdr + sel.n*ent + cs.bytes); err != nil {
			return nil, fmt.Errorf("%s: %w", abs, err)
		}
	}
	// The part holds the data file too, as a hard link: where the parts
	// are gathered from several machines (each task's data file then
	// holds its own share), the merge copies each share from its part's
	// file; where every part's is the one file, it copies nothing.
	linkPath := filepath.Join(dir, partDataName)
	if err := os.Link(abs, linkPath); err != nil {
		// No hard links here: parts copied by the merge.
		return WritePart(ctx, sliced, dir, opts)
	}
	metaPath := filepath.Join(dir, partMetaName)
	meta, err := os.OpenFile(metaPath, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		os.Remove(linkPath)
		return nil, err
	}
	fail := func(err error) (*PartStats, error) {
		os.Remove(metaPath)
		os.Remove(linkPath)
		os.Remove(filepath.Join(dir, partTrailingName))
		return nil, err
	}
	w := &Writer{opts: WriterOptions{Version: opts.Version, NumSamples: int(sel.n), KeepFormat: true},
		hdrLen: int(hdr), entLen: int(ent), metaAt: -1, n: int(ip.First), off: ip.DataOffset,
		share: &share{f: data, end: int(ip.First + own)}, spill: meta}
	if opts.Version == 2 {
		w.flags = FlagHasChecksums
	}
	workers := cmp.Or(max(opts.Workers, 0), runtime.GOMAXPROCS(0))
	w.setPlacers(workers)
	w.placerCount = workers
	edges := &partEdges{}
	st, err := copyRows(ctx, sliced, w, opts, edges, targets, ip.TrailPaired)
	if err != nil {
		return fail(err)
	}
	if w.off != ip.DataOffset+ip.DataBytes {
		return fail(fmt.Errorf("%s: the samples stored %d bytes, the count said %d: %w", dir, w.off-ip.DataOffset, ip.DataBytes, ErrChanged))
	}
	ip.MetaSize = w.metaLen
	info := partInfo{
		Format: partFormat, PartVersion: partVersion,
		TBLVersion: opts.Version, LZ4: opts.LZ4, NoNames: opts.NoNames, NoMetaMembers: opts.NoMetaMembers,
		Samples: st.Samples, FileSize: 0,
		Skipped: st.Skipped, MetaMembers: st.MetaMembers, MetaDropped: st.MetaDropped, InPlace: ip,
	}
	if edges.seen {
		info.First = &edges.first
	}
	if err := writeTrailing(dir, edges, &info); err != nil {
		return fail(err)
	}
	b, err := json.MarshalIndent(&info, "", "  ")
	if err != nil {
		return fail(err)
	}
	// The record last: a part without it is no part.
	if err := writeWhole(filepath.Join(dir, partInfoName), append(b, '\n')); err != nil {
		return fail(err)
	}
	st.Output = ip.Data
	return &PartStats{Dir: dir, RowsStats: *st, PendingMember: info.Trailing != nil}, nil
}

// share is where a Writer of one task's share writes: the shared data
// file, up to sample end; the metadata blocks go to the part's
// part.meta (Writer.spill), numbered as in the whole file.
type share struct {
	f   *os.File
	end int
}

// closeWindow waits for the runs handed over, checks the count, and
// syncs what the task wrote: the merge may run on another machine.
func (w *Writer) closeWindow() error {
	defer w.release()
	if w.pl != nil {
		if err := w.pl.stop(); err != nil && w.err == nil {
			w.fail(err)
		}
		w.pl = nil
	}
	if w.err == nil && w.n != w.share.end {
		w.fail(fmt.Errorf("closed at sample %d, the count said %d: %w", w.n, w.share.end, ErrChanged))
	}
	if w.err == nil {
		if err := w.share.f.Sync(); err != nil {
			w.fail(err)
		} else if err := w.spill.Sync(); err != nil {
			w.fail(err)
		}
	}
	err := w.err
	w.err = errWriterDone
	return err
}

// writeTrailing writes trailing.meta for a part ending on a metadata
// member, and records it in info.
func writeTrailing(dir string, edges *partEdges, info *partInfo) error {
	m := edges.last
	if m == nil {
		return nil
	}
	mm := &m.member
	blocks := appendBlocks(nil, 0, mm.Blocks)
	if err := writeWhole(filepath.Join(dir, partTrailingName), blocks); err != nil {
		return err
	}
	t := &trailingMember{Name: []byte(m.name), Blocks: int64(len(mm.Blocks)), Size: int64(len(blocks)), NoBlocks: !mm.Stated}
	if mm.HasFormat {
		f := uint8(mm.Format)
		t.Format = &f
	}
	if mm.HasDims {
		t.Width, t.Height = &mm.Width, &mm.Height
	}
	info.Trailing = t
	return nil
}
