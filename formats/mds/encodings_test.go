package mds

import (
	"encoding/binary"
	"math"
	"strconv"
	"testing"
)

// TestHalfText: every finite float16 reads as the shortest text that
// parses back to it, the digits numpy prints (str(np.float16): 1.0,
// 0.3333, 65500.0, 6e-08, 7.325e-05), and the conversions agree both
// ways. Before, a float16 read as its float32's text (0.33325195).
func TestHalfText(t *testing.T) {
	for h := 0; h < 1<<16; h++ {
		f := half(uint16(h))
		if f != f || math.IsInf(float64(f), 0) {
			continue
		}
		if back := toHalf(f); back != uint16(h) && !(f == 0 && back&0x7fff == 0) {
			t.Fatalf("%#04x: %v back to %#04x", h, f, back)
		}
		txt := string(encoding{kindFloat, 2}.appendText(nil, binary.LittleEndian.AppendUint16(nil, uint16(h))))
		g, err := strconv.ParseFloat(txt, 32)
		if err != nil || toHalf(float32(g)) != uint16(h) {
			t.Fatalf("%#04x: %q", h, txt)
		}
	}
	for bits, want := range map[uint16]string{0x3c00: "1", 0x3555: "0.3333", 0x7bff: "6.55e+04", 0x0001: "6e-08", 0x4cd: "7.325e-05"} {
		if got := string(encoding{kindFloat, 2}.appendText(nil, binary.LittleEndian.AppendUint16(nil, bits))); got != want {
			t.Errorf("%#04x: %q, want %q", bits, got, want)
		}
	}
}
