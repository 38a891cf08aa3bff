package dataset

import (
	"fmt"
	"io"
	"sync"
)

// ReadPayload reads a row's payload through OpenPayload, whole, and on
// past its end (EndOfPayload).
func ReadPayload(src PayloadSource, r *Row) ([]byte, error) {
	rd, err := src.OpenPayload(r)
	if err != nil {
		return nil, err
	}
	if c, ok := rd.(io.Closer); ok {
		defer c.Close()
	}
	data := make([]byte, r.Size)
	if _, err := io.ReadFull(rd, data); err != nil {
		return nil, err
	}
	return data, EndOfPayload(rd)
}

// EndOfPayload reads on past a payload's last byte: a reader that checks
// a checksum says so there (PayloadSource), and more bytes than the row's
// size are an error.
func EndOfPayload(rd io.Reader) error {
	n, err := io.Copy(io.Discard, rd)
	if err == nil && n > 0 {
		err = fmt.Errorf("%d bytes more than its size", n)
	}
	return err
}

// RowFunc is a Sink that hands each row, in dataset order, to a function:
// a listing, a count, a search by name.
type RowFunc func(shard int, r *Row) error

func (f RowFunc) Prepare(*Batch) error { return nil }
func (f RowFunc) EndShard(int) error   { return nil }
func (f RowFunc) Write(b *Batch) error {
	for i := range b.Rows {
		if err := f(b.Shard, &b.Rows[i]); err != nil {
			return err
		}
	}
	return nil
}

// Held keeps, for a source implementing Releaser, what holds each emitted
// batch's bytes (mapped input) until Run releases the batch. A batch is
// known by its first row, which the engine hands back unchanged. The zero
// Held is ready to use.
type Held struct {
	mu sync.Mutex
	m  map[*Row]interface{ Release() }
}

// Emit hands rows to the engine's emit, keeping h until they are released
// (at once if there are none).
func (s *Held) Emit(rows []Row, h interface{ Release() }, emit func([]Row) error) error {
	if len(rows) == 0 {
		h.Release()
		return nil
	}
	s.mu.Lock()
	if s.m == nil {
		s.m = map[*Row]interface{ Release() }{}
	}
	s.m[&rows[0]] = h
	s.mu.Unlock()
	return emit(rows)
}

// Release releases what holds b's bytes: a Releaser's Release calls it.
func (s *Held) Release(b *Batch) {
	if len(b.Rows) == 0 {
		return
	}
	s.mu.Lock()
	h := s.m[&b.Rows[0]]
	delete(s.m, &b.Rows[0])
	s.mu.Unlock()
	if h != nil {
		h.Release()
	}
}

// Len is the number of batches held: zero once a Run is over.
func (s *Held) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.m)
}
