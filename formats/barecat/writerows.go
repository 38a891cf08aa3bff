package barecat

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"

	"github.com/itarconv/itarconv/dataset"
	"github.com/itarconv/itarconv/internal/human"
)

// ErrDuplicatePath: two rows of the source have the same path.
var ErrDuplicatePath = errors.New("duplicate path")

// RowsOptions tune WriteRows.
type RowsOptions struct {
	ShardSize int64 // roll shards over past this size (0: never)
	// Overwrite replaces an archive already at the output, once the new
	// one is complete; without it an existing archive is refused.
	Overwrite bool
	Workers   int
	// Memory is the Writer's budget (WriterOptions.Memory; 0: DefaultMemory).
	Memory   int64
	Progress func(dataset.Progress)
}

// RowsStats describes an archive WriteRows wrote.
type RowsStats struct {
	Output  string           `json:"output"`
	Files   int64            `json:"files"`
	Dirs    int64            `json:"dirs"`
	Bytes   int64            `json:"bytes"`
	Skipped map[string]int64 `json:"skipped"` // rows not written, by kind
	Shards  int              `json:"shards"`
}

// RowFile is the file a row becomes at path p, with the row's metadata.
func RowFile(p string, r *dataset.Row) File {
	return File{
		Path: p, Size: r.Size,
		Mode: r.Mode & 0o7777, HasMode: true,
		UID: r.UID, HasUID: true, GID: r.GID, HasGID: true,
		MtimeNs: r.ModTime*1e9 + int64(r.ModTimeNsec), HasMtime: true,
	}
}

// RowDir is the directory a row names, at its normalized path p.
func RowDir(p string, r *dataset.Row) Dir {
	return Dir{Path: p, Mode: r.Mode & 0o7777, HasMode: true, UID: r.UID, HasUID: true,
		GID: r.GID, HasGID: true, MtimeNs: r.ModTime*1e9 + int64(r.ModTimeNsec), HasMtime: true}
}

// WriteRows writes any source into a new Barecat archive at out, in one pass:
// every file row becomes a file (its bytes from the row, or read by the
// writer through OpenPayload), directories keep their metadata, links and
// other kinds are counted in Skipped. A path given twice is refused
// (ErrDuplicatePath). Tar shards have their own converter, TarToBarecat,
// with duplicate policies, hard links and --wrap.
func WriteRows(ctx context.Context, src dataset.PayloadSource, out string, opts RowsOptions) (*RowsStats, error) {
	w, err := CreateContext(ctx, out, WriterOptions{ShardSizeLimit: opts.ShardSize, Overwrite: opts.Overwrite, Memory: opts.Memory})
	if err != nil {
		return nil, err
	}
	sink := &rowsSink{w: w, src: src, stats: &RowsStats{Output: out, Skipped: map[string]int64{}}}
	sink.regions, _ = src.(dataset.FileRegions)
	if err := dataset.Run(ctx, src, sink, dataset.Options{Workers: opts.Workers, Progress: opts.Progress}); err != nil {
		w.Abort()
		return nil, err
	}
	sink.stats.Shards = w.NumShards()
	if err := w.Close(); err != nil {
		if errors.Is(err, ErrDuplicate) {
			err = repeatedErr(err, "", out)
		}
		return nil, err
	}
	return sink.stats, nil
}

type rowsSink struct {
	w       *Writer
	src     dataset.PayloadSource
	regions dataset.FileRegions // src, where its bytes may lie as they are in a file
	stats   *RowsStats
}

// copied is a row whose bytes the kernel copies from src at off: Prepare
// computed their CRC-32C from the row's bytes.
type copied struct {
	src *os.File
	off int64
	crc uint32
	ok  bool
}

// Prepare computes, on the workers, the CRC-32C of each row whose bytes
// lie as they are in a file, so that the writer has the kernel copy them
// (Writer.AddCopy) rather than copy them through this process.
func (s *rowsSink) Prepare(b *dataset.Batch) error {
	if s.regions == nil {
		return nil
	}
	var prep []copied
	for i := range b.Rows {
		r := &b.Rows[i]
		if r.Kind != dataset.KindFile || r.Inline == nil || int64(len(r.Inline)) != r.Size {
			continue
		}
		f, off, ok := s.regions.PayloadFile(r)
		if !ok {
			continue
		}
		if prep == nil {
			prep = make([]copied, len(b.Rows))
		}
		prep[i] = copied{src: f, off: off, crc: crc32.Checksum(r.Inline, castagnoli), ok: true}
	}
	b.Prep = prep
	return nil
}

func (s *rowsSink) EndShard(int) error { return nil }

func (s *rowsSink) Write(b *dataset.Batch) error {
	for i := range b.Rows {
		r := &b.Rows[i]
		if r.Kind != dataset.KindFile && r.Kind != dataset.KindDir {
			s.stats.Skipped[r.Kind.String()]++
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
			if err := s.w.AddDir(RowDir(p, r)); err != nil && !errors.Is(err, ErrDuplicate) {
				return where(err)
			} else if err == nil {
				s.stats.Dirs++
			}
			continue
		}
		if prep, _ := b.Prep.([]copied); prep != nil && prep[i].ok {
			c := prep[i]
			err := s.w.AddCopy(RowFile(p, r), c.src, c.off, c.crc)
			if errors.Is(err, ErrDuplicate) {
				return repeatedErr(err, p, s.src.ShardName(b.Shard))
			}
			if err != nil {
				return where(err)
			}
			s.stats.Files++
			s.stats.Bytes += r.Size
			continue
		}
		var rd io.Reader = bytes.NewReader(r.Inline)
		if r.Inline == nil && r.Size > 0 {
			if rd, err = s.src.OpenPayload(r); err != nil {
				return where(err)
			}
		}
		err = s.w.Add(RowFile(p, r), rd)
		if c, ok := rd.(io.Closer); ok {
			c.Close()
		}
		if errors.Is(err, ErrDuplicate) {
			return repeatedErr(err, p, s.src.ShardName(b.Shard))
		}
		if err != nil {
			return where(err)
		}
		s.stats.Files++
		s.stats.Bytes += r.Size
	}
	return nil
}

// repeatedErr is the ErrDuplicatePath of the Writer's refusal (err) of a
// repeated path while it added the file of path p from where (or, p "",
// while it closed): the path is p, unless SQLite's unique index found the
// repeat, a little after its row (WriterOptions.Memory).
func repeatedErr(err error, p, where string) error {
	var e *Error
	switch {
	case errors.As(err, &e) && e.Name != "" && p == "":
		return fmt.Errorf("%w %s: %s", ErrDuplicatePath, human.Name(e.Name), where)
	case e != nil && e.Name != "" && e.Name != p:
		return fmt.Errorf("%w %s: before %s of %s", ErrDuplicatePath, human.Name(e.Name), human.Name(p), where)
	}
	return fmt.Errorf("%w %s: %s", ErrDuplicatePath, human.Name(p), where)
}
