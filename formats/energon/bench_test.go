package energon

import (
	"context"
	"fmt"
	"testing"
	"time"
)

// benchShards are 50 shards of 2000 samples of three parts each.
func benchShards() []ShardSamples {
	shards := make([]ShardSamples, 50)
	for i := range shards {
		var b IdxBuilder
		off := int64(0)
		for j := range 2000 {
			key := fmt.Sprintf("s%03d/%07d", i, j)
			for _, ext := range []string{"jpg", "cls", "json"} {
				b.AddMember(key+"."+ext, off, off+512, 1000)
				off += 512 + 1024
			}
		}
		shards[i] = b.Shard(fmt.Sprintf("shard-%06d.tar", i), off)
	}
	return shards
}

// BenchmarkWriteMeta: .nv-meta for 100,000 samples, 300,000 parts.
func BenchmarkWriteMeta(b *testing.B) {
	shards := benchShards()
	dir := b.TempDir()
	b.ResetTimer()
	for b.Loop() {
		if err := WriteMeta(dir, shards, MetaOptions{}); err != nil {
			b.Fatal(err)
		}
	}
}

// Sizes of the large benchmark dataset.
const (
	largeShards  = 8
	largeSamples = 500000 // in all, each of two parts
)

// largeDataset is a dataset of 8 shards, 500,000 samples keyed "dir/%08d"
// in dataset order, each of a jpg and a cls part: 1M parts, the size of a
// dataset whose index must cost little beside a scan of its tar headers.
// The rows are built directly, as IdxBuilder.Shard gives them.
func largeDataset() []ShardSamples {
	shards := make([]ShardSamples, largeShards)
	per := largeSamples / largeShards
	n := 0
	for i := range shards {
		s := &shards[i]
		s.Name = fmt.Sprintf("shard-%06d.tar", i)
		s.Samples = make([]Sample, per)
		s.Parts = make([]Part, 0, 2*per)
		off := int64(0)
		for j := range per {
			// A sample: the jpg's header and ~20 KiB payload, the cls's
			// header and a block.
			s.Samples[j] = Sample{Key: fmt.Sprintf("dir/%08d", n), Offset: off, Size: 512 + 20480 + 512 + 512}
			s.Parts = append(s.Parts,
				Part{Sample: j, Name: "jpg", Offset: off + 512, Size: 20000 + int64(j%400)},
				Part{Sample: j, Name: "cls", Offset: off + 512 + 20480 + 512, Size: 3})
			off += s.Samples[j].Size
			n++
		}
		s.End = off
	}
	return shards
}

// BenchmarkWriteMetaLarge: .nv-meta for largeDataset, in ns a sample.
//
//	go test ./formats/energon -run '^$' -bench WriteMetaLarge -benchtime 5x
func BenchmarkWriteMetaLarge(b *testing.B) {
	shards := largeDataset()
	dir := b.TempDir()
	var cpu time.Duration
	for b.Loop() {
		cpu0 := cpuTime()
		if err := WriteMeta(dir, shards, MetaOptions{}); err != nil {
			b.Fatal(err)
		}
		cpu += cpuTime() - cpu0
	}
	reportPerSample(b, cpu)
}

// reportPerSample gives the wall time and the CPU time (all threads) an
// op took, per sample of largeDataset.
func reportPerSample(b *testing.B, cpu time.Duration) {
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/largeSamples, "ns/sample")
	if cpu > 0 {
		b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N)/largeSamples, "cpu-ns/sample")
	}
}

// BenchmarkWritePreparedLarge: .nv-meta for largeDataset from shards
// prepared beforehand (as the workers that read them prepare them), the
// part of the work that spans the dataset, in ns a sample.
//
//	go test ./formats/energon -run '^$' -bench PreparedLarge -benchtime 5x -cpu 1,2
func BenchmarkWritePreparedLarge(b *testing.B) {
	ps, err := prepareAll(largeDataset())
	if err != nil {
		b.Fatal(err)
	}
	dir := b.TempDir()
	var cpu time.Duration
	for b.Loop() {
		cpu0 := cpuTime()
		if err := WritePrepared(context.Background(), dir, ps, MetaOptions{}); err != nil {
			b.Fatal(err)
		}
		cpu += cpuTime() - cpu0
	}
	reportPerSample(b, cpu)
}
