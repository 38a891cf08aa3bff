package mds_test

import (
	"context"
	"fmt"
	"math/rand"
	"path/filepath"
	"testing"

	"github.com/itarconv/itarconv/formats/formattest"
	"github.com/itarconv/itarconv/formats/registry"
)

// benchTar writes tar shards of n members of 1-20 KiB (a .jpg and a .txt
// a key), as the targets' dataset is made, and returns their directory.
func benchTar(b *testing.B, n int) string {
	r := rand.New(rand.NewSource(1))
	buf := make([]byte, 20<<10)
	r.Read(buf)
	shards := make([]formattest.Shard, 4)
	for i := 0; i < n; i++ {
		ext := []string{"jpg", "txt"}[i%2]
		size := 1<<10 + r.Intn(19<<10+1)
		shards[i*4/n] = append(shards[i*4/n], formattest.File{Name: fmt.Sprintf("s%09d.%s", i/2, ext), Data: buf[:size]})
	}
	dir := filepath.Join(b.TempDir(), "tar")
	if _, err := registry.Lookup("tar").Create(context.Background(), &formattest.Rows{Shards: shards}, dir, registry.CreateOptions{Workers: 2}); err != nil {
		b.Fatal(err)
	}
	return dir
}

// BenchmarkTarToMDS and BenchmarkMDSToTar convert 20k members of 1-20
// KiB; ns/op is a whole conversion. With -cpuprofile, the ordered
// writer's share is formats/mds.(*writer).Write's (tar to MDS).
func BenchmarkTarToMDS(b *testing.B) {
	src := benchTar(b, 20000)
	ds := openB(b, "tar", src)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		out := filepath.Join(b.TempDir(), "mds")
		if _, err := registry.Lookup("mds").Create(context.Background(), ds, out, registry.CreateOptions{Workers: 2}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/20000, "ns/member")
}

func BenchmarkMDSToTar(b *testing.B) {
	src := benchTar(b, 20000)
	m := filepath.Join(b.TempDir(), "mds")
	if _, err := registry.Lookup("mds").Create(context.Background(), openB(b, "tar", src), m, registry.CreateOptions{Workers: 2}); err != nil {
		b.Fatal(err)
	}
	ds := openB(b, "mds", m)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		out := filepath.Join(b.TempDir(), "tar")
		if _, err := registry.Lookup("tar").Create(context.Background(), ds, out, registry.CreateOptions{Workers: 2}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/20000, "ns/member")
}

func openB(b *testing.B, format, path string) registry.Dataset {
	ds, err := registry.Lookup(format).Open([]string{path}, registry.OpenOptions{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { ds.Close() })
	return ds
}
