package sqlitefile

import (
	"database/sql"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// The benchmarks load the same 1M rows: a tar member index much like
// Megatron-Energon's samples table, with a UNIQUE text key (an automatic
// index) and a 2-column index.
const (
	benchRows   = 1000000
	benchTable  = "CREATE TABLE samples (tar_file_id INTEGER, sample_key TEXT UNIQUE, sample_index INTEGER, byte_offset INTEGER, byte_size INTEGER)"
	benchIndex  = "CREATE INDEX idx_samples_by_tar ON samples(tar_file_id, sample_index)"
	benchInsert = "INSERT INTO samples VALUES(?, ?, ?, ?, ?)"
)

// benchKeys are the rows' keys in order; benchShuffled the same keys in a
// random order, laid out in that order in memory, as a scan of a shard
// whose members are not sorted would give them. They are kept in one
// buffer: a million strings would be a million objects for the garbage
// collector to mark at every cycle, which the writer's own cost is not.
var (
	benchKeys     = sync.OnceValue(func() *keyList { return makeKeys(nil) })
	benchShuffled = sync.OnceValue(func() *keyList {
		return makeKeys(rand.New(rand.NewPCG(7, 8)).Perm(benchRows))
	})
)

type keyList struct {
	buf []byte
	end []int32 // key i is buf[end[i-1]:end[i]]
}

func (l *keyList) at(i int) []byte {
	lo := int32(0)
	if i > 0 {
		lo = l.end[i-1]
	}
	return l.buf[lo:l.end[i]]
}

func makeKeys(order []int) *keyList {
	l := &keyList{end: make([]int32, benchRows)}
	for i := range l.end {
		o := i
		if order != nil {
			o = order[i]
		}
		l.buf = fmt.Appendf(l.buf, "dir/key%08d", o)
		l.end[i] = int32(len(l.buf))
	}
	return l
}

// benchRow is row i's integer values.
func benchRow(i int) (tar, idx, off, size int64) {
	return int64(i / 10000), int64(i % 10000), int64(i) * 2048, int64(100 + i%1000)
}

func benchWrite(b *testing.B, keys *keyList) { benchWriteOpts(b, keys, false) }

// benchWriteOpts is benchWrite, the keys given again and streamed if
// streamed.
func benchWriteOpts(b *testing.B, keys *keyList, streamed bool) {
	dir := b.TempDir()
	var elapsed, cpu time.Duration
	for b.Loop() {
		start, cpu0 := time.Now(), cpuTime()
		f, err := os.Create(filepath.Join(dir, "w.db"))
		if err != nil {
			b.Fatal(err)
		}
		opts := Options{}
		if streamed {
			opts.Memory = -1
		}
		w, err := New(f, opts)
		if err != nil {
			b.Fatal(err)
		}
		tb := w.Table("samples", benchTable)
		if streamed {
			tb.KeysFrom(func(yield func([]Value) error) error {
				row := make([]Value, 5)
				for r := range benchRows {
					tar, idx, off, size := benchRow(r)
					row[0], row[1], row[2], row[3], row[4] = Int(tar), TextBytes(keys.at(r)), Int(idx), Int(off), Int(size)
					if err := yield(row); err != nil {
						return err
					}
				}
				return nil
			})
		}
		if err := tb.AutoIndex(1); err != nil {
			b.Fatal(err)
		}
		if err := w.Index("idx_samples_by_tar", "samples", benchIndex, []int{0, 2}, false); err != nil {
			b.Fatal(err)
		}
		for r := range benchRows {
			tar, idx, off, size := benchRow(r)
			if err := tb.Append(Int(tar), TextBytes(keys.at(r)), Int(idx), Int(off), Int(size)); err != nil {
				b.Fatal(err)
			}
		}
		if err := w.Close(); err != nil {
			b.Fatal(err)
		}
		if err := f.Close(); err != nil {
			b.Fatal(err)
		}
		elapsed += time.Since(start)
		cpu += cpuTime() - cpu0
	}
	report(b, elapsed, cpu)
}

// BenchmarkWrite1M: this package, keys in order (as tar shards usually
// hold them).
func BenchmarkWrite1M(b *testing.B) { benchWrite(b, benchKeys()) }

// BenchmarkWrite1MStreamed: keys in order, given again and streamed
// (past Options.Memory).
func BenchmarkWrite1MStreamed(b *testing.B) { benchWriteOpts(b, benchKeys(), true) }

// BenchmarkWrite1MShuffled: this package, keys in random order, which the
// index has to sort.
func BenchmarkWrite1MShuffled(b *testing.B) { benchWrite(b, benchShuffled()) }

// BenchmarkModernc1M: the same rows through modernc.org/sqlite: one
// transaction, a prepared INSERT, no journal, no syncs.
func BenchmarkModernc1M(b *testing.B) {
	keys := benchKeys()
	dir := b.TempDir()
	var elapsed, cpu time.Duration
	for b.Loop() {
		path := filepath.Join(dir, "m.db")
		os.Remove(path)
		start, cpu0 := time.Now(), cpuTime()
		db, err := sql.Open("sqlite", path)
		if err != nil {
			b.Fatal(err)
		}
		db.SetMaxOpenConns(1)
		for _, q := range []string{"PRAGMA journal_mode=OFF", "PRAGMA synchronous=OFF", benchTable, benchIndex} {
			if _, err := db.Exec(q); err != nil {
				b.Fatal(err)
			}
		}
		tx, err := db.Begin()
		if err != nil {
			b.Fatal(err)
		}
		st, err := tx.Prepare(benchInsert)
		if err != nil {
			b.Fatal(err)
		}
		for r := range benchRows {
			tar, idx, off, size := benchRow(r)
			if _, err := st.Exec(tar, string(keys.at(r)), idx, off, size); err != nil {
				b.Fatal(err)
			}
		}
		if err := tx.Commit(); err != nil {
			b.Fatal(err)
		}
		if err := db.Close(); err != nil {
			b.Fatal(err)
		}
		elapsed += time.Since(start)
		cpu += cpuTime() - cpu0
	}
	report(b, elapsed, cpu)
}

// report gives rows a second of wall time, and the CPU time an op took.
func report(b *testing.B, elapsed, cpu time.Duration) {
	b.ReportMetric(float64(b.N)*benchRows/elapsed.Seconds(), "rows/s")
	if cpu > 0 {
		b.ReportMetric(cpu.Seconds()*1000/float64(b.N), "cpu-ms/op")
	}
}

var benchColumns = []string{"tar_file_id", "sample_key", "sample_index", "byte_offset", "byte_size"}

// discard is an io.WriteSeeker that keeps nothing, for benchmarks of the
// writer's own work.
type discard struct{ off, end int64 }

func (d *discard) Write(p []byte) (int, error) {
	d.off += int64(len(p))
	d.end = max(d.end, d.off)
	return len(p), nil
}

func (d *discard) Seek(off int64, whence int) (int64, error) {
	switch whence {
	case 1:
		off += d.off
	case 2:
		off += d.end
	}
	d.off = off
	return off, nil
}

// BenchmarkAppend: Append alone, in ns a row, for a row of five columns
// (four INTEGERs and a TEXT) feeding no index, one index on two columns,
// and the two indexes of the Write1M benchmarks. The keys come in order.
func BenchmarkAppend(b *testing.B) {
	keys := benchKeys()
	for _, c := range []struct {
		name string
		idx  [][]int
	}{
		{"NoIndex", nil},
		{"Index", [][]int{{0, 2}}},
		{"TwoIndexes", [][]int{{1}, {0, 2}}},
	} {
		b.Run(c.name, func(b *testing.B) {
			w, err := New(&discard{}, Options{})
			if err != nil {
				b.Fatal(err)
			}
			// The indexes are declared as CREATE INDEX: the table's own
			// UNIQUE would make one more.
			tb := w.Table("samples", strings.Replace(benchTable, " UNIQUE", "", 1))
			for i, cols := range c.idx {
				names := make([]string, len(cols))
				for j, c := range cols {
					names[j] = benchColumns[c]
				}
				sql := fmt.Sprintf("CREATE INDEX i%d ON samples(%s)", i, strings.Join(names, ", "))
				if err := w.Index(fmt.Sprintf("i%d", i), "samples", sql, cols, false); err != nil {
					b.Fatal(err)
				}
			}
			r := 0
			for b.Loop() {
				tar, idx, off, size := benchRow(r)
				if err := tb.Append(Int(tar), TextBytes(keys.at(r%benchRows)), Int(idx), Int(off), Int(size)); err != nil {
					b.Fatal(err)
				}
				r++
			}
		})
	}
}
