package sqlitefile

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSpilledKeysSameBytes: with a temporary file and a small budget, the
// indexes' keys go out as sorted runs and come back merged, and the file
// is the one the keys sorted in memory make, byte for byte (keys in
// order, nearly in order and at random; a unique index and others); the
// temporary file is gone after Close; a key repeated across runs is
// still ErrUnique.
func TestSpilledKeysSameBytes(t *testing.T) {
	const n = 20000
	fill := func(w *Writer, dup bool) error {
		tb := w.Table("f", "CREATE TABLE f(path TEXT NOT NULL, r INTEGER, s TEXT)")
		w.Index("f_path", "f", "CREATE UNIQUE INDEX f_path ON f (path)", []int{0}, true)
		w.Index("f_r", "f", "CREATE INDEX f_r ON f (r)", []int{1}, false)
		w.Index("f_s", "f", "CREATE INDEX f_s ON f (s, r)", []int{2, 1}, false)
		w.Analyze("f")
		for i := range n {
			p := fmt.Sprintf("d%03d/%06d", i/100, i)
			if i%10 == 3 {
				p = fmt.Sprintf("d%03d/%06d", i/100, i-2) + "x" // a little out of order
			}
			if dup && i == n-5 {
				p = "d000/000001"
			}
			r := int64((i * 7919) % 10007) // at random
			if err := tb.Append(Text(p), Int(r), Text(fmt.Sprint(i%37))); err != nil {
				return err
			}
		}
		return nil
	}
	plain := create(t, Options{}, func(w *Writer) { fill(w, false) })
	dir := t.TempDir()
	var temps []string
	tmp := func() (*os.File, error) {
		f, err := os.CreateTemp(dir, "keys-*")
		if err == nil {
			temps = append(temps, f.Name())
		}
		return f, err
	}
	var spilled string
	var runs int
	spilled = create(t, Options{Memory: 64 << 10, TempFile: tmp}, func(w *Writer) {
		fill(w, false)
		for _, x := range w.tables[0].idx {
			runs += len(x.runs)
		}
	})
	if runs < 3*10 {
		t.Fatalf("%d runs, want many", runs)
	}
	a, _ := os.ReadFile(plain)
	b, _ := os.ReadFile(spilled)
	if !bytes.Equal(a, b) {
		t.Fatalf("spilled keys make another file (%d and %d bytes)", len(a), len(b))
	}
	checkIntegrity(t, spilled)
	// The keys made on goroutines of their own (Concurrent), spilled or
	// not: the same file.
	for _, o := range []Options{{Concurrent: true}, {Concurrent: true, Memory: 64 << 10, TempFile: tmp}} {
		c := create(t, o, func(w *Writer) { fill(w, false) })
		if b, _ := os.ReadFile(c); !bytes.Equal(a, b) {
			t.Fatalf("%+v: keys made concurrently make another file", o)
		}
	}
	temps = temps[:1]
	if m, _ := filepath.Glob(filepath.Join(dir, "*")); len(temps) != 1 || len(m) != 0 {
		t.Fatalf("temporary files %q, left %q", temps, m)
	}
	f, err := os.Create(filepath.Join(t.TempDir(), "dup.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w, err := New(f, Options{Memory: 64 << 10, TempFile: tmp})
	if err != nil {
		t.Fatal(err)
	}
	if err := fill(w, true); err != nil {
		t.Fatal(err)
	}
	var ue *UniqueError
	if err := w.Close(); !errors.As(err, &ue) || ue.Values[0].Text() != "d000/000001" {
		t.Fatalf("repeated key across runs: %v", err)
	}
	if m, _ := filepath.Glob(filepath.Join(dir, "*")); len(m) != 0 {
		t.Fatalf("left %q", m)
	}
}

// TestSpilledLongKeys: keys longer than a run's read buffer (and than a
// page: their overflow pages) come back whole from the runs.
func TestSpilledLongKeys(t *testing.T) {
	fill := func(w *Writer) {
		tb := w.Table("f", "CREATE TABLE f(path TEXT NOT NULL)")
		w.Index("f_path", "f", "CREATE INDEX f_path ON f (path)", []int{0}, false)
		for i := range 300 {
			n := 10 + (i*7919)%(3*runBuffer)
			if err := tb.Append(Text(fmt.Sprintf("%05d", (i*31)%300) + strings.Repeat("k", n))); err != nil {
				t.Fatal(err)
			}
		}
	}
	plain := create(t, Options{}, fill)
	tmp := func() (*os.File, error) { return os.CreateTemp(t.TempDir(), "keys-*") }
	spilled := create(t, Options{Memory: 1 << 20, TempFile: tmp}, fill)
	a, _ := os.ReadFile(plain)
	b, _ := os.ReadFile(spilled)
	if !bytes.Equal(a, b) {
		t.Fatalf("spilled long keys make another file")
	}
	checkIntegrity(t, spilled)
}

// TestCloseCanceled: Close stops at Options.Context's end, with its error.
func TestCloseCanceled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	f, err := os.Create(filepath.Join(t.TempDir(), "c.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w, err := New(f, Options{Context: ctx})
	if err != nil {
		t.Fatal(err)
	}
	tb := w.Table("f", "CREATE TABLE f(path TEXT NOT NULL)")
	w.Index("f_path", "f", "CREATE INDEX f_path ON f (path)", []int{0}, false)
	for i := range 10000 {
		tb.Append(Text(fmt.Sprint(i)))
	}
	cancel()
	if err := w.Close(); !errors.Is(err, context.Canceled) {
		t.Fatalf("Close after cancel: %v", err)
	}
}
