package tbl

import (
	"bytes"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// The benchmarks use 20,000 samples of 1-20 KiB, like a shard of JPEGs:
// "random" samples do not compress (as JPEG), "mixed" ones partly do.
const benchSamples = 20000

var benchData = sync.OnceValues(func() (random, mixed [][]byte) {
	pool := randomBytes(99, 21<<10*64)
	mix := testPayload(99, 21<<10*64)
	x := uint64(12345)
	for range benchSamples {
		x = x*6364136223846793005 + 1442695040888963407
		n := 1<<10 + int(x>>33)%(19<<10+1)
		at := int(x>>20) % (len(pool) - n)
		random = append(random, pool[at:at+n])
		mixed = append(mixed, mix[at:at+n])
	}
	return random, mixed
})

func benchTotal(ss [][]byte) int64 {
	var n int64
	for _, s := range ss {
		n += int64(len(s))
	}
	return n
}

func writeBench(tb testing.TB, path string, opts WriterOptions, ss [][]byte) {
	opts.Version, opts.NumSamples = 2, len(ss)
	w, err := Create(path, opts)
	if err != nil {
		tb.Fatal(err)
	}
	var rd bytes.Reader
	for _, s := range ss {
		rd.Reset(s)
		if err := w.AddImage(JPEG, 640, 480, &rd, int64(len(s)), nil); err != nil {
			tb.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		tb.Fatal(err)
	}
}

var benchCases = []struct {
	name  string
	lz4   bool
	mixed bool
}{
	{"raw", false, false},
	{"lz4-random", true, false},
	{"lz4-mixed", true, true},
}

// BenchmarkWriteV2 writes a whole file per iteration, Close (with its
// fsync) included. MB/s counts the samples' uncompressed bytes.
func BenchmarkWriteV2(b *testing.B) {
	random, mixed := benchData()
	for _, c := range benchCases {
		ss := random
		if c.mixed {
			ss = mixed
		}
		b.Run(c.name, func(b *testing.B) {
			path := filepath.Join(b.TempDir(), "bench.tbl")
			b.SetBytes(benchTotal(ss))
			start := time.Now()
			for b.Loop() {
				os.Remove(path) // Create refuses to replace the last one
				writeBench(b, path, WriterOptions{LZ4: c.lz4}, ss)
			}
			b.ReportMetric(float64(b.N*len(ss))/time.Since(start).Seconds(), "samples/s")
		})
	}
}

// BenchmarkReadV2 opens a file (page cache warm) and reads every sample in
// order with ReadSample, decompressing and checking CRC-16s.
func BenchmarkReadV2(b *testing.B) {
	random, mixed := benchData()
	for _, c := range benchCases {
		ss := random
		if c.mixed {
			ss = mixed
		}
		b.Run(c.name, func(b *testing.B) {
			path := filepath.Join(b.TempDir(), "bench.tbl")
			writeBench(b, path, WriterOptions{LZ4: c.lz4}, ss)
			b.SetBytes(benchTotal(ss))
			var buf []byte
			start := time.Now()
			for b.Loop() {
				r, err := Open(path)
				if err != nil {
					b.Fatal(err)
				}
				for i := range r.Len() {
					if buf, err = r.ReadSample(i, buf); err != nil {
						b.Fatal(err)
					}
				}
				r.Close()
			}
			b.ReportMetric(float64(b.N*len(ss))/time.Since(start).Seconds(), "samples/s")
		})
	}
}

// BenchmarkCRC16 compares the folding CRC-16 (where the processor has
// carry-less multiplies) with the tables alone, on a sample-sized run.
func BenchmarkCRC16(b *testing.B) {
	p := testPayload(3, 16<<10)
	for _, c := range []struct {
		name string
		fn   func(uint16, []byte) uint16
	}{{"update", crc16Update}, {"tables", crc16Table}} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(p)))
			for b.Loop() {
				c.fn(crc16Init, p)
			}
		})
	}
}
