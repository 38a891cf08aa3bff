package tarfile

import (
	"archive/tar"
	"io"
	"os"
	"path/filepath"
	"testing"
)

// TestMemberPast8GiB scans archives whose first member claims a 9 GiB
// payload, more than the 11 octal digits of a ustar size field hold. The
// archives are sparse files: only their header blocks are written, so the
// test costs no disk space and no time. The second member's header lies past
// 8 GiB, which the scanner must reach by arithmetic on 64-bit offsets.
func TestMemberPast8GiB(t *testing.T) {
	const huge = 9 << 30 // a multiple of 512: no padding
	small := []byte("hello, world\n")

	type block struct {
		off  int64
		data []byte
	}
	// Each layout is the list of non-zero blocks of the file and its size.
	type member struct {
		name                                  string
		firstOffset, headerOffset, dataOffset int64
		size                                  int64
		format                                Format
	}
	tests := []struct {
		name   string
		blocks []block
		size   int64
		want   []member
	}{
		{
			name: "gnu-base256",
			blocks: []block{
				{0, hdr{name: "huge.bin", size: huge, format: FormatGNU}.block()},
				{BlockSize + huge, hdr{name: "small.txt", size: int64(len(small)), format: FormatGNU}.block()},
				{2*BlockSize + huge, small},
			},
			size: 3*BlockSize + huge + 2*BlockSize,
			want: []member{
				{"huge.bin", 0, 0, BlockSize, huge, FormatGNU},
				{"small.txt", BlockSize + huge, BlockSize + huge, 2*BlockSize + huge, int64(len(small)), FormatGNU},
			},
		},
		{
			// A pax size record overrides the ustar size field, which holds 0
			// as archive/tar writes it when the size does not fit.
			name: "pax-size",
			blocks: []block{
				{0, paxBlock("size=9663676416", "path=big/huge.bin")},
				{2 * BlockSize, hdr{name: "huge.bin", size: 0, format: FormatUSTAR}.block()},
				{3*BlockSize + huge, paxBlock("size=13")},
				{5*BlockSize + huge, hdr{name: "small.txt", size: 0, format: FormatUSTAR}.block()},
				{6*BlockSize + huge, small},
			},
			size: 7*BlockSize + huge + 2*BlockSize,
			want: []member{
				{"big/huge.bin", 0, 2 * BlockSize, 3 * BlockSize, huge, FormatUSTAR},
				{"small.txt", 3*BlockSize + huge, 5*BlockSize + huge, 6*BlockSize + huge, int64(len(small)), FormatUSTAR},
			},
		},
		{
			// Twelve octal digits with no terminator, as some writers fill
			// the whole field (up to 64 GiB).
			name: "octal-12-digits",
			blocks: []block{
				{0, hdr{name: "huge.bin", sizeField: []byte("110000000000"), format: FormatUSTAR}.block()},
				{BlockSize + huge, hdr{name: "small.txt", size: int64(len(small)), format: FormatUSTAR}.block()},
				{2*BlockSize + huge, small},
			},
			size: 3*BlockSize + huge + 2*BlockSize,
			want: []member{
				{"huge.bin", 0, 0, BlockSize, huge, FormatUSTAR},
				{"small.txt", BlockSize + huge, BlockSize + huge, 2*BlockSize + huge, int64(len(small)), FormatUSTAR},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), tt.name+".tar")
			f, err := os.Create(path)
			if err != nil {
				t.Fatal(err)
			}
			// Truncate first: the file gets its size as one hole, and the
			// writes below only fill in header blocks.
			if err := f.Truncate(tt.size); err != nil {
				t.Fatal(err)
			}
			for _, b := range tt.blocks {
				if _, err := f.WriteAt(b.data, b.off); err != nil {
					t.Fatal(err)
				}
			}
			if err := f.Close(); err != nil {
				t.Fatal(err)
			}
			if fi, err := os.Stat(path); err != nil {
				t.Fatal(err)
			} else if n := allocatedBytes(fi); fi.Size() != tt.size || n > 1<<20 {
				t.Fatalf("the file has %d bytes, %d of them on disk; want %d bytes, nearly all holes", fi.Size(), n, tt.size)
			}
			if tt.want[1].headerOffset <= 8<<30 {
				t.Fatalf("test layout: second header at %d is not past 8 GiB", tt.want[1].headerOffset)
			}
			for _, s := range strategies {
				got, end := scanPath(t, path, Options{Strategy: s})
				if len(got) != len(tt.want) {
					t.Fatalf("%v: %d members, want %d: %v", s, len(got), len(tt.want), got)
				}
				for i, w := range tt.want {
					m := got[i]
					if m.Name != w.name || m.FirstOffset != w.firstOffset || m.HeaderOffset != w.headerOffset ||
						m.DataOffset != w.dataOffset || m.Size != w.size || m.Format != w.format || m.Typeflag != TypeReg {
						t.Errorf("%v: member %d = %v\nwant %+v", s, i, m, w)
					}
				}
				if wantEnd := tt.size - 2*BlockSize; end != wantEnd {
					t.Errorf("%v: scan ended at %d, want %d", s, end, wantEnd)
				}
			}
			// archive/tar agrees on names and sizes (it seeks over payloads).
			f, err = os.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			tr := tar.NewReader(f)
			for i, w := range tt.want {
				h, err := tr.Next()
				if err != nil || h.Name != w.name || h.Size != w.size {
					t.Fatalf("archive/tar member %d: %v, %+v", i, err, h)
				}
			}
			if h, err := tr.Next(); err != io.EOF {
				t.Errorf("archive/tar after the last member: %v, %+v", err, h)
			}
			// HeaderBlocks hops by the raw size fields: the base-256 and
			// 12-digit fields still give the 9 GiB hop.
			if tt.name != "pax-size" {
				got, _ := scanPath(t, path, Options{HeaderBlocks: true})
				if len(got) != 2 || got[1].HeaderOffset != tt.want[1].headerOffset || got[0].Size != huge {
					t.Errorf("HeaderBlocks: %v", got)
				}
			}
		})
	}
}

// paxBlock returns a pax 'x' header block followed by its records, padded.
func paxBlock(recs ...string) []byte {
	var a archive
	a.pax(TypeXHeader, recs...)
	return a.buf
}
