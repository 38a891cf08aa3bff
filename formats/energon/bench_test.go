package energon

import (
	"fmt"
	"testing"
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
