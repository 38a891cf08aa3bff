package tbl

import (
	"bytes"
	"encoding/binary"
	"math/rand/v2"
	"os/exec"
	"testing"

	"github.com/itarconv/itarconv/testing/testutil"
	"github.com/pierrec/lz4/v4"
)

// testPayload returns n deterministic bytes that compress partly, as real
// samples do: runs of random bytes, repeats of earlier text and zeros.
func testPayload(seed uint64, n int) []byte {
	rng := rand.New(rand.NewPCG(seed, 0x7b1))
	b := make([]byte, 0, n)
	for len(b) < n {
		k := min(n-len(b), 1+rng.IntN(300))
		switch rng.IntN(3) {
		case 0:
			for range k {
				b = append(b, byte(rng.Uint32()))
			}
		case 1:
			if len(b) > 0 {
				from := rng.IntN(len(b))
				for j := range k {
					b = append(b, b[from+j%(len(b)-from)])
				}
				continue
			}
			fallthrough
		default:
			b = append(b, make([]byte, k)...)
		}
	}
	return b
}

// lz4FrameBlock runs the reference lz4 command on p and returns the single
// block of the frame it writes, and whether the block is stored raw.
func lz4FrameBlock(t *testing.T, tool string, p []byte) ([]byte, bool) {
	t.Helper()
	cmd := exec.Command(tool, "-1", "-c", "-BI", "-B7", "--no-frame-crc")
	cmd.Stdin = bytes.NewReader(p)
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	le := binary.LittleEndian
	if len(out) < 7 || le.Uint32(out) != 0x184D2204 {
		t.Fatalf("not an LZ4 frame: % x", out[:min(len(out), 16)])
	}
	pos := 6 // magic, FLG, BD
	if out[4]&0x08 != 0 {
		pos += 8 // content size
	}
	pos++ // header checksum
	size := le.Uint32(out[pos:])
	pos += 4
	raw := size&(1<<31) != 0
	size &^= 1 << 31
	block := out[pos : pos+int(size)]
	if le.Uint32(out[pos+int(size):]) != 0 {
		t.Fatalf("%d bytes: more than one block", len(p))
	}
	return block, raw
}

// TestLZ4MatchesReference checks that the compressor the Writer uses
// produces the reference library's bytes (as TurboLoader's
// LZ4_compress_default does) on both sides of the 64 KiB limit where the
// reference compressor changes its hash table, not only on the small
// samples of the conformance cases.
func TestLZ4MatchesReference(t *testing.T) {
	tool := testutil.NeedTool(t, "lz4")
	var c lz4.CompressorCCompat
	for i, n := range []int{1, 13, 100, 4096, 65535, 65546, 65547, 65548, 100000, 1 << 20} {
		p := testPayload(uint64(i), n)
		dst := make([]byte, lz4.CompressBlockBound(n))
		k, err := c.CompressBlock(p, dst)
		if err != nil {
			t.Fatal(err)
		}
		ref, raw := lz4FrameBlock(t, tool, p)
		switch {
		case raw && k < n:
			t.Errorf("%d bytes: reference stores the block raw, ours compresses to %d", n, k)
		case !raw && !bytes.Equal(dst[:k], ref):
			t.Errorf("%d bytes: our block of %d bytes differs from the reference's %d at %d", n, k, len(ref), firstDiff(dst[:k], ref))
		}
	}
}
