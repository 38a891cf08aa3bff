package taridx

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/itarconv/itarconv/testing/testutil"
)

// FuzzParse checks that Parse never panics, that every error is an *Error
// inside the file, and that whatever it accepts is self-consistent and
// encodes back to exactly the input.
func FuzzParse(f *testing.F) {
	paths, _ := filepath.Glob(filepath.Join(testutil.Conformance(f, "taridx"), "*", "*.taridx*"))
	more, _ := filepath.Glob(filepath.Join(testutil.Conformance(f, "taridx-synthetic"), "*", "*.taridx"))
	paths = append(paths, more...)
	if len(paths) < 25 {
		f.Fatalf("only %d conformance indexes", len(paths))
	}
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	for _, c := range parseCases {
		f.Add(c.input())
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		in := bytes.Clone(data)
		x, err := Parse("fuzz", data)
		if !bytes.Equal(in, data) {
			t.Fatal("Parse modified its input")
		}
		checkOpenFile(t, data, x, err)
		if err != nil {
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("error %T %v is not *Error", err, err)
			}
			if !errors.Is(err, ErrFormat) && !errors.Is(err, ErrCorrupt) && !errors.Is(err, ErrVersion) {
				t.Fatalf("error %v wraps no sentinel", err)
			}
			if e.Offset < 0 || e.Offset > int64(len(data)) {
				t.Fatalf("error offset %d outside the %d-byte file: %v", e.Offset, len(data), err)
			}
			if x != nil {
				t.Fatal("index returned with an error")
			}
			return
		}
		h := x.Header
		if uint64(x.Len()) != h.NRows {
			t.Fatalf("Len() %d, n_rows %d", x.Len(), h.NRows)
		}
		if uint64(len(x.Exts)) != uint64(h.NExt) || uint64(len(x.CrashStems)) != uint64(h.NCrash) {
			t.Fatalf("%d exts, %d crash stems; header says %d, %d", len(x.Exts), len(x.CrashStems), h.NExt, h.NCrash)
		}
		if h.Major != Major || h.HdrSize != HeaderSize || h.RecSize != RecordSize {
			t.Fatalf("accepted header %+v", h)
		}
		seen := make(map[string]bool)
		for _, e := range x.Exts {
			if seen[e] || strings.Contains(e, "\n") {
				t.Fatalf("extension %q twice or with a newline", e)
			}
			seen[e] = true
		}
		for i := range x.Len() {
			r := x.Row(i)
			if int(r.ExtID) >= len(x.Exts) || int(r.CrashID) > len(x.CrashStems) {
				t.Fatalf("row %d: %+v with %d exts, %d crash stems", i, r, len(x.Exts), len(x.CrashStems))
			}
		}

		// Encode it back: header, joined tables, rows.
		out, err := h.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, strings.Join(x.Exts, "\n")...)
		if uint64(len(out)) != h.OffCrash {
			t.Fatalf("ext block ends at %d, off_crash %d", len(out), h.OffCrash)
		}
		out = append(out, strings.Join(x.CrashStems, "\n")...)
		if uint64(len(out)) != h.OffArr {
			t.Fatalf("crash block ends at %d, off_arr %d", len(out), h.OffArr)
		}
		var rb [RecordSize]byte
		for i := range x.Len() {
			PutRow(rb[:], x.Row(i))
			out = append(out, rb[:]...)
		}
		if !bytes.Equal(out, data) {
			t.Fatalf("re-encoded index differs from the input\n got %x\nwant %x", out, data)
		}
	})
}

// checkOpenFile: OpenFile and ReadRows, a range at a time, accept what
// Parse accepts, with the same rows, and refuse what it refuses, with the
// same error (the path aside).
func checkOpenFile(t *testing.T, data []byte, x *Index, parseErr error) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "fuzz")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	var rows []Row
	f, err := OpenFile(path)
	if err == nil {
		defer f.Close()
		dst := make([]Row, 3)
		for i := 0; i < f.Len(); {
			n, rerr := f.ReadRows(i, dst, nil)
			if rerr != nil {
				err = rerr
				break
			}
			rows = append(rows, dst[:n]...)
			i += n
		}
	}
	same := func(a, b error) bool {
		return strings.ReplaceAll(fmt.Sprint(a), path, "fuzz") == fmt.Sprint(b)
	}
	if (err == nil) != (parseErr == nil) || err != nil && !same(err, parseErr) {
		t.Fatalf("OpenFile/ReadRows: %v; Parse: %v", err, parseErr)
	}
	if x == nil {
		return
	}
	if f.Header != x.Header || len(rows) != x.Len() || fmt.Sprint(f.Exts, f.CrashStems) != fmt.Sprint(x.Exts, x.CrashStems) {
		t.Fatalf("OpenFile: header %+v, %d rows; Parse: %+v, %d rows", f.Header, len(rows), x.Header, x.Len())
	}
	for i, r := range rows {
		if r != x.Row(i) {
			t.Fatalf("row %d: %+v, Parse %+v", i, r, x.Row(i))
		}
	}
}
