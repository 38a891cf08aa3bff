package syswrite

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func TestNext(t *testing.T) {
	big := make([]byte, MaxWrite+10)
	small := make([]byte, 100)
	for _, c := range []struct {
		name   string
		pieces [][]byte
		maxIov int
		want   []int // the lengths of the pieces taken
	}{
		{"small ones", [][]byte{small, small, small}, 1024, []int{100, 100, 100}},
		{"up to the bound", [][]byte{small, big, small}, 1024, []int{100}},
		{"a large one cut", [][]byte{big, small}, 1024, []int{MaxWrite}},
		{"at most maxIov", [][]byte{small, small, small}, 2, []int{100, 100}},
		{"exactly the bound", [][]byte{make([]byte, MaxWrite-100), small, small}, 1024, []int{MaxWrite - 100, 100}},
	} {
		got := Next(nil, c.pieces, c.maxIov)
		var lens []int
		for _, p := range got {
			lens = append(lens, len(p))
		}
		if !slices.Equal(lens, c.want) {
			t.Errorf("%s: pieces of %v bytes, want %v", c.name, lens, c.want)
		}
	}
}

func TestWriteAndWriteAt(t *testing.T) {
	data := make([]byte, 3*MaxWrite+123)
	for i := range data {
		data[i] = byte(i * 7)
	}
	path := filepath.Join(t.TempDir(), "f")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if n, err := Write(f, data); n != len(data) || err != nil {
		t.Fatalf("Write: %d, %v", n, err)
	}
	if n, err := WriteAt(f, data, int64(len(data))); n != len(data) || err != nil {
		t.Fatalf("WriteAt: %d, %v", n, err)
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, append(append([]byte(nil), data...), data...)) {
		t.Fatal("the file's bytes differ from those written")
	}
}

// TestFileWritesAll: File writes everything it is given, through the
// capped calls, at the file's position and at an offset.
func TestFileWritesAll(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	data := bytes.Repeat([]byte{7}, 2*MaxWrite+1)
	w := File{File: f}
	if n, err := w.Write(data); n != len(data) || err != nil {
		t.Fatalf("Write: %d, %v", n, err)
	}
	if n, err := w.WriteAt(data, 10); n != len(data) || err != nil {
		t.Fatalf("WriteAt: %d, %v", n, err)
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if want := append(make([]byte, 0, 10+len(data)), append(bytes.Repeat([]byte{7}, 10), data...)...); !bytes.Equal(got, want) {
		t.Fatalf("%d bytes in the file, want %d", len(got), len(want))
	}
}

// TestAdvance: the pieces left after n bytes were written hold the bytes
// past n, in order, with no empty piece in front.
func TestAdvance(t *testing.T) {
	all := []byte("abcdefghij")
	for n := 0; n <= len(all); n++ {
		pieces := [][]byte{all[0:3], {}, all[3:4], all[4:4], all[4:10]}
		left := Advance(pieces, n)
		if got := bytes.Join(left, nil); !bytes.Equal(got, all[n:]) {
			t.Errorf("n=%d: %q, want %q", n, got, all[n:])
		}
		if len(left) > 0 && len(left[0]) == 0 {
			t.Errorf("n=%d: an empty piece in front", n)
		}
	}
}
