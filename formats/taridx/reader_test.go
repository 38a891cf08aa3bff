package taridx

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/itarconv/itarconv/testing/testutil"
)

// The types below follow the expected.json files that stand beside glzn's
// indexes in testdata/conformance/taridx/<case>/.

type expCase struct {
	Case      string             `json:"case"`
	Folds     map[string]expFold `json:"folds"`
	FoldOrder []string           `json:"fold_order"`
	Error     *struct {
		Type string `json:"type"`
		Msg  string `json:"msg"`
	} `json:"iTarDirectory_error"`
}

type expFold struct {
	Shards  []string `json:"shards_in_fid_order"`
	Members map[string][]struct {
		Name string `json:"name"`
		Type string `json:"type"`
	} `json:"tarfile_members"`
	TaridxFile string       `json:"taridx_file"`
	Taridx     *expTaridx   `json:"taridx"`
	RowsDebug  []expRowInfo `json:"rows_debug"`
	Enforced   *struct {
		File string   `json:"file"`
		Rows []expRow `json:"rows"`
	} `json:"enforce_contiguous"`
}

type expTaridx struct {
	SHA256        string            `json:"sha256"`
	FileSize      int               `json:"file_size"`
	Header        expHeader         `json:"header"`
	ExtBlockRaw   string            `json:"ext_block_raw"`
	CrashBlockRaw string            `json:"crash_block_raw"`
	Exts          []string          `json:"exts"`
	CrashStems    []string          `json:"crash_stems"`
	Rows          []expRow          `json:"rows"`
	StemBuckets   map[string]uint64 `json:"stem_buckets"` // crash_weakhash only
}

type expHeader struct {
	Magic       string `json:"magic"`
	Major       uint16 `json:"major"`
	Minor       uint16 `json:"minor"`
	RecSize     uint16 `json:"rec_size"`
	HdrSize     uint16 `json:"hdr_size"`
	NStems      uint64 `json:"n_stems"`
	NRows       uint64 `json:"n_rows"`
	NExt        uint32 `json:"n_ext"`
	NCrash      uint32 `json:"n_crash"`
	OffCrash    uint64 `json:"off_crash"`
	OffArr      uint64 `json:"off_arr"`
	Flags       uint8  `json:"flags"`
	ReservedHex string `json:"reserved_hex"`
}

// header converts the decoded header of expected.json to a Header.
func (e expHeader) header(t *testing.T) Header {
	t.Helper()
	res, err := hex.DecodeString(e.ReservedHex)
	if err != nil || len(res) != 7 {
		t.Fatalf("reserved_hex %q: %v", e.ReservedHex, err)
	}
	h := Header{
		Major: e.Major, Minor: e.Minor, RecSize: e.RecSize, HdrSize: e.HdrSize,
		NStems: e.NStems, NRows: e.NRows, NExt: e.NExt, NCrash: e.NCrash,
		OffCrash: e.OffCrash, OffArr: e.OffArr, Flags: e.Flags,
	}
	copy(h.Reserved[:], res)
	return h
}

// expRow is a row of expected.json: [fid, offset, size, extid, crashid,
// keyhash-hex].
type expRow Row

func (r *expRow) UnmarshalJSON(b []byte) error {
	var f []json.RawMessage
	if err := json.Unmarshal(b, &f); err != nil {
		return err
	}
	if len(f) != 6 {
		return fmt.Errorf("row has %d fields, want 6", len(f))
	}
	var n [5]uint64
	for i := range n {
		v, err := strconv.ParseUint(string(f[i]), 10, 64)
		if err != nil {
			return fmt.Errorf("row field %d: %v", i, err)
		}
		n[i] = v
	}
	var h string
	if err := json.Unmarshal(f[5], &h); err != nil {
		return err
	}
	kh, err := strconv.ParseUint(h, 16, 64)
	if err != nil {
		return fmt.Errorf("keyhash %q: %v", h, err)
	}
	*r = expRow{Fid: uint16(n[0]), Offset: n[1], Size: n[2], ExtID: uint16(n[3]), CrashID: uint32(n[4]), KeyHash: kh}
	return nil
}

type expRowInfo struct {
	Shard        string `json:"shard"`
	Typeflag     string `json:"typeflag"`
	NameField    string `json:"name_field"`
	NameFieldHex string `json:"name_field_hex"`
	Stem         string `json:"stem"`
	Ext          string `json:"ext"`
	ExtFromTable string `json:"ext_from_table"`
}

// sample is the stem and extension of one row.
type sample struct{ stem, ext string }

// foldSamples returns, row by row, the stem and extension glzn indexed in
// a fold. They are rows_debug's, except in empty_shard_middle: its
// rows_debug was read through glzn's shifted fids (the empty
// train_0001.tar took no fid, so the rows of train_0002.tar say fid 1 and
// rows_debug shows train_0001.tar's nothing for them). There the members
// Python's tarfile lists, shard by shard, are the rows.
func foldSamples(t *testing.T, caseName string, f expFold) []sample {
	t.Helper()
	var out []sample
	if caseName == "empty_shard_middle" {
		for _, sh := range f.Shards {
			for _, m := range f.Members[sh] {
				if m.Type == "" {
					continue // the shard tarfile could not open
				}
				stem, ext := SplitName(m.Name, StemBasename)
				out = append(out, sample{stem, ext})
			}
		}
	} else {
		for _, d := range f.RowsDebug {
			if d.Ext != d.ExtFromTable {
				t.Errorf("rows_debug: ext %q but ext_from_table %q", d.Ext, d.ExtFromTable)
			}
			out = append(out, sample{d.Stem, d.Ext})
		}
	}
	if len(out) != len(f.Taridx.Rows) {
		t.Fatalf("%d samples for %d rows", len(out), len(f.Taridx.Rows))
	}
	return out
}

func rowsOf(rs []expRow) []Row {
	out := make([]Row, len(rs))
	for i, r := range rs {
		out[i] = Row(r)
	}
	return out
}

func indexRows(x *Index) []Row {
	out := make([]Row, x.Len())
	for i := range out {
		out[i] = x.Row(i)
	}
	return out
}

func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// conformanceRoot returns testdata/conformance/taridx and its case names.
func conformanceRoot(t *testing.T) (string, []string) {
	t.Helper()
	root := testutil.Conformance(t, "taridx")
	entries, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	var cases []string
	for _, e := range entries {
		if e.IsDir() {
			cases = append(cases, e.Name())
		}
	}
	if len(cases) < 20 {
		t.Fatalf("only %d conformance cases in %s", len(cases), root)
	}
	return root, cases
}

func loadCase(t *testing.T, root, name string) expCase {
	t.Helper()
	var c expCase
	readJSON(t, filepath.Join(root, name, "expected.json"), &c)
	return c
}

// weakhashDir is the synthetic case written by glzn with a weakened hash.
func weakhashDir(t *testing.T) string {
	return filepath.Join(testutil.Conformance(t, "taridx-synthetic"), "crash_weakhash")
}

// checkAgainst compares a parsed index with the "taridx" section of an
// expected.json.
func checkAgainst(t *testing.T, x *Index, data []byte, want *expTaridx) {
	t.Helper()
	if len(data) != want.FileSize {
		t.Errorf("file size %d, want %d", len(data), want.FileSize)
	}
	if sum := sha256.Sum256(data); hex.EncodeToString(sum[:]) != want.SHA256 {
		t.Errorf("sha256 %x, want %s (the file under test is not glzn's)", sum, want.SHA256)
	}
	if want.Header.Magic != Magic {
		t.Errorf("expected.json magic %q", want.Header.Magic)
	}
	if wh := want.Header.header(t); x.Header != wh {
		t.Errorf("header\n got %+v\nwant %+v", x.Header, wh)
	}
	if got, want := x.Header.Contiguous(), want.Header.Flags&1 != 0; got != want {
		t.Errorf("Contiguous() = %v, want %v", got, want)
	}
	if !slices.Equal(x.Exts, want.Exts) {
		t.Errorf("exts %q, want %q", x.Exts, want.Exts)
	}
	if got := strings.Join(x.Exts, "\n"); got != want.ExtBlockRaw {
		t.Errorf("ext block %q, want %q", got, want.ExtBlockRaw)
	}
	if !slices.Equal(x.CrashStems, want.CrashStems) {
		t.Errorf("crash stems %q, want %q", x.CrashStems, want.CrashStems)
	}
	if got := strings.Join(x.CrashStems, "\n"); got != want.CrashBlockRaw {
		t.Errorf("crash block %q, want %q", got, want.CrashBlockRaw)
	}
	if got, want := indexRows(x), rowsOf(want.Rows); !slices.Equal(got, want) {
		t.Errorf("rows\n got %+v\nwant %+v", got, want)
	}
	for i, e := range want.Exts {
		if got := x.ExtID(e); got != i {
			t.Errorf("ExtID(%q) = %d, want %d", e, got, i)
		}
	}
}

// TestParseConformance parses every index glzn wrote and compares it with
// the decoded view in expected.json.
func TestParseConformance(t *testing.T) {
	root, cases := conformanceRoot(t)
	parsed := 0
	for _, name := range cases {
		c := loadCase(t, root, name)
		for fold, f := range c.Folds {
			t.Run(name+"/"+fold, func(t *testing.T) {
				path := filepath.Join(root, name, f.TaridxFile)
				if f.Taridx == nil {
					// glzn refused: no index was written.
					glzn := filepath.Join(root, name, fold+".taridx")
					if _, err := os.Stat(glzn); err == nil {
						t.Fatalf("%s exists, but expected.json has no taridx for it", glzn)
					}
					return
				}
				data, err := os.ReadFile(path)
				if err != nil {
					t.Fatal(err)
				}
				x, err := ReadFile(path)
				if err != nil {
					t.Fatalf("ReadFile: %v", err)
				}
				if x.Path != path {
					t.Errorf("Path = %q, want %q", x.Path, path)
				}
				checkAgainst(t, x, data, f.Taridx)
				parsed++

				// The stems glzn hashed and the extension each row's extid
				// names.
				for i, s := range foldSamples(t, name, f) {
					r := x.Row(i)
					if got := KeyHash(s.stem); got != r.KeyHash {
						t.Errorf("row %d: KeyHash(%q) = %016x, row holds %016x", i, s.stem, got, r.KeyHash)
					}
					if got := x.Exts[r.ExtID]; got != s.ext {
						t.Errorf("row %d: Exts[%d] = %q, want %q", i, r.ExtID, got, s.ext)
					}
					if r.CrashID != 0 {
						t.Errorf("row %d: crashid %d in a real-xxh64 index", i, r.CrashID)
					}
					if r.DataOffset() != r.Offset+512 {
						t.Errorf("row %d: DataOffset %d for offset %d", i, r.DataOffset(), r.Offset)
					}
				}
			})
		}
	}
	if parsed < 25 {
		t.Errorf("parsed only %d conformance indexes", parsed)
	}
}

// TestParseEnforcedRef parses glzn's enforce_contiguous output.
func TestParseEnforcedRef(t *testing.T) {
	root, _ := conformanceRoot(t)
	for _, name := range []string{"duplicates", "noncontiguous"} {
		t.Run(name, func(t *testing.T) {
			f := loadCase(t, root, name).Folds["train"]
			if f.Enforced == nil {
				t.Fatal("expected.json has no enforce_contiguous section")
			}
			ref, err := ReadFile(filepath.Join(root, name, f.Enforced.File))
			if err != nil {
				t.Fatal(err)
			}
			orig, err := ReadFile(filepath.Join(root, name, f.TaridxFile))
			if err != nil {
				t.Fatal(err)
			}
			if got, want := indexRows(ref), rowsOf(f.Enforced.Rows); !slices.Equal(got, want) {
				t.Errorf("rows\n got %+v\nwant %+v", got, want)
			}
			// Same tables and counts as the original; only the flag and
			// the row order differ.
			wantHdr := orig.Header
			wantHdr.Flags = FlagContiguous
			if ref.Header != wantHdr {
				t.Errorf("header\n got %+v\nwant %+v", ref.Header, wantHdr)
			}
			if orig.Header.Contiguous() {
				t.Errorf("original index is flagged contiguous")
			}
			if !slices.Equal(ref.Exts, orig.Exts) || !slices.Equal(ref.CrashStems, orig.CrashStems) {
				t.Errorf("tables differ from the original's")
			}
		})
	}
}

// TestParseWeakhash parses the synthetic index with crash ids.
func TestParseWeakhash(t *testing.T) {
	dir := weakhashDir(t)
	var want expTaridx
	readJSON(t, filepath.Join(dir, "expected.json"), &want)
	data, err := os.ReadFile(filepath.Join(dir, "train.taridx"))
	if err != nil {
		t.Fatal(err)
	}
	x, err := Parse("weak", data)
	if err != nil {
		t.Fatal(err)
	}
	checkAgainst(t, x, data, &want)
	if x.Header.NCrash != 6 || x.Len() != 22 {
		t.Errorf("n_crash %d, %d rows; want 6 and 22", x.Header.NCrash, x.Len())
	}
	y, err := Read("weak", bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(indexRows(y), indexRows(x)) || y.Header != x.Header {
		t.Error("Read and Parse disagree")
	}
}

// layout is the content of a TARIDX file, encoded verbatim by bytes().
type layout struct {
	h          Header
	magic      string // when not "", replaces the 8 magic bytes
	ext, crash string
	rows       []Row
}

func (l *layout) bytes() []byte {
	b, _ := l.h.MarshalBinary()
	if l.magic != "" {
		copy(b[:8], l.magic)
	}
	b = append(b, l.ext...)
	b = append(b, l.crash...)
	for _, r := range l.rows {
		var rb [RecordSize]byte
		PutRow(rb[:], r)
		b = append(b, rb[:]...)
	}
	return b
}

// sync makes counts and offsets agree with the content.
func (l *layout) sync() {
	l.h.OffCrash = HeaderSize + uint64(len(l.ext))
	l.h.OffArr = l.h.OffCrash + uint64(len(l.crash))
	l.h.NRows = uint64(len(l.rows))
	l.h.NExt = uint32(len(strings.Split(l.ext, "\n")))
	if l.ext == "" {
		l.h.NExt = 0
	}
	l.h.NCrash = uint32(len(strings.Split(l.crash, "\n")))
	if l.crash == "" {
		l.h.NCrash = 0
	}
}

// baseLayout is a valid index: two extensions, one crash stem, three rows
// at offsets 74, 106 and 138.
func baseLayout() *layout {
	ka := KeyHash("a")
	l := &layout{
		h:     Header{Major: 1, RecSize: 32, HdrSize: 64, NStems: 2, Flags: FlagContiguous},
		ext:   "jpg\ncls",
		crash: "dup",
		rows: []Row{
			{Fid: 0, Offset: 0, Size: 10, ExtID: 0, CrashID: 0, KeyHash: ka},
			{Fid: 0, Offset: 1024, Size: 1, ExtID: 1, CrashID: 0, KeyHash: ka},
			{Fid: 1, Offset: 0, Size: 5, ExtID: 0, CrashID: 1, KeyHash: ka},
		},
	}
	l.sync()
	return l
}

type parseCase struct {
	name string
	edit func(l *layout)
	raw  func(b []byte) []byte // applied to the encoded bytes, after edit
	err  error                 // nil: must parse
	off  int64                 // Error.Offset
	ok   func(t *testing.T, x *Index)
}

var parseCases = []parseCase{
	{name: "empty file", raw: func(b []byte) []byte { return nil }, err: ErrFormat, off: 0},
	{name: "truncated header", raw: func(b []byte) []byte { return b[:63] }, err: ErrFormat, off: 0},
	{name: "bad magic", edit: func(l *layout) { l.magic = "TARIDY\x00\x00" }, err: ErrFormat, off: 0},
	{name: "magic lower case", edit: func(l *layout) { l.magic = "taridx\x00\x00" }, err: ErrFormat, off: 0},
	{name: "magic padding not NUL", edit: func(l *layout) { l.magic = "TARIDX\x00 " }, err: ErrFormat, off: 0},
	{name: "major 2", edit: func(l *layout) { l.h.Major = 2 }, err: ErrVersion, off: 8},
	{name: "major 0", edit: func(l *layout) { l.h.Major = 0 }, err: ErrVersion, off: 8},
	{name: "hdr_size 128", edit: func(l *layout) { l.h.HdrSize = 128 }, err: ErrFormat, off: 14},
	{name: "hdr_size 0", edit: func(l *layout) { l.h.HdrSize = 0 }, err: ErrFormat, off: 14},
	{name: "rec_size 24", edit: func(l *layout) { l.h.RecSize = 24 }, err: ErrFormat, off: 12},
	{name: "rec_size 64", edit: func(l *layout) { l.h.RecSize = 64 }, err: ErrFormat, off: 12},
	{name: "off_crash 63", edit: func(l *layout) { l.h.OffCrash = 63 }, err: ErrCorrupt, off: 40},
	{name: "off_crash 0", edit: func(l *layout) { l.h.OffCrash = 0 }, err: ErrCorrupt, off: 40},
	{name: "off_arr before off_crash", edit: func(l *layout) { l.h.OffArr = 70 }, err: ErrCorrupt, off: 48},
	{name: "off_arr past EOF", edit: func(l *layout) { l.h.OffArr = 171 }, err: ErrCorrupt, off: 48},
	{name: "off_arr huge", edit: func(l *layout) { l.h.OffArr = 1<<64 - 1 }, err: ErrCorrupt, off: 48},
	{name: "off_crash past EOF", edit: func(l *layout) { l.h.OffCrash, l.h.OffArr = 1<<40, 1<<40 }, err: ErrCorrupt, off: 48},
	{name: "partial row", raw: func(b []byte) []byte { return b[:len(b)-1] }, err: ErrCorrupt, off: 74},
	{name: "header only", raw: func(b []byte) []byte { return b[:64] }, err: ErrCorrupt, off: 48},
	{name: "row too many", raw: func(b []byte) []byte { return append(b, make([]byte, 32)...) }, err: ErrCorrupt, off: 24},
	{name: "n_rows too large", edit: func(l *layout) { l.h.NRows = 4 }, err: ErrCorrupt, off: 24},
	{name: "n_rows too small", edit: func(l *layout) { l.h.NRows = 2 }, err: ErrCorrupt, off: 24},
	{name: "n_ext too large", edit: func(l *layout) { l.h.NExt = 3 }, err: ErrCorrupt, off: 64},
	{name: "n_ext too small", edit: func(l *layout) { l.h.NExt = 1 }, err: ErrCorrupt, off: 64},
	{name: "n_ext 0 with a block", edit: func(l *layout) { l.h.NExt = 0 }, err: ErrCorrupt, off: 64},
	{name: "n_ext with trailing newline", edit: func(l *layout) { l.ext = "jpg\ncls\n"; l.sync(); l.h.NExt = 2 }, err: ErrCorrupt, off: 64},
	{
		// glzn's loader would split this block on the space and count
		// three; split on "\n" only it holds two and the count agrees.
		name: "n_ext counts a space", edit: func(l *layout) { l.ext = "a b\ncls"; l.sync(); l.h.NExt = 3 },
		err: ErrCorrupt, off: 64,
	},
	{name: "n_crash too large", edit: func(l *layout) { l.h.NCrash = 2 }, err: ErrCorrupt, off: 71},
	{name: "n_crash 0 with a block", edit: func(l *layout) { l.h.NCrash = 0 }, err: ErrCorrupt, off: 71},
	{name: "extid == n_ext", edit: func(l *layout) { l.rows[1].ExtID = 2 }, err: ErrCorrupt, off: 74 + 32 + 18},
	{name: "extid 0xffff", edit: func(l *layout) { l.rows[2].ExtID = 0xffff }, err: ErrCorrupt, off: 74 + 64 + 18},
	{name: "crashid > n_crash", edit: func(l *layout) { l.rows[2].CrashID = 2 }, err: ErrCorrupt, off: 74 + 64 + 20},
	{name: "crashid with no crash table", edit: func(l *layout) { l.crash = ""; l.sync() }, err: ErrCorrupt, off: 71 + 64 + 20},
	{name: "ext block invalid UTF-8", edit: func(l *layout) { l.ext = "jp\xff\ncls" }, err: ErrCorrupt, off: 64},
	{name: "ext block truncated UTF-8", edit: func(l *layout) { l.ext = "jpg\ncl\xe6" }, err: ErrCorrupt, off: 64},
	{name: "crash block invalid UTF-8", edit: func(l *layout) { l.crash = "d\xc0\xafp"; l.sync() }, err: ErrCorrupt, off: 71},
	{name: "crash block surrogate", edit: func(l *layout) { l.crash = "\xed\xa0\x80"; l.sync() }, err: ErrCorrupt, off: 71},
	{name: "duplicate extension", edit: func(l *layout) { l.ext = "jpg\njpg" }, err: ErrCorrupt, off: 64},
	{name: "duplicate empty extension", edit: func(l *layout) { l.ext = "\njpg\n"; l.sync() }, err: ErrCorrupt, off: 64},
	{name: "duplicate crash stem", edit: func(l *layout) { l.crash = "dup\ndup"; l.sync() }, err: ErrCorrupt, off: 71},

	// Accepted.
	{name: "valid", ok: func(t *testing.T, x *Index) {
		if !slices.Equal(x.Exts, []string{"jpg", "cls"}) || !slices.Equal(x.CrashStems, []string{"dup"}) {
			t.Errorf("tables %q %q", x.Exts, x.CrashStems)
		}
		if x.Len() != 3 || x.Row(2) != (Row{Fid: 1, Size: 5, CrashID: 1, KeyHash: KeyHash("a")}) {
			t.Errorf("rows %+v", indexRows(x))
		}
		if got := x.Row(2).Key(); got != (Key{Hash: KeyHash("a"), CrashID: 1}) {
			t.Errorf("Key() = %+v", got)
		}
		if x.ExtID("png") != -1 || x.ExtID("cls") != 1 {
			t.Errorf("ExtID")
		}
	}},
	{name: "minor 1", edit: func(l *layout) { l.h.Minor = 1 }, ok: func(t *testing.T, x *Index) {
		if x.Header.Minor != 1 {
			t.Errorf("minor %d", x.Header.Minor)
		}
	}},
	{name: "minor 0xffff", edit: func(l *layout) { l.h.Minor = 0xffff }},
	{name: "reserved bytes ignored", edit: func(l *layout) { l.h.Reserved = [7]byte{1, 2, 3, 4, 5, 6, 0xff} }, ok: func(t *testing.T, x *Index) {
		if x.Header.Reserved != [7]byte{1, 2, 3, 4, 5, 6, 0xff} {
			t.Errorf("reserved %x", x.Header.Reserved)
		}
	}},
	{name: "unknown flag bits ignored", edit: func(l *layout) { l.h.Flags = 0xfe }, ok: func(t *testing.T, x *Index) {
		if x.Header.Contiguous() || x.Header.Flags != 0xfe {
			t.Errorf("flags %#x, Contiguous() %v", x.Header.Flags, x.Header.Contiguous())
		}
	}},
	{name: "all flag bits", edit: func(l *layout) { l.h.Flags = 0xff }, ok: func(t *testing.T, x *Index) {
		if !x.Header.Contiguous() {
			t.Error("not contiguous")
		}
	}},
	{name: "n_stems not checked", edit: func(l *layout) { l.h.NStems = 1 << 60 }},
	{name: "crashid == n_crash", edit: func(l *layout) { l.rows[0].CrashID = 1 }},
	{name: "extension with space", edit: func(l *layout) { l.ext = "a b\ncls"; l.sync() }, ok: func(t *testing.T, x *Index) {
		if !slices.Equal(x.Exts, []string{"a b", "cls"}) {
			t.Errorf("exts %q", x.Exts)
		}
	}},
	{name: "extensions with white space", edit: func(l *layout) { l.ext = "\t\n\r\n\u00a0"; l.sync() }, ok: func(t *testing.T, x *Index) {
		if !slices.Equal(x.Exts, []string{"\t", "\r", "\u00a0"}) {
			t.Errorf("exts %q", x.Exts)
		}
	}},
	{name: "one empty extension", edit: func(l *layout) {
		l.ext = ""
		for i := range l.rows {
			l.rows[i].ExtID = 0
		}
		l.sync()
		l.h.NExt = 1
	}, ok: func(t *testing.T, x *Index) {
		if !slices.Equal(x.Exts, []string{""}) || x.Header.OffCrash != 64 {
			t.Errorf("exts %q, off_crash %d", x.Exts, x.Header.OffCrash)
		}
		if x.ExtID("") != 0 {
			t.Errorf("ExtID(\"\") = %d", x.ExtID(""))
		}
	}},
	{name: "empty extension last", edit: func(l *layout) { l.ext = "jpg\n"; l.sync() }, ok: func(t *testing.T, x *Index) {
		if !slices.Equal(x.Exts, []string{"jpg", ""}) {
			t.Errorf("exts %q", x.Exts)
		}
	}},
	{name: "one empty crash stem", edit: func(l *layout) { l.crash = ""; l.sync(); l.h.NCrash = 1 }, ok: func(t *testing.T, x *Index) {
		if !slices.Equal(x.CrashStems, []string{""}) {
			t.Errorf("crash stems %q", x.CrashStems)
		}
	}},
	{name: "no rows", edit: func(l *layout) { l.rows = nil; l.sync() }, ok: func(t *testing.T, x *Index) {
		if x.Len() != 0 || len(x.Exts) != 2 {
			t.Errorf("%d rows, exts %q", x.Len(), x.Exts)
		}
	}},
	{name: "empty index", edit: func(l *layout) { l.ext, l.crash, l.rows = "", "", nil; l.sync() }, ok: func(t *testing.T, x *Index) {
		if x.Len() != 0 || x.Exts != nil || x.CrashStems != nil {
			t.Errorf("%d rows, exts %q, crash %q", x.Len(), x.Exts, x.CrashStems)
		}
	}},
}

// input returns the bytes a parse case feeds to Parse.
func (c parseCase) input() []byte {
	l := baseLayout()
	if c.edit != nil {
		c.edit(l)
	}
	b := l.bytes()
	if c.raw != nil {
		b = c.raw(b)
	}
	return b
}

func TestParse(t *testing.T) {
	for _, c := range parseCases {
		t.Run(c.name, func(t *testing.T) {
			in := c.input()
			x, err := Parse("case.taridx", in)
			if c.err == nil {
				if err != nil {
					t.Fatalf("Parse: %v", err)
				}
				if uint64(x.Len()) != x.Header.NRows {
					t.Errorf("Len() = %d, n_rows %d", x.Len(), x.Header.NRows)
				}
				if c.ok != nil {
					c.ok(t, x)
				}
				return
			}
			if x != nil {
				t.Errorf("Parse returned an index with error %v", err)
			}
			if !errors.Is(err, c.err) {
				t.Fatalf("Parse: %v, want %v", err, c.err)
			}
			for _, other := range []error{ErrFormat, ErrCorrupt, ErrVersion} {
				if other != c.err && errors.Is(err, other) {
					t.Errorf("error %v is also %v", err, other)
				}
			}
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("error %T is not *Error", err)
			}
			if e.Offset != c.off {
				t.Errorf("Offset = %d, want %d (%v)", e.Offset, c.off, err)
			}
			if e.Path != "case.taridx" {
				t.Errorf("Path = %q", e.Path)
			}
			if want := fmt.Sprintf("case.taridx: offset %d: ", c.off); !strings.HasPrefix(err.Error(), want) {
				t.Errorf("message %q does not start with %q", err, want)
			}
		})
	}
}

func TestReadFileErrors(t *testing.T) {
	dir := t.TempDir()
	if _, err := ReadFile(filepath.Join(dir, "missing.taridx")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
	path := filepath.Join(dir, "bad.taridx")
	l := baseLayout()
	l.h.Major = 2
	if err := os.WriteFile(path, l.bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := ReadFile(path)
	var e *Error
	if !errors.As(err, &e) || e.Path != path || !errors.Is(err, ErrVersion) {
		t.Errorf("ReadFile: %v, want ErrVersion naming %s", err, path)
	}
	if _, err := Read("r", iotestErrReader{}); err == nil || !strings.Contains(err.Error(), "read failed") {
		t.Errorf("Read from a failing reader: %v", err)
	}
}

type iotestErrReader struct{}

func (iotestErrReader) Read([]byte) (int, error) { return 0, errors.New("read failed") }

func TestHeaderMarshal(t *testing.T) {
	h := Header{
		Major: 1, Minor: 2, RecSize: 32, HdrSize: 64, NStems: 0x0102030405060708,
		NRows: 9, NExt: 0x0a0b0c0d, NCrash: 11, OffCrash: 12, OffArr: 13, Flags: 0x81,
		Reserved: [7]byte{1, 2, 3, 4, 5, 6, 7},
	}
	b, err := h.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	want, _ := hex.DecodeString("5441524944580000" + "0100" + "0200" + "2000" + "4000" +
		"0807060504030201" + "0900000000000000" + "0d0c0b0a" + "0b000000" +
		"0c00000000000000" + "0d00000000000000" + "81" + "01020304050607")
	if !bytes.Equal(b, want) {
		t.Errorf("MarshalBinary\n got %x\nwant %x", b, want)
	}
	if got := decodeHeader(b); got != h {
		t.Errorf("decodeHeader = %+v", got)
	}
}

func TestRowEncoding(t *testing.T) {
	r := Row{Fid: 0x0102, Offset: 0x030405060708090a, Size: 0x0b0c0d0e0f101112, ExtID: 0x1314, CrashID: 0x15161718, KeyHash: 0x191a1b1c1d1e1f20}
	b := make([]byte, RecordSize)
	PutRow(b, r)
	want, _ := hex.DecodeString("0201" + "0a09080706050403" + "1211100f0e0d0c0b" + "1413" + "18171615" + "201f1e1d1c1b1a19")
	if !bytes.Equal(b, want) {
		t.Errorf("PutRow\n got %x\nwant %x", b, want)
	}
	if got := DecodeRow(b); got != r {
		t.Errorf("DecodeRow = %+v", got)
	}
}
