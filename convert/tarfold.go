package convert

import (
	"archive/tar"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"syscall"

	"github.com/itarconv/itarconv/formats/taridx"
	"github.com/itarconv/itarconv/formats/tarshard"
	"github.com/itarconv/itarconv/internal/mapped"
)

// PayloadSource is a Source whose rows carry bytes. OpenPayload is called
// from the writing goroutine, in dataset order; a reader that checks an
// integrity code returns a mismatch as its error at the end.
type PayloadSource interface {
	Source
	OpenPayload(r *Row) (io.Reader, error)
}

// FoldOptions describe a fold of tar shards to write.
type FoldOptions struct {
	Dir       string
	Fold      string // default "train"
	ShardSize int64  // default 1 GiB
	// MaxMembers, if set, also starts a new shard after that many members.
	MaxMembers int
	Workers    int
	Progress   func(Progress)
	// Index options for the fold's TARIDX, built once the shards are in place.
	Index IndexOptions
}

// FoldStats describes a written fold.
type FoldStats struct {
	Shards  []string
	Members int64
	Bytes   int64
	Skipped map[string]int64 // rows not written, by kind
	Index   *IndexStats
}

// WriteFold copies every row of src into a fold of tar shards in
// opts.Dir and indexes it as it writes (the writer knows every member's
// header offset, so the shards are not read again). Regular files,
// directories and symbolic links are written; other kinds are counted in
// Skipped. The index follows the default rules (opts.Index.Stem,
// opts.Index.Contiguous). Nothing appears under the fold's names unless the
// whole fold was written; the index comes last.
func WriteFold(ctx context.Context, src PayloadSource, opts FoldOptions) (*FoldStats, error) {
	if opts.Fold == "" {
		opts.Fold = "train"
	}
	if err := os.MkdirAll(opts.Dir, 0o755); err != nil {
		return nil, err
	}
	w, err := tarshard.Create(tarshard.Options{Dir: opts.Dir, Fold: opts.Fold, ShardSize: opts.ShardSize, MaxMembers: opts.MaxMembers})
	if err != nil {
		return nil, err
	}
	idx := filepath.Join(opts.Dir, opts.Fold+".taridx")
	x, err := taridx.Create(idx, taridx.WriterOptions{Contiguous: opts.Index.Contiguous})
	if err != nil {
		return nil, err
	}
	sink := &tarFoldSink{src: src, w: w, x: x, rules: indexRules{stem: opts.Index.Stem}, stats: &FoldStats{Skipped: map[string]int64{}}}
	if err := Run(ctx, src, sink, Options{Workers: opts.Workers, Progress: opts.Progress}); err != nil {
		w.Abort()
		x.Abort()
		return nil, err
	}
	shards, err := w.Close()
	if err != nil {
		x.Abort()
		return nil, err
	}
	ist := sink.tally.stats(idx, x)
	if err := x.Close(); err != nil {
		for _, s := range shards {
			os.Remove(s)
		}
		return nil, fmt.Errorf("indexing the new fold: %w", err)
	}
	ist.Shards, ist.Members = len(shards), sink.stats.Members
	sink.stats.Shards, sink.stats.Index = shards, ist
	return sink.stats, nil
}

type tarFoldSink struct {
	src   PayloadSource
	w     *tarshard.Writer
	x     *taridx.Writer
	rules indexRules
	tally indexTally
	stats *FoldStats
}

// foldEntry is a row's index entry, worked out on a worker; its place in
// the fold is known only once the writer has written it.
type foldEntry struct {
	e  taridx.Entry
	sk skip
	ok bool
}

func (s *tarFoldSink) Prepare(b *Batch) error {
	p := make([]foldEntry, len(b.Rows))
	for i := range b.Rows {
		if b.Rows[i].Kind == KindFile {
			p[i].e, p[i].sk, p[i].ok = s.rules.entry(&b.Rows[i])
		}
	}
	b.Prep = p
	return nil
}

func (s *tarFoldSink) Write(b *Batch) error {
	// Payloads may be mapped input (see Releaser): bytes a shrunk input
	// lost fault when copied, or make the system refuse them.
	err := mapped.Guard(func() error { return s.write(b) })
	if errors.Is(err, mapped.ErrGone) || errors.Is(err, syscall.EFAULT) {
		return fmt.Errorf("%s: %w", s.src.ShardName(b.Shard), mapped.ErrGone)
	}
	return err
}

func (s *tarFoldSink) write(b *Batch) error {
	prep := b.Prep.([]foldEntry)
	for i := range b.Rows {
		r := &b.Rows[i]
		m := tarshard.Member{
			Name: string(r.Name), Linkname: string(r.Linkname),
			Mode: r.Mode, UID: r.UID, GID: r.GID, ModTime: r.ModTime, ModTimeNsec: r.ModTimeNsec,
		}
		var data io.Reader
		switch r.Kind {
		case KindFile:
			m.Typeflag, m.Size = tar.TypeReg, r.Size
			if r.Inline != nil {
				break
			}
			p, err := s.src.OpenPayload(r)
			if err != nil {
				return err
			}
			data = p
		case KindDir:
			m.Typeflag = tar.TypeDir
		case KindSymlink:
			m.Typeflag = tar.TypeSymlink
		default:
			s.stats.Skipped[r.Kind.String()]++
			continue
		}
		var loc tarshard.Location
		var err error
		if data == nil {
			// The payload is referenced until the Flush below.
			loc, err = s.w.AddBytes(m, r.Inline)
		} else {
			loc, err = s.w.Add(m, data)
		}
		if err != nil {
			return fmt.Errorf("writing %s: %w", s.src.ShardName(b.Shard), err)
		}
		if c, ok := data.(io.Closer); ok {
			if err := c.Close(); err != nil {
				return err
			}
		}
		s.stats.Members++
		s.stats.Bytes += m.Size
		if r.Kind != KindFile {
			s.tally.skipped(skip{kind: r.Kind})
			continue
		}
		if !prep[i].ok {
			s.tally.skipped(prep[i].sk)
			continue
		}
		if loc.Shard >= taridx.MaxShards {
			return fmt.Errorf("%d shards: a TARIDX fid addresses at most %d (raise --shard-size)", loc.Shard+1, taridx.MaxShards)
		}
		e := prep[i].e
		e.Fid, e.Offset = uint16(loc.Shard), uint64(loc.HeaderOffset)
		if err := s.x.Add(e); err != nil {
			return fmt.Errorf("indexing %q: %w", r.Name, err)
		}
		s.tally.bytes += r.Size
	}
	// The batch's memory is the source's again once Write returns.
	if err := s.w.Flush(); err != nil {
		return fmt.Errorf("writing %s: %w", s.src.ShardName(b.Shard), err)
	}
	return nil
}

func (s *tarFoldSink) EndShard(int) error { return nil }
