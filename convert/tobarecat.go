package convert

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"

	"github.com/itarconv/itarconv/formats/barecat"
)

// ToBarecat converts any source into a Barecat archive at out, in one pass:
// every file row becomes a file (its bytes from the row, or read by the
// writer through OpenPayload), directories keep their metadata, links and
// other kinds are counted in Skipped. A path given twice is refused
// (ErrDuplicatePath). Tar shards have their own converter, TarToBarecat,
// with duplicate policies, hard links and --wrap.
func ToBarecat(ctx context.Context, src PayloadSource, out string, opts BarecatOptions) (*BarecatStats, error) {
	if opts.Wrap || opts.OnDuplicate != DuplicateError {
		return nil, fmt.Errorf("wrapping and duplicate policies apply to tar shards")
	}
	w, err := barecat.Create(out, barecat.WriterOptions{ShardSizeLimit: opts.ShardSize, Overwrite: opts.Overwrite})
	if err != nil {
		return nil, err
	}
	sink := &anyBarecatSink{w: w, src: src, stats: &BarecatStats{Output: out, Skipped: map[string]int64{}}}
	sink.regions, _ = src.(FileRegions)
	if err := Run(ctx, src, sink, Options{Workers: opts.Workers, Progress: opts.Progress}); err != nil {
		w.Abort()
		return nil, err
	}
	sink.stats.Shards = w.NumShards()
	if err := w.Close(); err != nil {
		return nil, err
	}
	return sink.stats, nil
}

type anyBarecatSink struct {
	w       *barecat.Writer
	src     PayloadSource
	regions FileRegions // src, where its bytes may lie as they are in a file
	stats   *BarecatStats
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
func (s *anyBarecatSink) Prepare(b *Batch) error {
	if s.regions == nil {
		return nil
	}
	var prep []copied
	for i := range b.Rows {
		r := &b.Rows[i]
		if r.Kind != KindFile || r.Inline == nil || int64(len(r.Inline)) != r.Size {
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

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

func (s *anyBarecatSink) EndShard(int) error { return nil }

func (s *anyBarecatSink) Write(b *Batch) error {
	for i := range b.Rows {
		r := &b.Rows[i]
		if r.Kind != KindFile && r.Kind != KindDir {
			s.stats.Skipped[r.Kind.String()]++
			continue
		}
		where := func(err error) error {
			return fmt.Errorf("%s: %q: %w", s.src.ShardName(b.Shard), r.Name, err)
		}
		p, err := barecat.NormalizePath(string(r.Name))
		if err != nil {
			return where(err)
		}
		if r.Kind == KindDir {
			d := barecat.Dir{Path: p, Mode: r.Mode & 0o7777, HasMode: true, UID: r.UID, HasUID: true,
				GID: r.GID, HasGID: true, MtimeNs: r.ModTime*1e9 + int64(r.ModTimeNsec), HasMtime: true}
			if err := s.w.AddDir(d); err != nil && !errors.Is(err, barecat.ErrDuplicate) {
				return where(err)
			} else if err == nil {
				s.stats.Dirs++
			}
			continue
		}
		if prep, _ := b.Prep.([]copied); prep != nil && prep[i].ok {
			c := prep[i]
			err := s.w.AddCopy(metaFile(p, r), c.src, c.off, c.crc)
			if errors.Is(err, barecat.ErrDuplicate) {
				return fmt.Errorf("%w %q: %s", ErrDuplicatePath, p, s.src.ShardName(b.Shard))
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
		err = s.w.Add(metaFile(p, r), rd)
		if c, ok := rd.(io.Closer); ok {
			c.Close()
		}
		if errors.Is(err, barecat.ErrDuplicate) {
			return fmt.Errorf("%w %q: %s", ErrDuplicatePath, p, s.src.ShardName(b.Shard))
		}
		if err != nil {
			return where(err)
		}
		s.stats.Files++
		s.stats.Bytes += r.Size
	}
	return nil
}
