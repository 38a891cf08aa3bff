package tarfile

import (
	"archive/tar"
	"bytes"
	"compress/bzip2"
	"encoding/base64"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// goTestdata returns the tar files of the Go toolchain's archive/tar tests,
// decoded where they are stored base64 or bzip2.
func goTestdata(t testing.TB) map[string][]byte {
	dir := filepath.Join(runtime.GOROOT(), "src", "archive", "tar", "testdata")
	paths, _ := filepath.Glob(filepath.Join(dir, "*.tar*"))
	if len(paths) == 0 {
		t.Skipf("no Go toolchain testdata in %s", dir)
	}
	files := make(map[string][]byte)
	for _, p := range paths {
		raw, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		name := filepath.Base(p)
		switch {
		case strings.HasSuffix(name, ".base64"):
			raw, err = base64.StdEncoding.DecodeString(string(raw))
		case strings.HasSuffix(name, ".bz2"):
			raw, err = io.ReadAll(bzip2.NewReader(bytes.NewReader(raw)))
		}
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		files[name] = raw
	}
	return files
}

// goMember is what both readers must agree on for one entry.
type goMember struct {
	Name, Linkname string
	Typeflag       byte
	Size           int64
	Mode, UID, GID int64
	ModTime        int64
}

func readWithGo(data []byte) ([]goMember, error) {
	tr := tar.NewReader(bytes.NewReader(data))
	var out []goMember
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		// Go's reader also reads payloads lazily; draining them checks that
		// the archive is not truncated, as the scanner does.
		if _, err := io.Copy(io.Discard, tr); err != nil {
			return out, err
		}
		g := goMember{h.Name, h.Linkname, h.Typeflag, h.Size, h.Mode, int64(h.Uid), int64(h.Gid), h.ModTime.Unix()}
		if isHeaderOnly(h.Typeflag) {
			g.Size = 0 // archive/tar keeps the header's size field but stores no payload
		}
		if h.Typeflag == tar.TypeXGlobalHeader {
			g.ModTime = 0 // archive/tar gives a zero time.Time
		}
		out = append(out, g)
	}
}

func readWithScanner(data []byte, strategy Strategy) ([]goMember, error) {
	s := NewScanner(bytes.NewReader(data), int64(len(data)), "", Options{Strategy: strategy})
	var out []goMember
	for {
		m, err := s.Next()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		size := m.Size
		if m.Sparse {
			size = m.RealSize // Go reports a sparse file's logical size
		}
		out = append(out, goMember{string(m.Name), string(m.Linkname), m.Typeflag, size, m.Mode, m.UID, m.GID, m.ModTime})
	}
}

// TestAgreesWithArchiveTar checks every archive of Go's own archive/tar test
// data that archive/tar reads without error: the scanner must list the same
// members with the same names, types, sizes and metadata.
func TestAgreesWithArchiveTar(t *testing.T) {
	files := goTestdata(t)
	agreed := 0
	for name, data := range files {
		want, gerr := readWithGo(data)
		for _, strategy := range []Strategy{StrategyPread, StrategySequential} {
			got, err := readWithScanner(data, strategy)
			if gerr != nil {
				// archive/tar refuses it; the scanner may read or refuse it,
				// but must never panic (reaching here is the check).
				t.Logf("%s: archive/tar: %v; scanner: %d members, %v", name, gerr, len(got), err)
				continue
			}
			if err != nil {
				t.Errorf("%s (%s): scanner failed where archive/tar did not: %v", name, strategy, err)
				continue
			}
			if len(got) != len(want) {
				t.Errorf("%s (%s): %d members, archive/tar has %d", name, strategy, len(got), len(want))
				continue
			}
			for i := range want {
				if got[i] != want[i] {
					t.Errorf("%s (%s) member %d:\n got %+v\nwant %+v", name, strategy, i, got[i], want[i])
				}
			}
		}
		if gerr == nil {
			agreed++
		}
	}
	if agreed < 30 {
		t.Errorf("only %d archives were compared", agreed)
	}
	t.Logf("%d of %d archives compared", agreed, len(files))
}
