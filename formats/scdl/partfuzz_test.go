package scdl

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/itarconv/itarconv/dataset"
)

// FuzzDecodePartMeta checks that decodePartMeta never panics, that every
// error wraps ErrPart and gives an offset, and that whatever it accepts
// encodes back to exactly the input. Each input is tried as it is and with
// its CRC appended, so that the fuzzer reaches the fields past the check.
// The seeds are the descriptions of parts written here: of bionemo's
// archive in cells mode, and of a fresh archive's cells, edge cells and
// files included.
func FuzzDecodePartMeta(f *testing.F) {
	var a *Archive
	for _, c := range conformanceCases(f) {
		if c.name == "basic_50x30_f32" {
			var err error
			if a, err = Open(filepath.Join(c.dir, "scdl")); err != nil {
				f.Fatal(err)
			}
			defer a.Close()
		}
	}
	sources := []func() (dataset.PayloadSource, error){
		func() (dataset.PayloadSource, error) {
			return NewSource(a, SourceOptions{BatchCells: 4, ChunkCells: 9})
		},
		func() (dataset.PayloadSource, error) {
			rows := append(freshCells(12), memRow{name: "notes/a.txt", data: []byte("a"), inline: true})
			return &memSource{name: "fresh", shards: reshard(rows, 5, 1, 9)}, nil
		},
	}
	n := 0
	for i, newSource := range append(sources, sources...) {
		src, _ := newSource()
		write := writeParts
		if i >= len(sources) {
			write = writeRanges // parts written in place (the fresh one's values alone)
		}
		dirs, _, err := write(f, newSource, []int{0, 1, 2, src.NumShards()}, f.TempDir())
		if err != nil {
			f.Fatal(err)
		}
		for _, d := range dirs {
			b, err := os.ReadFile(filepath.Join(d, PartMetaFile))
			if err != nil {
				f.Fatal(err)
			}
			f.Add(b[:len(b)-4])
			n++
		}
	}
	if n < 6 {
		f.Fatalf("only %d seeds", n)
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		withCRC := binary.LittleEndian.AppendUint32(bytes.Clone(body), crc32.ChecksumIEEE(body))
		for _, b := range [][]byte{withCRC, body} {
			in := bytes.Clone(b)
			m, err := decodePartMeta(b)
			if !bytes.Equal(in, b) {
				t.Fatal("decodePartMeta modified its input")
			}
			if err != nil {
				if !errors.Is(err, ErrPart) || !strings.Contains(err.Error(), "offset ") {
					t.Fatalf("error %v: want ErrPart at an offset", err)
				}
				continue
			}
			if got := m.encode(); !bytes.Equal(got, b) {
				t.Fatalf("decoded and encoded again: %d bytes, not the %d read", len(got), len(b))
			}
		}
	})
}
