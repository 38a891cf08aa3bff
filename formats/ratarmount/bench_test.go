package ratarmount

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/itarconv/itarconv/formats/tarfile"
)

// BenchmarkWriteTo indexes a shard of 10,000 members in 1,000 directories:
// the scan, Builder.Add and WriteTo with the SQL writer.
func BenchmarkWriteTo(b *testing.B) {
	var a archive
	for i := range 10_000 {
		a.file(hdr{name: fmt.Sprintf("d%03d/%06d.jpg", i/10, i)}, "payload")
	}
	dir := b.TempDir()
	shard := a.write(b, dir)
	fi, err := os.Stat(shard)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(fi.Size())
	b.ReportAllocs()
	n := 0
	for b.Loop() {
		var bu Builder
		if _, err := tarfile.Walk(shard, tarfile.Options{}, bu.Add); err != nil {
			b.Fatal(err)
		}
		n++
		if err := bu.WriteTo(filepath.Join(dir, fmt.Sprintf("%d%s", n, Suffix)), fi); err != nil {
			b.Fatal(err)
		}
	}
}
