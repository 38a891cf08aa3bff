package tbl

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/itarconv/itarconv/dataset"
)

// placeSamples are samples of every kind a run holds: empty, small,
// larger than runSmall (a piece of their own), with and without
// metadata, compressible and not.
func placeSamples(n int) (data [][]byte, names []string) {
	rng := rand.New(rand.NewSource(7))
	for i := range n {
		var b []byte
		switch i % 7 {
		case 0:
		case 3:
			b = bytes.Repeat([]byte{byte(i)}, runSmall+1+rng.Intn(5000)) // compresses
		case 5:
			b = make([]byte, 1+rng.Intn(3*runSmall))
			rng.Read(b) // does not
		default:
			b = make([]byte, rng.Intn(300))
			rng.Read(b)
		}
		data = append(data, b)
		names = append(names, fmt.Sprintf("s%04d.%s", i, []string{"jpg", "png", "cls", "bin"}[i%4]))
	}
	return data, names
}

// TestPlacedRunsSameBytes: runs placed by several placers, with the
// metadata held in memory, spilled to a temporary file (a budget of one
// byte), or written in place (its start known), make the file the
// Writer's Add methods make of the same samples, byte for byte.
func TestPlacedRunsSameBytes(t *testing.T) {
	data, names := placeSamples(150)
	for _, o := range []WriterOptions{{Version: 2}, {Version: 2, LZ4: true}, {Version: 1}} {
		o.NumSamples = len(data)
		meta := func(i int) []MetaEntry {
			if o.Version == 1 || i%5 == 4 {
				return nil
			}
			return []MetaEntry{NameMeta(names[i])}
		}
		dir := t.TempDir()
		want := filepath.Join(dir, "added.tbl")
		w, err := Create(want, o)
		if err != nil {
			t.Fatal(err)
		}
		var total int64
		for i, b := range data {
			if err := w.AddImage(FormatFromName(names[i]), 3, 4, bytes.NewReader(b), int64(len(b)), meta(i)); err != nil {
				t.Fatal(err)
			}
			total += int64(len(b))
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		wantBytes, _ := os.ReadFile(want)
		for _, c := range []struct {
			name     string
			memory   int
			dataSize bool
			spilled  bool
		}{{"in memory", 1 << 20, false, false}, {"spilled", 1, false, true}, {"in place", 1, true, false}} {
			if c.dataSize && o.LZ4 {
				continue // the stored size is not known before
			}
			got := filepath.Join(dir, c.name+".tbl")
			oo := o
			oo.SpoolMemory = c.memory
			w, err := Create(got, oo)
			if err != nil {
				t.Fatal(err)
			}
			if c.dataSize {
				w.setDataSize(total)
			}
			w.setPlacers(4)
			w.placerCount = 4
			for lo := 0; lo < len(data); {
				hi := min(len(data), lo+1+lo%9) // runs of 1 to 9 samples
				rb := newRunBuilder(o.Version, 0, 0)
				for i := lo; i < hi; i++ {
					p, err := PrepareSample(o.Version, o.LZ4, FormatFromName(names[i]), 3, 4, data[i])
					if err != nil {
						t.Fatal(err)
					}
					if err := rb.add(&p, meta(i)); err != nil {
						t.Fatal(err)
					}
				}
				if err := w.place(rb.done()); err != nil {
					t.Fatal(err)
				}
				lo = hi
			}
			if spilled := w.spill != nil; spilled != (c.spilled && o.Version == 2) {
				t.Errorf("v%d LZ4 %v, %s: spilled %v", o.Version, o.LZ4, c.name, spilled)
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			gotBytes, _ := os.ReadFile(got)
			if !bytes.Equal(gotBytes, wantBytes) {
				t.Errorf("v%d LZ4 %v, %s: %d bytes differ from the %d Add writes", o.Version, o.LZ4, c.name, len(gotBytes), len(wantBytes))
			}
		}
	}
}

// TestPlacedDataSizeChanged: samples that store other bytes than
// announced fail the file, which is not left behind.
func TestPlacedDataSizeChanged(t *testing.T) {
	out := filepath.Join(t.TempDir(), "o.tbl")
	w, err := Create(out, WriterOptions{Version: 2, NumSamples: 2})
	if err != nil {
		t.Fatal(err)
	}
	w.setDataSize(3)
	w.setPlacers(2)
	rb := newRunBuilder(2, 0, 2)
	for _, b := range []string{"ab", "cd"} {
		p, _ := PrepareSample(2, false, JPEG, 0, 0, []byte(b))
		rb.add(&p, []MetaEntry{NameMeta(b)})
	}
	if err := w.place(rb.done()); !errors.Is(err, ErrChanged) {
		t.Fatalf("placing 4 bytes of 3 announced: %v, want ErrChanged", err)
	}
	w.Abort()
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("%s left behind: %v", out, err)
	}
}

// TestWriteRowsWorkersAndMemory: WriteRows gives the same file, byte for
// byte, with one worker or four, and with a metadata budget of one byte
// (spilled where the metadata's start is not known: LZ4), with metadata
// members paired within batches, across batches and across shards.
func TestWriteRowsWorkersAndMemory(t *testing.T) {
	data, names := placeSamples(400)
	meta := EncodeMember(Member{Blocks: []MetaEntry{{Type: MetaJSON, Data: []byte(`{"label":1}`)}}, Stated: true, HasDims: true, Width: 9, Height: 8})
	var shards [][]toyMember
	var cur []toyMember
	for i, b := range data {
		if i%13 == 6 || i%41 == 0 {
			cur = append(cur, toyMember{name: names[i] + MetaSuffix, kind: dataset.KindFile, data: meta})
		}
		if i%17 == 0 {
			cur = append(cur, toyMember{name: fmt.Sprintf("d%d", i), kind: dataset.KindDir})
		}
		cur = append(cur, toyMember{name: names[i], kind: dataset.KindFile, data: b})
		if len(cur) >= 12 || i%41 == 40 {
			shards = append(shards, cur)
			cur = nil
		}
	}
	shards = append(shards, append(cur, toyMember{name: "last" + MetaSuffix, kind: dataset.KindFile, data: meta}))
	toy := newToyRows(t, shards)
	var opened atomic.Int64
	for _, src := range []dataset.PayloadSource{toyFiles{toy, &opened}, toyInline{toy}} {
		for _, o := range []RowsOptions{{}, {LZ4: true}, {Version: 1}, {NoNames: true}} {
			var want []byte
			var wantStats *RowsStats
			for _, c := range []struct {
				workers int
				memory  int64
			}{{1, 0}, {4, 0}, {4, 1}, {1, 1}} {
				oo := o
				oo.Workers, oo.Memory = c.workers, c.memory
				out := filepath.Join(t.TempDir(), "o.tbl")
				st, err := WriteRows(context.Background(), func(bool) (dataset.PayloadSource, error) { return src, nil }, out, oo)
				if err != nil {
					t.Fatalf("%T %+v: %v", src, oo, err)
				}
				got, err := os.ReadFile(out)
				if err != nil {
					t.Fatal(err)
				}
				st.Output = ""
				if want == nil {
					want, wantStats = got, st
					r, err := Open(out)
					if err != nil {
						t.Fatalf("%T %+v: %v", src, oo, err)
					}
					if err := r.Verify(); err != nil {
						t.Errorf("%T %+v: %v", src, oo, err)
					}
					if r.Len() != int(st.Samples) || st.Samples <= int64(len(data)) || st.MetaMembers == 0 || st.Skipped["dir"] == 0 {
						t.Errorf("%T %+v: %d samples, stats %+v", src, oo, r.Len(), st)
					}
					r.Close()
					continue
				}
				if !bytes.Equal(got, want) {
					t.Errorf("%T %+v: %d bytes differ from one worker's %d", src, oo, len(got), len(want))
				}
				if fmt.Sprint(*st) != fmt.Sprint(*wantStats) {
					t.Errorf("%T %+v: stats %+v, one worker's %+v", src, oo, *st, *wantStats)
				}
			}
		}
	}
}

// TestWriteRowsPlacedCancelled: a run canceled while runs are being
// placed, and the metadata spilled, returns the context's error and
// leaves nothing beside where the output would have been.
func TestWriteRowsPlacedCancelled(t *testing.T) {
	data, names := placeSamples(300)
	var shards [][]toyMember
	for i := 0; i < len(data); i += 10 {
		var s []toyMember
		for k := i; k < min(i+10, len(data)); k++ {
			s = append(s, toyMember{name: names[k], kind: dataset.KindFile, data: data[k]})
		}
		shards = append(shards, s)
	}
	toy := newToyRows(t, shards)
	var opened atomic.Int64
	src := toyFiles{toy, &opened}
	for _, lz4 := range []bool{false, true} {
		ctx, cancel := context.WithCancel(context.Background())
		batches := 0
		dir := t.TempDir()
		out := filepath.Join(dir, "o.tbl")
		_, err := WriteRows(ctx, func(bool) (dataset.PayloadSource, error) { return src, nil }, out, RowsOptions{LZ4: lz4, Workers: 4, Memory: 1,
			Progress: func(dataset.Progress) {
				if batches++; batches == 20 {
					cancel()
				}
			}})
		cancel()
		if !errors.Is(err, context.Canceled) {
			t.Errorf("LZ4 %v: %v, want context.Canceled", lz4, err)
		}
		if left, _ := os.ReadDir(dir); len(left) != 0 {
			t.Errorf("LZ4 %v: left %v", lz4, left)
		}
	}
}
