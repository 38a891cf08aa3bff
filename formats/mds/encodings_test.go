package mds

import (
	"encoding/binary"
	"math"
	"strconv"
	"testing"
)

// TestHalfText: every finite float16 reads as the shortest text that
// parses back to it, as numpy prints it (str(np.float16): 1.0, 0.3333,
// 65500.0, 6e-08, 7.325e-05, 0.0001, -2.5, -0.0), and the conversions
// agree both ways. Before, a float16 read as its float32's text
// (0.33325195), then in Go's notation (1, 6.55e+04).
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
	for bits, want := range map[uint16]string{0x3c00: "1.0", 0x3555: "0.3333", 0x7bff: "65500.0", 0x0001: "6e-08", 0x4cd: "7.325e-05",
		0x068e: "0.0001", 0xc100: "-2.5", 0x8000: "-0.0"} {
		if got := string(encoding{kindFloat, 2}.appendText(nil, binary.LittleEndian.AppendUint16(nil, bits))); got != want {
			t.Errorf("%#04x: %q, want %q", bits, got, want)
		}
	}
}

// TestFloatText: float32 and float64 values read as numpy prints them
// (str(np.float32(v)), str(np.float64(v)), numpy 1.24).
func TestFloatText(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(1)
	for _, c := range []struct {
		v   float64
		f32 string
		f64 string
	}{
		{1e16, "1e+16", "1e+16"},
		{1e15, "1000000000000000.0", "1000000000000000.0"},
		{0.0001, "1e-04", "0.0001"},
		{1e-05, "1e-05", "1e-05"},
		{math.Copysign(0, -1), "-0.0", "-0.0"},
		{0.1, "0.1", "0.1"},
		{1.5e-05, "1.5e-05", "1.5e-05"},
		{123.456, "123.456", "123.456"},
		{nan, "nan", "nan"},
		{-inf, "-inf", "-inf"},
		{65500, "65500.0", "65500.0"},
		{1.0 / 3, "0.33333334", "0.3333333333333333"},
	} {
		b32 := binary.LittleEndian.AppendUint32(nil, math.Float32bits(float32(c.v)))
		if got := string(encoding{kindFloat, 4}.appendText(nil, b32)); got != c.f32 {
			t.Errorf("float32 %v: %q, want %q", c.v, got, c.f32)
		}
		b64 := binary.LittleEndian.AppendUint64(nil, math.Float64bits(c.v))
		if got := string(encoding{kindFloat, 8}.appendText(nil, b64)); got != c.f64 {
			t.Errorf("float64 %v: %q, want %q", c.v, got, c.f64)
		}
	}
}
