package scdl

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/itarconv/itarconv/testing/testutil"
)

// FuzzDecodeHeader checks that DecodeHeader never panics, that every error
// is an *Error at an offset inside the input, and that whatever it accepts
// and MarshalBinary will write encodes back to exactly the input.
func FuzzDecodeHeader(f *testing.F) {
	n := 0
	for _, c := range conformanceCases(f) {
		b, err := os.ReadFile(filepath.Join(c.dir, "scdl", HeaderFile))
		if err != nil {
			continue // a failed conversion: no header
		}
		f.Add(b)
		n++
	}
	if n < 4 {
		f.Fatalf("only %d conformance headers", n)
	}
	synth, _ := synthHeader().MarshalBinary()
	f.Add(synth)
	f.Add(synth[:offFICount])
	f.Add([]byte("SCDL\x00\x01\x00\x01\x00\x00\x00\x01\x00\x00\x00\x00\x00\x00\x00\x00"))
	f.Fuzz(func(t *testing.T, data []byte) {
		in := bytes.Clone(data)
		h, err := DecodeHeader(data)
		if !bytes.Equal(in, data) {
			t.Fatal("DecodeHeader modified its input")
		}
		if err != nil {
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("error %T %v is not *Error", err, err)
			}
			if !errors.Is(err, ErrFormat) && !errors.Is(err, ErrTruncated) && !errors.Is(err, ErrUnsupported) {
				t.Fatalf("error %v wraps no decoding sentinel", err)
			}
			if e.Path != "" || e.Offset < 0 || e.Offset > int64(len(data)) {
				t.Fatalf("error %v: path %q, offset %d of %d bytes", err, e.Path, e.Offset, len(data))
			}
			if h != nil {
				t.Fatal("header returned with an error")
			}
			return
		}
		if h.Endianness != EndianNetwork || h.Backend != BackendMemmapV0 {
			t.Fatalf("accepted %+v", h)
		}
		for _, a := range h.Arrays {
			if !a.DType.Valid() {
				t.Fatalf("accepted dtype %d", a.DType)
			}
		}
		out, err := h.MarshalBinary()
		if err != nil {
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("MarshalBinary: %v", err)
			}
			return
		}
		if !bytes.Equal(out, data) {
			t.Fatalf("encode(decode(x)) != x:\n%x\n%x", out, data)
		}
	})
}

// FuzzParseNPYHeader checks that ParseNPYHeader never panics and that what
// it accepts lies inside its input.
func FuzzParseNPYHeader(f *testing.F) {
	hdr, _ := AppendNPYHeader(nil, Float32, 7)
	f.Add(hdr)
	f.Add(CumSumIndex([]int{3, 4}))
	f.Add([]byte("\x93NUMPY\x02\x00\x10\x00\x00\x00{'shape': (),}  "))
	f.Fuzz(func(t *testing.T, data []byte) {
		h, err := ParseNPYHeader(data)
		if err != nil {
			var e *Error
			if !errors.As(err, &e) || e.Offset < 0 || e.Offset > int64(len(data)) {
				t.Fatalf("error %v", err)
			}
			return
		}
		if h.DataOffset > len(data) || h.DataOffset < 10 {
			t.Fatalf("data offset %d of %d bytes", h.DataOffset, len(data))
		}
		for _, d := range h.Shape {
			if d < 0 {
				t.Fatalf("shape %v", h.Shape)
			}
		}
	})
}

// FuzzFileMetaData checks that the Parquet footer reader never panics.
func FuzzFileMetaData(f *testing.F) {
	p := testutil.FakeParquet(30)
	f.Add(p[4 : len(p)-8])
	f.Add([]byte{0x29, 0x1c, 0x48, 0x01, 's', 0x00, 0x16, 0x14, 0x00})
	f.Add([]byte{0x1b, 0xff, 0x0f, 0x00})
	f.Fuzz(func(t *testing.T, data []byte) {
		rows, cols, err := fileMetaData(data)
		if err == nil && rows < 0 {
			t.Fatalf("rows %d cols %d", rows, cols)
		}
	})
}
