package ratarmount

import (
	"bytes"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/itarconv/itarconv/formats/tarfile"
)

// hdr is a header block to build by hand, for shapes no tar writer makes.
type hdr struct {
	name, link string
	typeflag   byte
	size       int64 // the size field
	mode       int64
	gnu        bool // GNU magic instead of ustar
}

func (h hdr) block() []byte {
	b := make([]byte, tarfile.BlockSize)
	copy(b, h.name)
	mode := h.mode
	if mode == 0 {
		mode = 0o644
	}
	copy(b[100:], fmt.Sprintf("%07o\x00", mode))
	copy(b[108:], "0000000\x000000000\x00")
	copy(b[124:], fmt.Sprintf("%011o\x00%011o\x00", h.size, 1577836800))
	b[156] = h.typeflag
	copy(b[157:], h.link)
	if h.gnu {
		copy(b[257:], "ustar  \x00")
	} else {
		copy(b[257:], "ustar\x0000")
	}
	copy(b[148:], "        ")
	sum := 0
	for _, c := range b {
		sum += int(c)
	}
	copy(b[148:], fmt.Sprintf("%06o\x00 ", sum))
	return b
}

func pad(b []byte) []byte {
	return append(b, make([]byte, (tarfile.BlockSize-len(b)%tarfile.BlockSize)%tarfile.BlockSize)...)
}

// archive concatenates members and the end-of-archive blocks.
type archive struct{ bytes.Buffer }

// file adds a member with a payload.
func (a *archive) file(h hdr, data string) {
	if h.typeflag == 0 && h.name != "" && h.name[len(h.name)-1] != '/' {
		h.typeflag = tarfile.TypeReg
	}
	h.size = int64(len(data))
	a.Write(h.block())
	a.Write(pad([]byte(data)))
}

// header adds a header block alone (its size field is not followed by a
// payload).
func (a *archive) header(h hdr) { a.Write(h.block()) }

// pax adds a pax header of type typeflag with records (key, value).
func (a *archive) pax(typeflag byte, kv ...string) {
	var body []byte
	for i := 0; i+1 < len(kv); i += 2 {
		rec := " " + kv[i] + "=" + kv[i+1] + "\n"
		n := len(rec) + 1
		for len(fmt.Sprint(n))+len(rec) != n {
			n = len(fmt.Sprint(n)) + len(rec)
		}
		body = append(body, fmt.Sprint(n)+rec...)
	}
	a.Write(hdr{name: "././@PaxHeader", typeflag: typeflag, size: int64(len(body))}.block())
	a.Write(pad(body))
}

// write stores the archive with its end blocks in dir and returns its path.
func (a *archive) write(t testing.TB, dir string) string {
	t.Helper()
	a.Write(make([]byte, 2*tarfile.BlockSize))
	p := filepath.Join(dir, "a.tar")
	if err := os.WriteFile(p, a.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// addAll scans an archive in memory into a builder and returns the first
// error of Add.
func addAll(t testing.TB, data []byte, archive io.ReaderAt) (*Builder, error) {
	t.Helper()
	b := &Builder{Archive: archive}
	s := tarfile.NewScanner(bytes.NewReader(data), int64(len(data)), "", tarfile.Options{})
	for {
		m, err := s.Next()
		if err == io.EOF {
			return b, nil
		}
		if err != nil {
			t.Fatalf("scan: %v", err)
		}
		if err := b.Add(m); err != nil {
			return b, err
		}
	}
}

// fakeInfo is an os.FileInfo of no system, for metadata tarstats.
type fakeInfo struct {
	size  int64
	mtime time.Time
}

func (f fakeInfo) Name() string       { return "a.tar" }
func (f fakeInfo) Size() int64        { return f.size }
func (f fakeInfo) Mode() fs.FileMode  { return 0o644 }
func (f fakeInfo) ModTime() time.Time { return f.mtime }
func (f fakeInfo) IsDir() bool        { return false }
func (f fakeInfo) Sys() any           { return nil }
