package tarfile

import (
	"archive/tar"
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"testing"

	"github.com/itarconv/itarconv/testing/testutil"
)

// scanned is a Member copied out of the scanner, whose slices are only valid
// until the next call to Next.
type scanned struct {
	Name, Linkname string
	Typeflag       byte
	Format         Format
	HeaderOffset   int64
	FirstOffset    int64
	DataOffset     int64
	Size           int64
	Sparse         bool
	RealSize       int64
}

func snapshot(m *Member) scanned {
	return scanned{
		Name:         string(m.Name),
		Linkname:     string(m.Linkname),
		Typeflag:     m.Typeflag,
		Format:       m.Format,
		HeaderOffset: m.HeaderOffset,
		FirstOffset:  m.FirstOffset,
		DataOffset:   m.DataOffset,
		Size:         m.Size,
		Sparse:       m.Sparse,
		RealSize:     m.RealSize,
	}
}

func (m scanned) String() string {
	return fmt.Sprintf("{%q type %q %v hdr %d first %d data %d size %d sparse %v/%d link %q}",
		m.Name, m.Typeflag, m.Format, m.HeaderOffset, m.FirstOffset, m.DataOffset, m.Size, m.Sparse, m.RealSize, m.Linkname)
}

// maxScanMembers stops a scan that does not end (a scanner bug) instead of
// letting the test run out of memory.
const maxScanMembers = 1 << 16

// scanAll lists every member of the archive in r. err is nil when the scan
// ended with io.EOF; end is Scanner.Offset afterwards.
func scanAll(r io.ReaderAt, size int64, opts Options) (members []scanned, end int64, err error) {
	s := NewScanner(r, size, "", opts)
	for len(members) < maxScanMembers {
		m, err := s.Next()
		if err == io.EOF {
			return members, s.Offset(), nil
		}
		if err != nil {
			return members, s.Offset(), err
		}
		members = append(members, snapshot(m))
	}
	return members, s.Offset(), fmt.Errorf("scan did not end after %d members", maxScanMembers)
}

func scanBytes(data []byte, opts Options) ([]scanned, int64, error) {
	return scanAll(bytes.NewReader(data), int64(len(data)), opts)
}

// scanPath scans a file on disk through Open, the way the converter does,
// and returns its members and Scanner.Offset after io.EOF.
func scanPath(t testing.TB, path string, opts Options) ([]scanned, int64) {
	t.Helper()
	f, err := Open(path, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []scanned
	for {
		m, err := f.Next()
		if err == io.EOF {
			return out, f.Offset()
		}
		if err != nil {
			t.Fatalf("%s (%v): after %d members: %v", path, opts.Strategy, len(out), err)
		}
		out = append(out, snapshot(m))
	}
}

var strategies = []Strategy{StrategyAuto, StrategyPread, StrategySequential, StrategyMmap}

// --- Archives written by hand ---------------------------------------------

// hdr describes one header block. Fields left zero get plain defaults.
type hdr struct {
	name, linkname string
	typeflag       byte
	size           int64
	format         Format // FormatUSTAR, FormatGNU or FormatV7
	sizeField      []byte // raw 12-byte size field, replacing size
	prefix         string // ustar prefix field
}

// block encodes h as a 512-byte header block with a valid checksum.
func (h hdr) block() []byte {
	b := make([]byte, BlockSize)
	copy(b[offName:offName+100], h.name)
	putOctalSlow(b[offMode:offMode+8], 0o644)
	putOctalSlow(b[offUID:offUID+8], 1000)
	putOctalSlow(b[offGID:offGID+8], 1000)
	putOctalSlow(b[offMtime:offMtime+12], 1700000000)
	switch {
	case h.sizeField != nil:
		copy(b[offSize:offSize+12], h.sizeField)
	case h.size >= 1<<33 || h.size < 0:
		putBase256(b[offSize:offSize+12], h.size)
	default:
		putOctalSlow(b[offSize:offSize+12], h.size)
	}
	b[offTypeflag] = h.typeflag
	if h.typeflag == 0 && h.format != FormatV7 {
		b[offTypeflag] = TypeReg
	}
	copy(b[offLinkname:offLinkname+100], h.linkname)
	switch h.format {
	case FormatUSTAR:
		copy(b[offMagic:], "ustar\x0000")
		copy(b[offPrefix:offPrefix+155], h.prefix)
	case FormatGNU:
		copy(b[offMagic:], "ustar  \x00")
	}
	if h.format != FormatV7 {
		copy(b[offUname:offUname+32], "user")
		copy(b[offGname:offGname+32], "group")
	}
	setChecksum(b)
	return b
}

// putOctalSlow writes x as zero-padded octal digits followed by a NUL, by
// way of strconv: independent of the writer's putOctal.
func putOctalSlow(b []byte, x int64) {
	s := strconv.FormatInt(x, 8)
	for len(s) < len(b)-1 {
		s = "0" + s
	}
	copy(b, s)
	b[len(b)-1] = 0
}

// putBase256 writes x in GNU base-256: two's complement, big-endian, with the
// top bit of the first byte set.
func putBase256(b []byte, x int64) {
	for i := len(b) - 1; i >= 0; i-- {
		b[i] = byte(x)
		x >>= 8
	}
	b[0] |= 0x80
}

// setChecksum stores the block's unsigned checksum, computed here byte by
// byte (independently of the scanner's word-wise sum).
func setChecksum(b []byte) {
	copy(b[offChksum:offChksum+8], "        ")
	var sum int64
	for _, c := range b[:BlockSize] {
		sum += int64(c)
	}
	copy(b[offChksum:], fmt.Sprintf("%06o\x00 ", sum))
}

// archive builds a tar stream block by block and remembers where each
// header went.
type archive struct {
	buf  []byte
	offs []int64 // offsets of the headers appended, in order
}

// add appends a header block and, when data is not nil, its payload padded
// to a block boundary. It returns the header's offset.
func (a *archive) add(h hdr, data []byte) int64 {
	off := int64(len(a.buf))
	a.offs = append(a.offs, off)
	a.buf = append(a.buf, h.block()...)
	a.payload(data)
	return off
}

func (a *archive) payload(data []byte) {
	a.buf = append(a.buf, data...)
	if r := len(a.buf) % BlockSize; r != 0 {
		a.buf = append(a.buf, make([]byte, BlockSize-r)...)
	}
}

// file appends a ustar regular file holding data.
func (a *archive) file(name string, data []byte) int64 {
	return a.add(hdr{name: name, size: int64(len(data)), format: FormatUSTAR}, data)
}

// pax appends a pax header ('x', or 'g' for typeflag 'g') holding recs,
// each "key=value" encoded as a length-prefixed record.
func (a *archive) pax(typeflag byte, recs ...string) int64 {
	var data []byte
	for _, r := range recs {
		data = append(data, paxRecord(r)...)
	}
	return a.add(hdr{name: "PaxHeaders/x", typeflag: typeflag, size: int64(len(data)), format: FormatUSTAR}, data)
}

// paxRecord encodes "key=value" as "%d key=value\n", the length counting
// its own digits.
func paxRecord(kv string) string {
	for n := len(kv) + 3; ; n++ {
		if s := strconv.Itoa(n) + " " + kv + "\n"; len(s) == n {
			return s
		}
	}
}

func (a *archive) end() []byte {
	a.buf = append(a.buf, make([]byte, 2*BlockSize)...)
	return a.buf
}

// pattern returns n bytes of a recognisable, incompressible-looking pattern.
func pattern(n int, seed byte) []byte {
	b := make([]byte, n)
	x := uint32(seed)*2654435761 + 1
	for i := range b {
		x ^= x << 13
		x ^= x >> 17
		x ^= x << 5
		b[i] = byte(x)
	}
	return b
}

// --- Independent views of an archive -------------------------------------

// atMember is one entry as Go's archive/tar reads it. DataOffset is the
// number of bytes archive/tar had consumed when Next returned: where the
// payload starts.
type atMember struct {
	Name, Linkname string
	Typeflag       byte
	Size           int64
	DataOffset     int64
}

type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// archiveTarView reads the archive at path with archive/tar. The counting
// reader has no Seek method, so archive/tar reads every byte in order and the
// count after Next is exactly the payload's offset.
func archiveTarView(t testing.TB, path string) []atMember {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	cr := &countingReader{r: f}
	tr := tar.NewReader(cr)
	var out []atMember
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatalf("archive/tar: %s: %v", path, err)
		}
		out = append(out, atMember{h.Name, h.Linkname, h.Typeflag, h.Size, cr.n})
	}
}

// pyMember is one entry as Python's tarfile reads it.
type pyMember struct {
	Name, Linkname string
	Type           byte
	Size           int64 // a sparse file's logical size
	Offset         int64 // first header of the member's chain
	OffsetData     int64
	Sparse         [][2]int64 // (offset, length) of the data regions; nil if not sparse
}

// pythonViewScript prints, for each archive named on the command line, the
// members Python's tarfile finds. Names are hex so that no decoding step can
// alter their bytes.
const pythonViewScript = `
import json, sys, tarfile
out = {}
for p in sys.argv[1:]:
    ms = []
    with tarfile.open(p, "r:", encoding="utf-8", errors="surrogateescape") as tf:
        for ti in tf:
            ms.append({
                "name": ti.name.encode("utf-8", "surrogateescape").hex(),
                "linkname": ti.linkname.encode("utf-8", "surrogateescape").hex(),
                "type": ti.type.decode("latin-1"),
                "size": ti.size,
                "offset": ti.offset,
                "offset_data": ti.offset_data,
                "sparse": [list(s) for s in ti.sparse] if ti.sparse is not None else None,
            })
    out[p] = ms
json.dump(out, sys.stdout)
`

// pythonView runs Python's tarfile on the archives at paths.
func pythonView(t testing.TB, paths ...string) map[string][]pyMember {
	t.Helper()
	py := testutil.NeedTool(t, "python3")
	cmd := exec.Command(py, append([]string{"-c", pythonViewScript}, paths...)...)
	cmd.Env = toolEnv()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("python3 tarfile: %v\n%s", err, stderr.Bytes())
	}
	var raw map[string][]struct {
		Name, Linkname, Type string
		Size, Offset         int64
		OffsetData           int64 `json:"offset_data"`
		Sparse               [][2]int64
	}
	if err := json.Unmarshal(out, &raw); err != nil {
		t.Fatalf("python3 output: %v\n%s", err, out)
	}
	views := make(map[string][]pyMember)
	for p, ms := range raw {
		for _, m := range ms {
			name, err1 := hex.DecodeString(m.Name)
			link, err2 := hex.DecodeString(m.Linkname)
			if err := errors.Join(err1, err2); err != nil || len(m.Type) != 1 {
				t.Fatalf("python3 output for %s: %+v: %v", p, m, err)
			}
			views[p] = append(views[p], pyMember{
				Name: string(name), Linkname: string(link), Type: m.Type[0],
				Size: m.Size, Offset: m.Offset, OffsetData: m.OffsetData, Sparse: m.Sparse,
			})
		}
	}
	return views
}

// toolEnv is the environment of the external tools: a UTF-8 locale, so that
// none of them transcodes or rejects the non-ASCII names.
func toolEnv() []string {
	return append(os.Environ(), "LC_ALL=C.UTF-8", "LANG=C.UTF-8", "PYTHONUTF8=1", "TZ=UTC")
}

// run runs a tool and fails the test, with its output, when it fails.
func run(t testing.TB, dir string, name string, args ...string) {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = toolEnv()
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s %q: %v\n%s", name, args, err, out)
	}
}
