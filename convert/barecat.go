package convert

import (
	"context"
	"errors"
	"fmt"
	"hash/crc32"
	"hash/maphash"
	"io"
	"os"
	"path/filepath"
	"runtime"

	"github.com/itarconv/itarconv/dataset"
	"github.com/itarconv/itarconv/fold"
	"github.com/itarconv/itarconv/formats/barecat"
	"github.com/itarconv/itarconv/formats/tarfile"
	"github.com/itarconv/itarconv/formats/tbl"
	"github.com/itarconv/itarconv/internal/bloom"
	"github.com/itarconv/itarconv/internal/mapped"
	"github.com/itarconv/itarconv/spool"
)

// Duplicate policies for TarToBarecat.
const (
	DuplicateError = ""      // refuse, naming both places
	DuplicateFirst = "first" // keep the first member with the path
	DuplicateLast  = "last"  // keep the last, as extracting the tar would
)

// BarecatOptions tune TarToBarecat.
type BarecatOptions struct {
	// Wrap writes no data: the archive's shards are relative symlinks to
	// the tar shards and its offsets point at member payloads.
	Wrap bool
	// CRC computes crc32c in Wrap mode too (it reads every payload).
	CRC         bool
	OnDuplicate string
	ShardSize   int64 // copy mode: roll shards over past this size (0: never)
	// Overwrite replaces an archive already at the output (its index and
	// every shard), once the new one is complete; without it an existing
	// archive is refused (fs.ErrExist).
	Overwrite bool
	Workers   int
	// Memory bounds what the conversion keeps in memory (bytes; 0 means
	// barecat.DefaultMemory, 256 MiB): a sixteenth of it holds payloads
	// staged by the workers and not yet written, the rest is the
	// Writer's (barecat.WriterOptions.Memory), which keeps a 64th for the
	// index's keys and a 256th for its file log in memory and spills the
	// rest to temporary files beside the archive. Nothing is held per
	// member past that.
	Memory int64
	Scan   tarfile.Options
	// Spool reads compressed shards through decompressed copies.
	Spool    *spool.Spool
	Progress func(dataset.Progress)
}

// BarecatStats describes a conversion to Barecat.
type BarecatStats struct {
	Output     string           `json:"output"`
	Files      int64            `json:"files"`
	Dirs       int64            `json:"dirs"`
	Bytes      int64            `json:"bytes"`
	Hardlinks  int64            `json:"hardlinks"`
	Duplicates int64            `json:"duplicates"` // members dropped by the duplicate policy
	Skipped    map[string]int64 `json:"skipped"`    // members not converted, by kind
	Shards     int              `json:"shards"`
}

// ErrCompressedWrap: --wrap was asked of compressed shards, which an
// archive cannot address in place.
var ErrCompressedWrap = errors.New("compressed shards cannot be wrapped")

// occurrence is where the member that keeps a path lives.
type occurrence struct {
	shard      int32
	header     int64
	dataOffset int64
	size       int64
}

// TarToBarecat converts tar shards (in fid order) into a Barecat archive at
// out. Every regular member becomes a file, hard links become files with
// their target's bytes, directories keep their metadata; symbolic links,
// devices and fifos are counted and skipped. Paths are normalized as
// Barecat does ("./a/b" -> "a/b"); a path that would escape the archive is
// an error. The archive appears only when complete, its index last.
func TarToBarecat(ctx context.Context, shards []string, out string, opts BarecatOptions) (*BarecatStats, error) {
	switch opts.OnDuplicate {
	case DuplicateError, DuplicateFirst, DuplicateLast:
	default:
		return nil, fmt.Errorf("duplicate policy %q: want first or last", opts.OnDuplicate)
	}
	// With a duplicate policy, a first header-only pass finds the paths
	// that may repeat (a filter of a few bytes per path; the few it may
	// have seen are kept with their last member), so that the copying
	// pass decides each member at once and copies every byte once.
	// Without one, the Writer refuses a repeated path (its filter, then
	// SQLite's unique index on path), and the error names both places.
	var repeats map[string]occurrence
	if opts.OnDuplicate != DuplicateError {
		var err error
		if repeats, err = repeatedPaths(ctx, shards, opts); err != nil {
			return nil, err
		}
	}
	if opts.Wrap {
		need, err := spool.Needed(shards)
		if err != nil {
			return nil, err
		}
		if need {
			return nil, fmt.Errorf("%w: a wrapped archive links to its tar shards, which must be plain tar files", ErrCompressedWrap)
		}
	}
	if opts.Memory < 0 {
		return nil, fmt.Errorf("memory budget %d: want a positive number of bytes, or 0 for the default", opts.Memory)
	}
	if opts.Memory == 0 {
		opts.Memory = barecat.DefaultMemory
	}
	wopts := barecat.WriterOptions{ShardSizeLimit: opts.ShardSize, Overwrite: opts.Overwrite, Memory: opts.Memory}
	w, err := barecat.CreateContext(ctx, out, wopts)
	if err != nil {
		return nil, err
	}
	src := fold.NewTarShards(shards, opts.Scan)
	src.Spool = opts.Spool
	if !opts.Wrap {
		// Batches' payloads are staged in memory until written.
		src.BatchBytes = stageBatchBytes(opts.Workers, opts.Memory)
	}
	defer src.Close()
	sink := &barecatSink{
		ctx: ctx, w: w, src: src, repeats: repeats, kept: map[string]bool{}, latest: map[string]occurrence{}, opts: opts,
		stats: &BarecatStats{Output: out, Skipped: map[string]int64{}},
	}
	if opts.Wrap {
		// The archive's shard i is a relative link to tar shard i.
		for _, sh := range shards {
			if _, err := w.LinkShard(sh); err != nil {
				w.Abort()
				return nil, err
			}
		}
	}
	defer sink.closeCopySource()
	if err := dataset.Run(ctx, src, sink, dataset.Options{Workers: opts.Workers, Progress: opts.Progress}); err != nil {
		w.Abort()
		return nil, err
	}
	sink.stats.Shards = w.NumShards()
	if err := w.Close(); err != nil {
		return nil, sink.writerErr(err)
	}
	return sink.stats, nil
}

// memberPath is the archive path of a member. A file or hard link whose
// name no target keeps is refused as it is into TBL (tbl.CheckName).
func memberPath(shards []string, shard int, r *dataset.Row) (string, error) {
	if r.Kind != dataset.KindDir {
		if err := tbl.CheckName(shards[shard], r); err != nil {
			return "", fmt.Errorf("%w (%w)", err, barecat.ErrInvalidPath)
		}
	}
	p, err := barecat.NormalizePath(string(r.Name))
	if err != nil {
		return "", fmt.Errorf("%s: offset %d: %w", shards[shard], r.Offset, err)
	}
	return p, nil
}

// repeatedPaths scans every header once and returns the paths of files
// and hard links that a filter may have seen before, each with its last
// member: every path that repeats is there (its later members are all
// "maybe seen"), with a few that do not (the filter's false positives,
// which then name their only member).
func repeatedPaths(ctx context.Context, shards []string, opts BarecatOptions) (map[string]occurrence, error) {
	repeats := make(map[string]occurrence)
	var seen bloom.Filter
	seed := maphash.MakeSeed()
	src := fold.NewTarShards(shards, opts.Scan)
	src.Spool = opts.Spool
	defer src.Close()
	c := dataset.RowFunc(func(shard int, r *dataset.Row) error {
		if r.Kind != dataset.KindFile && r.Kind != dataset.KindHardlink {
			return nil
		}
		p, err := memberPath(shards, shard, r)
		if err != nil {
			return err
		}
		h := maphash.String(seed, p)
		if seen.MayContain(h) {
			repeats[p] = occurrence{shard: int32(shard), header: r.Offset}
		} else {
			seen.Add(h)
		}
		return nil
	})
	if err := dataset.Run(ctx, src, c, dataset.Options{Workers: opts.Workers}); err != nil {
		return nil, err
	}
	return repeats, nil
}

// repeatMembers finds the first two file or hard link members of path p,
// to name them where the Writer refused p as a repeated path: the tars
// are read again, an error's cost only.
func repeatMembers(ctx context.Context, shards []string, p string, opts BarecatOptions) ([]occurrence, error) {
	var found []occurrence
	enough := errors.New("found")
	src := fold.NewTarShards(shards, opts.Scan)
	src.Spool = opts.Spool
	defer src.Close()
	err := dataset.Run(ctx, src, dataset.RowFunc(func(shard int, r *dataset.Row) error {
		if r.Kind != dataset.KindFile && r.Kind != dataset.KindHardlink {
			return nil
		}
		if q, err := memberPath(shards, shard, r); err == nil && q == p {
			if found = append(found, occurrence{shard: int32(shard), header: r.Offset}); len(found) == 2 {
				return enough
			}
		}
		return nil
	}), dataset.Options{Workers: 1})
	if err == enough {
		return found, nil
	}
	if err == nil {
		err = fmt.Errorf("%q: %d members found, want two", p, len(found))
	}
	return found, err
}

type barecatSink struct {
	// copyFrom is the tar shard AddCopy copies from (number copyShard),
	// kept open until the Writer has copied what it was given of it.
	copyFrom  *os.File
	copyShard int

	ctx     context.Context
	w       *barecat.Writer
	src     *fold.TarShards
	repeats map[string]occurrence // with a policy: the paths that may repeat, and their last member
	kept    map[string]bool       // DuplicateFirst: the paths of repeats already kept
	latest  map[string]occurrence // DuplicateLast: the bytes of each repeat's latest member so far
	opts    BarecatOptions
	stats   *BarecatStats
}

// Prepare stages, on the workers, the payloads of a batch's regular
// members in one buffer, one after the other as they will lie in the
// archive, with their CRC-32C: the writer then only places them, and
// the buffer is written out in one go (Writer.AddBytes) while the next
// batches are staged. Members larger than stageMax are checksummed where
// they lie (the shard mapped) and copied by the kernel (Writer.AddCopy);
// members larger than fold.MaxInline, and shards that cannot be mapped,
// are left to the writer.
func (s *barecatSink) Prepare(b *dataset.Batch) error {
	if s.opts.Wrap {
		return nil
	}
	var f *os.File
	var prep *copyPrep
	var at int // the next free byte of prep.buf
	// Runs of members are mapped a few MiB at a time: mapped pages count
	// in the process's resident memory while they are.
	err := fold.SmallRuns(b.Rows, copyMapSpan, func(i, j int, lo, hi int64) error {
		if f == nil {
			var err error
			if f, err = s.src.ShardFile(b.Shard); err != nil {
				return err
			}
			prep = &copyPrep{rows: make([]copyCRC, len(b.Rows))}
			prep.buf = getStage(stagedBytes(b.Rows))
		}
		region, err := mapped.Map(f, lo, hi-lo)
		if err != nil {
			return err
		}
		defer region.Close()
		var r *dataset.Row
		err = mapped.Guard(func() error {
			for k := i; k < j; k++ {
				if r = &b.Rows[k]; r.Kind != dataset.KindFile {
					continue
				}
				src := region.Bytes(r.DataOffset, r.Size)
				if r.Size > stageMax {
					prep.rows[k] = copyCRC{crc: crc32.Checksum(src, castagnoli), ok: true}
					continue
				}
				dst := (*prep.buf)[at : at+len(src)]
				copy(dst, src)
				at += len(src)
				prep.rows[k] = copyCRC{crc: crc32.Checksum(dst, castagnoli), ok: true, data: dst}
			}
			return nil
		})
		if err != nil {
			return fmt.Errorf("%s: %q, payload at offset %d: %w", s.src.Paths[b.Shard], r.Name, r.DataOffset, err)
		}
		return nil
	})
	if f != nil {
		f.Close()
	}
	if err != nil && prep != nil {
		putStage(prep.buf)
	}
	if errors.Is(err, mapped.ErrUnsupported) {
		return nil // the writer reads them
	}
	if err != nil {
		return err
	}
	if prep != nil {
		b.Prep = prep
	}
	return nil
}

// copyMapSpan bounds the bytes of a shard Prepare maps at once.
const copyMapSpan = 8 << 20

// stageMax is the largest member Prepare stages: a larger one is copied
// by the kernel, in one call, never passing through this process.
const stageMax = 1 << 20

// copyPrep is what Prepare made of a batch: each row's CRC-32C, and the
// staged bytes of those it staged (in buf, handed back to the pool once
// the Writer has written them).
type copyPrep struct {
	rows []copyCRC
	buf  *[]byte
}

// copyCRC is the CRC-32C of a member's payload, where Prepare computed
// it, and the payload itself where Prepare staged it.
type copyCRC struct {
	crc  uint32
	ok   bool
	data []byte
}

// stagedBytes is the buffer Prepare needs for rows: their regular
// members' payloads that SmallRuns covers and stageMax admits.
func stagedBytes(rows []dataset.Row) int {
	n := 0
	for i := range rows {
		if r := &rows[i]; r.Kind == dataset.KindFile && r.Size <= stageMax {
			n += int(r.Size)
		}
	}
	return n
}

// stageBatchBytes bounds the payload bytes of a batch, so that the
// batches staged and not yet written (about four per worker, and a few
// queued for the disk) hold about a sixteenth of memory in all (16 MiB
// by default), whatever the number of workers; but no batch is cut
// below 512 KiB, where mapping the shard and handing the batch over
// would cost more than its bytes (32 MiB in all at 16 workers).
func stageBatchBytes(workers int, memory int64) int64 {
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	return min(max(memory/16/int64(4*workers), 512<<10), 2<<20)
}

// stages holds staging buffers between batches: each is written, then
// reused, so that staging neither allocates nor makes garbage once warm
// (a sync.Pool drops its buffers at every collection, and the garbage
// then lets the heap grow to twice what is live).
var stages = make(chan *[]byte, 64)

func getStage(n int) *[]byte {
	select {
	case p := <-stages:
		if cap(*p) >= n {
			*p = (*p)[:n]
			return p
		}
	default:
	}
	b := make([]byte, n, max(n, 256<<10))
	return &b
}

func putStage(p *[]byte) {
	select {
	case stages <- p:
	default:
	}
}

// copySource returns tar shard n, open for AddCopy. The shard before it is
// closed once the Writer has copied what it was given of it.
func (s *barecatSink) copySource(n int) (*os.File, error) {
	if s.copyFrom != nil && s.copyShard == n {
		return s.copyFrom, nil
	}
	if err := s.closeCopySource(); err != nil {
		return nil, err
	}
	f, err := s.src.ShardFile(n)
	if err != nil {
		return nil, err
	}
	s.copyFrom, s.copyShard = f, n
	return f, nil
}

func (s *barecatSink) closeCopySource() error {
	if s.copyFrom == nil {
		return nil
	}
	err := s.w.Flush()
	s.copyFrom.Close()
	s.copyFrom = nil
	return err
}

func (s *barecatSink) Write(b *dataset.Batch) error {
	prep, _ := b.Prep.(*copyPrep)
	for i := range b.Rows {
		var crc copyCRC // none: the writer checksums the bytes itself
		if prep != nil {
			crc = prep.rows[i]
		}
		if err := s.writeRow(b.Shard, &b.Rows[i], crc); err != nil {
			if prep != nil {
				s.w.AfterWrite(func() { putStage(prep.buf) })
			}
			return err
		}
	}
	if prep != nil {
		// The staged bytes are the Writer's until written.
		return s.writerErr(s.w.AfterWrite(func() { putStage(prep.buf) }))
	}
	return nil
}

// writeRow adds one member of tar shard number shard to the archive: a
// directory, a file, or a hard link (as a file with its target's bytes).
// Symlinks and other kinds have no place in Barecat and are counted as
// skipped; a repeated path is kept or dropped as opts.OnDuplicate says.
func (s *barecatSink) writeRow(shard int, r *dataset.Row, crc copyCRC) error {
	if r.Kind == dataset.KindSymlink || r.Kind == dataset.KindOther {
		s.stats.Skipped[r.Kind.String()]++
		return nil
	}
	p, err := memberPath(s.src.Paths, shard, r)
	if err != nil {
		return err
	}
	if r.Kind == dataset.KindDir {
		return s.addDir(shard, r, p)
	}
	f := barecat.RowFile(p, r)
	data := occurrence{shard: int32(shard), dataOffset: r.DataOffset, size: r.Size}
	resolved := s.resolveLink(r, &f, &data) // a hard link whose bytes are data
	if s.dropRepeat(shard, r, p, data, resolved) {
		s.stats.Duplicates++
		return nil
	}
	if r.Kind == dataset.KindHardlink && !resolved {
		return s.addLink(shard, r, p, f)
	}
	if crc.data != nil && r.Kind == dataset.KindFile && !resolved {
		// The member's own bytes, staged by a worker.
		err = s.w.AddBytes(f, crc.data, crc.crc)
	} else if crc.ok && r.Kind == dataset.KindFile && !resolved {
		// The member's own bytes, checksummed by a worker.
		var from *os.File
		if from, err = s.copySource(shard); err == nil {
			err = s.w.AddCopy(f, from, r.DataOffset, crc.crc)
		}
	} else {
		err = s.addFile(f, data)
	}
	if err != nil {
		return s.addErr(p, shard, r, err)
	}
	if resolved {
		s.stats.Hardlinks++
	}
	s.stats.Files++
	s.stats.Bytes += f.Size
	return nil
}

// addDir adds a directory member. A directory that repeats keeps its
// first entry, as Barecat holds one row per directory.
func (s *barecatSink) addDir(shard int, r *dataset.Row, p string) error {
	d := barecat.Dir{Path: p, Mode: r.Mode & 0o7777, HasMode: true, UID: r.UID, HasUID: true,
		GID: r.GID, HasGID: true, MtimeNs: r.ModTime*1e9 + int64(r.ModTimeNsec), HasMtime: true}
	err := s.w.AddDir(d)
	if errors.Is(err, barecat.ErrDuplicate) {
		return nil // the same directory again: its first entry holds
	}
	if err != nil {
		return fmt.Errorf("%s: offset %d: %w", s.src.Paths[shard], r.Offset, err)
	}
	s.stats.Dirs++
	return nil
}

// resolveLink gives a hard link, under DuplicateLast, the bytes of its
// target's latest member before it (into data and f.Size), as extracting
// the tar would, even when a later member is the one kept; it reports
// whether it did. Other links are left to the writer (addLink).
func (s *barecatSink) resolveLink(r *dataset.Row, f *barecat.File, data *occurrence) bool {
	if r.Kind != dataset.KindHardlink || s.opts.OnDuplicate != DuplicateLast {
		return false
	}
	t, err := barecat.NormalizePath(string(r.Linkname))
	if err != nil {
		return false
	}
	d, ok := s.latest[t]
	if !ok {
		return false
	}
	*data, f.Size = d, d.size
	return true
}

// dropRepeat reports whether the member at path p, one of the paths that
// repeat, is not the one opts.OnDuplicate keeps (the first, or the last),
// and notes, for DuplicateLast, the bytes links to p get from here on.
func (s *barecatSink) dropRepeat(shard int, r *dataset.Row, p string, data occurrence, resolved bool) bool {
	last, ok := s.repeats[p]
	if !ok {
		return false
	}
	if (r.Kind == dataset.KindFile || resolved) && s.opts.OnDuplicate == DuplicateLast {
		s.latest[p] = data
	}
	switch s.opts.OnDuplicate {
	case DuplicateFirst:
		drop := s.kept[p]
		s.kept[p] = true
		return drop
	case DuplicateLast:
		return last.shard != int32(shard) || last.header != r.Offset
	}
	return false
}

// addLink adds a hard link with its target's bytes, wherever they are; a
// target that is no earlier file of the archive is tbl.ErrHardlinkTarget,
// as into TBL.
func (s *barecatSink) addLink(shard int, r *dataset.Row, p string, f barecat.File) error {
	n, err := s.w.AddLink(f, string(r.Linkname))
	if errors.Is(err, barecat.ErrMissingFile) || errors.Is(err, barecat.ErrInvalidPath) {
		return fmt.Errorf("%s: offset %d: %q to %q: %w", s.src.Paths[shard], r.Offset, p, r.Linkname, tbl.ErrHardlinkTarget)
	}
	if err != nil {
		return s.addErr(p, shard, r, err)
	}
	s.stats.Hardlinks++
	s.stats.Files++
	s.stats.Bytes += n
	return nil
}

// addErr places the Writer's refusal of member r (path p).
func (s *barecatSink) addErr(p string, shard int, r *dataset.Row, err error) error {
	if errors.Is(err, barecat.ErrDuplicate) {
		return s.repeatErr(err)
	}
	return fmt.Errorf("%s: offset %d: %w", s.src.Paths[shard], r.Offset, err)
}

// repeatErr names the two members of the path the Writer refused as
// repeated (err, an ErrDuplicate): the member it was adding, or, once
// SQLite's index is what finds repeats (barecat.WriterOptions.Memory),
// one of the members before.
func (s *barecatSink) repeatErr(err error) error {
	var e *barecat.Error
	if !errors.As(err, &e) {
		return err
	}
	p := e.Name
	two, ferr := repeatMembers(s.ctx, s.src.Paths, p, s.opts)
	if ferr != nil || len(two) < 2 {
		return fmt.Errorf("%w %q (--on-duplicate first|last chooses one)", barecat.ErrDuplicatePath, p)
	}
	return fmt.Errorf("%w %q: %s offset %d and %s offset %d (--on-duplicate first|last chooses one)",
		barecat.ErrDuplicatePath, p, s.src.Paths[two[0].shard], two[0].header, s.src.Paths[two[1].shard], two[1].header)
}

// writerErr is an error of the Writer outside any member's call (a
// batch's end, Close): a repeated path is named as addErr names it.
func (s *barecatSink) writerErr(err error) error {
	if errors.Is(err, barecat.ErrDuplicate) {
		return s.repeatErr(err)
	}
	return err
}

func (s *barecatSink) addFile(f barecat.File, data occurrence) error {
	row := dataset.Row{DataFile: int(data.shard), DataOffset: data.dataOffset, Size: data.size}
	if !s.opts.Wrap {
		rd, err := s.src.OpenPayload(&row)
		if err != nil {
			return err
		}
		return s.w.Add(f, rd)
	}
	f.Shard, f.Offset = int(data.shard), data.dataOffset
	if s.opts.CRC {
		rd, err := s.src.OpenPayload(&row)
		if err != nil {
			return err
		}
		h := crc32.New(castagnoli)
		if _, err := io.Copy(h, rd); err != nil {
			return err
		}
		f.CRC32C, f.HasCRC = h.Sum32(), true
	}
	return s.w.AddExternal(f)
}

func (s *barecatSink) EndShard(int) error { return nil }

// Default metadata where a source stores none.
const (
	defaultFileMode = 0o644
	defaultDirMode  = 0o755
)

// castagnoli is CRC-32C's table: Barecat's checksum.
var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// reuseChunk is how many files ReuseTars's lister hands over at once.
const reuseChunk = 256

// ReuseStats describes ReuseTars' work.
type ReuseStats struct {
	Tars  []string         `json:"tars"`          // the tar files the shards link to, in fid order
	Files int64            `json:"files_checked"` // files of the archive checked against their members
	Index *fold.IndexStats `json:"index"`         // the index written over the tars
}

// ReuseTars indexes the tar files that a wrapped Barecat archive's shards
// link to, without writing any data: it checks that every file of the
// archive is the payload of a regular tar member (starting at the file's
// offset, of its size), then writes the TARIDX of those tars (in the
// archive's shard order) to out. The check walks the archive's files in
// address order beside the tars' members, in the same order: memory does
// not grow with the number of files.
func ReuseTars(ctx context.Context, a *barecat.Archive, out string, opts fold.IndexOptions) (*ReuseStats, error) {
	st := &ReuseStats{}
	for _, p := range a.ShardPaths() {
		real, err := filepath.EvalSymlinks(p)
		if err != nil {
			return nil, err
		}
		st.Tars = append(st.Tars, real)
	}
	if err := checkReuse(ctx, a, st, opts); err != nil {
		return nil, err
	}
	var err error
	if st.Index, err = fold.BuildIndex(ctx, st.Tars, out, opts); err != nil {
		return nil, err
	}
	return st, nil
}

// checkReuse checks that every file of a is the payload of a regular
// member of st.Tars, counting them in st.Files: the archive's files in
// address order and the tars' members, walked side by side.
func checkReuse(ctx context.Context, a *barecat.Archive, st *ReuseStats, opts fold.IndexOptions) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	files, listErr := listByAddress(ctx, a)
	c := &fileCursor{files: files}
	noMember := func(f barecat.File) error {
		return fmt.Errorf("%s: %q: no regular tar member's payload starts at offset %d of %s; the shards are not the archive's tars (convert without --reuse-tars)",
			a.IndexPath(), f.Path, f.Offset, shardName(st.Tars, f.Shard))
	}
	src := fold.NewTarShards(st.Tars, opts.Scan)
	err := dataset.Run(ctx, src, dataset.RowFunc(func(shard int, r *dataset.Row) error {
		if r.Kind != dataset.KindFile {
			return nil
		}
		for {
			f, ok := c.next()
			if !ok || f.Shard > shard || f.Shard == shard && f.Offset > r.DataOffset {
				return nil // no file here: a member no file is
			}
			if f.Shard < shard || f.Offset < r.DataOffset {
				return noMember(f) // the walk went past it
			}
			// A file under another name than its member (a hard link's,
			// made by a conversion) shares the member's bytes; the index
			// keys the member's own name.
			if f.Size != r.Size {
				return fmt.Errorf("%s: %q (%d bytes): the tar member at offset %d of %s is %q (%d bytes)",
					a.IndexPath(), f.Path, f.Size, f.Offset, st.Tars[shard], r.Name, r.Size)
			}
			st.Files++
			c.advance()
		}
	}), dataset.Options{Workers: opts.Workers})
	if err == nil {
		if f, ok := c.next(); ok {
			err = noMember(f) // past every member
		}
	}
	// Stop the lister and wait for it: its error counts when the walk
	// had none.
	cancel()
	for range files {
	}
	if lerr := <-listErr; err == nil && lerr != nil {
		err = lerr
	}
	return err
}

// listByAddress lists a's files in address order, from a goroutine of its
// own, reuseChunk at a time; the channel of files closes at the end, and
// then the lister's error (nil, or ctx's once canceled) arrives on the
// other.
func listByAddress(ctx context.Context, a *barecat.Archive) (<-chan []barecat.File, <-chan error) {
	files := make(chan []barecat.File, 4)
	listErr := make(chan error, 1)
	go func() {
		defer close(files)
		var chunk []barecat.File
		send := func() error {
			select {
			case files <- chunk:
				chunk = nil
				return nil
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		err := a.Files(ctx, barecat.ByAddress, func(f barecat.File) error {
			if chunk = append(chunk, f); len(chunk) == reuseChunk {
				return send()
			}
			return nil
		})
		if err == nil && len(chunk) > 0 {
			err = send()
		}
		listErr <- err
	}()
	return files, listErr
}

// fileCursor reads the chunks of files one file at a time.
type fileCursor struct {
	files   <-chan []barecat.File
	pending []barecat.File
}

// next is the current file, false after the last.
func (c *fileCursor) next() (barecat.File, bool) {
	for len(c.pending) == 0 {
		chunk, ok := <-c.files
		if !ok {
			return barecat.File{}, false
		}
		c.pending = chunk
	}
	return c.pending[0], true
}

// advance moves past the current file.
func (c *fileCursor) advance() { c.pending = c.pending[1:] }

// shardName names shard n of tars, or says there is none.
func shardName(tars []string, n int) string {
	if n >= 0 && n < len(tars) {
		return tars[n]
	}
	return fmt.Sprintf("shard %d (the archive has %d)", n, len(tars))
}
