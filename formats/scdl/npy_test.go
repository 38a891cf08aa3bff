package scdl

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// TestCumSumIndexMatchesBionemo: the cumulative_sum_index.npy files bionemo
// wrote (with numpy.save) are byte for byte what CumSumIndex makes.
func TestCumSumIndexMatchesBionemo(t *testing.T) {
	for _, c := range conformanceCases(t) {
		if !c.ok {
			continue
		}
		var e expected
		loadJSON(t, filepath.Join(c.dir, "expected.json"), &e)
		for _, fi := range []string{VarFeatures, ObsFeatures} {
			want, err := os.ReadFile(filepath.Join(c.dir, "scdl", fi, CumSumFile))
			if err != nil {
				t.Fatal(err)
			}
			// One block: same genes, so even the concatenation merged.
			if got := CumSumIndex([]int{len(e.Indptr) - 1}); !bytes.Equal(got, want) {
				t.Errorf("%s %s:\n got %q\nwant %q", c.name, fi, got, want)
			}
		}
	}
}

func TestAppendNPYHeader(t *testing.T) {
	cases := []struct {
		d    DType
		n    int
		text string
	}{
		{Float32, 5, "{'descr': '<f4', 'fortran_order': False, 'shape': (5,), }"},
		{Uint8, 0, "{'descr': '|u1', 'fortran_order': False, 'shape': (0,), }"},
		{Uint16, 123456789, "{'descr': '<u2', 'fortran_order': False, 'shape': (123456789,), }"},
		{Float64, math.MaxInt64, "{'descr': '<f8', 'fortran_order': False, 'shape': (9223372036854775807,), }"},
	}
	for _, c := range cases {
		h, err := AppendNPYHeader([]byte("prefix"), c.d, c.n)
		if err != nil {
			t.Fatal(err)
		}
		h = h[len("prefix"):]
		if len(h) != 128 {
			t.Errorf("%v %d: header of %d bytes, want 128", c.d, c.n, len(h))
		}
		if !bytes.HasPrefix(h, []byte("\x93NUMPY\x01\x00\x76\x00"+c.text+" ")) || h[len(h)-1] != '\n' || strings.TrimRight(string(h[10+len(c.text):127]), " ") != "" {
			t.Errorf("%v %d: %q", c.d, c.n, h)
		}
		p, err := ParseNPYHeader(h)
		if err != nil {
			t.Fatal(err)
		}
		want := &NPYHeader{Major: 1, Descr: NPYDescr(c.d), Shape: []int{c.n}, DataOffset: 128}
		if !reflect.DeepEqual(p, want) {
			t.Errorf("parsed %+v, want %+v", p, want)
		}
	}
	if _, err := AppendNPYHeader(nil, StringArray, 1); err == nil {
		t.Error("header for a string array")
	}
}

func TestWriteNPY(t *testing.T) {
	var buf bytes.Buffer
	data := u32bytes([]uint32{1, 2, 3})
	if err := WriteNPY(&buf, Uint32, data, 3); err != nil {
		t.Fatal(err)
	}
	b := buf.Bytes()
	if len(b) != 128+12 || !bytes.Equal(b[128:], data) {
		t.Fatalf("%q", b)
	}
	h, err := ReadNPYHeader(bytes.NewReader(b))
	if err != nil || h.Descr != "<u4" || !reflect.DeepEqual(h.Shape, []int{3}) || h.Len() != 3 {
		t.Fatalf("%+v %v", h, err)
	}
	for _, c := range []struct {
		d    DType
		data []byte
		n    int
	}{{Uint32, data, 2}, {Uint32, data[:11], 3}, {StringArray, nil, 0}, {Float32, nil, -1}} {
		if err := WriteNPY(&buf, c.d, c.data, c.n); err == nil {
			t.Errorf("WriteNPY(%v, %d bytes, %d) accepted", c.d, len(c.data), c.n)
		}
	}
}

func TestParseNPYHeader(t *testing.T) {
	v1 := func(text string) []byte {
		b := []byte("\x93NUMPY\x01\x00\x00\x00" + text)
		binary.LittleEndian.PutUint16(b[8:], uint16(len(text)))
		return b
	}
	v2 := func(major byte, text string) []byte {
		b := []byte("\x93NUMPY\x00\x00\x00\x00\x00\x00" + text)
		b[6] = major
		binary.LittleEndian.PutUint32(b[8:], uint32(len(text)))
		return b
	}
	ok := []struct {
		name string
		in   []byte
		want NPYHeader
	}{
		{"v1 numpy", v1("{'descr': '<i8', 'fortran_order': False, 'shape': (2,), }   \n"), NPYHeader{1, 0, "<i8", false, []int{2}, 71}},
		{"v2", v2(2, "{'descr': '<f4', 'fortran_order': True, 'shape': (3, 4), }\n"), NPYHeader{2, 0, "<f4", true, []int{3, 4}, 71}},
		{"v3 double quotes", v2(3, `{"shape": (), "descr": "<U5", "fortran_order": False}`), NPYHeader{3, 0, "<U5", false, []int{}, 65}},
		{"no trailing comma", v1("{'descr':'|u1','fortran_order':False,'shape':(7,)}"), NPYHeader{1, 0, "|u1", false, []int{7}, 60}},
	}
	for _, c := range ok {
		t.Run(c.name, func(t *testing.T) {
			h, err := ParseNPYHeader(append(c.in, 1, 2, 3))
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(*h, c.want) {
				t.Errorf("%+v, want %+v", *h, c.want)
			}
			h, err = ReadNPYHeader(bytes.NewReader(c.in))
			if err != nil || !reflect.DeepEqual(*h, c.want) {
				t.Errorf("ReadNPYHeader: %+v %v", h, err)
			}
		})
	}
	good := v1("{'descr': '<i8', 'fortran_order': False, 'shape': (2,), }\n")
	bad := []struct {
		name  string
		in    []byte
		kind  error
		off   int64
		words []string
	}{
		{"empty", nil, ErrTruncated, 0, nil},
		{"magic only", []byte("\x93NUM"), ErrTruncated, 4, nil},
		{"bad magic", []byte("\x93NUMPZ\x01\x00\x00\x00"), ErrFormat, 0, nil},
		{"version 4", v2(4, "{}"), ErrUnsupported, 6, []string{"version 4.0"}},
		{"cut header", good[:40], ErrTruncated, 40, nil},
		{"v2 cut preamble", v2(2, "")[:11], ErrTruncated, 11, nil},
		{"not a dict", v1("['descr']"), ErrFormat, 10, []string{"not a dict"}},
		{"missing shape", v1("{'descr': '<i8', 'fortran_order': False}"), ErrFormat, 10, []string{"required"}},
		{"unknown key", v1("{'descr': '<i8', 'fortran_order': False, 'shape': (2,), 'x': 1}"), ErrFormat, 10, []string{`unknown key "x"`}},
		{"key twice", v1("{'descr': '<i8', 'descr': '<i8'}"), ErrFormat, 10, []string{"twice"}},
		{"shape not a tuple", v1("{'descr': '<i8', 'fortran_order': False, 'shape': (2)}"), ErrFormat, 10, []string{"shape"}},
		{"negative dim", v1("{'descr': '<i8', 'fortran_order': False, 'shape': (-2,)}"), ErrFormat, 10, []string{"shape"}},
		{"record dtype", v1("{'descr': [('a', '<i8')], 'fortran_order': False, 'shape': (2,)}"), ErrFormat, 10, []string{"record"}},
		{"fortran yes", v1("{'descr': '<i8', 'fortran_order': yes, 'shape': (2,)}"), ErrFormat, 10, []string{"fortran_order"}},
		{"text after", v1("{'descr': '<i8', 'fortran_order': False, 'shape': (2,)} x"), ErrFormat, 10, []string{"after"}},
	}
	for _, c := range bad {
		t.Run(c.name, func(t *testing.T) {
			_, err := ParseNPYHeader(c.in)
			wantErr(t, err, c.kind, "", c.off, c.words...)
			_, err = ReadNPYHeader(bytes.NewReader(c.in))
			wantErr(t, err, c.kind, "", -2)
		})
	}
}

// numpyPython returns a Python interpreter that has numpy: the one on PATH
// or Debian's (apt-get install python3-numpy). Without one the test is
// skipped, except under CI, whose setup must install it.
func numpyPython(t *testing.T) string {
	for _, p := range []string{"python3", "/usr/bin/python3"} {
		if path, err := exec.LookPath(p); err == nil && exec.Command(path, "-c", "import numpy").Run() == nil {
			return path
		}
	}
	if os.Getenv("CI") != "" {
		t.Fatal("no python3 with numpy (install python3-numpy)")
	}
	t.Skip("no python3 with numpy (apt-get install python3-numpy)")
	return ""
}

// TestNumpyReadsWriteNPY: numpy.load reads what WriteNPY writes, with the
// right dtype, shape and values; and numpy.save writes the same bytes.
func TestNumpyReadsWriteNPY(t *testing.T) {
	py := numpyPython(t)
	dir := t.TempDir()
	type arr struct {
		d    DType
		vals []float64
	}
	arrays := []arr{
		{Uint8, []float64{0, 1, 255}},
		{Uint16, []float64{0, 65535, 7}},
		{Uint32, []float64{4294967295, 0, 29}},
		{Uint64, []float64{1 << 53, 3}},
		{Float16, []float64{1, -2, 0.5, 65504}},
		{Float32, []float64{1.5, -0.25, 3.4028234663852886e38}},
		{Float64, []float64{math.Pi, -1e300}},
		{Float32, nil},
	}
	big := make([]float64, 100000)
	for i := range big {
		big[i] = float64(i % 1000)
	}
	arrays = append(arrays, arr{Uint16, big})
	var script strings.Builder
	script.WriteString("import numpy as np, sys\n")
	for i, a := range arrays {
		raw := encodeTest(a.d, a.vals)
		f, err := os.Create(filepath.Join(dir, fmt.Sprintf("a%d.npy", i)))
		if err != nil {
			t.Fatal(err)
		}
		if err := WriteNPY(f, a.d, raw, len(a.vals)); err != nil {
			t.Fatal(err)
		}
		f.Close()
		fmt.Fprintf(&script, "x = np.load(%q, allow_pickle=False)\n", f.Name())
		fmt.Fprintf(&script, "print(x.dtype.name, x.shape, float(x.astype('float64').sum()), repr(x[:3].astype('float64').tolist()))\n")
		fmt.Fprintf(&script, "np.save(%q, x)\n", filepath.Join(dir, fmt.Sprintf("b%d.npy", i)))
	}
	out, err := exec.Command(py, "-c", script.String()).CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for i, a := range arrays {
		if !sc.Scan() {
			t.Fatalf("numpy printed %d lines:\n%s", i, out)
		}
		sum := 0.0
		for _, v := range a.vals {
			sum += v
		}
		first := a.vals[:min(3, len(a.vals))]
		firstText := "["
		for j, v := range first {
			if j > 0 {
				firstText += ", "
			}
			firstText += pyFloat(v)
		}
		firstText += "]"
		want := fmt.Sprintf("%s (%d,) %s %s", a.d, len(a.vals), pyFloat(sum), firstText)
		if sc.Text() != want {
			t.Errorf("array %d: numpy says %q, want %q", i, sc.Text(), want)
		}
		ours, _ := os.ReadFile(filepath.Join(dir, fmt.Sprintf("a%d.npy", i)))
		theirs, _ := os.ReadFile(filepath.Join(dir, fmt.Sprintf("b%d.npy", i)))
		if !bytes.Equal(ours, theirs) {
			t.Errorf("array %d: numpy.save writes\n%q\nWriteNPY\n%q", i, theirs[:128], ours[:128])
		}
	}
}

// pyFloat prints a float as Python's repr does for these values.
func pyFloat(v float64) string {
	if v == math.Trunc(v) && math.Abs(v) < 1e16 {
		return fmt.Sprintf("%.1f", v)
	}
	return fmt.Sprintf("%v", v)
}

// encodeTest encodes values in dtype d, little-endian.
func encodeTest(d DType, vals []float64) []byte {
	var b []byte
	le := binary.LittleEndian
	for _, v := range vals {
		switch d {
		case Uint8:
			b = append(b, byte(v))
		case Uint16:
			b = le.AppendUint16(b, uint16(v))
		case Uint32:
			b = le.AppendUint32(b, uint32(v))
		case Uint64:
			b = le.AppendUint64(b, uint64(v))
		case Float16:
			b = le.AppendUint16(b, map[float64]uint16{1: 0x3c00, -2: 0xc000, 0.5: 0x3800, 65504: 0x7bff}[v])
		case Float32:
			b = le.AppendUint32(b, math.Float32bits(float32(v)))
		case Float64:
			b = le.AppendUint64(b, math.Float64bits(v))
		}
	}
	return b
}
