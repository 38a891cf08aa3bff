package formatcompare

import (
	"os"
	"path/filepath"
	"testing"
)

// After dropPages, the probe finds a file's pages not resident, and after
// a read it finds them resident: what a cold read's residency check relies on.
func TestProbeSeesDroppedPages(t *testing.T) {
	p := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(p, make([]byte, 256<<10), 0o644); err != nil {
		t.Fatal(err)
	}
	resident, err := dropPages([]string{p})
	if err != nil || resident > 0 {
		t.Skipf("the pages cannot be dropped here (%v, %d bytes resident): no cold figures are reported", err, resident)
	}
	pr := newProbe()
	defer pr.close()
	if in, err := pr.resident(p, 100<<10, 4000); err != nil || in {
		t.Fatalf("after the drop: resident %v, %v", in, err)
	}
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.ReadAt(make([]byte, 4000), 100<<10); err != nil {
		t.Fatal(err)
	}
	if in, err := pr.resident(p, 100<<10, 4000); err != nil || !in {
		t.Fatalf("after a read: resident %v, %v", in, err)
	}
}
