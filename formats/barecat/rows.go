package barecat

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/itarconv/itarconv/dataset"
)

// Source reads a Barecat archive as rows: directories that carry
// metadata or are empty (the others are implied by their files), then
// files, in path order or in address order (shard, offset: the fast path,
// reading each shard front to back). One goroutine lists the files from
// the index and cuts them into chunks; the workers take the chunks in turn
// and check every crc32c on the bytes where they lie (mapped shards, see
// ViewFiles), so the single writer only writes, and the bytes are
// copied once, into the output. A Source serves one Run.
type Source struct {
	Archive *Archive
	Order   Order
	// NoData lists the rows without their bytes (a pass that only counts
	// or names them); OpenPayload still reads any one.
	NoData bool

	once  sync.Once
	start sync.Once
	n     int // chunks
	// chunks holds chunk i's channel, sent once by the lister, from when
	// the lister or a Scan first needs it until the Scan takes it: a few
	// at a time (the lister runs at most barecatAhead chunks ahead), not
	// one for each chunk of the archive.
	chunksMu sync.Mutex
	chunks   map[int]chan fileChunk
	ahead    chan struct{}   // bounds how far the lister runs ahead
	run      context.Context // the Run the lister serves
	err      error

	held dataset.Held // the mappings of batches not yet written
	// from is the chunk the lister starts at: the first one a Scan asked
	// for. A Run over a slice of the chunks (dataset.Slice, one task of a
	// partitioned run) never asks for those before its own, so the lister
	// must not wait for them to be taken.
	from int
}

// fileChunk is a run of files in the source's order, or the error that
// ended the listing.
type fileChunk struct {
	files []File
	err   error
}

// Chunks of files: small enough that the workers take turns within the
// engine's window, large enough that a chunk is cheap to hand over. The
// lister stays at most barecatAhead chunks ahead of the workers. Files
// larger than maxInline are read by the writer instead of held in memory
// (where shards cannot be mapped).
const (
	barecatChunk = 256
	barecatAhead = 8
	maxInline    = 16 << 20
)

func (s *Source) init() {
	s.once.Do(func() {
		n, err := s.Archive.NumFiles()
		if err != nil {
			s.err = err
			return
		}
		s.n = max(1, int((n+barecatChunk-1)/barecatChunk))
		s.chunks = make(map[int]chan fileChunk)
		s.ahead = make(chan struct{}, barecatAhead)
	})
}

// list reads the files table once, in order, from chunk s.from on, and
// hands it out in chunks. The last chunk takes whatever is left, should
// the table have grown since it was counted.
func (s *Source) list(ctx context.Context) {
	next := s.from
	send := func(c fileChunk) bool {
		select {
		case s.ahead <- struct{}{}:
		case <-ctx.Done():
			return false
		}
		s.chunk(next, false) <- c
		next++
		return true
	}
	var files []File
	err := s.Archive.filesFrom(ctx, s.Order, int64(s.from)*barecatChunk, -1, func(f File) error {
		files = append(files, f)
		if len(files) == barecatChunk && next < s.n-1 {
			if !send(fileChunk{files: files}) {
				return ctx.Err()
			}
			files = nil
		}
		return nil
	})
	if err != nil {
		files = nil
	}
	for next < s.n {
		if !send(fileChunk{files: files, err: err}) {
			return
		}
		files = nil
	}
}

// readChunk reads one chunk before s.from by itself: a worker that took
// its chunk before another asked later than it. Rare (only within the
// engine's window of shards started together), so a query of its own.
func (s *Source) readChunk(ctx context.Context, shard int) fileChunk {
	limit := int64(barecatChunk)
	if shard == s.n-1 {
		limit = -1
	}
	var c fileChunk
	c.err = s.Archive.filesFrom(ctx, s.Order, int64(shard)*barecatChunk, limit, func(f File) error {
		c.files = append(c.files, f)
		return nil
	})
	return c
}

// chunk returns chunk i's channel, made by whichever of the lister and
// the Scan asks first; done drops it, once the Scan has taken the chunk.
func (s *Source) chunk(i int, done bool) chan fileChunk {
	s.chunksMu.Lock()
	defer s.chunksMu.Unlock()
	if done {
		delete(s.chunks, i)
		return nil
	}
	c := s.chunks[i]
	if c == nil {
		c = make(chan fileChunk, 1)
		s.chunks[i] = c
	}
	return c
}

func (s *Source) NumShards() int {
	s.init()
	return s.n
}

func (s *Source) ShardName(shard int) string {
	return fmt.Sprintf("%s (files from %d)", s.Archive.IndexPath(), shard*barecatChunk)
}

// Default metadata where the archive stores NULL.
const (
	defaultFileMode = 0o644
	defaultDirMode  = 0o755
)

func (s *Source) Scan(ctx context.Context, shard int, emit func([]dataset.Row) error) error {
	if s.init(); s.err != nil {
		return s.err
	}
	s.start.Do(func() {
		s.run, s.from = ctx, shard
		go s.list(ctx)
	})
	if ctx != s.run {
		// The lister hands each chunk out once, to the first Run.
		return errors.New("barecat: a Source serves one Run; make another for the next")
	}
	var rows []dataset.Row
	if shard == 0 {
		// A tar cannot hold a path as both a directory and a file: the
		// archive is refused before anything is written.
		if err := s.Archive.CheckClash(ctx); err != nil {
			return err
		}
		// Directories first, parents before children (path order): a
		// tar extracts them before the files that land in them. They go
		// in batches of their own as they are read: an archive may have
		// as many as it has files.
		err := s.Archive.Dirs(ctx, func(d Dir) error {
			if err := s.Archive.CheckDir(d); err != nil {
				return err
			}
			if d.Path == "" || !(d.HasMode || d.HasUID || d.HasGID || d.HasMtime || d.NumSubdirs+d.NumFiles == 0) {
				return nil
			}
			r := dataset.Row{Name: []byte(d.Path + "/"), Kind: dataset.KindDir, Mode: defaultDirMode, Offset: -1}
			setMeta(&r, d.Mode, d.HasMode, d.UID, d.HasUID, d.GID, d.HasGID, d.MtimeNs, d.HasMtime)
			if rows = append(rows, r); len(rows) == barecatChunk {
				err := emit(rows)
				rows = nil
				return err
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	var c fileChunk
	if shard < s.from {
		c = s.readChunk(ctx, shard)
	} else {
		select {
		case c = <-s.chunk(shard, false):
			s.chunk(shard, true)
			<-s.ahead
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	if c.err != nil {
		return c.err
	}
	var held []File // read here, on the worker
	var heldRows []int
	for _, f := range c.files {
		// Metadata a tar header would carry wrong (a negative uid, a mode
		// whose low bits would be taken for permissions) is refused, not
		// cut to fit.
		if err := s.Archive.CheckFile(f); err != nil {
			return err
		}
		r := dataset.Row{Name: []byte(f.Path), Kind: dataset.KindFile, Size: f.Size, Mode: defaultFileMode,
			DataFile: f.Shard, Offset: -1, DataOffset: f.Offset, Checksum: f.CRC32C, HasChecksum: f.HasCRC}
		setMeta(&r, f.Mode, f.HasMode, f.UID, f.HasUID, f.GID, f.HasGID, f.MtimeNs, f.HasMtime)
		if f.Size <= maxInline {
			held, heldRows = append(held, f), append(heldRows, len(rows))
		}
		rows = append(rows, r)
	}
	if s.NoData {
		held = nil
	}
	views, err := s.Archive.ViewFiles(held)
	if err != nil {
		return err
	}
	for k, i := range heldRows[:len(held)] {
		rows[i].Inline = views.Data[k]
	}
	return s.held.Emit(rows, views, emit)
}

// Release gives back the mapped bytes of a written batch.
func (s *Source) Release(b *dataset.Batch) {
	s.held.Release(b)
}

func setMeta(r *dataset.Row, mode int64, hasMode bool, uid int64, hasUID bool, gid int64, hasGID bool, mtimeNs int64, hasMtime bool) {
	if hasMode {
		r.Mode = mode & 0o7777
	}
	if hasUID {
		r.UID = uid
	}
	if hasGID {
		r.GID = gid
	}
	if hasMtime {
		r.ModTime, r.ModTimeNsec = mtimeNs/1e9, int32(mtimeNs%1e9)
		if r.ModTimeNsec < 0 {
			r.ModTime, r.ModTimeNsec = r.ModTime-1, r.ModTimeNsec+1e9
		}
	}
}

// OpenPayload reads a file's bytes; a CRC-32C mismatch is the reader's
// error at the end of the file.
func (s *Source) OpenPayload(r *dataset.Row) (io.Reader, error) {
	return s.Archive.Open(File{Path: string(r.Name), Shard: r.DataFile, Offset: r.DataOffset,
		Size: r.Size, CRC32C: r.Checksum, HasCRC: r.HasChecksum})
}

// Held is the number of batches whose mapped bytes are not yet released:
// zero once a Run is over.
func (s *Source) Held() int { return s.held.Len() }
