package tarfile

import (
	"fmt"
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

// TestUnsignedSum: the checksum's sum of a header block is the sum of its
// bytes with the checksum field counted as spaces, blocks of all 0xff (the
// largest sum) included; the sum in Go, which other processors take, and
// the one of this processor's instructions alike, at any alignment.
func TestUnsignedSum(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	buf := make([]byte, BlockSize+16)
	for n := range 5000 {
		b := buf[n%16 : n%16+BlockSize]
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
		if got, want := byteSumGo(b), byteSum(b); got != want {
			t.Fatalf("block %d: byteSumGo %d, byteSum %d", n, got, want)
		}
	}
}

// TestFixedOctal: the 8- and 12-byte fields read eight digits at a time
// give what the loop a byte at a time gives, wherever they take a field:
// fields of digits, of every octal value's shape, and of random bytes
// close to it (a digit 8 or 9, a space or NUL in the middle, a high bit).
func TestFixedOctal(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	alphabet := []byte("01234567012345670123456789 \x00/\xb0\xb7")
	taken := 0
	for n := range 200000 {
		b := make([]byte, []int{8, 12}[n%2])
		switch n % 3 {
		case 0: // a value as tar writes it
			v := rng.Uint64N(1 << (3 * (len(b) - 1)))
			copy(b, fmt.Sprintf("%0*o", len(b)-1, v))
			if got, ok := fixedOctal(b); !ok || uint64(got) != v {
				t.Fatalf("%q: %d %v, want %d", b, got, ok, v)
			}
			if len(b) == 8 { // and as a checksum
				copy(b, fmt.Sprintf("%06o\x00 ", v>>3))
				if got, ok := fixedOctal(b); !ok || uint64(got) != v>>3 {
					t.Fatalf("%q: %d %v, want %d", b, got, ok, v>>3)
				}
			}
		default: // random bytes of the same alphabet
			for i := range b {
				b[i] = alphabet[rng.IntN(len(alphabet))]
			}
		}
		b[len(b)-1] = []byte{0, ' ', '1', 'x'}[rng.IntN(4)]
		if n%5 == 0 { // the checksum's shape: six digits, NUL, space
			b[len(b)-2] = 0
		}
		got, ok := fixedOctal(b)
		if !ok {
			continue
		}
		taken++
		if want, wok := octalLoop(b); !wok || got != want {
			t.Fatalf("%q: fixedOctal %d, the loop %d %v", b, got, want, wok)
		}
	}
	if taken < 20000 {
		t.Fatalf("only %d fields took the fixed shape's path", taken)
	}
}
