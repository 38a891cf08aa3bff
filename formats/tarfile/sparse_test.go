package tarfile

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/itarconv/itarconv/testing/testutil"
)

// makeSparseFile writes a file of `regions` 1000-byte data regions, one
// every 64 KiB starting at 64 KiB, so that it begins and ends with a hole
// and has a hole between every two regions.
func makeSparseFile(t *testing.T, path string, regions int) int64 {
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	size := int64(regions+1)*65536 + 32768
	if err := f.Truncate(size); err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= regions; i++ {
		if _, err := f.WriteAt(pattern(1000, byte(i)), int64(i)*65536); err != nil {
			t.Fatal(err)
		}
	}
	return size
}

// TestGNUSparse scans sparse members written by GNU tar --sparse in the old
// GNU format (type 'S', whose map continues in extension blocks past four
// regions) and in the three pax sparse formats. Python's tarfile gives the
// truth: the logical size, the data regions and where the stored data starts;
// the member after the sparse one must be found where Python finds it.
func TestGNUSparse(t *testing.T) {
	tarPath := testutil.NeedTool(t, "tar")
	src := t.TempDir()
	if err := os.WriteFile(filepath.Join(src, "before.txt"), pattern(100, 1), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(src, "after.txt"), pattern(700, 2), 0o644); err != nil {
		t.Fatal(err)
	}
	sizes := map[string]int64{
		"few.bin":  makeSparseFile(t, filepath.Join(src, "few.bin"), 2),   // 3 holes: the map fits the header
		"many.bin": makeSparseFile(t, filepath.Join(src, "many.bin"), 30), // 31 holes: two extension blocks
	}

	for _, tt := range []struct {
		name       string
		args       []string
		sparseFile string
		extBlocks  int // GNU sparse extension blocks; -1 for pax formats
	}{
		{"gnu-few", []string{"--format=gnu"}, "few.bin", 0},
		{"gnu-many", []string{"--format=gnu"}, "many.bin", 2},
		{"oldgnu-many", []string{"--format=oldgnu"}, "many.bin", 2},
		{"pax-0.0", []string{"--format=posix", "--sparse-version=0.0"}, "many.bin", -1},
		{"pax-0.1", []string{"--format=posix", "--sparse-version=0.1"}, "many.bin", -1},
		{"pax-1.0", []string{"--format=posix", "--sparse-version=1.0"}, "many.bin", -1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), tt.name+".tar")
			args := append([]string{"--create", "--file", out, "--sparse"}, tt.args...)
			run(t, src, tarPath, append(args, "-C", src, "before.txt", tt.sparseFile, "after.txt")...)

			py := pythonView(t, out)[out]
			if len(py) != 3 || py[1].Sparse == nil {
				t.Skipf("GNU tar did not store %s as sparse (the file system keeps no holes?): %+v", tt.sparseFile, py)
			}
			var stored int64
			for _, r := range py[1].Sparse {
				stored += r[1]
			}
			gt := archiveTarView(t, out)

			for _, s := range strategies {
				got, _ := scanPath(t, out, Options{Strategy: s})
				if len(got) != 3 {
					t.Fatalf("%v: %d members, want 3: %v", s, len(got), got)
				}
				for i, m := range got {
					p := py[i]
					if m.Name != p.Name || m.Name != gt[i].Name || m.FirstOffset != p.Offset {
						t.Errorf("%v: member %d = %v\n python %+v\n archive/tar %+v", s, i, m, p, gt[i])
					}
					if i == 1 {
						continue
					}
					if m.Sparse || m.Size != p.Size || m.DataOffset != p.OffsetData || m.DataOffset != gt[i].DataOffset {
						t.Errorf("%v: member %d = %v\n python %+v\n archive/tar %+v", s, i, m, p, gt[i])
					}
				}

				m, p := got[1], py[1]
				if !m.Sparse || m.RealSize != sizes[tt.sparseFile] || m.RealSize != p.Size || m.RealSize != gt[1].Size {
					t.Errorf("%v: sparse member %v: want Sparse with RealSize %d (python %d, archive/tar %d)",
						s, m, sizes[tt.sparseFile], p.Size, gt[1].Size)
				}
				if m.Typeflag != p.Type || m.Typeflag != gt[1].Typeflag {
					t.Errorf("%v: sparse member type %q, python %q, archive/tar %q", s, m.Typeflag, p.Type, gt[1].Typeflag)
				}
				if tt.extBlocks >= 0 {
					// Old GNU: the stored data follows the header and its
					// extension blocks.
					if m.Typeflag != TypeGNUSparse || m.Format != FormatGNU ||
						m.DataOffset != m.HeaderOffset+int64(1+tt.extBlocks)*BlockSize {
						t.Errorf("%v: sparse member %v: want type 'S' with data after %d extension blocks", s, m, tt.extBlocks)
					}
					if m.DataOffset != p.OffsetData || m.DataOffset != gt[1].DataOffset || m.Size != stored {
						t.Errorf("%v: sparse member %v: python has data at %d, archive/tar at %d, %d bytes stored",
							s, m, p.OffsetData, gt[1].DataOffset, stored)
					}
				} else {
					// Pax: version 1.0 stores its map at the start of the
					// payload, which Python and archive/tar consume; the
					// scanner reports the payload whole.
					mapLen := int64(0)
					if tt.name == "pax-1.0" {
						mapLen = p.OffsetData - m.DataOffset
						if mapLen < BlockSize || mapLen%BlockSize != 0 {
							t.Errorf("%v: sparse member %v: python has data at %d, not a few blocks on", s, m, p.OffsetData)
						}
					}
					if m.Typeflag != TypeReg || m.FirstOffset >= m.HeaderOffset || m.DataOffset != m.HeaderOffset+BlockSize ||
						m.DataOffset+mapLen != p.OffsetData || m.DataOffset+mapLen != gt[1].DataOffset || m.Size != mapLen+stored {
						t.Errorf("%v: sparse member %v: python has data at %d, archive/tar at %d, %d bytes stored",
							s, m, p.OffsetData, gt[1].DataOffset, stored)
					}
				}
				// The next member is where the stored data ends.
				if next := m.DataOffset + blocksFor(m.Size); got[2].FirstOffset != next {
					t.Errorf("%v: after.txt's chain at %d, want %d", s, got[2].FirstOffset, next)
				}
			}
		})
	}
}
