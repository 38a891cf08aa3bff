package scdl

import (
	"encoding/binary"
	"flag"
	"hash/crc32"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

var updatePartMetaGolden = flag.Bool("update-partmeta", false, "rewrite testdata/partmeta_errors.golden")

// TestPartMetaErrors pins decodePartMeta's every refusal, message and
// offset included: each byte of a valid description is flipped (with the
// CRC made right again, so the fields are reached) and each prefix is
// tried, and the messages must be those in testdata/partmeta_errors.golden.
func TestPartMetaErrors(t *testing.T) {
	m := &partMeta{shards: 3, source: "s#0", members: 9, firstCell: "s#0: 1.values.npy", cells: 1, firstRow: 2, nnz: 4,
		dataDT: Float32, dataWhere: "s#0: 2.values.npy", colDT: Uint16, anyGene: true, maxGene: 300, nGenes: 1100,
		files: []partFile{{name: []byte("scdlmeta/header.sch"), size: 120, where: "s#0: scdlmeta/header.sch"}},
		edges: []edgeCell{
			{row: 1, members: []edgeMember{{kind: 'g', dtype: Uint8, signed: true, n: 3, nGenes: -1, off: 0, size: 3, where: "a"}}},
			{row: 3, members: []edgeMember{{kind: 'v', dtype: Float64, n: 2, nGenes: -1, off: 3, size: 16, where: "b"}, {kind: 'j', nGenes: 7, off: 19, where: "c"}}},
		}, edgesBytes: 19,
		place: &placement{dataDT: Float32, colDT: Uint16, total: 40, first: 10, data: "r.data", col: "r.col"}}
	good := m.encode()
	body := good[:len(good)-4]
	var lines []string
	try := func(what string, b []byte) {
		_, err := decodePartMeta(b)
		msg := "ok"
		if err != nil {
			msg = err.Error()
		}
		lines = append(lines, what+": "+msg)
	}
	for i := range body {
		for _, x := range []byte{0xff, 0x01} {
			b := append([]byte(nil), body...)
			b[i] ^= x
			try("flip "+strconv.Itoa(i)+"^"+strconv.Itoa(int(x)), binary.LittleEndian.AppendUint32(b, crc32.ChecksumIEEE(b)))
		}
	}
	for n := range len(good) {
		try("prefix "+strconv.Itoa(n), good[:n])
	}
	extra := append(append([]byte(nil), body...), 0)
	try("extra byte", binary.LittleEndian.AppendUint32(extra, crc32.ChecksumIEEE(extra)))
	got := strings.Join(lines, "\n") + "\n"
	golden := filepath.Join("testdata", "partmeta_errors.golden")
	if *updatePartMetaGolden {
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if got != string(want) {
		gl, wl := strings.Split(got, "\n"), strings.Split(string(want), "\n")
		for i := range min(len(gl), len(wl)) {
			if gl[i] != wl[i] {
				t.Fatalf("line %d:\n got %s\nwant %s", i+1, gl[i], wl[i])
			}
		}
		t.Fatalf("%d lines, want %d", len(gl), len(wl))
	}
}
