package taridx

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"unsafe"
)

// TestAddReusedMemory: a caller that reuses the memory of the strings it
// gives Add (names read in place from a buffer it refills) gets the index
// of the names as they were: the extension table and the waiting rows
// kept views of that memory.
func TestAddReusedMemory(t *testing.T) {
	write := func(reuse bool) []byte {
		path := filepath.Join(t.TempDir(), "x.taridx")
		w, err := Create(path, WriterOptions{})
		if err != nil {
			t.Fatal(err)
		}
		buf := make([]byte, 16)
		for i := range 10 {
			name := []byte{'s', byte('a' + i), '.', 'j', 'p', 'g'}
			b := name
			if reuse {
				b = buf[:len(name)]
				copy(b, name)
			}
			stem := unsafe.String(&b[0], 2)
			ext := unsafe.String(&b[3], 3)
			if err := w.Add(Entry{Offset: uint64(i) * 1024, Size: 1, Stem: stem, Ext: ext, KeyHash: KeyHash(string(name[:2]))}); err != nil {
				t.Fatal(err)
			}
			if reuse {
				copy(buf, "\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n") // the buffer refilled
			}
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	if a, b := write(false), write(true); !bytes.Equal(a, b) {
		t.Errorf("the index of names whose memory was reused differs (%d bytes, want %d)", len(b), len(a))
	}
}
