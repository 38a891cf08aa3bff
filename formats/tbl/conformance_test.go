package tbl

import (
	"archive/tar"
	"bytes"
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/itarconv/itarconv/testing/testutil"
)

// The conformance cases in testdata/conformance/tbl/<case>/ hold a tar, the
// files TurboLoader's converters made from it (v1, v2 without and with LZ4)
// and, for each, a dump: TurboLoader's own reader's view, then an
// independent Python parser's, then which tar member each sample's bytes
// match.

var confVariants = []struct {
	name string
	opts WriterOptions
}{
	{"v1", WriterOptions{Version: 1}},
	{"v2raw", WriterOptions{Version: 2}},
	{"v2lz4", WriterOptions{Version: 2, LZ4: true}},
}

type dump struct {
	header    map[string]string   // TurboLoader's reader: header line
	samples   []map[string]string // TurboLoader's reader: one per sample
	pyHeader  map[string]string   // parse_tbl.py
	pySamples []map[string]string
	members   []string // tar member each sample matches, "" for <none>
}

// fields splits "k=v k=v ..." into a map; a lone leading token (a sample
// number or "v2") is stored under "".
func fields(line string) map[string]string {
	m := make(map[string]string)
	for _, f := range strings.Fields(line) {
		k, v, ok := strings.Cut(f, "=")
		if !ok {
			m[""] = f
			continue
		}
		m[k] = v
	}
	return m
}

func parseDump(t *testing.T, path string) *dump {
	t.Helper()
	text, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	d := &dump{}
	section := ""
	for _, line := range strings.Split(strings.TrimRight(string(text), "\n"), "\n") {
		switch {
		case strings.HasPrefix(line, "## tbl_dump"):
			section = "up"
		case strings.HasPrefix(line, "## parse_tbl.py"):
			section = "py"
		case section == "up" && strings.HasPrefix(line, "magic="):
			d.header = fields(line)
		case section == "up":
			d.samples = append(d.samples, fields(line))
		case section == "py" && strings.Contains(line, "matches tar member: "):
			_, name, _ := strings.Cut(line, "matches tar member: ")
			if name == "<none>" {
				name = ""
			}
			d.members = append(d.members, name)
		case section == "py" && strings.HasPrefix(line, "  ["):
			d.pySamples = append(d.pySamples, fields(line))
		case section == "py":
			d.pyHeader = fields(line)
		default:
			t.Fatalf("%s: unexpected line %q", path, line)
		}
	}
	if d.header == nil || d.pyHeader == nil || len(d.samples) != len(d.pySamples) || len(d.samples) != len(d.members) {
		t.Fatalf("%s: parsed %d/%d/%d samples", path, len(d.samples), len(d.pySamples), len(d.members))
	}
	return d
}

// num parses a decimal or 0x-prefixed field, failing the test when absent.
func num(t *testing.T, m map[string]string, key string) uint64 {
	t.Helper()
	s, ok := m[key]
	if !ok {
		t.Fatalf("no %q in %v", key, m)
	}
	if i := strings.IndexByte(s, '('); i >= 0 { // format=1(JPEG)
		s = s[:i]
	}
	v, err := strconv.ParseUint(s, 0, 64)
	if err != nil {
		t.Fatalf("%s=%q: %v", key, s, err)
	}
	return v
}

// fnvDump is the dump tool's payload hash: FNV-1a 64 with an unusual
// offset basis (0x14650fb0739d0383: the empty payload's hash in the dumps).
func fnvDump(p []byte) uint64 {
	h := uint64(0x14650fb0739d0383)
	for _, b := range p {
		h ^= uint64(b)
		h *= 0x100000001b3
	}
	return h
}

func confCases(t testing.TB) []string {
	dirs, _ := filepath.Glob(filepath.Join(testutil.Conformance(t, "tbl"), "*"))
	if len(dirs) < 6 {
		t.Fatalf("only %d TBL conformance cases", len(dirs))
	}
	return dirs
}

// TestConformanceRead reads every conformance file and checks every field
// both dumps give, and every sample's bytes by hash.
func TestConformanceRead(t *testing.T) {
	for _, dir := range confCases(t) {
		c := filepath.Base(dir)
		for _, v := range confVariants {
			t.Run(c+"/"+v.name, func(t *testing.T) {
				path := filepath.Join(dir, c+"."+v.name+".tbl")
				d := parseDump(t, filepath.Join(dir, c+"."+v.name+".dump.txt"))
				raw, err := os.ReadFile(path)
				if err != nil {
					t.Fatal(err)
				}
				r, err := Open(path)
				if err != nil {
					t.Fatal(err)
				}
				defer r.Close()
				h := r.Header()
				if got, want := MagicV1, `TBL\x01`; v.opts.Version == 2 {
					got, want = MagicV2, `TBL\x02`
					if d.header["magic"] != want || string(raw[:4]) != got {
						t.Errorf("magic %q, dump %q", raw[:4], d.header["magic"])
					}
				} else if d.header["magic"] != want || string(raw[:4]) != got {
					t.Errorf("magic %q, dump %q", raw[:4], d.header["magic"])
				}
				check := func(what string, got, want uint64) {
					t.Helper()
					if got != want {
						t.Errorf("%s: got %d (%#x), dump says %d (%#x)", what, got, got, want, want)
					}
				}
				check("version", uint64(r.Version()), num(t, d.header, "version"))
				check("num_samples", h.NumSamples, num(t, d.header, "num_samples"))
				check("Len", uint64(r.Len()), num(t, d.pyHeader, "num_samples"))
				check("header_size", uint64(h.HeaderSize), num(t, d.header, "header_size"))
				check("file_size", uint64(len(raw)), num(t, d.pyHeader, "file_size"))
				if v.opts.Version == 1 {
					if d.pyHeader["reserved"] != hex.EncodeToString(raw[20:32]) {
						t.Errorf("reserved %x, dump %s", raw[20:32], d.pyHeader["reserved"])
					}
				} else {
					check("metadata_offset", h.MetadataOffset, num(t, d.header, "metadata_offset"))
					check("metadata_size", h.MetadataSize, num(t, d.header, "metadata_size"))
					check("flags", uint64(h.Flags), num(t, d.header, "flags"))
					check("header_crc32", uint64(h.CRC32), num(t, d.header, "header_crc32"))
					check("pad1", uint64(raw[20])|uint64(raw[21])<<8|uint64(raw[22])<<16|uint64(raw[23])<<24, num(t, d.pyHeader, "pad1"))
					if d.pyHeader["crc_ok"] != "True" {
						t.Errorf("dump says crc_ok=%s", d.pyHeader["crc_ok"])
					}
				}
				var buf []byte
				for i := range r.Len() {
					s := r.Sample(i)
					up, py := d.samples[i], d.pySamples[i]
					check(fmt.Sprintf("sample %d index", i), uint64(s.Index), num(t, up, ""))
					check(fmt.Sprintf("sample %d offset", i), uint64(s.Offset), num(t, up, "offset"))
					check(fmt.Sprintf("sample %d py offset", i), uint64(s.Offset), num(t, py, "off"))
					check(fmt.Sprintf("sample %d size", i), uint64(s.StoredSize), num(t, up, "size"))
					check(fmt.Sprintf("sample %d format", i), uint64(s.Format), num(t, up, "format"))
					check(fmt.Sprintf("sample %d py format", i), uint64(s.Format), num(t, py, "fmt"))
					if v.opts.Version == 1 {
						check(fmt.Sprintf("sample %d reserved", i), 0, num(t, py, "res"))
						if s.Size != s.StoredSize || s.Compressed || s.Flags != 0 {
							t.Errorf("sample %d: v1 sample %+v", i, s)
						}
					} else {
						check(fmt.Sprintf("sample %d usize", i), uint64(s.Size), num(t, up, "usize"))
						check(fmt.Sprintf("sample %d w", i), uint64(s.Width), num(t, up, "w"))
						check(fmt.Sprintf("sample %d h", i), uint64(s.Height), num(t, up, "h"))
						check(fmt.Sprintf("sample %d flags", i), uint64(s.Flags), num(t, up, "flags"))
						check(fmt.Sprintf("sample %d crc16", i), uint64(s.CRC16), num(t, up, "crc16"))
						check(fmt.Sprintf("sample %d py crc16", i), uint64(s.CRC16), num(t, py, "crc16"))
						if s.Compressed != (s.Flags&SampleCompressed != 0) || py["crc16_ok"] != "True" {
							t.Errorf("sample %d: %+v, dump crc16_ok=%s", i, s, py["crc16_ok"])
						}
					}
					if buf, err = r.ReadSample(i, buf); err != nil {
						t.Fatalf("sample %d: %v", i, err)
					}
					check(fmt.Sprintf("sample %d payload_len", i), uint64(len(buf)), num(t, up, "payload_len"))
					check(fmt.Sprintf("sample %d fnv", i), fnvDump(buf), mustHex(t, up["fnv"]))
					sum := sha1.Sum(buf)
					if got := hex.EncodeToString(sum[:])[:12]; got != py["sha1"] {
						t.Errorf("sample %d: sha1 %s, dump %s", i, got, py["sha1"])
					}
					if m, err := r.Metadata(i); err != nil || m != nil {
						t.Errorf("sample %d: metadata %v, %v", i, m, err)
					}
				}
				if err := r.Verify(); err != nil {
					t.Error(err)
				}
			})
		}
	}
}

func mustHex(t *testing.T, s string) uint64 {
	t.Helper()
	v, err := strconv.ParseUint(s, 16, 64)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// tarMembers maps member names to their bytes, as archive/tar reads them
// (first occurrence wins).
func tarMembers(t *testing.T, path string) map[string][]byte {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	m := make(map[string][]byte)
	tr := tar.NewReader(f)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return m
		}
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		if _, dup := m[h.Name]; !dup {
			m[h.Name] = b
		}
	}
}

// TestConformanceWrite gives our Writer the samples TurboLoader's converter
// picked from each case's tar (the bytes from the tar through archive/tar,
// formats and dimensions from the dump) and requires the converter's file,
// byte for byte.
func TestConformanceWrite(t *testing.T) {
	tmp := t.TempDir()
	for _, dir := range confCases(t) {
		c := filepath.Base(dir)
		members := tarMembers(t, filepath.Join(dir, c+".tar"))
		for _, v := range confVariants {
			t.Run(c+"/"+v.name, func(t *testing.T) {
				d := parseDump(t, filepath.Join(dir, c+"."+v.name+".dump.txt"))
				want, err := os.ReadFile(filepath.Join(dir, c+"."+v.name+".tbl"))
				if err != nil {
					t.Fatal(err)
				}
				opts := v.opts
				opts.NumSamples = len(d.samples)
				out := filepath.Join(tmp, c+"."+v.name+".tbl")
				w, err := Create(out, opts)
				if err != nil {
					t.Fatal(err)
				}
				for i, s := range d.samples {
					data, ok := members[d.members[i]]
					if d.members[i] == "" {
						data, ok = nil, num(t, s, "size") == 0 // a link: no bytes
					}
					if !ok {
						t.Fatalf("sample %d: member %q not in the tar", i, d.members[i])
					}
					var wd, ht uint16
					if v.opts.Version == 2 {
						wd, ht = uint16(num(t, s, "w")), uint16(num(t, s, "h"))
					}
					if err := w.AddImage(Format(num(t, s, "format")), wd, ht, bytes.NewReader(data), int64(len(data)), nil); err != nil {
						t.Fatal(err)
					}
				}
				if err := w.Close(); err != nil {
					t.Fatal(err)
				}
				got, err := os.ReadFile(out)
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(got, want) {
					t.Fatalf("%d bytes differ from upstream's %d: first difference at %d", len(got), len(want), firstDiff(got, want))
				}
			})
		}
	}
}

func firstDiff(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

// upstreamSelect reproduces, from the tar's raw header blocks, which
// members TurboLoader's converters take, and returns their bytes:
//
//   - v1 (tar_to_tbl over TarReader): every header with the "ustar" magic
//     whose prefix + "/" + name (each up to its NUL) ends in .jpg, .JPG,
//     .jpeg or .JPEG, whatever its type, so links and pax headers count,
//     with their header's size (0 for links);
//   - v2 (tar_to_tbl_v2): type '0' or NUL, size > 0, and a known extension
//     after the last dot of the name field read as a C string, which for a
//     100-byte name runs on into the mode field.
//
// Both stop at a header whose first byte is NUL.
func upstreamSelect(t *testing.T, tarBytes []byte, version int) [][]byte {
	t.Helper()
	octal := func(f []byte) int {
		n := 0
		for _, c := range f {
			if c == 0 || c == ' ' {
				break
			}
			if c >= '0' && c <= '7' {
				n = n*8 + int(c-'0')
			}
		}
		return n
	}
	cstr := func(b []byte) string {
		if i := bytes.IndexByte(b, 0); i >= 0 {
			return string(b[:i])
		}
		return string(b)
	}
	var out [][]byte
	for off := 0; off+512 <= len(tarBytes); {
		h := tarBytes[off : off+512]
		if h[0] == 0 {
			break
		}
		size := octal(h[124:136])
		next := off + 512 + (size+511)/512*512
		if version == 1 && string(h[257:262]) != "ustar" {
			off += 512
			continue
		}
		var take bool
		if version == 1 {
			name := cstr(h[0:100])
			if p := cstr(h[345:500]); p != "" {
				name = p + "/" + name
			}
			for _, ext := range []string{".jpg", ".JPG", ".jpeg", ".JPEG"} {
				take = take || strings.HasSuffix(name, ext)
			}
		} else {
			take = (h[156] == '0' || h[156] == 0) && size > 0 && FormatFromName(cstr(h)) != FormatUnknown
		}
		if take {
			out = append(out, tarBytes[off+512:off+512+size])
		}
		off = next
	}
	return out
}

// TestUpstreamSelection checks that the selection rules above give exactly
// the samples in each converter's output, so that a converter built on them
// can reproduce the files byte for byte.
func TestUpstreamSelection(t *testing.T) {
	for _, dir := range confCases(t) {
		c := filepath.Base(dir)
		tarBytes, err := os.ReadFile(filepath.Join(dir, c+".tar"))
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range confVariants {
			d := parseDump(t, filepath.Join(dir, c+"."+v.name+".dump.txt"))
			sel := upstreamSelect(t, tarBytes, v.opts.Version)
			if len(sel) != len(d.pySamples) {
				t.Errorf("%s/%s: rule selects %d samples, converter wrote %d", c, v.name, len(sel), len(d.pySamples))
				continue
			}
			for i, b := range sel {
				sum := sha1.Sum(b)
				if hex.EncodeToString(sum[:])[:12] != d.pySamples[i]["sha1"] || uint64(len(b)) != num(t, d.samples[i], "payload_len") {
					t.Errorf("%s/%s: sample %d: rule picks %d bytes %x, converter wrote sha1 %s", c, v.name, i, len(b), sum[:6], d.pySamples[i]["sha1"])
				}
			}
		}
	}
}
