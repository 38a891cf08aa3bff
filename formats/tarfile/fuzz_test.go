package tarfile

import (
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"testing"

	"github.com/itarconv/itarconv/testing/testutil"
)

// fuzzSeeds are small crafted archives that reach the scanner's less common
// paths: long names, pax and global records, sparse headers, base-256 sizes,
// concatenation and damage.
func fuzzSeeds() [][]byte {
	var seeds [][]byte
	add := func(b []byte) { seeds = append(seeds, b) }

	add(nil)
	add(make([]byte, 1024))
	add(twoFiles())
	add(twoFiles()[:2048+50])
	add(edit(twoFiles(), 1536, "c", -1))
	add(paxBeforeB(TypeXHeader, paxRecord("path=pax/name")+paxRecord("size=10")+paxRecord("mtime=1.5")))
	add(paxBeforeB(TypeXGlobalHeader, paxRecord("comment=global")))
	add(paxBeforeB(TypeXHeader, paxRecord("GNU.sparse.major=1")+paxRecord("GNU.sparse.minor=0")+
		paxRecord("GNU.sparse.name=real")+paxRecord("GNU.sparse.realsize=4096")))

	var a archive
	a.add(hdr{name: "././@LongLink", typeflag: TypeGNULongName, size: 300, format: FormatGNU}, bytes.Repeat([]byte("n"), 300))
	a.add(hdr{name: "././@LongLink", typeflag: TypeGNULongLink, size: 200, format: FormatGNU}, bytes.Repeat([]byte("l"), 200))
	a.add(hdr{name: "short", typeflag: TypeSymlink, format: FormatGNU}, nil)
	a.add(hdr{name: "big", size: 1 << 33, format: FormatGNU}, nil) // base-256, truncated
	add(a.end())

	var sp archive
	b := hdr{name: "sparse", typeflag: TypeGNUSparse, size: 512, format: FormatGNU}.block()
	b[offGNUExtended] = 1
	putOctalSlow(b[offGNURealSize:offGNURealSize+12], 1<<20)
	setChecksum(b)
	sp.buf = append(sp.buf, b...)
	ext := make([]byte, BlockSize)
	sp.buf = append(sp.buf, ext...)
	sp.payload(pattern(512, 4))
	sp.file("after", []byte("x"))
	add(sp.end())

	var v7 archive
	v7.add(hdr{name: "old/", typeflag: TypeRegA, format: FormatV7}, nil)
	v7.add(hdr{name: "old/file", typeflag: TypeRegA, size: 5, format: FormatV7}, []byte("hello"))
	v7.add(hdr{name: "name", prefix: "pre/fix", size: 1, format: FormatUSTAR}, []byte("!"))
	concat := append(v7.end(), twoFiles()...)
	add(concat)

	var gz bytes.Buffer // a compressed empty archive: shorter than a block
	zw := gzip.NewWriter(&gz)
	zw.Write(make([]byte, 10240))
	zw.Close()
	add(gz.Bytes())
	return seeds
}

// FuzzScanner scans arbitrary bytes with every strategy and option. The
// strategies must agree exactly; the members must be ordered, disjoint and
// inside the file; any error must be a located *Error; nothing may panic.
func FuzzScanner(f *testing.F) {
	for _, s := range fuzzSeeds() {
		f.Add(s)
	}
	if paths, _ := filepath.Glob(filepath.Join(runtime.GOROOT(), "src", "archive", "tar", "testdata", "*.tar*")); len(paths) > 0 {
		names := make([]string, 0)
		files := goTestdata(f)
		for name := range files {
			names = append(names, name)
		}
		sort.Strings(names)
		for _, name := range names {
			if len(files[name]) <= 64<<10 {
				f.Add(files[name])
			}
		}
	}
	conf := testutil.Conformance(f, "taridx")
	tars, err := filepath.Glob(filepath.Join(conf, "*", "*.tar"))
	if err != nil || len(tars) == 0 {
		f.Fatalf("no conformance tars under %s: %v", conf, err)
	}
	for _, p := range tars {
		data, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}

	f.Fuzz(func(t *testing.T, data []byte) {
		fuzzCheck(t, data)
		// Nearly every mutation of a header breaks its checksum, which
		// stops the scan there. Fixed checksums let the mutated fields in.
		if fixed := fixChecksums(data); !bytes.Equal(fixed, data) {
			fuzzCheck(t, fixed)
		}
	})
}

// fixChecksums returns data with the checksum of every non-zero block set
// right (payload blocks included: the scanner never looks at those).
func fixChecksums(data []byte) []byte {
	out := bytes.Clone(data)
	for off := 0; off+BlockSize <= len(out); off += BlockSize {
		if !isZeroBlock(out[off : off+BlockSize]) {
			setChecksum(out[off : off+BlockSize])
		}
	}
	return out
}

// fuzzCheck scans data with every strategy and option and checks that the
// strategies agree.
func fuzzCheck(t *testing.T, data []byte) {
	for _, opts := range []Options{{}, {IgnoreZeros: true}, {HeaderBlocks: true}, {HeaderBlocks: true, IgnoreZeros: true}} {
		var first fuzzScan
		for i, s := range []Strategy{StrategyPread, StrategySequential, StrategyAuto} {
			opts.Strategy = s
			got := fuzzScanOnce(t, data, opts)
			if i == 0 {
				first = got
				continue
			}
			if !equalScans(got.members, first.members) || got.errText != first.errText || got.end != first.end {
				t.Fatalf("%+v and pread disagree:\n%v: %v: %q (end %d)\npread: %v: %q (end %d)",
					opts, s, got.members, got.errText, got.end, first.members, first.errText, first.end)
			}
		}
	}
}

type fuzzScan struct {
	members []scanned
	errText string // "" after io.EOF
	end     int64  // Scanner.Offset after io.EOF
}

var sentinels = []error{ErrNotTar, ErrCompressed, ErrChecksum, ErrTruncated, ErrHeader}

// fuzzScanOnce scans data and checks the invariants of every result.
func fuzzScanOnce(t *testing.T, data []byte, opts Options) fuzzScan {
	size := int64(len(data))
	s := NewScanner(bytes.NewReader(data), size, "fuzz.tar", opts)
	var out fuzzScan
	// prevEnd is where the previous member's payload (padded) ends. A chain
	// of pax and long-name headers may enclose a pax global header, which
	// is listed as a member of its own: chainEnd ignores those.
	var prevHeader, prevEnd, chainEnd int64 = -1, 0, 0
	for {
		m, err := s.Next()
		if err == io.EOF {
			out.end = s.Offset()
			if out.end < prevEnd || out.end > size || out.end%BlockSize != 0 {
				t.Fatalf("%+v: the scan ended at %d, after a member ending at %d, in %d bytes", opts, out.end, prevEnd, size)
			}
			if _, err := s.Next(); err != io.EOF {
				t.Fatalf("%+v: Next after io.EOF: %v", opts, err)
			}
			return out
		}
		if err != nil {
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("%+v: error %v is a %T, not an *Error", opts, err, err)
			}
			known := false
			for _, k := range sentinels {
				known = known || errors.Is(err, k)
			}
			if !known || e.Path != "fuzz.tar" || e.Offset < prevEnd || e.Offset >= size || e.Offset%BlockSize != 0 {
				t.Fatalf("%+v: error %v (offset %d) after a member ending at %d, in %d bytes", opts, err, e.Offset, prevEnd, size)
			}
			if _, again := s.Next(); again != err {
				t.Fatalf("%+v: Next after %v: %v", opts, err, again)
			}
			out.errText = err.Error()
			return out
		}
		g := snapshot(m)
		switch {
		case g.HeaderOffset <= prevHeader:
			t.Fatalf("%+v: member %v after a header at %d", opts, g, prevHeader)
		case g.HeaderOffset < prevEnd || g.FirstOffset < chainEnd || g.FirstOffset > g.HeaderOffset || g.DataOffset < g.HeaderOffset+BlockSize:
			t.Fatalf("%+v: member %v overlaps the previous one, which ended at %d, or is out of order", opts, g, prevEnd)
		case g.FirstOffset%BlockSize != 0 || g.HeaderOffset%BlockSize != 0 || g.DataOffset%BlockSize != 0:
			t.Fatalf("%+v: member %v is not block-aligned", opts, g)
		case g.Size < 0 || g.DataOffset+g.Size > size || g.DataOffset+g.Size < g.DataOffset:
			t.Fatalf("%+v: member %v passes the end of the %d bytes", opts, g, size)
		case g.Sparse && g.RealSize < 0:
			t.Fatalf("%+v: sparse member %v with a negative size", opts, g)
		case opts.HeaderBlocks && (g.FirstOffset != g.HeaderOffset || g.DataOffset != g.HeaderOffset+BlockSize):
			t.Fatalf("%+v: header block %v has a chain", opts, g)
		}
		prevHeader, prevEnd = g.HeaderOffset, g.DataOffset+blocksFor(g.Size)
		if g.Typeflag != TypeXGlobalHeader || opts.HeaderBlocks {
			chainEnd = prevEnd
		}
		out.members = append(out.members, g)
		if len(out.members) > len(data)/BlockSize {
			t.Fatalf("%+v: %d members in %d bytes", opts, len(out.members), size)
		}
	}
}
