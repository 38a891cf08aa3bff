package fold

import (
	"archive/tar"
	"bufio"
	"context"
	"fmt"
	"io"

	"github.com/itarconv/itarconv/dataset"
	"github.com/itarconv/itarconv/formats/tarfile"

	"github.com/itarconv/itarconv/internal/human"
)

// StreamOptions tune WriteStream.
type StreamOptions struct {
	Workers  int
	Progress func(dataset.Progress)
}

// StreamStats describes a written tar stream.
type StreamStats struct {
	Members int64            `json:"members"`
	Bytes   int64            `json:"bytes"`
	Skipped map[string]int64 `json:"skipped"` // rows a tar member cannot hold, by kind
}

// WriteStream writes a source's rows to w as one tar stream, members as a
// fold's shards hold them (regular files, directories, symbolic links;
// pax headers where a name or a time needs one), then the end-of-archive
// blocks. A stream has no index: nothing can address it. Payloads pass
// through a fixed buffer, never whole in memory (unless the source put
// them in its rows).
func WriteStream(ctx context.Context, src dataset.PayloadSource, w io.Writer, opts StreamOptions) (*StreamStats, error) {
	bw := bufio.NewWriterSize(w, 1<<20)
	sink := &streamSink{src: src, tw: tar.NewWriter(bw), stats: &StreamStats{Skipped: map[string]int64{}}}
	if err := dataset.Run(ctx, src, sink, dataset.Options{Workers: opts.Workers, Progress: opts.Progress}); err != nil {
		return nil, err
	}
	if err := sink.tw.Close(); err != nil {
		return nil, fmt.Errorf("writing the tar stream: %w", err)
	}
	if err := bw.Flush(); err != nil {
		return nil, fmt.Errorf("writing the tar stream: %w", err)
	}
	return sink.stats, nil
}

type streamSink struct {
	src   dataset.PayloadSource
	tw    *tar.Writer
	stats *StreamStats
}

func (s *streamSink) Prepare(*dataset.Batch) error { return nil }
func (s *streamSink) EndShard(int) error           { return nil }

func (s *streamSink) Write(b *dataset.Batch) error {
	return guardMapped(s.src, b.Shard, func() error { return s.write(b) })
}

func (s *streamSink) write(b *dataset.Batch) error {
	for i := range b.Rows {
		r := &b.Rows[i]
		m, ok := memberOf(r)
		if !ok {
			s.stats.Skipped[r.Kind.String()]++
			continue
		}
		if err := tarfile.CheckName(m.Name); err != nil {
			return fmt.Errorf("%s: %w", s.src.ShardName(b.Shard), err)
		}
		if err := s.tw.WriteHeader(tarfile.Header(m)); err != nil {
			return fmt.Errorf("writing the tar stream: %s: %w", human.NameBytes(m.Name), err)
		}
		if m.Size > 0 {
			if err := s.copyPayload(r); err != nil {
				return fmt.Errorf("%s: %s: %w", s.src.ShardName(b.Shard), human.NameBytes(m.Name), err)
			}
		}
		s.stats.Members++
		s.stats.Bytes += m.Size
	}
	return nil
}

func (s *streamSink) copyPayload(r *dataset.Row) error {
	if r.Inline != nil {
		_, err := s.tw.Write(r.Inline)
		return err
	}
	rd, err := s.src.OpenPayload(r)
	if err != nil {
		return err
	}
	if c, ok := rd.(io.Closer); ok {
		defer c.Close()
	}
	n, err := io.Copy(s.tw, io.LimitReader(rd, r.Size))
	if err == nil && n != r.Size {
		err = fmt.Errorf("payload ended after %d of %d bytes", n, r.Size)
	}
	if err == nil {
		err = dataset.EndOfPayload(rd)
	}
	return err
}
