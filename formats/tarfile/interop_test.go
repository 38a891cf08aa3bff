package tarfile

import (
	"archive/tar"
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/itarconv/itarconv/testing/testutil"
)

// treeEntry is one file of the input tree the interop archives are made of.
type treeEntry struct {
	path     string // '/'-separated, without a trailing slash
	typeflag byte   // TypeReg, TypeDir, TypeSymlink or TypeLink
	size     int    // content length of a regular file
	target   string // symlink target, or the path a hard link shares its inode with
}

// The names are kept well away from the format limits (99 bytes for v7, 100
// for a ustar name field, 155 for a ustar prefix) so that every writer makes
// the same choice about them.
var (
	longDir   = "long-directory-" + strings.Repeat("d", 55)                     // 70 bytes
	longFile  = longDir + "/long-file-name-" + strings.Repeat("f", 41) + ".txt" // 131: ustar splits it
	longDir2  = longDir + "/second-level-" + strings.Repeat("e", 77)            // 161
	longDir3  = longDir2 + "/third-level-" + strings.Repeat("g", 78)            // 252, 253 with its slash
	deepFile  = longDir3 + "/deep-file-" + strings.Repeat("h", 26) + ".txt"     // 293
	component = "component-" + strings.Repeat("c", 106) + ".txt"                // one 120-byte component
)

// interopTree lists the input tree in archive order: parents before
// children, a hard link's first path before the link.
var interopTree = []treeEntry{
	{path: "empty.txt", typeflag: TypeReg, size: 0},
	{path: "small.txt", typeflag: TypeReg, size: 13},
	{path: "block512.bin", typeflag: TypeReg, size: 512},
	{path: "block1024.bin", typeflag: TypeReg, size: 1024},
	{path: "odd1025.bin", typeflag: TypeReg, size: 1025},
	{path: "hard.bin", typeflag: TypeLink, target: "block512.bin"},
	{path: "sym.txt", typeflag: TypeSymlink, target: "small.txt"},
	{path: "emptydir", typeflag: TypeDir},
	{path: "dir", typeflag: TypeDir},
	{path: "dir/sub", typeflag: TypeDir},
	{path: "dir/sub/deeper", typeflag: TypeDir},
	{path: "dir/sub/deeper/nested.txt", typeflag: TypeReg, size: 700},
	{path: "ünïcödé-日本語-файл.txt", typeflag: TypeReg, size: 5},
	{path: "dir/sub/τέλος", typeflag: TypeDir},
	{path: longDir, typeflag: TypeDir},
	{path: longFile, typeflag: TypeReg, size: 600},
	{path: longDir2, typeflag: TypeDir},
	{path: longDir3, typeflag: TypeDir},
	{path: deepFile, typeflag: TypeReg, size: 2000},
	{path: component, typeflag: TypeReg, size: 100},
	{path: "longsym", typeflag: TypeSymlink, target: longFile},
	{path: "hard-long.bin", typeflag: TypeLink, target: longFile},
}

// archiveName is the name an entry is stored under: directories end in '/'.
func (e treeEntry) archiveName() string {
	if e.typeflag == TypeDir {
		return e.path + "/"
	}
	return e.path
}

func (e treeEntry) content() []byte { return pattern(e.size, byte(len(e.path))) }

// makeTree creates the input tree under root.
func makeTree(t *testing.T, root string) {
	for _, e := range interopTree {
		p := filepath.Join(root, filepath.FromSlash(e.path))
		var err error
		switch e.typeflag {
		case TypeDir:
			err = os.Mkdir(p, 0o755)
		case TypeReg:
			err = os.WriteFile(p, e.content(), 0o644)
		case TypeSymlink:
			err = os.Symlink(e.target, p)
		case TypeLink:
			err = os.Link(filepath.Join(root, filepath.FromSlash(e.target)), p)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}

// limits says what a format can store.
type limits int

const (
	unlimited   limits = iota // GNU long names, pax records
	ustarLimits               // name ≤ 100, or split at a '/' into prefix ≤ 155 and name ≤ 100; link ≤ 100
	ustarASCII                // ustarLimits, ASCII only (archive/tar's ustar)
	v7Limits                  // name and link ≤ 99
)

func fitsUSTAR(name string) bool {
	if len(name) <= 100 {
		return true
	}
	for i := 0; i < len(name) && i <= 155; i++ {
		if name[i] == '/' && len(name)-i-1 <= 100 && i > 0 {
			return true
		}
	}
	return false
}

func (l limits) fits(e treeEntry) bool {
	name := e.archiveName()
	switch l {
	case v7Limits:
		return len(name) <= 99 && len(e.target) <= 99
	case ustarASCII:
		if !isASCII([]byte(name)) {
			return false
		}
		fallthrough
	case ustarLimits:
		return fitsUSTAR(name) && len(e.target) <= 100
	}
	return true
}

// interopWriter makes one tar variant from the tree.
type interopWriter struct {
	name   string
	limits limits
	format Format // the dialect of every member's own header block
	write  func(t *testing.T, root, out string, names []string)
}

func gnuTar(format string) func(t *testing.T, root, out string, names []string) {
	return func(t *testing.T, root, out string, names []string) {
		tarPath := testutil.NeedTool(t, "tar")
		args := []string{"--create", "--file", out, "--format=" + format, "--no-recursion", "-C", root, "--"}
		run(t, root, tarPath, append(args, names...)...)
	}
}

func bsdtar(format string) func(t *testing.T, root, out string, names []string) {
	return func(t *testing.T, root, out string, names []string) {
		bsdtarPath := testutil.NeedTool(t, "bsdtar")
		args := []string{"-c", "-f", out, "--format", format, "-n", "-C", root}
		run(t, root, bsdtarPath, append(args, names...)...)
	}
}

func busyboxTar(t *testing.T, root, out string, names []string) {
	busybox := testutil.NeedTool(t, "busybox")
	args := []string{"tar", "c", "--no-recursion", "-f", out, "-C", root}
	run(t, root, busybox, append(args, names...)...)
}

const pythonWriteScript = `
import os, sys, tarfile
out, fmt, root = sys.argv[1:4]
with tarfile.open(out, "w", format=getattr(tarfile, fmt), encoding="utf-8") as tf:
    for name in sys.argv[4:]:
        tf.add(os.path.join(root, name), arcname=name, recursive=False)
`

func pythonTar(format string) func(t *testing.T, root, out string, names []string) {
	return func(t *testing.T, root, out string, names []string) {
		py := testutil.NeedTool(t, "python3")
		args := []string{"-c", pythonWriteScript, out, format, root}
		run(t, root, py, append(args, names...)...)
	}
}

// goTar writes the tree with archive/tar. It sets the headers itself
// (FileInfoHeader knows nothing of hard links).
func goTar(format tar.Format) func(t *testing.T, root, out string, names []string) {
	return func(t *testing.T, root, out string, names []string) {
		byName := make(map[string]treeEntry)
		for _, e := range interopTree {
			byName[e.path] = e
		}
		var buf bytes.Buffer
		tw := tar.NewWriter(&buf)
		for _, name := range names {
			e := byName[name]
			st, err := os.Lstat(filepath.Join(root, filepath.FromSlash(name)))
			if err != nil {
				t.Fatal(err)
			}
			h := &tar.Header{
				Name:     e.archiveName(),
				Typeflag: e.typeflag,
				Mode:     int64(st.Mode().Perm()),
				ModTime:  st.ModTime().Truncate(1e9),
				Linkname: e.target,
				Format:   format,
			}
			if e.typeflag == TypeReg {
				h.Size = int64(e.size)
			}
			if err := tw.WriteHeader(h); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if e.typeflag == TypeReg {
				if _, err := tw.Write(e.content()); err != nil {
					t.Fatal(err)
				}
			}
		}
		if err := tw.Close(); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(out, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

var interopWriters = []interopWriter{
	{"gnutar-gnu", unlimited, FormatGNU, gnuTar("gnu")},
	{"gnutar-oldgnu", unlimited, FormatGNU, gnuTar("oldgnu")},
	{"gnutar-posix", unlimited, FormatUSTAR, gnuTar("posix")},
	{"gnutar-ustar", ustarLimits, FormatUSTAR, gnuTar("ustar")},
	{"gnutar-v7", v7Limits, FormatV7, gnuTar("v7")},
	{"bsdtar-pax", unlimited, FormatUSTAR, bsdtar("pax")},
	{"bsdtar-gnutar", unlimited, FormatGNU, bsdtar("gnutar")},
	{"bsdtar-ustar", ustarLimits, FormatUSTAR, bsdtar("ustar")},
	{"busybox", unlimited, FormatGNU, busyboxTar},
	{"python-gnu", unlimited, FormatGNU, pythonTar("GNU_FORMAT")},
	{"python-pax", unlimited, FormatUSTAR, pythonTar("PAX_FORMAT")},
	{"python-ustar", ustarLimits, FormatUSTAR, pythonTar("USTAR_FORMAT")},
	{"go-gnu", unlimited, FormatGNU, goTar(tar.FormatGNU)},
	{"go-pax", unlimited, FormatUSTAR, goTar(tar.FormatPAX)},
	{"go-ustar", ustarASCII, FormatUSTAR, goTar(tar.FormatUSTAR)},
}

// TestInterop scans archives that real tar writers make of one input tree
// and checks every member against three independent accounts of it: the tree
// itself, Python's tarfile (names, types, sizes, header and payload
// offsets) and Go's archive/tar (names, link names, types, sizes, and payload
// offsets counted from the bytes it consumed).
func TestInterop(t *testing.T) {
	root := filepath.Join(t.TempDir(), "tree")
	if err := os.Mkdir(root, 0o755); err != nil {
		t.Fatal(err)
	}
	makeTree(t, root)
	for _, w := range interopWriters {
		t.Run(w.name, func(t *testing.T) {
			var want []treeEntry
			var names []string
			for _, e := range interopTree {
				if w.limits.fits(e) {
					want = append(want, e)
					names = append(names, e.path)
				}
			}
			out := filepath.Join(t.TempDir(), w.name+".tar")
			w.write(t, root, out, names)
			checkInterop(t, out, w.format, want)
		})
	}
}

func checkInterop(t *testing.T, path string, format Format, want []treeEntry) {
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	got, end := scanPath(t, path, Options{})
	for _, s := range strategies {
		other, otherEnd := scanPath(t, path, Options{Strategy: s})
		if !equalScans(got, other) || otherEnd != end {
			t.Fatalf("strategy %v lists other members than auto:\n%v (end %d)\n%v (end %d)", s, other, otherEnd, got, end)
		}
	}

	// The tree: every entry the format can store, in order, and nothing else.
	if len(got) != len(want) {
		t.Errorf("%d members, want %d:", len(got), len(want))
		for _, m := range got {
			t.Logf("  %v", m)
		}
		return
	}
	var next int64 // where the next member's chain must start
	extended := 0  // members with pax or long-name headers
	for i, m := range got {
		e := want[i]
		name := m.Name
		if m.Typeflag == TypeDir {
			name = strings.TrimSuffix(name, "/")
		}
		wantSize := int64(e.size)
		if e.typeflag != TypeReg {
			wantSize = 0
		}
		if name != e.path || m.Typeflag != e.typeflag || m.Size != wantSize || m.Linkname != e.target || m.Sparse {
			t.Errorf("member %d = %v\nwant %q type %q size %d link %q", i, m, e.path, e.typeflag, wantSize, e.target)
		}
		if m.Format != format {
			t.Errorf("member %d (%s): format %v, want %v", i, e.path, m.Format, format)
		}
		if m.FirstOffset != next || m.HeaderOffset < m.FirstOffset || m.DataOffset != m.HeaderOffset+BlockSize {
			t.Errorf("member %d (%s): chain at %d, header at %d, data at %d; the previous member ended at %d",
				i, e.path, m.FirstOffset, m.HeaderOffset, m.DataOffset, next)
		}
		if needsExtension := !fitsUSTAR(e.archiveName()) || len(e.target) > 100; needsExtension && m.FirstOffset == m.HeaderOffset {
			t.Errorf("member %d (%s): no long-name or pax header before the header at %d", i, e.path, m.HeaderOffset)
		}
		if m.FirstOffset < m.HeaderOffset {
			extended++
		}
		if e.typeflag == TypeReg && !bytes.Equal(data[m.DataOffset:m.DataOffset+m.Size], e.content()) {
			t.Errorf("member %d (%s): the bytes at offset %d are not its content", i, e.path, m.DataOffset)
		}
		next = m.DataOffset + blocksFor(m.Size)
	}
	if end != next || !isZeroBlock(data[end:end+BlockSize]) {
		t.Errorf("the scan ended at %d, the last member at %d", end, next)
	}
	t.Logf("%d members, %d of them with extension headers; end of archive at %d of %d bytes", len(got), extended, end, len(data))

	// Python's tarfile. It keeps no trailing slash on directory names and
	// reports a pre-POSIX regular file as type NUL.
	py := pythonView(t, path)[path]
	if len(py) != len(got) {
		t.Fatalf("python tarfile lists %d members, the scanner %d", len(py), len(got))
	}
	for i, p := range py {
		m := got[i]
		if p.Type == TypeRegA {
			p.Type = TypeReg
		}
		name := m.Name
		if m.Typeflag == TypeDir {
			name = strings.TrimRight(name, "/")
		}
		if name != p.Name || m.Linkname != p.Linkname || m.Typeflag != p.Type || m.Size != p.Size ||
			m.FirstOffset != p.Offset || m.DataOffset != p.OffsetData {
			t.Errorf("member %d:\n scanner %v\n  python %+v", i, m, p)
		}
	}

	// Go's archive/tar.
	gt := archiveTarView(t, path)
	if len(gt) != len(got) {
		t.Fatalf("archive/tar lists %d members, the scanner %d", len(gt), len(got))
	}
	for i, g := range gt {
		m := got[i]
		if m.Name != g.Name || m.Linkname != g.Linkname || m.Typeflag != g.Typeflag || m.Size != g.Size || m.DataOffset != g.DataOffset {
			t.Errorf("member %d:\n    scanner %v\narchive/tar %+v", i, m, g)
		}
	}
}

func equalScans(a, b []scanned) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
