package sqlitefile

import (
	"bytes"
	"errors"
	"io"
	"os"
	"strings"
	"testing"
)

// TestParallelIndexes: a file (an io.WriterAt) gets its indexes written
// side by side, each at pages planned in advance; the bytes are those of
// the indexes written one after the other (a plain io.WriteSeeker), with
// keys in order, out of order, large enough to spill to overflow pages,
// and trees of several levels.
func TestParallelIndexes(t *testing.T) {
	fill := func(w *Writer) {
		a := w.Table("a", "CREATE TABLE a(k TEXT UNIQUE, n INTEGER, big TEXT)")
		a.AutoIndex(0)
		w.Index("a_n", "a", "CREATE INDEX a_n ON a(n, k)", []int{1, 0}, false)
		w.Index("a_big", "a", "CREATE INDEX a_big ON a(big)", []int{2}, false)
		b := w.Table("b", "CREATE TABLE b(x INTEGER, y TEXT)")
		w.Index("b_xy", "b", "CREATE INDEX b_xy ON b(x, y)", []int{0, 1}, false)
		for i := range 6000 {
			big := ""
			if i%97 == 0 {
				big = strings.Repeat(key(i), 40+i%300)
			}
			a.Append(Text(key((i*7919)%6000)), Int(int64(6000-i)), Text(big))
			b.Append(Int(int64(i/3)), Text(key(i%3)))
		}
	}
	for _, ps := range []int{512, 4096} {
		want := &memFile{}
		w, _ := New(want, Options{PageSize: ps})
		fill(w)
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		path := create(t, Options{PageSize: ps}, fill)
		got, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want.b) {
			t.Fatalf("page size %d: %d bytes written side by side, %d one after the other: bytes differ", ps, len(got), len(want.b))
		}
		if r := query(t, open(t, path), "PRAGMA integrity_check"); r[0][0] != "ok" {
			t.Fatalf("integrity_check: %v", r)
		}
	}
}

// TestParallelUnique: a repeated key of a UNIQUE index fails Close the
// same way when the indexes are written side by side.
func TestParallelUnique(t *testing.T) {
	f, err := os.Create(t.TempDir() + "/u.db")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w, _ := New(f, Options{})
	a := w.Table("a", "CREATE TABLE a(k TEXT UNIQUE, n INTEGER)")
	a.AutoIndex(0)
	w.Index("a_n", "a", "CREATE INDEX a_n ON a(n)", []int{1}, false)
	for i := range 100 {
		a.Append(Text(key(i%60)), Int(int64(i)))
	}
	var ue *UniqueError
	if err := w.Close(); !errors.As(err, &ue) || ue.Rowids != [2]int64{1, 61} {
		t.Fatalf("Close: %v, want a UniqueError of rows 1 and 61", err)
	}
}

// TestKeysFrom: indexes that take their keys from the rows given again at
// Close give the bytes of indexes fed as the rows are appended, written
// one after the other or side by side, a rowid column's keys included;
// rows given again that are not as many fail Close.
func TestKeysFrom(t *testing.T) {
	row := func(i int) []Value {
		return []Value{Int(int64(10 + 3*i)), Text(key((i * 7919) % 5000)), Int(int64(i % 7))}
	}
	fill := func(again bool, n int) func(w *Writer) {
		return func(w *Writer) {
			a := w.Table("a", "CREATE TABLE a(id INTEGER PRIMARY KEY, k TEXT UNIQUE, g INTEGER)")
			a.RowidColumn(0)
			a.AutoIndex(1)
			w.Index("a_g", "a", "CREATE INDEX a_g ON a(g, id)", []int{2, 0}, false)
			if again {
				a.KeysFrom(func(yield func([]Value) error) error {
					for i := range n {
						if err := yield(row(i)); err != nil {
							return err
						}
					}
					return nil
				})
			}
			for i := range 5000 {
				a.Append(row(i)...)
			}
		}
	}
	want := &memFile{}
	w, _ := New(want, Options{})
	fill(false, 5000)(w)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	seq := &memFile{}
	w, _ = New(seq, Options{})
	fill(true, 5000)(w)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	par, err := os.ReadFile(create(t, Options{}, fill(true, 5000)))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(seq.b, want.b) || !bytes.Equal(par, want.b) {
		t.Fatal("bytes differ")
	}
	for _, f := range []func() io.WriteSeeker{
		func() io.WriteSeeker { return &memFile{} },
		func() io.WriteSeeker { f, _ := os.Create(t.TempDir() + "/x.db"); return f },
	} {
		w, _ := New(f(), Options{})
		fill(true, 4999)(w)
		if err := w.Close(); !errors.Is(err, ErrSchema) {
			t.Errorf("rows given again short: %v, want ErrSchema", err)
		}
	}
}

// TestKeysStreamed: past the memory budget (here none), keys given again nearly in order (a few places out,
// as the parts of a sample) are streamed, kept nowhere, large ones
// included; keys further out are gathered and sorted; the bytes are those
// of keys fed as the rows came, written one after the other or side by
// side.
func TestKeysStreamed(t *testing.T) {
	row := func(i int) []Value {
		name := key(2 - i%3) // backwards within each x
		if i%101 == 0 {
			name += strings.Repeat("y", 3000+i%1000) // spills to overflow pages
		}
		return []Value{Int(int64(i / 3)), Text(name), Int(int64((i * 7919) % 9000))}
	}
	fill := func(again bool) func(w *Writer) {
		return func(w *Writer) {
			b := w.Table("b", "CREATE TABLE b(x INTEGER, name TEXT, r INTEGER)")
			w.Index("b_xn", "b", "CREATE INDEX b_xn ON b(x, name)", []int{0, 1}, false)
			w.Index("b_r", "b", "CREATE INDEX b_r ON b(r)", []int{2}, false)
			if again {
				b.KeysFrom(func(yield func([]Value) error) error {
					for i := range 9000 {
						if err := yield(row(i)); err != nil {
							return err
						}
					}
					return nil
				})
			}
			for i := range 9000 {
				b.Append(row(i)...)
			}
		}
	}
	var files [][]byte
	for _, again := range []bool{false, true} {
		m := &memFile{}
		w, _ := New(m, Options{PageSize: 1024, Memory: -1})
		fill(again)(w)
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		if again && (w.sorted[3] != 1 || w.sorted[2] != 1) {
			t.Errorf("ways taken %v, want one index streamed and one radix-sorted", w.sorted)
		}
		files = append(files, m.b)
	}
	par, err := os.ReadFile(create(t, Options{PageSize: 1024, Memory: -1}, fill(true)))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(files[1], files[0]) || !bytes.Equal(par, files[0]) {
		t.Fatal("bytes differ")
	}
}

// TestKeysEarly: keys gathered from the first row on, beside the appends,
// give the bytes of keys fed as the rows came; rows given again that are
// not as many fail Close.
func TestKeysEarly(t *testing.T) {
	row := func(i int) []Value {
		return []Value{Int(int64(i / 3)), Text(key((i * 7919) % 9000)), Int(int64(i % 5))}
	}
	fill := func(early bool, n int) func(w *Writer) {
		return func(w *Writer) {
			b := w.Table("b", "CREATE TABLE b(x INTEGER, name TEXT UNIQUE, r INTEGER)")
			b.AutoIndex(1)
			w.Index("b_xr", "b", "CREATE INDEX b_xr ON b(x, r)", []int{0, 2}, false)
			if early {
				b.KeysFrom(func(yield func([]Value) error) error {
					for i := range n {
						if err := yield(row(i)); err != nil {
							return err
						}
					}
					return nil
				}).KeysEarly(1 << 20)
			}
			for i := range 9000 {
				b.Append(row(i)...)
				if _, ok := w.f.(*os.File); early && ok && i == 0 && b.idx[0].pending == nil {
					t.Error("no keys gathered early")
				}
			}
		}
	}
	want := &memFile{}
	w, _ := New(want, Options{})
	fill(false, 9000)(w)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(create(t, Options{}, fill(true, 9000)))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want.b) {
		t.Fatal("bytes differ")
	}
	f, err := os.Create(t.TempDir() + "/short.db")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w, _ = New(f, Options{})
	fill(true, 8999)(w)
	if err := w.Close(); !errors.Is(err, ErrSchema) {
		t.Errorf("rows given again short: %v, want ErrSchema", err)
	}
}

// TestKeysStreamedWindow: keys given again in order but for some that
// come late by up to the stream's window are streamed; later,
// they are gathered and sorted; the bytes are those of keys fed as the
// rows came, either way.
func TestKeysStreamedWindow(t *testing.T) {
	for _, c := range []struct {
		back     int
		streamed bool
	}{{0, true}, {1, true}, {streamWindow, true}, {streamWindow + 1, false}, {500, false}} {
		order := make([]int, 3000)
		for i := range order {
			order[i] = i
		}
		for i := 700; i+c.back < len(order); i += 700 {
			// The key at i comes c.back places later.
			v := order[i]
			copy(order[i:i+c.back], order[i+1:i+c.back+1])
			order[i+c.back] = v
		}
		row := func(i int) []Value { return []Value{Text(key(order[i])), Int(int64(i))} }
		var files [][]byte
		for _, again := range []bool{false, true} {
			m := &memFile{}
			w, _ := New(m, Options{PageSize: 1024, Memory: -1})
			b := w.Table("b", "CREATE TABLE b(name TEXT, i INTEGER)")
			w.Index("b_n", "b", "CREATE INDEX b_n ON b(name)", []int{0}, false)
			if again {
				b.KeysFrom(func(yield func([]Value) error) error {
					for i := range order {
						if err := yield(row(i)); err != nil {
							return err
						}
					}
					return nil
				})
			}
			for i := range order {
				b.Append(row(i)...)
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			if again && (w.sorted[3] == 1) != c.streamed {
				t.Errorf("late by %d: ways taken %v, streamed %v", c.back, w.sorted, c.streamed)
			}
			files = append(files, m.b)
		}
		if !bytes.Equal(files[0], files[1]) {
			t.Errorf("late by %d: bytes differ", c.back)
		}
	}
}
