package tarfile

import (
	"math/rand/v2"
	"testing"
)

func TestParseOctal(t *testing.T) {
	tests := []struct {
		in   string
		want int64
		ok   bool
	}{
		{"0000644\x00", 0o644, true},
		{"      12 ", 0o12, true},
		{"\x00\x0012\x00", 0o12, true},
		{"12\x0034", 0o12, true}, // a C string: what follows the NUL is ignored
		{"1 \x00", 1, true},
		{"1 \x002", 0, false}, // a space inside the digits
		{"1 2", 0, false},
		{"8", 0, false},
		{"", 0, true},
		{"        ", 0, true},
		{"77777777777", 0o77777777777, true},
		{"7777777777777777777777", 0, false}, // overflows 63 bits
		{"-1", 0, false},
	}
	for _, tt := range tests {
		got, ok := parseOctal([]byte(tt.in))
		if got != tt.want || ok != tt.ok {
			t.Errorf("parseOctal(%q) = %d, %v; want %d, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
}

// TestUnsignedSum: the checksum's sum of a header block, eight bytes at a
// time in four accumulators, is the sum of its bytes with the checksum
// field counted as spaces, blocks of all 0xff (the largest sum) included.
func TestUnsignedSum(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	b := make([]byte, BlockSize)
	for n := range 5000 {
		for i := range b {
			switch {
			case n == 0:
				b[i] = 0xff
			case n == 1:
				b[i] = 0
			default:
				b[i] = byte(rng.Uint32())
			}
		}
		var want int64
		for i, c := range b {
			if i >= offChksum && i < offChksum+8 {
				c = ' '
			}
			want += int64(c)
		}
		if got := unsignedSum(b); got != want {
			t.Fatalf("block %d: %d, want %d", n, got, want)
		}
	}
}
