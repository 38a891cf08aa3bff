package tbl

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// TestViewSamples: every conformance file's samples, viewed in runs of any
// length, are the bytes ReadSample gives; Release drops them.
func TestViewSamples(t *testing.T) {
	for _, dir := range confCases(t) {
		c := filepath.Base(dir)
		for _, v := range confVariants {
			r, err := Open(filepath.Join(dir, c+"."+v.name+".tbl"))
			if err != nil {
				t.Fatal(err)
			}
			for _, run := range []int{1, 3, r.Len() + 1} {
				for from := 0; from < r.Len(); from += run {
					to := min(from+run, r.Len())
					views, err := r.ViewSamples(from, to)
					if err != nil {
						t.Fatalf("%s/%s: samples %d-%d: %v", c, v.name, from, to, err)
					}
					for i := from; i < to; i++ {
						want, err := r.ReadSample(i, nil)
						if err != nil {
							t.Fatal(err)
						}
						if !bytes.Equal(views.Data[i-from], want) {
							t.Errorf("%s/%s: sample %d differs", c, v.name, i)
						}
					}
					views.Release()
					if views.Data != nil {
						t.Fatal("Data kept after Release")
					}
				}
			}
			if _, err := r.ViewSamples(1, 0); err == nil {
				t.Error("a backwards run was accepted")
			}
			r.Close()
		}
	}
}

// TestViewSamplesErrors: a flipped byte is the sample's ErrChecksum (raw)
// or ErrCorrupt/ErrChecksum (LZ4), and a file cut short after Open is
// ErrTruncated naming the sample, as ReadSample reports them.
func TestViewSamplesErrors(t *testing.T) {
	dir := t.TempDir()
	ss := roundTripSamples(false)
	for _, opts := range []WriterOptions{{Version: 2, Replace: true}, {Version: 2, LZ4: true, Replace: true}} {
		path := filepath.Join(dir, "v.tbl")
		writeFile(t, path, opts, ss)
		r, err := Open(path)
		if err != nil {
			t.Fatal(err)
		}
		victim := 0 // the first sample with bytes
		for r.Sample(victim).StoredSize == 0 {
			victim++
		}
		s := r.Sample(victim)
		raw, _ := os.ReadFile(path)
		raw[s.Offset+int64(s.StoredSize)/2] ^= 0x55
		os.WriteFile(path, raw, 0o644)
		_, verr := r.ViewSamples(0, r.Len())
		_, rerr := r.ReadSample(victim, nil)
		var e *Error
		if verr == nil || !errors.As(verr, &e) || e.Sample != victim || errors.Unwrap(verr) != errors.Unwrap(rerr) {
			t.Errorf("LZ4 %v: flipped byte: %v, ReadSample says %v", opts.LZ4, verr, rerr)
		}
		r.Close()
	}

	// Cut short after Open: the pages past the new end are gone.
	big := []testSample{}
	for i := range 8 {
		big = append(big, testSample{format: JPEG, data: randomBytes(uint64(i), 64<<10)})
	}
	path := filepath.Join(dir, "big.tbl")
	writeFile(t, path, WriterOptions{Version: 2}, big)
	r, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if err := os.Truncate(path, r.Sample(2).Offset); err != nil {
		t.Fatal(err)
	}
	_, err = r.ViewSamples(0, r.Len())
	var e *Error
	if !errors.Is(err, ErrTruncated) || !errors.As(err, &e) || e.Sample < 2 {
		t.Errorf("file cut short: %v, want ErrTruncated at sample 2 or later", err)
	}
}

// TestViewSamplesEmptyOutside: an empty sample may sit anywhere in the data
// region, outside the span of the samples with bytes that ViewSamples maps.
func TestViewSamplesEmptyOutside(t *testing.T) {
	path := filepath.Join(t.TempDir(), "e.tbl")
	ss := []testSample{
		{format: JPEG, data: randomBytes(1, 12<<10)},
		{format: JPEG, data: randomBytes(2, 12<<10)},
		{format: PNG},
	}
	writeFile(t, path, WriterOptions{Version: 2}, ss)
	raw, _ := os.ReadFile(path)
	// Sample 2's offset (header 64 bytes, entries of 24) moves to the data's
	// start, two pages before the samples viewed.
	dataStart := uint64(64 + 3*24)
	tle.PutUint64(raw[64+2*24:], dataStart)
	if err := os.WriteFile(path, fixCRC(raw), 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if r.Sample(2).Offset != int64(dataStart) {
		t.Fatalf("sample 2 at %d", r.Sample(2).Offset)
	}
	views, err := r.ViewSamples(1, 3)
	if err != nil {
		t.Fatal(err)
	}
	defer views.Release()
	if !bytes.Equal(views.Data[0], ss[1].data) || views.Data[1] == nil || len(views.Data[1]) != 0 {
		t.Errorf("samples 1-2: %d and %d bytes", len(views.Data[0]), len(views.Data[1]))
	}
}
