package dataset

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"testing"
)

// memSource is a PayloadSource of shards holding named rows whose payload
// is given; it records the batches released to it and its Close.
type memSource struct {
	name   string
	shards [][]string // row names; payload is "<name>!"
	mu     sync.Mutex
	rel    []string // "shard:first row name" per Release
	closed int
	err    error // returned by Close
}

func (m *memSource) NumShards() int             { return len(m.shards) }
func (m *memSource) ShardName(shard int) string { return fmt.Sprintf("%s/%d", m.name, shard) }
func (m *memSource) Scan(_ context.Context, shard int, emit func([]Row) error) error {
	var rows []Row
	for i, n := range m.shards[shard] {
		rows = append(rows, Row{Name: []byte(n), Size: int64(len(n) + 1), DataFile: i})
	}
	return emit(rows)
}
func (m *memSource) OpenPayload(r *Row) (io.Reader, error) {
	return strings.NewReader(string(r.Name) + "!"), nil
}
func (m *memSource) Release(b *Batch) {
	m.mu.Lock()
	m.rel = append(m.rel, fmt.Sprintf("%d:%s", b.Shard, b.Rows[0].Name))
	m.mu.Unlock()
}
func (m *memSource) Close() error { m.closed++; return m.err }

// TestConcatRowsNamesAndPayloads: a Concat numbers its parts' shards one
// after the other, prefixes each part's names, finds each row's payload in
// its own part under its own name, and hands released batches and Close
// back to the parts.
func TestConcatRowsNamesAndPayloads(t *testing.T) {
	a := &memSource{name: "a", shards: [][]string{{"x", "y"}, {"z"}}}
	b := &memSource{name: "b", shards: [][]string{{"meta.json"}}, err: errors.New("b: close failed")}
	c := NewConcat(Part{Source: a}, Part{Source: b, Prefix: "scdlmeta/"})
	if c.NumShards() != 3 {
		t.Fatalf("%d shards, want 3", c.NumShards())
	}
	if got := []string{c.ShardName(0), c.ShardName(1), c.ShardName(2)}; fmt.Sprint(got) != "[a/0 a/1 b/0]" {
		t.Errorf("shard names %v", got)
	}
	var got []string
	err := Run(context.Background(), c, RowFunc(func(shard int, r *Row) error {
		data, err := ReadPayload(c, r)
		got = append(got, fmt.Sprintf("%d %s=%s", shard, r.Name, data))
		return err
	}), Options{Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	want := "[0 x=x! 0 y=y! 1 z=z! 2 scdlmeta/meta.json=meta.json!]"
	if fmt.Sprint(got) != want {
		t.Errorf("rows %v, want %s", got, want)
	}
	if fmt.Sprint(a.rel) != "[0:x 1:z]" && fmt.Sprint(a.rel) != "[1:z 0:x]" {
		t.Errorf("part a released %v, want its shards 0 and 1", a.rel)
	}
	// The part's Release sees the row the part emitted, prefixed name and all.
	if fmt.Sprint(b.rel) != "[0:scdlmeta/meta.json]" {
		t.Errorf("part b released %v, want its shard 0", b.rel)
	}
	if _, err := c.OpenPayload(&Row{Name: []byte("x"), DataFile: -1}); err == nil || !strings.Contains(err.Error(), "data file -1") {
		t.Errorf("a row of no part: %v", err)
	}
	if err := c.Close(); err == nil || err.Error() != "b: close failed" || a.closed != 1 || b.closed != 1 {
		t.Errorf("Close: %v (closed %d, %d), want b's error and both closed once", err, a.closed, b.closed)
	}
}

// TestConcatNoReleaser: a Concat of sources without Release or Close does
// nothing on either.
func TestConcatNoReleaser(t *testing.T) {
	src := &lettersSourceNoRelease{rows: []int{2}}
	c := NewConcat(Part{Source: src, Prefix: "p/"})
	c.Release(&Batch{Shard: 0, Rows: []Row{{Name: []byte("p/0-0")}}})
	if err := c.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
}

type lettersSourceNoRelease struct{ rows []int }

func (s *lettersSourceNoRelease) NumShards() int       { return len(s.rows) }
func (s *lettersSourceNoRelease) ShardName(int) string { return "" }
func (s *lettersSourceNoRelease) OpenPayload(*Row) (io.Reader, error) {
	return strings.NewReader(""), nil
}
func (s *lettersSourceNoRelease) Scan(context.Context, int, func([]Row) error) error { return nil }

func TestKindString(t *testing.T) {
	var got []string
	for k := KindFile; k <= KindOther; k++ {
		got = append(got, k.String())
	}
	if fmt.Sprint(got) != "[file dir symlink hardlink other]" {
		t.Errorf("kinds %v", got)
	}
}

type releaseCount struct{ n *int }

func (r releaseCount) Release() { *r.n++ }

// TestHeld: what holds a batch's bytes is released once, when the engine
// releases the batch, and at once for a batch without rows.
func TestHeld(t *testing.T) {
	var h Held
	released := 0
	emitted := 0
	emit := func(rows []Row) error { emitted += len(rows); return nil }
	if err := h.Emit(nil, releaseCount{&released}, emit); err != nil || released != 1 || emitted != 0 || h.Len() != 0 {
		t.Fatalf("empty batch: err %v, released %d, emitted %d, held %d", err, released, emitted, h.Len())
	}
	rows := []Row{{Name: []byte("a")}, {Name: []byte("b")}}
	if err := h.Emit(rows, releaseCount{&released}, emit); err != nil || emitted != 2 || released != 1 || h.Len() != 1 {
		t.Fatalf("batch: err %v, released %d, emitted %d, held %d", err, released, emitted, h.Len())
	}
	h.Release(&Batch{}) // no rows: nothing of ours
	h.Release(&Batch{Rows: rows[1:]})
	if released != 1 || h.Len() != 1 {
		t.Fatalf("a batch not emitted released something: released %d, held %d", released, h.Len())
	}
	h.Release(&Batch{Rows: rows})
	h.Release(&Batch{Rows: rows})
	if released != 2 || h.Len() != 0 {
		t.Errorf("after release: released %d, held %d, want 2 and 0", released, h.Len())
	}
	failed := errors.New("emit failed")
	if err := h.Emit(rows, releaseCount{&released}, func([]Row) error { return failed }); !errors.Is(err, failed) {
		t.Errorf("emit's error: %v", err)
	}
}

type payloadOf struct {
	lettersSourceNoRelease
	r   io.Reader
	err error
}

func (p *payloadOf) OpenPayload(*Row) (io.Reader, error) { return p.r, p.err }

type closeRecorder struct {
	io.Reader
	closed bool
}

func (c *closeRecorder) Close() error { c.closed = true; return nil }

// TestReadPayloadErrors: ReadPayload reads exactly Size bytes, reports a
// payload shorter or longer than its size, an open that fails, and closes
// what it opened.
func TestReadPayloadErrors(t *testing.T) {
	rc := &closeRecorder{Reader: strings.NewReader("abc")}
	data, err := ReadPayload(&payloadOf{r: rc}, &Row{Size: 3})
	if err != nil || string(data) != "abc" || !rc.closed {
		t.Errorf("whole payload: %q, %v, closed %v", data, err, rc.closed)
	}
	if _, err := ReadPayload(&payloadOf{r: strings.NewReader("ab")}, &Row{Size: 3}); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("short payload: %v, want io.ErrUnexpectedEOF", err)
	}
	if _, err := ReadPayload(&payloadOf{r: strings.NewReader("abcde")}, &Row{Size: 3}); err == nil || err.Error() != "2 bytes more than its size" {
		t.Errorf("long payload: %v", err)
	}
	gone := errors.New("shard gone")
	if _, err := ReadPayload(&payloadOf{err: gone}, &Row{Size: 3}); !errors.Is(err, gone) {
		t.Errorf("failed open: %v", err)
	}
	if err := EndOfPayload(io.MultiReader(strings.NewReader(""), iotestErr{gone})); !errors.Is(err, gone) {
		t.Errorf("EndOfPayload of a failing reader: %v", err)
	}
}

type iotestErr struct{ err error }

func (e iotestErr) Read([]byte) (int, error) { return 0, e.err }

// errSource fails the scan of one shard, after emitting a batch.
type errSource struct {
	countSource
	failShard int
	err       error
}

func (e *errSource) Scan(ctx context.Context, shard int, emit func([]Row) error) error {
	if shard == e.failShard {
		if err := emit([]Row{{Name: []byte("partial")}}); err != nil {
			return err
		}
		return e.err
	}
	return e.countSource.Scan(ctx, shard, emit)
}

type stepSink struct {
	prepErr, writeErr, endErr error
	at                        int // the shard whose step fails
	written                   []string
	ended                     []int
}

func (s *stepSink) Prepare(b *Batch) error {
	if b.Shard == s.at {
		return s.prepErr
	}
	return nil
}
func (s *stepSink) Write(b *Batch) error {
	if b.Shard == s.at && s.writeErr != nil {
		return s.writeErr
	}
	for _, r := range b.Rows {
		s.written = append(s.written, string(r.Name))
	}
	return nil
}
func (s *stepSink) EndShard(shard int) error {
	if shard == s.at && s.endErr != nil {
		return s.endErr
	}
	s.ended = append(s.ended, shard)
	return nil
}

// TestRunStepErrors: the first failure of a scan, a Prepare, a Write or an
// EndShard stops the run with that error, after the shards before it are
// written and ended, and nothing of the failed shard's later steps runs.
func TestRunStepErrors(t *testing.T) {
	bad := errors.New("bad step")
	cases := []struct {
		name     string
		src      Source
		sink     *stepSink
		written  int
		ended    string
		progress bool
	}{
		{"scan", &errSource{countSource: countSource{n: 4, rows: 2}, failShard: 2, err: bad}, &stepSink{at: -1}, 4, "[0 1]", false},
		{"prepare", &countSource{n: 4, rows: 2}, &stepSink{prepErr: bad, at: 1}, 2, "[0]", false},
		{"write", &countSource{n: 4, rows: 2}, &stepSink{writeErr: bad, at: 3}, 6, "[0 1 2]", true},
		{"end shard", &countSource{n: 4, rows: 2}, &stepSink{endErr: bad, at: 0}, 2, "[]", false},
	}
	for _, c := range cases {
		var last Progress
		opts := Options{Workers: 1}
		if c.progress {
			opts.Progress = func(p Progress) { last = p }
		}
		err := Run(context.Background(), c.src, c.sink, opts)
		if !errors.Is(err, bad) {
			t.Errorf("%s: %v, want the step's error", c.name, err)
		}
		// A failed scan's rows before the failure may be written: count only
		// the rows of the shards before it.
		n := 0
		for _, w := range c.sink.written {
			if w != "partial" {
				n++
			}
		}
		if n != c.written || fmt.Sprint(c.sink.ended) != c.ended && !(c.ended == "[]" && c.sink.ended == nil) {
			t.Errorf("%s: wrote %d rows %v, ended %v; want %d rows, ended %s", c.name, n, c.sink.written, c.sink.ended, c.written, c.ended)
		}
		if c.progress && (last.ShardsDone != 3 || last.Shards != 4 || last.Rows != 6) {
			t.Errorf("%s: last progress %+v, want 3 of 4 shards, 6 rows", c.name, last)
		}
	}
}

// TestRunNoShards: a source without shards runs to nothing, whatever the
// number of workers asked for.
func TestRunNoShards(t *testing.T) {
	sink := &stepSink{at: -1}
	if err := Run(context.Background(), &countSource{}, sink, Options{}); err != nil || sink.written != nil || sink.ended != nil {
		t.Errorf("no shards: %v, wrote %v, ended %v", err, sink.written, sink.ended)
	}
}

// regionsSource is a source with file regions and no shard files.
type regionsSource struct {
	lettersSourceNoRelease
	f *os.File
}

func (r *regionsSource) PayloadFile(row *Row) (*os.File, int64, bool) {
	return r.f, int64(len(row.Name)), true
}

type filesRegionsSource struct {
	lettersSource
	f *os.File
}

func (r *filesRegionsSource) PayloadFile(row *Row) (*os.File, int64, bool) {
	return r.f, 7, row.Size > 0
}

// TestSliceInterfaces: a slice keeps its source's file regions (alone or
// with shard files), names its shards and sizes them as its source does,
// and closes its source.
func TestSliceInterfaces(t *testing.T) {
	f := os.Stdin
	sl, err := Slice(&regionsSource{lettersSourceNoRelease{rows: []int{1, 1, 1}}, f}, 1, 3)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := sl.(ShardFiles); ok {
		t.Error("a slice claims shard files its source has not")
	}
	fr, ok := sl.(FileRegions)
	if !ok {
		t.Fatal("a slice of a source with file regions has none")
	}
	if got, off, ok := fr.PayloadFile(&Row{Name: []byte("abcd")}); got != f || off != 4 || !ok {
		t.Errorf("PayloadFile: %v %d %v", got, off, ok)
	}
	if got := ShardSizes(sl); fmt.Sprint(got) != "[1 1]" {
		t.Errorf("sizes of a source that knows none: %v", got)
	}
	if err := sl.(io.Closer).Close(); err != nil {
		t.Errorf("Close of a source without Close: %v", err)
	}
	sl.(Releaser).Release(&Batch{Rows: []Row{{}}}) // the source has no Release: nothing happens

	both := &filesRegionsSource{lettersSource{rows: []int{1, 2, 3}}, f}
	sl, err = Slice(both, 2, 3)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := sl.(ShardFiles); !ok {
		t.Error("a slice lost its source's shard files")
	}
	if _, off, ok := sl.(FileRegions).PayloadFile(&Row{Size: 1}); off != 7 || !ok {
		t.Errorf("PayloadFile through a slice with shard files: %d %v", off, ok)
	}
	if got := sl.ShardName(0); got != "shard2" {
		t.Errorf("shard 0 of the slice is named %q, want the source's shard2", got)
	}
	closing := &memSource{name: "m", shards: [][]string{{"a"}}, err: errors.New("closed twice")}
	sl, err = Slice(closing, 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	if err := sl.(io.Closer).Close(); err == nil || closing.closed != 1 {
		t.Errorf("Close: %v, source closed %d times", err, closing.closed)
	}
}
