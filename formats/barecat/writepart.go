package barecat

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"maps"
	"os"
	"path/filepath"

	"github.com/itarconv/itarconv/dataset"
	"github.com/itarconv/itarconv/internal/filecopy"
	"github.com/itarconv/itarconv/internal/human"
	"github.com/itarconv/itarconv/internal/mapped"
	"github.com/itarconv/itarconv/internal/syswrite"
)

// PartStats describes the part WritePart wrote: what its rows contribute,
// before the merge decides what the whole makes of them (a directory
// given in two parts is one directory; a path in two is an error).
type PartStats struct {
	Dir     string           `json:"dir"`
	Rows    int64            `json:"rows"`  // files and directories recorded
	Files   int64            `json:"files"` // of which files
	Bytes   int64            `json:"bytes"` // the files' bytes
	Shards  int              `json:"shards"`
	Skipped map[string]int64 `json:"skipped"` // rows not written, by kind
}

// WritePart writes one task's part of a partitioned run into dir, an
// empty directory the caller made: what MergeParts needs to join this
// task's rows (a contiguous share of the whole dataset's rows, in order)
// with the other tasks' into the archive WriteRows writes over all rows,
// but for where its shards are cut.
//
// The part's local shards are final shards of the archive: its files'
// bytes as they will lie there (CRC-32C computed, cut where WriteRows
// would cut them were this share the whole dataset), which the merge
// links into place unchanged; the rows file holds every file and
// directory row with its metadata. What depends on the other parts
// (duplicate paths, the directories' counts) is decided by MergeParts. Rows that WriteRows refuses whatever the
// other parts hold (a path that cannot be normalized, a file larger than
// opts.ShardSize) are refused here. On error, dir is left empty.
func WritePart(ctx context.Context, src dataset.PayloadSource, dir string, opts RowsOptions) (*PartStats, error) {
	if opts.ShardSize < 0 {
		return nil, fmt.Errorf("barecat: negative shard size limit %d", opts.ShardSize)
	}
	s := &partSink{src: src, dir: dir, limit: opts.ShardSize,
		stats: &PartStats{Dir: dir, Skipped: map[string]int64{}}}
	if s.limit == 0 {
		s.limit = UnlimitedShardSize
	}
	s.regions, _ = src.(dataset.FileRegions)
	if s.regions == nil {
		s.files, _ = src.(dataset.ShardFiles)
	}
	rows, err := os.OpenFile(filepath.Join(dir, partRowsName), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return nil, err
	}
	s.rowsFile = rows
	s.made = append(s.made, rows.Name())
	s.rows = newPartWriter(rows, opts.ShardSize)
	err = dataset.Run(ctx, src, s, dataset.Options{Workers: opts.Workers, Progress: opts.Progress})
	if err == nil {
		err = s.finish()
	}
	if err != nil {
		s.abort()
		return nil, err
	}
	s.stats.Shards = len(s.rows.sum.shards)
	s.stats.Rows, s.stats.Files, s.stats.Bytes = s.rows.sum.records, s.rows.sum.files, s.rows.sum.bytes
	maps.Copy(s.stats.Skipped, s.rows.sum.skipped)
	return s.stats, nil
}

// partSink writes a part: local shards and the rows file.
type partSink struct {
	src     dataset.PayloadSource
	regions dataset.FileRegions
	files   dataset.ShardFiles // where regions is nil: tar shards, payloads in place
	dir     string
	limit   int64
	stats   *PartStats

	rowsFile *os.File
	rows     *partWriter
	made     []string // files created, removed on error

	cur *os.File // the local shard being written
	// handed is how much of cur was handed to the system's writeback as
	// it grew: the sync that closes it then waits for the tail only.
	handed int64
	ow     *io.OffsetWriter
	bw     *bufio.Writer
	size   int64   // bytes in cur, buffered included
	run    copyRun // files lying one after the other in a source file, not yet copied
}

// partPrep is what Prepare computed for a row: its CRC-32C, where its
// bytes came in the row; and where they lie in a file, if they do.
type partPrep struct {
	crc  uint32
	ok   bool
	src  *os.File
	off  int64
	file bool
	// inShard: the bytes lie in the batch's shard, in its span (see
	// partBatch), else the row holds them.
	inShard bool
}

// partBatch is what Prepare leaves for Write: each row's partPrep, and
// the span [lo, hi) of the batch's shard their bytes lie in (lo < 0: none
// mapped). Prepare maps it to checksum them and unmaps it; Write maps it
// again to write them: a batch waiting for the writer holds no pages.
type partBatch struct {
	prep   []partPrep
	lo, hi int64
	shard  string // the shard file's name, for messages
}

// Prepare computes, on the workers, the CRC-32C of every file whose bytes
// the row holds, or that lie in a file of the source's (FileRegions): the
// writer then has the kernel copy them and reads nothing itself. Tar
// shards' payloads are mapped (mapShard), their CRC-32C computed there,
// and the writer writes them from the mapping.
func (s *partSink) Prepare(b *dataset.Batch) error {
	pb := &partBatch{lo: -1}
	b.Prep = pb
	if s.files != nil {
		return s.mapShard(b, pb)
	}
	var prep []partPrep
	var inFile []int // rows whose bytes are read from their file here
	for i := range b.Rows {
		r := &b.Rows[i]
		if r.Kind != dataset.KindFile {
			continue
		}
		inline := r.Inline != nil && int64(len(r.Inline)) == r.Size
		if !inline && (r.Inline != nil || r.Size == 0 || s.regions == nil) {
			continue
		}
		if prep == nil {
			prep = make([]partPrep, len(b.Rows))
		}
		p := &prep[i]
		if s.regions != nil {
			p.src, p.off, p.file = s.regions.PayloadFile(r)
		}
		if inline {
			p.crc, p.ok = crc32.Checksum(r.Inline, castagnoli), true
		} else if p.file {
			inFile = append(inFile, i)
		}
	}
	pb.prep = prep
	if len(inFile) > 0 {
		return s.fileCRCs(b, prep, inFile)
	}
	return nil
}

// mapShard maps the span of the batch's shard its payloads lie in (where
// it is at most maxCRCSpan: else the writer reads them) and computes their
// CRC-32C there, and that of the payloads the rows hold.
func (s *partSink) mapShard(b *dataset.Batch, pb *partBatch) error {
	lo, hi := int64(-1), int64(0)
	for i := range b.Rows {
		r := &b.Rows[i]
		if r.Kind == dataset.KindFile && r.Inline == nil && r.Size > 0 {
			if lo < 0 {
				lo = r.DataOffset
			}
			lo, hi = min(lo, r.DataOffset), max(hi, r.DataOffset+r.Size)
		}
	}
	var region *mapped.Region
	if lo >= 0 && hi-lo <= maxCRCSpan {
		var err error
		if region, pb.shard, err = s.mapSpan(b.Shard, lo, hi); err != nil {
			return err
		}
		if region != nil {
			pb.lo, pb.hi = lo, hi
		}
	}
	defer region.Close()
	pb.prep = make([]partPrep, len(b.Rows))
	var at int
	err := mapped.Guard(func() error {
		for i := range b.Rows {
			r, p := &b.Rows[i], &pb.prep[i]
			at = i
			switch {
			case r.Kind != dataset.KindFile:
			case r.Inline != nil && int64(len(r.Inline)) == r.Size:
				p.crc, p.ok = crc32.Checksum(r.Inline, castagnoli), true
			case r.Inline == nil && r.Size > 0 && region != nil:
				p.crc, p.ok = crc32.Checksum(region.Bytes(r.DataOffset, r.Size), castagnoli), true
				p.inShard = true
			}
		}
		return nil
	})
	if errors.Is(err, mapped.ErrGone) {
		r := &b.Rows[at]
		err = fmt.Errorf("%s: %s, data at offset %d: %w", pb.shard, human.NameBytes(r.Name), r.DataOffset, err)
	}
	return err
}

// mapSpan maps [lo, hi) of a shard's file; nil where it cannot be mapped.
func (s *partSink) mapSpan(shard int, lo, hi int64) (*mapped.Region, string, error) {
	f, err := s.files.ShardFile(shard)
	if err != nil {
		return nil, "", err
	}
	defer f.Close() // the mapping stays
	region, err := mapped.Map(f, lo, hi-lo)
	if err != nil && !errors.Is(err, mapped.ErrUnsupported) {
		return nil, f.Name(), err
	}
	return region, f.Name(), nil
}

// fileCRCs computes the CRC-32C of the rows at idx from the files their
// bytes lie in: mapped, the span of a batch's rows of one file at once,
// else read.
func (s *partSink) fileCRCs(b *dataset.Batch, prep []partPrep, idx []int) error {
	var buf []byte
	for len(idx) > 0 {
		f := prep[idx[0]].src
		k := 1
		lo, hi := prep[idx[0]].off, prep[idx[0]].off+b.Rows[idx[0]].Size
		for k < len(idx) && prep[idx[k]].src == f {
			l, h := min(lo, prep[idx[k]].off), max(hi, prep[idx[k]].off+b.Rows[idx[k]].Size)
			if h-l > maxCRCSpan {
				break
			}
			lo, hi = l, h
			k++
		}
		rows := idx[:k]
		idx = idx[k:]
		region, err := mapped.Map(f, lo, hi-lo)
		if err != nil && !errors.Is(err, mapped.ErrUnsupported) {
			return err
		}
		var at int
		err = mapped.Guard(func() error {
			for _, i := range rows {
				at = i
				p, r := &prep[i], &b.Rows[i]
				if region != nil {
					p.crc = crc32.Checksum(region.Bytes(p.off, r.Size), castagnoli)
				} else if p.crc, buf, err = readCRC(f, p.off, r.Size, buf); err != nil {
					return err
				}
				p.ok = true
			}
			return nil
		})
		if region != nil {
			region.Close()
		}
		if errors.Is(err, mapped.ErrGone) {
			r := &b.Rows[at]
			err = fmt.Errorf("%s: %s, data at offset %d: %w", f.Name(), human.NameBytes(r.Name), prep[at].off, err)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// maxCRCSpan bounds what fileCRCs maps at once.
const maxCRCSpan = 64 << 20

// readCRC reads n bytes at off of f through buf and returns their
// CRC-32C (and buf, grown).
func readCRC(f *os.File, off, n int64, buf []byte) (uint32, []byte, error) {
	if buf == nil {
		buf = make([]byte, copyBufSize)
	}
	var crc uint32
	for done := int64(0); done < n; {
		k := min(n-done, int64(len(buf)))
		got, err := f.ReadAt(buf[:k], off+done)
		if int64(got) < k {
			if err == nil || err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return 0, buf, fmt.Errorf("%s: reading %d bytes at %d: %w", f.Name(), k, off+done, err)
		}
		crc = crc32.Update(crc, castagnoli, buf[:k])
		done += k
	}
	return crc, buf, nil
}

func (s *partSink) EndShard(int) error { return nil }

func (s *partSink) Write(b *dataset.Batch) error {
	pb, _ := b.Prep.(*partBatch)
	if pb == nil {
		pb = &partBatch{}
	}
	var region *mapped.Region
	if pb.lo >= 0 {
		var err error
		if region, _, err = s.mapSpan(b.Shard, pb.lo, pb.hi); err != nil {
			return err
		}
		if region == nil {
			return fmt.Errorf("%s: mapped to be checksummed, cannot be mapped again", pb.shard)
		}
		defer region.Close()
	}
	var at int
	err := mapped.Guard(func() error { return s.write(b, pb.prep, region, &at) })
	if errors.Is(err, mapped.ErrGone) {
		r := &b.Rows[at]
		err = fmt.Errorf("%s: %s, data at offset %d: %w", pb.shard, human.NameBytes(r.Name), r.DataOffset, err)
	}
	if err == nil && fsync && s.cur != nil && s.size-s.handed >= writebackChunk {
		if err = s.bw.Flush(); err == nil {
			startWriteback(s.cur, s.handed, s.size-s.handed)
			s.handed = s.size
		}
	}
	return err
}

// write is Write's loop over the rows, at the one being written; region
// maps the batch's span of its shard.
func (s *partSink) write(b *dataset.Batch, prep []partPrep, region *mapped.Region, at *int) error {
	for i := range b.Rows {
		*at = i
		r := &b.Rows[i]
		if r.Kind != dataset.KindFile && r.Kind != dataset.KindDir {
			s.rows.sum.skipped[r.Kind.String()]++
			continue
		}
		where := func(err error) error {
			return fmt.Errorf("%s: %s: %w", s.src.ShardName(b.Shard), human.NameBytes(r.Name), err)
		}
		p, err := NormalizePath(string(r.Name))
		if err != nil {
			return where(err)
		}
		if r.Kind == dataset.KindDir {
			if err := s.rows.dir(RowDir(p, r)); err != nil {
				return err
			}
			continue
		}
		f := RowFile(p, r)
		if p == "" {
			return where(newErr(s.dir, f.Path, ErrInvalidPath, "the root directory cannot be a file"))
		}
		if f.Size < 0 {
			return where(newErr(s.dir, p, ErrCorrupt, "negative size %d", f.Size))
		}
		if f.Size > s.limit {
			return where(newErr(s.dir, p, ErrTooLarge, "%d bytes; shard size limit %d", f.Size, s.limit))
		}
		if s.cur == nil || s.size > 0 && f.Size > s.limit-s.size {
			if err := s.newShard(); err != nil {
				return err
			}
		}
		var pp partPrep
		if prep != nil {
			pp = prep[i]
		}
		switch {
		case pp.file && pp.ok:
			err = s.copyFrom(pp.src, pp.off, f.Size)
			f.CRC32C = pp.crc
		case pp.ok:
			err = s.flushRun()
			if err == nil && pp.inShard {
				_, err = s.bw.Write(region.Bytes(r.DataOffset, r.Size))
			} else if err == nil {
				_, err = s.bw.Write(r.Inline)
			}
			f.CRC32C = pp.crc
		default:
			f.CRC32C, err = s.copyReader(r, p)
		}
		if err != nil {
			return where(err)
		}
		s.size += f.Size
		if err := s.rows.file(f); err != nil {
			return err
		}
	}
	// The source's files need not stay open past the batch.
	return s.flushRun()
}

// copyFrom has the kernel copy n bytes at off of src to the end of the
// local shard, joining them to the run before when they follow it in src.
func (s *partSink) copyFrom(src *os.File, off, n int64) error {
	c := &s.run
	if c.n > 0 && (c.src != src || c.srcOff+c.n != off) {
		if err := s.flushRun(); err != nil {
			return err
		}
	}
	if c.n == 0 {
		if err := s.bw.Flush(); err != nil {
			return err
		}
		*c = copyRun{src: src, srcOff: off, off: s.size}
	}
	c.n += n
	return nil
}

// flushRun copies the pending run.
func (s *partSink) flushRun() error {
	c := s.run
	if c.n == 0 {
		return nil
	}
	s.run = copyRun{}
	if _, err := filecopy.Range(s.cur, c.off, c.src, c.srcOff, c.n); err != nil {
		return err
	}
	_, err := s.ow.Seek(c.off+c.n, io.SeekStart)
	return err
}

// copyReader copies a row's bytes that the row does not hold whole (read
// through OpenPayload, or Inline of another length than the row's size,
// which WriteRows reads up to the size), and returns their CRC-32C.
func (s *partSink) copyReader(r *dataset.Row, p string) (uint32, error) {
	if err := s.flushRun(); err != nil {
		return 0, err
	}
	var rd io.Reader = bytes.NewReader(r.Inline)
	if r.Inline == nil && r.Size > 0 {
		var err error
		if rd, err = s.src.OpenPayload(r); err != nil {
			return 0, err
		}
		if c, ok := rd.(io.Closer); ok {
			defer c.Close()
		}
	}
	h := crc32.New(castagnoli)
	n, err := io.CopyN(io.MultiWriter(s.bw, h), rd, r.Size)
	if err == io.EOF {
		return 0, newErr(s.dir, p, ErrShortData, "%d of %d bytes", n, r.Size)
	}
	if err != nil {
		return 0, fmt.Errorf("%s: reading the data of %s: %w", s.dir, human.Name(p), err)
	}
	return h.Sum32(), nil
}

// newShard closes the current local shard and starts the next.
func (s *partSink) newShard() error {
	if err := s.closeShard(); err != nil {
		return err
	}
	if len(s.rows.sum.shards) >= maxShards {
		return newErr(s.dir, "", ErrTooLarge, "more than %d shards", maxShards)
	}
	name := filepath.Join(s.dir, partShardName(len(s.rows.sum.shards)))
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	s.made = append(s.made, name)
	s.cur, s.size, s.handed = f, 0, 0
	s.ow = io.NewOffsetWriter(syswrite.File{File: f}, 0)
	if s.bw == nil {
		s.bw = bufio.NewWriterSize(s.ow, syswrite.MaxWrite)
	} else {
		s.bw.Reset(s.ow)
	}
	return s.rows.shard()
}

// closeShard writes out, syncs and closes the current local shard: the
// merge, perhaps on another machine, links or copies it later.
func (s *partSink) closeShard() error {
	if s.cur == nil {
		return nil
	}
	f := s.cur
	err := s.flushRun() // into s.cur: the run is this shard's
	if err == nil {
		err = s.bw.Flush()
	}
	s.cur = nil
	if err == nil && fsync {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

func (s *partSink) finish() error {
	if err := s.closeShard(); err != nil {
		return err
	}
	if err := s.rows.close(); err != nil {
		return err
	}
	f := s.rowsFile
	s.rowsFile = nil
	var err error
	if fsync {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		syncDir(s.dir)
	}
	return err
}

// abort removes what WritePart made, leaving dir as it found it.
func (s *partSink) abort() {
	if s.cur != nil {
		s.cur.Close()
	}
	if s.rowsFile != nil {
		s.rowsFile.Close()
	}
	for _, p := range s.made {
		os.Remove(p)
	}
}
