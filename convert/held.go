package convert

import "sync"

// held keeps, for a source implementing Releaser, what holds each emitted
// batch's bytes (mapped input) until Run releases the batch. A batch is
// known by its first row, which the engine hands back unchanged.
type held struct {
	mu sync.Mutex
	m  map[*Row]interface{ Release() }
}

// emit hands rows to the engine's emit, keeping h until they are released
// (at once if there are none).
func (s *held) emit(rows []Row, h interface{ Release() }, emit func([]Row) error) error {
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

// release releases what holds b's bytes.
func (s *held) release(b *Batch) {
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
