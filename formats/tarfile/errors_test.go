package tarfile

import (
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// twoFiles is a valid archive of two ustar files:
//
//	0     header a.txt (600 bytes)
//	512   payload, padded to 1536
//	1536  header b.txt (100 bytes)
//	2048  payload, padded to 2560
//	2560  end-of-archive marker (2 blocks)
func twoFiles() []byte {
	var a archive
	a.file("a.txt", pattern(600, 1))
	a.file("b.txt", pattern(100, 2))
	return a.end()
}

// withHeader returns data with the header block at off replaced by h.
func withHeader(data []byte, off int64, h hdr) []byte {
	out := bytes.Clone(data)
	copy(out[off:], h.block())
	return out
}

// edit returns data with the bytes at off overwritten by b; fix restores the
// checksum of the header block at hdrOff afterwards (-1: leave it wrong).
func edit(data []byte, off int64, b string, hdrOff int64) []byte {
	out := bytes.Clone(data)
	copy(out[off:], b)
	if hdrOff >= 0 {
		setChecksum(out[hdrOff : hdrOff+BlockSize])
	}
	return out
}

// paxBeforeB is a.txt, then a pax header at 1536 with the given raw record
// bytes (at most one block of them), then b.txt's header at 2560.
func paxBeforeB(typeflag byte, records string) []byte {
	var a archive
	a.file("a.txt", pattern(600, 1))
	a.add(hdr{name: "PaxHeaders/b.txt", typeflag: typeflag, size: int64(len(records)), format: FormatUSTAR}, []byte(records))
	a.file("b.txt", pattern(100, 2))
	return a.end()
}

func TestBadInput(t *testing.T) {
	tests := []struct {
		name    string
		data    []byte
		members []string // the members listed before the error
		err     error    // the sentinel; nil for a clean io.EOF
		offset  int64    // the *Error's Offset
		detail  string   // a part of the message
	}{
		// Truncation: the file ends inside a header, a payload or padding.
		{"truncated first header", twoFiles()[:300], nil, ErrTruncated, 0, "header block needs 512 bytes, 300 left"},
		{"truncated second header", twoFiles()[:1536+200], []string{"a.txt"}, ErrTruncated, 1536, "header block"},
		{"truncated first payload", twoFiles()[:512+300], nil, ErrTruncated, 0, "payload of 600 bytes at offset 512"},
		{"truncated second payload", twoFiles()[:2048+99], []string{"a.txt"}, ErrTruncated, 1536, "payload of 100 bytes at offset 2048"},
		{"truncated first padding", twoFiles()[:512+600], nil, ErrTruncated, 0, "padding"},
		{"truncated second padding", twoFiles()[:2048+100], []string{"a.txt"}, ErrTruncated, 1536, "padding"},
		{"truncated second padding, one byte short", twoFiles()[:2559], []string{"a.txt"}, ErrTruncated, 1536, "padding"},
		{"truncated pax data", paxBeforeB(TypeXHeader, paxRecord("path="+strings.Repeat("p", 900)))[:1536+512+300], []string{"a.txt"}, ErrTruncated, 1536, "extended header data"},
		{"truncated pax padding", paxBeforeB(TypeXHeader, paxRecord("path=long/name"))[:1536+512+30], []string{"a.txt"}, ErrTruncated, 1536, "padding"},
		{
			"truncated gnu sparse extension",
			func() []byte {
				b := hdr{name: "sparse", typeflag: TypeGNUSparse, size: 512, format: FormatGNU}.block()
				b[offGNUExtended] = 1
				setChecksum(b)
				return b
			}(),
			nil, ErrTruncated, 0, "sparse extension block",
		},
		{
			"missing end marker",
			twoFiles()[:2560], []string{"a.txt", "b.txt"}, nil, 0, "",
		},

		// Checksums.
		{"bad checksum on the second member", edit(twoFiles(), 1536, "c", -1), []string{"a.txt"}, ErrChecksum, 1536, "computed"},
		{"bad checksum field on the second member", edit(twoFiles(), 1536+offChksum, "12x456\x00 ", -1), []string{"a.txt"}, ErrChecksum, 1536, `stored "12x456"`},
		{"bad checksum on the first member", edit(twoFiles(), 0, "c", -1), nil, ErrNotTar, 0, "first block"},

		// Not tar at all.
		{"random bytes", pattern(4096, 7), nil, ErrNotTar, 0, "not a tar header"},
		{"text", []byte(strings.Repeat("This is not a tar archive.\n", 40)), nil, ErrNotTar, 0, "not a tar header"},

		// Invalid fields under a good checksum.
		{"invalid size field", edit(twoFiles(), 1536+offSize, "0000000x144\x00", 1536), []string{"a.txt"}, ErrHeader, 1536, `size field "0000000x144"`},
		{"size field of 8s", edit(twoFiles(), 1536+offSize, "00000000008\x00", 1536), []string{"a.txt"}, ErrHeader, 1536, "size field"},
		{"negative base-256 size", withHeader(twoFiles(), 1536, hdr{name: "b.txt", size: -512, format: FormatGNU}), []string{"a.txt"}, ErrHeader, 1536, "negative size -512"},
		{"invalid mode field", edit(twoFiles(), 1536+offMode, "07z4\x00", 1536), []string{"a.txt"}, ErrHeader, 1536, "mode field"},
		{"invalid mtime field", edit(twoFiles(), 1536+offMtime, "1234567890-\x00", 1536), []string{"a.txt"}, ErrHeader, 1536, "mtime field"},
		{"sparse type in a ustar header", withHeader(twoFiles(), 1536, hdr{name: "b.txt", typeflag: TypeGNUSparse, size: 100, format: FormatUSTAR}), []string{"a.txt"}, ErrHeader, 1536, "sparse type flag"},
		{"size past the end of the file", withHeader(twoFiles(), 1536, hdr{name: "b.txt", size: 1 << 40, format: FormatUSTAR}), []string{"a.txt"}, ErrTruncated, 1536, "payload of 1099511627776 bytes"},
		{"largest base-256 size", withHeader(twoFiles(), 1536, hdr{name: "b.txt", sizeField: []byte{0x80, 0, 0, 0, 0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, format: FormatGNU}), []string{"a.txt"}, ErrTruncated, 1536, "payload of 9223372036854775807 bytes"},
		{"base-256 size over 63 bits", withHeader(twoFiles(), 1536, hdr{name: "b.txt", sizeField: []byte{0x80, 0, 0, 0, 0x80, 0, 0, 0, 0, 0, 0, 0}, format: FormatGNU}), []string{"a.txt"}, ErrHeader, 1536, "size field"},

		// Pax records: a malformed record fails at the pax header (1536);
		// a bad value fails at the header of the member the records apply
		// to (2560).
		{"pax record without newline", paxBeforeB(TypeXHeader, "11 path=abc"), []string{"a.txt"}, ErrHeader, 1536, "malformed pax record"},
		{"pax record without '='", paxBeforeB(TypeXHeader, "11 pathabc\n"), []string{"a.txt"}, ErrHeader, 1536, "malformed pax record"},
		{"pax record length past the data", paxBeforeB(TypeXHeader, "99 path=abc\n"), []string{"a.txt"}, ErrHeader, 1536, "malformed pax record"},
		{"pax record length not a number", paxBeforeB(TypeXHeader, "1x path=abc\n"), []string{"a.txt"}, ErrHeader, 1536, "malformed pax record"},
		{"pax record length too short", paxBeforeB(TypeXHeader, "3 path=abc\n"), []string{"a.txt"}, ErrHeader, 1536, "malformed pax record"},
		{"pax record with empty key", paxBeforeB(TypeXHeader, "7 =abc\n"), []string{"a.txt"}, ErrHeader, 1536, "malformed pax record"},
		{"pax path with NUL", paxBeforeB(TypeXHeader, "12 path=a\x00c\n"), []string{"a.txt"}, ErrHeader, 1536, "malformed pax record"},
		{"pax global record malformed", paxBeforeB(TypeXGlobalHeader, "11 path=abc"), []string{"a.txt"}, ErrHeader, 1536, "malformed pax global record"},
		{"pax size not a number", paxBeforeB(TypeXHeader, paxRecord("size=12k")), []string{"a.txt"}, ErrHeader, 2560, `pax record size="12k"`},
		{"pax size negative", paxBeforeB(TypeXHeader, paxRecord("size=-1")), []string{"a.txt"}, ErrHeader, 2560, `pax record size="-1"`},
		{"pax size past the end", paxBeforeB(TypeXHeader, paxRecord("size=5000")), []string{"a.txt"}, ErrTruncated, 2560, "payload of 5000 bytes at offset 3072"},
		{"pax mtime malformed", paxBeforeB(TypeXHeader, paxRecord("mtime=12.3e4")), []string{"a.txt"}, ErrHeader, 2560, "pax record mtime"},
		{"pax uid malformed", paxBeforeB(TypeXHeader, paxRecord("uid=0x10")), []string{"a.txt"}, ErrHeader, 2560, "pax record uid"},
		{"pax sparse size malformed", paxBeforeB(TypeXHeader, paxRecord("GNU.sparse.major=1")+paxRecord("GNU.sparse.minor=0")+paxRecord("GNU.sparse.realsize=big")), []string{"a.txt"}, ErrHeader, 2560, "pax sparse size"},
		{
			"extended header over 1 MiB",
			withHeader(twoFiles(), 1536, hdr{name: "PaxHeaders/b", typeflag: TypeXHeader, size: 1<<20 + 1, format: FormatUSTAR}),
			[]string{"a.txt"}, ErrHeader, 1536, "extended header of 1048577 bytes",
		},
		{
			"long name over 1 MiB",
			withHeader(twoFiles(), 1536, hdr{name: "././@LongLink", typeflag: TypeGNULongName, size: 2 << 20, format: FormatGNU}),
			[]string{"a.txt"}, ErrHeader, 1536, "extended header of 2097152 bytes",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, opts := range []Options{{Strategy: StrategyPread}, {Strategy: StrategySequential}, {Strategy: StrategyAuto, IgnoreZeros: true}} {
				checkScanError(t, tt.data, opts, tt.members, tt.err, tt.offset, tt.detail)
			}
		})
	}
}

// checkScanError scans data and checks the members listed and the error
// that ends the scan (nil: a clean io.EOF).
func checkScanError(t *testing.T, data []byte, opts Options, members []string, wantErr error, wantOffset int64, detail string) {
	t.Helper()
	checkScanErrorFrom(t, NewScanner(bytes.NewReader(data), int64(len(data)), "shard.tar", opts), "shard.tar", opts, members, wantErr, wantOffset, detail)
	if opts.Strategy != StrategyPread || len(data) == 0 {
		return
	}
	// The same data through a file on disk, memory-mapped.
	path := filepath.Join(t.TempDir(), "shard.tar")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	mopts := opts
	mopts.Strategy = StrategyMmap
	f, err := Open(path, mopts)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	checkScanErrorFrom(t, f, path, mopts, members, wantErr, wantOffset, detail)
}

func checkScanErrorFrom(t *testing.T, s interface{ Next() (*Member, error) }, path string, opts Options, members []string, wantErr error, wantOffset int64, detail string) {
	t.Helper()
	var names []string
	var err error
	for {
		var m *Member
		if m, err = s.Next(); err != nil {
			break
		}
		names = append(names, string(m.Name))
	}
	if strings.Join(names, ",") != strings.Join(members, ",") {
		t.Errorf("%+v: members %q, want %q", opts, names, members)
	}
	if wantErr == nil {
		if err != io.EOF {
			t.Errorf("%+v: %v, want io.EOF", opts, err)
		}
		return
	}
	var e *Error
	if !errors.Is(err, wantErr) || !errors.As(err, &e) {
		t.Fatalf("%+v: error %v (%T), want an *Error wrapping %q", opts, err, err, wantErr)
	}
	if e.Offset != wantOffset || e.Path != path {
		t.Errorf("%+v: error at %s offset %d, want %s offset %d: %v", opts, e.Path, e.Offset, path, wantOffset, err)
	}
	if !strings.Contains(err.Error(), detail) {
		t.Errorf("%+v: error %q does not say %q", opts, err, detail)
	}
	// The error sticks.
	if _, again := s.Next(); again != err {
		t.Errorf("%+v: Next after the error returned %v", opts, again)
	}
}

// TestCompressed checks that compressed tars are refused as such, whatever
// their size: a compressed empty archive is far shorter than a block.
func TestCompressed(t *testing.T) {
	var a archive
	a.file("payload.bin", pattern(4000, 9)) // incompressible: the output is over a block
	big := a.end()
	empty := make([]byte, 10240) // GNU tar's empty archive: one record of zeros

	dir := t.TempDir()
	for _, c := range []struct {
		tool  string
		args  []string
		magic []byte // crafted stand-in when the tool is missing
		kind  string
	}{
		{"gzip", []string{"-c", "-n"}, []byte{0x1f, 0x8b, 0x08, 0x00}, "gzip"},
		{"zstd", []string{"-c", "-q"}, []byte{0x28, 0xb5, 0x2f, 0xfd}, "zstd"},
		{"bzip2", []string{"-c"}, []byte("BZh91AY&SY"), "bzip2"},
		{"xz", []string{"-c"}, []byte{0xfd, '7', 'z', 'X', 'Z', 0x00, 0x00, 0x04}, "xz"},
		{"lz4", []string{"-c", "-q"}, []byte{0x04, 0x22, 0x4d, 0x18}, "lz4"},
		{"compress", []string{"-c"}, []byte{0x1f, 0x9d, 0x90}, "compress (.Z)"},
	} {
		for _, in := range []struct {
			name string
			data []byte
		}{{"big", big}, {"empty", empty}} {
			t.Run(c.tool+"/"+in.name, func(t *testing.T) {
				var data []byte
				if path, err := exec.LookPath(c.tool); err == nil {
					src := filepath.Join(dir, c.tool+"-"+in.name+".tar")
					if err := os.WriteFile(src, in.data, 0o644); err != nil {
						t.Fatal(err)
					}
					cmd := exec.Command(path, append(c.args, src)...)
					if data, err = cmd.Output(); err != nil {
						t.Fatalf("%s: %v", c.tool, err)
					}
				} else {
					t.Logf("%s is not installed: crafting its magic bytes", c.tool)
					data = append(bytes.Clone(c.magic), pattern(len(in.data)/8, 3)...)
					if in.name == "empty" {
						data = data[:40]
					}
				}
				if in.name == "big" && len(data) < BlockSize || in.name == "empty" && len(data) >= BlockSize {
					t.Fatalf("%d bytes of %s output: not the size this case is about", len(data), c.tool)
				}
				for _, s := range strategies {
					checkScanError(t, data, Options{Strategy: s}, nil, ErrCompressed, 0, c.kind+" data")
					_, _, err := scanBytes(data, Options{Strategy: s})
					if !strings.Contains(err.Error(), "decompress first") {
						t.Errorf("%q does not tell to decompress first", err)
					}
				}
			})
		}
	}
}

// TestIgnoreZeros reads two concatenated archives: without IgnoreZeros the
// scan stops at the first end-of-archive marker, with it both are read.
func TestIgnoreZeros(t *testing.T) {
	var first, second archive
	first.file("one/a", pattern(10, 1))
	first.file("one/b", pattern(700, 2))
	firstEnd := len(first.buf) // 2560
	first.end()
	// Pad the first archive to a 10 KiB record, as GNU tar does.
	first.buf = append(first.buf, make([]byte, 10240-len(first.buf))...)
	second.file("two/c", pattern(1024, 3))
	data := append(bytes.Clone(first.buf), second.end()...)

	type want struct {
		name       string
		dataOffset int64
	}
	for _, tt := range []struct {
		opts    Options
		members []want
		end     int64
	}{
		{Options{}, []want{{"one/a", 512}, {"one/b", 1536}}, int64(firstEnd)},
		{Options{IgnoreZeros: true}, []want{{"one/a", 512}, {"one/b", 1536}, {"two/c", 10240 + 512}}, int64(len(data))},
		{Options{IgnoreZeros: true, HeaderBlocks: true}, []want{{"one/a", 512}, {"one/b", 1536}, {"two/c", 10240 + 512}}, int64(len(data))},
	} {
		for _, s := range strategies {
			tt.opts.Strategy = s
			got, end, err := scanBytes(data, tt.opts)
			if err != nil {
				t.Fatalf("%+v: %v", tt.opts, err)
			}
			if len(got) != len(tt.members) || end != tt.end {
				t.Fatalf("%+v: %v, scan ended at %d; want %d members ending at %d", tt.opts, got, end, len(tt.members), tt.end)
			}
			for i, w := range tt.members {
				if got[i].Name != w.name || got[i].DataOffset != w.dataOffset {
					t.Errorf("%+v: member %d = %v, want %s at %d", tt.opts, i, got[i], w.name, w.dataOffset)
				}
			}
		}
	}
}

// TestEmptyArchives: a file with no header is an empty archive, not an error.
func TestEmptyArchives(t *testing.T) {
	for _, tt := range []struct {
		name string
		data []byte
		opts Options
		end  int64
	}{
		{"empty file", nil, Options{}, 0},
		{"empty file, IgnoreZeros", nil, Options{IgnoreZeros: true}, 0},
		{"end marker only", make([]byte, 1024), Options{}, 0},
		{"lone zero block", make([]byte, 512), Options{}, 0},
		{"zero record", make([]byte, 10240), Options{}, 0},
		{"zero record, IgnoreZeros", make([]byte, 10240), Options{IgnoreZeros: true}, 10240},
		{"zero record, HeaderBlocks", make([]byte, 10240), Options{HeaderBlocks: true}, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			for _, s := range strategies {
				tt.opts.Strategy = s
				got, end, err := scanBytes(tt.data, tt.opts)
				if err != nil || len(got) != 0 || end != tt.end {
					t.Errorf("%v: %v, %v, end %d; want no members, io.EOF, end %d", s, got, err, end, tt.end)
				}
			}
		})
	}

	// The same through Open, on a real empty file.
	path := filepath.Join(t.TempDir(), "empty.tar")
	if err := os.WriteFile(path, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if got, end := scanPath(t, path, Options{}); len(got) != 0 || end != 0 {
		t.Errorf("empty file: %v, end %d", got, end)
	}
}

// TestOpenErrors: Open refuses what is not a regular file.
func TestOpenErrors(t *testing.T) {
	dir := t.TempDir()
	_, err := Open(dir, Options{})
	var e *Error
	if !errors.Is(err, ErrNotTar) || !errors.As(err, &e) || e.Path != dir || e.Offset != 0 {
		t.Errorf("Open(directory) = %v, want ErrNotTar for %s", err, dir)
	}
	missing := filepath.Join(dir, "missing.tar")
	if _, err := Open(missing, Options{}); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Open(missing) = %v, want os.ErrNotExist", err)
	}
}

// TestIgnoreZerosDropsCutChain: a pax header at the very end of one archive
// names nothing; with IgnoreZeros it must not rename the first member of the
// archive that follows.
func TestIgnoreZerosDropsCutChain(t *testing.T) {
	var first, second archive
	first.pax(TypeXHeader, paxRecord("path=evil.jpg"))
	second.file("good.jpg", pattern(10, 1))
	data := append(bytes.Clone(first.end()), second.end()...)
	got, _, err := scanBytes(data, Options{IgnoreZeros: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].Name != "good.jpg" {
		t.Errorf("members %+v, want good.jpg alone", got)
	}
}
