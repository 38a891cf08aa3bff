package tbl

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzReader checks, on v1 and v2 files alike, that the Reader never
// panics, that every error is an *Error with a sentinel, a sample in range
// and an offset inside the file, and that whatever Open accepts reads
// consistently: samples inside the data region, ReadSample, OpenSample and
// Verify agreeing, metadata readable.
func FuzzReader(f *testing.F) {
	paths, _ := filepath.Glob(filepath.Join(confDir(f), "*", "*.tbl"))
	if len(paths) < 18 {
		f.Fatalf("only %d conformance files", len(paths))
	}
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	for _, b := range baseFiles(f) {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		size := int64(len(data))
		r, err := newReader("fuzz", bytes.NewReader(data), size)
		if err != nil {
			checkFuzzErr(t, err, size, -1)
			return
		}
		n := r.Len()
		h := r.Header()
		if r.Version() != 1 && r.Version() != 2 || uint64(n) != h.NumSamples {
			t.Fatalf("accepted header %+v", h)
		}
		var firstErr error
		for i := range n {
			s := r.Sample(i)
			if s.Offset < int64(h.HeaderSize) || s.Offset+int64(s.StoredSize) > size {
				t.Fatalf("sample %d: %d bytes at %d outside [%d, %d)", i, s.StoredSize, s.Offset, h.HeaderSize, size)
			}
			if !s.Compressed && s.Size != s.StoredSize {
				t.Fatalf("sample %d: raw with size %d, stored %d", i, s.Size, s.StoredSize)
			}
			got, err := r.ReadSample(i, nil)
			sr, oerr := r.OpenSample(i)
			var streamed []byte
			if oerr == nil {
				streamed, oerr = io.ReadAll(sr)
			}
			if err != nil {
				checkFuzzErr(t, err, size, n)
				if oerr == nil || oerr.Error() != err.Error() {
					t.Fatalf("sample %d: ReadSample: %v; OpenSample: %v", i, err, oerr)
				}
				if firstErr == nil {
					firstErr = err
				}
			} else if len(got) != int(s.Size) || oerr != nil || !bytes.Equal(got, streamed) {
				t.Fatalf("sample %d: %d bytes, size %d; OpenSample %v", i, len(got), s.Size, oerr)
			}
			if _, err := r.Metadata(i); err != nil {
				t.Fatalf("sample %d: metadata: %v", i, err)
			}
		}
		verr := r.Verify()
		if (verr == nil) != (firstErr == nil) || verr != nil && verr.Error() != firstErr.Error() {
			t.Fatalf("Verify: %v; first ReadSample error: %v", verr, firstErr)
		}

		// From a file, ViewSamples maps the samples: the same bytes, or
		// the same first error.
		path := filepath.Join(t.TempDir(), "fuzz.tbl")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		fr, err := Open(path)
		if err != nil {
			t.Fatalf("Open of the same bytes: %v", err)
		}
		defer fr.Close()
		views, err := fr.ViewSamples(0, n)
		if (err == nil) != (firstErr == nil) || err != nil && err.Error() != strings.Replace(firstErr.Error(), "fuzz", path, 1) {
			t.Fatalf("ViewSamples: %v; first ReadSample error: %v", err, firstErr)
		}
		if err == nil {
			for i := range n {
				want, _ := r.ReadSample(i, nil)
				if !bytes.Equal(views.Data[i], want) {
					t.Fatalf("sample %d: ViewSamples and ReadSample differ", i)
				}
			}
			views.Release()
		}
	})
}

func confDir(t testing.TB) string {
	return filepath.Dir(confCases(t)[0])
}

func checkFuzzErr(t *testing.T, err error, size int64, n int) {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("error %v (%T) is not an *Error", err, err)
	}
	known := false
	for _, s := range []error{ErrFormat, ErrVersion, ErrCorrupt, ErrChecksum, ErrTruncated} {
		known = known || errors.Is(err, s)
	}
	if !known {
		t.Fatalf("error %v wraps no sentinel", err)
	}
	if e.Offset < 0 || e.Offset > size {
		t.Fatalf("error offset %d outside the %d-byte file: %v", e.Offset, size, err)
	}
	if e.Sample < -1 || n >= 0 && e.Sample >= n {
		t.Fatalf("error names sample %d of %d: %v", e.Sample, n, err)
	}
}
