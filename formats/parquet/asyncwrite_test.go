package parquet

import (
	"bytes"
	"context"
	"fmt"
	"testing"
	"time"

	pq "github.com/parquet-go/parquet-go"
)

// gate is a destination that blocks every write until it is opened.
type gate struct {
	open chan struct{}
	buf  bytes.Buffer
}

func (g *gate) Write(p []byte) (int, error) {
	<-g.open
	return g.buf.Write(p)
}

// testRows are n rows of the layout of a jpg and a cls column, the i-th
// row's values starting at i.
func testRows(l *layout, from, n int) []pq.Row {
	var rows []pq.Row
	for i := from; i < from+n; i++ {
		name := fmt.Sprintf("s%05d", i)
		rows = append(rows, pq.Row{
			pq.ByteArrayValue([]byte(name)).Level(0, 1, 0),
			pq.ByteArrayValue(bytes.Repeat([]byte{byte(i)}, 1000+i)).Level(0, 2, 1),
			pq.ByteArrayValue([]byte(name+".jpg")).Level(0, 2, 2),
			pq.Int64Value(int64(i)).Level(0, 1, 3),
		})
	}
	return rows
}

// TestCommitterOverlaps: a row group is filled while the last one is
// still being written (the file's writes blocked), and the file's bytes
// are those pq.Writer writes flushing each group itself.
func TestCommitterOverlaps(t *testing.T) {
	l := newLayout([]column{{name: "jpg", kind: kindImage}, {name: "cls", kind: kindInt64}})
	opts := []pq.WriterOption{l.schema, pq.DataPageVersion(1), pq.DataPageStatistics(false), pq.PageBufferSize(4 << 10)}

	g := &gate{open: make(chan struct{})}
	w := pq.NewWriter(g, opts...)
	c := newCommitter(w)
	rg := c.next()
	if _, err := rg.WriteRows(testRows(l, 0, 50)); err != nil {
		t.Fatal(err)
	}
	if err := c.commit(rg); err != nil {
		t.Fatal(err)
	}
	filled := make(chan error, 1)
	go func() {
		rg = c.next()
		_, err := rg.WriteRows(testRows(l, 50, 70))
		filled <- err
	}()
	select {
	case err := <-filled:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the next row group waited for the last one's writes")
	}
	close(g.open)
	if err := c.close(rg); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}

	var want bytes.Buffer
	ww := pq.NewWriter(&want, opts...)
	for _, r := range [][2]int{{0, 50}, {50, 70}} {
		if _, err := ww.WriteRows(testRows(l, r[0], r[1])); err != nil {
			t.Fatal(err)
		}
		if err := ww.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	if err := ww.Close(); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(g.buf.Bytes(), want.Bytes()) {
		t.Fatalf("%d bytes written, %d by pq.Writer's own flushes: they differ", g.buf.Len(), want.Len())
	}
	f, err := pq.OpenFile(bytes.NewReader(want.Bytes()), int64(want.Len()))
	if err != nil {
		t.Fatal(err)
	}
	if n := len(f.RowGroups()); n != 2 || f.NumRows() != 120 {
		t.Fatalf("%d row groups, %d rows; want 2 and 120", n, f.NumRows())
	}
}

// writeSizes records the size of each write.
type writeSizes []int

func (s *writeSizes) Write(p []byte) (int, error) {
	*s = append(*s, len(p))
	return len(p), nil
}

// TestUnbuffered: parquet-go writes straight to the asyncWriter, without
// a bufio.Writer of its own between them (through which every byte of a
// row group's pages was copied once more): the file's magic is a write of
// its own, and a row group's pages come in the chunks parquet-go keeps
// them in, not in bufio's.
func TestUnbuffered(t *testing.T) {
	l := newLayout([]column{{name: "jpg", kind: kindImage}, {name: "cls", kind: kindInt64}})
	w := newWriter(context.Background(), t.TempDir(), l, &writeOptions{codec: &pq.Uncompressed})
	var sizes writeSizes
	pw := pq.NewWriter(&sizes, append([]pq.WriterOption{l.schema}, w.opts...)...)
	if _, err := pw.WriteRows(testRows(l, 0, 200)); err != nil {
		t.Fatal(err)
	}
	if err := pw.Close(); err != nil {
		t.Fatal(err)
	}
	if len(sizes) == 0 || sizes[0] != 4 {
		t.Fatalf("writes of %v bytes; want the 4 bytes of PAR1 first, alone", sizes[:min(len(sizes), 8)])
	}
	total := 0
	for _, n := range sizes {
		total += n
	}
	if total < 200*1000 || len(sizes) < 8 {
		t.Fatalf("%d writes of %d bytes in all; want the pages' chunks each written as such", len(sizes), total)
	}
}
