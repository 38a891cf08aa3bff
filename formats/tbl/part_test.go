package tbl

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/itarconv/itarconv/dataset"
)

// srcSample is a sample of a TBL file the partition tests read.
type srcSample struct {
	name   string
	data   []byte
	meta   []MetaEntry // nil: NameMeta(name) in v2
	noMeta bool        // no metadata at all
}

// writeSourceTBL writes samples as a TBL file of the given version.
func writeSourceTBL(tb testing.TB, path string, version int, samples []srcSample) {
	tb.Helper()
	w, err := Create(path, WriterOptions{Version: version, NumSamples: len(samples)})
	if err != nil {
		tb.Fatal(err)
	}
	for _, s := range samples {
		var meta []MetaEntry
		if version == 2 && !s.noMeta {
			meta = s.meta
			if meta == nil {
				meta = []MetaEntry{NameMeta(s.name)}
			}
		}
		format := FormatFromName(s.name)
		if version == 1 && format > TIFF {
			format = FormatUnknown
		}
		if err := w.Add(format, bytes.NewReader(s.data), int64(len(s.data)), meta); err != nil {
			tb.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		tb.Fatal(err)
	}
}

// memberSample is a sample named as a metadata member of target whose
// bytes are one: read back as rows, it is a member at the end of its shard
// when it is the last of 256 (tblChunk), and its target opens the next.
func memberSample(target string, blocks ...MetaEntry) srcSample {
	return srcSample{name: target + MetaSuffix, data: EncodeMetaMember(blocks)}
}

// richSamples is a v2 dataset of 1600 samples (7 shards as Source cuts
// them): formats by extension, compressible and random bytes, empty
// samples, a name that is not UTF-8, samples with metadata beyond their
// name or none (whose rows carry a metadata member before them), names
// Select skips, and metadata members at shard ends whose samples open the
// next shard, or that nothing pairs with.
func richSamples() []srcSample {
	exts := []string{"jpg", "png", "bin", "txt", "webp"}
	ss := make([]srcSample, 1600)
	for i := range ss {
		s := &ss[i]
		s.name = fmt.Sprintf("s%04d.%s", i, exts[i%len(exts)])
		if i%29 == 3 {
			s.name = fmt.Sprintf("s%04d.skip", i)
		}
		if i%50 != 7 {
			if i%3 == 0 {
				s.data = randomBytes(uint64(i), (i*37)%2500+1)
			} else {
				s.data = testPayload(uint64(i), (i*37)%2500+1)
			}
		}
		switch {
		case i%13 == 0:
			s.meta = []MetaEntry{{Type: MetaJSON, Data: fmt.Appendf(nil, `{"name":%q,"label":%d}`, s.name, i)}, {Type: MetaCustom, Data: []byte{byte(i), 0}}}
		case i%17 == 0:
			s.noMeta = true
		}
	}
	ss[100].name = "bad\xffname.jpg"
	two := func(target string) srcSample {
		return memberSample(target, MetaEntry{Type: MetaJSON, Data: fmt.Appendf(nil, `{"name":%q,"label":1}`, target)},
			MetaEntry{Type: MetaMsgpack, Data: []byte{0x81, 0xa1, 0x61, 0x01, 0xff}})
	}
	plain := func(name string, seed uint64) srcSample { return srcSample{name: name, data: testPayload(seed, 700)} }
	ss[255], ss[256] = two("x255.jpg"), plain("x255.jpg", 1)          // paired across shards 0 and 1
	ss[511], ss[512] = memberSample("x511.png"), plain("x511.png", 2) // no blocks: the sample gets none
	ss[767], ss[768] = two("lonely.bin"), plain("other.bin", 3)       // not its sample: a sample itself
	ss[1023], ss[1024] = two("y.skip"), plain("y.skip", 4)            // its sample skipped by Select
	// Index fields and no blocks (the name's block stays), across shards.
	ss[1279] = srcSample{name: "z.jpg" + MetaSuffix, data: EncodeMember(Member{Format: RAWU8, HasFormat: true, Width: 9, Height: 8, HasDims: true})}
	ss[1280] = plain("z.jpg", 5)
	ss[1535], ss[1536], ss[1537] = two("v.jpg"), two("w.jpg"), plain("w.jpg", 6) // a member, then one that opens a shard
	ss[1599] = two("end.bin")                                                    // the dataset ends on a member
	return ss
}

// skipDotSkip is a converter's selection: names ending in ".skip" are not
// samples.
func skipDotSkip(_ int, r *dataset.Row) (string, error) {
	if strings.HasSuffix(string(r.Name), ".skip") {
		return "skip suffix", nil
	}
	if r.Kind != dataset.KindFile {
		return r.Kind.String(), nil
	}
	return "", nil
}

// partDataset is a source to split into tasks.
type partDataset struct {
	name   string
	shards int
	whole  func(counting bool) (dataset.PayloadSource, error)
	// boundary is how many metadata members pair across a task boundary,
	// by option case, when every shard is a task of its own.
	boundary map[string]int
}

func (d *partDataset) slice(lo, hi int) func(bool) (dataset.PayloadSource, error) {
	return func(counting bool) (dataset.PayloadSource, error) {
		src, err := d.whole(counting)
		if err != nil {
			return nil, err
		}
		return dataset.Slice(src, lo, hi)
	}
}

// tblDatasetOf opens a TBL file as the format's own Source.
func tblDatasetOf(tb testing.TB, name, path string, boundary map[string]int) *partDataset {
	r, err := Open(path)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { r.Close() })
	whole := func(counting bool) (dataset.PayloadSource, error) { return &Source{Reader: r, NoData: counting}, nil }
	src, _ := whole(false)
	return &partDataset{name: name, shards: src.NumShards(), whole: whole, boundary: boundary}
}

func partDatasets(t *testing.T) []*partDataset {
	dir := t.TempDir()
	rich := filepath.Join(dir, "rich.tbl")
	writeSourceTBL(t, rich, 2, richSamples())
	v1 := filepath.Join(dir, "v1.tbl")
	var v1s []srcSample
	for i := range 600 {
		var data []byte
		if i%40 != 1 {
			data = testPayload(uint64(i+9000), (i*53)%3000+1)
		}
		v1s = append(v1s, srcSample{name: fmt.Sprintf("v%d.%s", i, []string{"jpg", "tiff", "bin"}[i%3]), data: data})
	}
	writeSourceTBL(t, v1, 1, v1s)
	empty := filepath.Join(dir, "empty.tbl")
	writeSourceTBL(t, empty, 2, nil)

	// Rows no TBL file gives: directories, and a shard without rows
	// between a member and its sample.
	blocks := EncodeMetaMember([]MetaEntry{{Type: MetaJSON, Data: []byte(`{"name":"b.png","label":7}`)}, {Type: MetaCustom, Data: []byte{0, 1, 2}}})
	toy := newToyRows(t, [][]toyMember{
		{{"a.jpg", dataset.KindFile, []byte("jpeg bytes")}, {"d", dataset.KindDir, nil}, {"b.png" + MetaSuffix, dataset.KindFile, blocks}},
		{},
		{{"b.png", dataset.KindFile, bytes.Repeat([]byte("png "), 900)}, {"c.bin", dataset.KindFile, []byte("c")}, {"e.txt" + MetaSuffix, dataset.KindFile, EncodeMetaMember(nil)}},
		{{"f", dataset.KindDir, nil}, {"g.jpg", dataset.KindFile, testPayload(1, 5000)}, {"h.jpg" + MetaSuffix, dataset.KindFile, blocks}},
		{{"i.bin" + MetaSuffix, dataset.KindFile, blocks}, {"i.bin", dataset.KindFile, nil}, {"k.skip" + MetaSuffix, dataset.KindFile, blocks}},
		{{"k.skip", dataset.KindFile, []byte("k")}, {"j.bin", dataset.KindFile, randomBytes(3, 3000)}},
	})
	var opened atomic.Int64
	toySrc := toyFiles{toy, &opened}

	return []*partDataset{
		tblDatasetOf(t, "v2-rich", rich, map[string]int{"v2": 4, "v2-lz4": 4, "v2-nonames": 4, "v1": 4, "no-meta-members": 0, "select": 3}),
		tblDatasetOf(t, "v1", v1, map[string]int{"v2": 0}),
		tblDatasetOf(t, "empty", empty, map[string]int{"v2": 0}),
		{name: "toy", shards: toy.NumShards(), whole: func(bool) (dataset.PayloadSource, error) { return toySrc, nil },
			boundary: map[string]int{"v2": 2, "v1": 2, "no-meta-members": 0, "select": 1}},
	}
}

// partDatasetNamed is the dataset of partDatasets named name.
func partDatasetNamed(t *testing.T, name string) *partDataset {
	t.Helper()
	for _, d := range partDatasets(t) {
		if d.name == name {
			return d
		}
	}
	t.Fatalf("no dataset %s", name)
	return nil
}

var partOptCases = []struct {
	name string
	opts RowsOptions
}{
	{"v2", RowsOptions{}},
	{"v2-lz4", RowsOptions{LZ4: true}},
	{"v2-nonames", RowsOptions{NoNames: true, LZ4: true}},
	{"v1", RowsOptions{Version: 1}},
	{"no-meta-members", RowsOptions{NoMetaMembers: true}},
	{"select", RowsOptions{Select: skipDotSkip, LZ4: true}},
}

// testSplits cuts n shards into tasks: 1, 2, 3 and 7 of them, even and
// uneven (most shards in the last tasks, empty tasks first), one a shard,
// and empty tasks between others.
func testSplits(n int) [][]int {
	var out [][]int
	add := func(b []int) {
		for _, have := range out {
			if slices.Equal(have, b) {
				return
			}
		}
		out = append(out, b)
	}
	for _, k := range []int{1, 2, 3, 7} {
		even, front := make([]int, k+1), make([]int, k+1)
		for i := range k + 1 {
			even[i], front[i] = i*n/k, i*i*n/(k*k)
		}
		add(even)
		add(front)
	}
	each := make([]int, n+1)
	for i := range each {
		each[i] = i
	}
	add(each)
	if n >= 7 {
		add([]int{0, 2, 5, 5, 7, n})
		add([]int{0, 1, 1, 1, 4, 6, n, n})
	}
	if n == 6 {
		add([]int{0, 1, 1, 3, 3, 6})
	}
	return out
}

// writeParts writes one part per task of split, each with its own number
// of workers.
func writeParts(t testing.TB, d *partDataset, split []int, opts RowsOptions, dir string) ([]string, []*PartStats) {
	t.Helper()
	var parts []string
	var stats []*PartStats
	for k := range len(split) - 1 {
		p := filepath.Join(dir, fmt.Sprintf("part%02d", k))
		if err := os.Mkdir(p, 0o755); err != nil {
			t.Fatal(err)
		}
		o := opts
		o.Workers = 1 + k%3
		st, err := WritePart(context.Background(), d.slice(split[k], split[k+1]), p, o)
		if err != nil {
			t.Fatalf("task %d (shards %d-%d): %v", k, split[k], split[k+1], err)
		}
		parts, stats = append(parts, p), append(stats, st)
	}
	return parts, stats
}

// TestMergePartsMatchesWriteRows: for each dataset, option set and split,
// the parts merged are byte for byte the file WriteRows writes over the
// whole source, with the same stats.
func TestMergePartsMatchesWriteRows(t *testing.T) {
	ctx := context.Background()
	for _, d := range partDatasets(t) {
		for _, oc := range partOptCases {
			t.Run(d.name+"/"+oc.name, func(t *testing.T) {
				t.Parallel()
				want, wantBytes := wholeRun(t, d, oc.opts)
				for _, split := range testSplits(d.shards) {
					dir := t.TempDir()
					parts, pstats := writeParts(t, d, split, oc.opts, dir)
					out := filepath.Join(dir, "merged.tbl")
					got, ms, err := MergeParts(ctx, parts, out, oc.opts)
					if err != nil {
						t.Fatalf("split %v: %v", split, err)
					}
					gotBytes, err := os.ReadFile(out)
					if err != nil {
						t.Fatal(err)
					}
					if !bytes.Equal(gotBytes, wantBytes) {
						t.Fatalf("split %v: %d bytes, want %d: first difference at %d", split, len(gotBytes), len(wantBytes), firstDiff(gotBytes, wantBytes))
					}
					got.Output = want.Output
					if !reflect.DeepEqual(got, want) {
						t.Errorf("split %v: stats\n%+v\nwant\n%+v", split, got, want)
					}
					withSamples := 0
					for _, ps := range pstats {
						if ps.Samples > 0 {
							withSamples++
						}
					}
					if ms.Linked != (withSamples <= 1) || ms.Parts != len(parts) {
						t.Errorf("split %v: %d parts with samples, merge stats %+v", split, withSamples, ms)
					}
					if !ms.Linked && ms.BytesCopied == 0 && want.Samples > 0 && want.Bytes > 0 {
						t.Errorf("split %v: no bytes copied: %+v", split, ms)
					}
					if n, ok := d.boundary[oc.name]; ok && isEach(split) && ms.BoundaryMembers != n {
						t.Errorf("split %v: %d metadata members paired across tasks, want %d", split, ms.BoundaryMembers, n)
					}
				}
			})
		}
	}
}

// isEach tells whether a split makes each shard a task.
func isEach(split []int) bool {
	for i, b := range split {
		if b != i {
			return false
		}
	}
	return true
}

// TestWritePartEdges: a part records its first row and the member it ends
// on, and keeps that member as a sample of its own file.
func TestWritePartEdges(t *testing.T) {
	d := partDatasets(t)[0]
	dir := t.TempDir()
	parts, stats := writeParts(t, d, []int{0, 1, 2, 3}, RowsOptions{}, dir)
	var infos []*partInfo
	for _, p := range parts {
		data, err := os.ReadFile(filepath.Join(p, partInfoName))
		if err != nil {
			t.Fatal(err)
		}
		info, err := decodePartInfo(data)
		if err != nil {
			t.Fatal(err)
		}
		infos = append(infos, info)
	}
	// Shard 0 ends on x255.jpg's member, shard 1 opens with x255.jpg.
	if !stats[0].PendingMember || infos[0].Trailing == nil || string(infos[0].Trailing.Name) != "x255.jpg"+MetaSuffix || infos[0].Trailing.Blocks != 2 {
		t.Errorf("part 0: %+v, trailing %+v", stats[0], infos[0].Trailing)
	}
	if f := infos[1].First; f == nil || string(f.Name) != "x255.jpg" || !f.Sample || f.Meta {
		t.Errorf("part 1's first row %+v", f)
	}
	if f := infos[0].First; f == nil || !f.Meta || string(f.Name) != "s0000.jpg"+MetaSuffix {
		t.Errorf("part 0's first row %+v", f)
	}
	// x511.png's member has no blocks: trailing.meta is empty.
	if tr := infos[1].Trailing; tr == nil || tr.Blocks != 0 || tr.Size != 0 {
		t.Errorf("part 1's trailing member %+v", tr)
	}
	// In its own file, the member is the last sample, with its name.
	r, err := Open(filepath.Join(parts[0], partTBLName))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	src := &Source{Reader: r}
	if name, err := src.SampleName(r.Len() - 1); err != nil || name != "x255.jpg"+MetaSuffix {
		t.Errorf("part 0's last sample %q, %v", name, err)
	}
	if err := r.Verify(); err != nil {
		t.Error(err)
	}
}

// copyDir copies the files of a part directory.
func copyDir(t *testing.T, from, to string) {
	t.Helper()
	if err := os.MkdirAll(to, 0o755); err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(from)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join(from, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(to, e.Name()), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// snapshot reads every file of the parts, to check that a merge changes
// none.
func snapshot(t *testing.T, parts []string) map[string][]byte {
	t.Helper()
	m := map[string][]byte{}
	for _, p := range parts {
		entries, err := os.ReadDir(p)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			data, err := os.ReadFile(filepath.Join(p, e.Name()))
			if err != nil {
				t.Fatal(err)
			}
			m[filepath.Join(p, e.Name())] = data
		}
	}
	return m
}

// TestMergePartsErrors: a part cut short, changed or of another version
// or options is refused with an error naming the part's directory and
// file, wrapping ErrPart; the output is left as it was and the parts
// untouched.
func TestMergePartsErrors(t *testing.T) {
	d := partDatasets(t)[0]
	base := t.TempDir()
	good, _ := writeParts(t, d, []int{0, 1, 2, 3, 4, 5, 6, 7}, RowsOptions{}, base)
	le := binary.LittleEndian
	edit := func(file string, fn func([]byte) []byte) func(t *testing.T, part string) {
		return func(t *testing.T, part string) {
			p := filepath.Join(part, file)
			data, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, fn(data), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	cases := []struct {
		name   string
		part   int
		break_ func(t *testing.T, part string)
		opts   RowsOptions
		file   string // named in the error
		want   string // in the error
	}{
		{"truncated tbl", 3, edit(partTBLName, func(b []byte) []byte { return b[:len(b)-10] }), RowsOptions{}, partTBLName, "cut short"},
		{"other part version", 2, edit(partInfoName, func(b []byte) []byte {
			return bytes.Replace(b, []byte(`"part_version": 1`), []byte(`"part_version": 2`), 1)
		}), RowsOptions{}, partInfoName, "format version 2"},
		{"not json", 1, edit(partInfoName, func(b []byte) []byte { return b[:len(b)/2] }), RowsOptions{}, partInfoName, "not a part record"},
		{"unknown field", 1, edit(partInfoName, func(b []byte) []byte {
			return bytes.Replace(b, []byte(`"lz4"`), []byte(`"extra": 1, "lz4"`), 1)
		}), RowsOptions{}, partInfoName, "unknown field"},
		{"samples changed", 4, edit(partInfoName, func(b []byte) []byte {
			return bytes.Replace(b, []byte(`"samples": `), []byte(`"samples": 1`), 1)
		}), RowsOptions{}, partTBLName, "the part recorded"},
		{"truncated trailing", 0, edit(partTrailingName, func(b []byte) []byte { return b[:len(b)-1] }), RowsOptions{}, partTrailingName, "cut short"},
		{"entry offset", 2, edit(partTBLName, func(b []byte) []byte {
			at := HeaderSizeV2 + 5*EntrySizeV2
			le.PutUint64(b[at:], le.Uint64(b[at:])+1)
			return b
		}), RowsOptions{}, partTBLName, fmt.Sprintf("offset %d: sample 5 at offset", HeaderSizeV2+5*EntrySizeV2)},
		{"metadata block", 5, edit(partTBLName, func(b []byte) []byte {
			meta := le.Uint64(b[24:])
			le.PutUint64(b[meta:], 1<<40)
			return b
		}), RowsOptions{}, partTBLName, "a metadata block of sample 1099511627776"},
		{"header crc", 6, edit(partTBLName, func(b []byte) []byte { b[12]++; return b }), RowsOptions{}, partTBLName, "CRC-32"},
		{"other options", 0, func(*testing.T, string) {}, RowsOptions{LZ4: true}, partInfoName, "the merge asks for v2, lz4 true"},
		{"missing record", 5, func(t *testing.T, part string) { os.Remove(filepath.Join(part, partInfoName)) }, RowsOptions{}, partInfoName, "no such file"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			var parts []string
			for k, g := range good {
				p := filepath.Join(dir, filepath.Base(g))
				copyDir(t, g, p)
				if k == c.part {
					c.break_(t, p)
				}
				parts = append(parts, p)
			}
			before := snapshot(t, parts)
			outDir := t.TempDir()
			out := filepath.Join(outDir, "out.tbl")
			if err := os.WriteFile(out, []byte("an earlier file"), 0o644); err != nil {
				t.Fatal(err)
			}
			_, _, err := MergeParts(context.Background(), parts, out, c.opts)
			if err == nil {
				t.Fatal("no error")
			}
			if !errors.Is(err, ErrPart) {
				t.Errorf("%v: not ErrPart", err)
			}
			msg := err.Error()
			if !strings.Contains(msg, filepath.Join(parts[c.part], c.file)) || !strings.Contains(msg, c.want) {
				t.Errorf("error %q: want %s and %q", msg, filepath.Join(parts[c.part], c.file), c.want)
			}
			if data, err := os.ReadFile(out); err != nil || string(data) != "an earlier file" {
				t.Errorf("output %q, %v: want the earlier file untouched", data, err)
			}
			if entries, _ := os.ReadDir(outDir); len(entries) != 1 {
				t.Errorf("%d files left beside the output", len(entries))
			}
			if !reflect.DeepEqual(snapshot(t, parts), before) {
				t.Error("the merge changed a part")
			}
		})
	}
}

// TestMergePartsOutput: as WriteRows, a merge replaces a file at the
// output once the new one is complete (Overwrite), and is refused there
// without it; it never changes the parts; a
// single part with samples becomes the output as it is.
func TestMergePartsOutput(t *testing.T) {
	ctx := context.Background()
	d := partDatasets(t)[0]
	dir := t.TempDir()
	parts, _ := writeParts(t, d, []int{0, 3, 7}, RowsOptions{LZ4: true}, dir)
	before := snapshot(t, parts)
	out := filepath.Join(t.TempDir(), "out.tbl")
	if err := os.WriteFile(out, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := MergeParts(ctx, parts, out, RowsOptions{LZ4: true}); !errors.Is(err, fs.ErrExist) {
		t.Fatalf("a merge onto an existing file without Overwrite: %v", err)
	}
	if b, _ := os.ReadFile(out); string(b) != "old" {
		t.Fatalf("the refused merge changed the existing file: %q", b)
	}
	st, ms, err := MergeParts(ctx, parts, out, RowsOptions{LZ4: true, Overwrite: true})
	if err != nil {
		t.Fatal(err)
	}
	ref := filepath.Join(t.TempDir(), "ref.tbl")
	if _, err := WriteRows(ctx, d.whole, ref, RowsOptions{LZ4: true}); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(out)
	want, _ := os.ReadFile(ref)
	if !bytes.Equal(got, want) {
		t.Fatal("the merged file differs from WriteRows'")
	}
	if st.Output != out || ms.Linked || ms.EntriesRewritten != st.Samples {
		t.Errorf("stats %+v, %+v", st, ms)
	}
	if !reflect.DeepEqual(snapshot(t, parts), before) {
		t.Error("the merge changed a part")
	}

	// One part, and parts without rows around it: the part's file is the
	// output.
	dir = t.TempDir()
	parts, _ = writeParts(t, d, []int{0, 0, 7, 7}, RowsOptions{}, dir)
	out1 := filepath.Join(dir, "one.tbl")
	st, ms, err = MergeParts(ctx, parts, out1, RowsOptions{})
	if err != nil {
		t.Fatal(err)
	}
	fa, _ := os.Stat(out1)
	fb, _ := os.Stat(filepath.Join(parts[1], partTBLName))
	if !ms.Linked || ms.BytesLinked != fb.Size() || !os.SameFile(fa, fb) || st.Samples == 0 {
		t.Errorf("one part: %+v, %+v, same file %v", st, ms, os.SameFile(fa, fb))
	}
}

// TestMergePartsArguments: options a TBL cannot have, and no parts.
func TestMergePartsArguments(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out.tbl")
	for _, c := range []struct {
		parts []string
		opts  RowsOptions
	}{
		{nil, RowsOptions{}},
		{[]string{"x"}, RowsOptions{Version: 1, LZ4: true}},
		{[]string{"x"}, RowsOptions{Version: 3}},
	} {
		if _, _, err := MergeParts(context.Background(), c.parts, out, c.opts); err == nil {
			t.Errorf("%v %+v: no error", c.parts, c.opts)
		}
	}
	if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("output: %v", err)
	}
}

// TestWriteRangeMatchesWriteRows: parts written in place (WriteRange)
// merge into the file WriteRows writes over the whole source, byte for
// byte, with the same stats; without LZ4 the samples' bytes are the
// tasks' own (the merge renames their data file: the same inode, no byte
// copied), with it the parts are copied as WritePart's are.
func TestWriteRangeMatchesWriteRows(t *testing.T) {
	ctx := context.Background()
	for _, d := range partDatasets(t) {
		for _, oc := range partOptCases {
			t.Run(d.name+"/"+oc.name, func(t *testing.T) {
				t.Parallel()
				want, wantBytes := wholeRun(t, d, oc.opts)
				for _, split := range testSplits(d.shards) {
					dir := t.TempDir()
					var parts []string
					for k := range len(split) - 1 {
						p := filepath.Join(dir, fmt.Sprintf("part%02d", k))
						if err := os.Mkdir(p, 0o755); err != nil {
							t.Fatal(err)
						}
						o := oc.opts
						o.Workers = 1 + k%3
						if _, err := WriteRange(ctx, d.whole, split[k], split[k+1], p, dir, o); err != nil {
							t.Fatalf("split %v: task %d: %v", split, k, err)
						}
						parts = append(parts, p)
					}
					data := mustGlobOne(t, filepath.Join(dir, "shared-tbl-*.data"), !oc.opts.LZ4)
					var before os.FileInfo
					if data != "" {
						var err error
						if before, err = os.Stat(data); err != nil {
							t.Fatal(err)
						}
					}
					out := filepath.Join(dir, "merged.tbl")
					got, ms, err := MergeParts(ctx, parts, out, oc.opts)
					if err != nil {
						t.Fatalf("split %v: %v", split, err)
					}
					gotBytes, err := os.ReadFile(out)
					if err != nil {
						t.Fatal(err)
					}
					if !bytes.Equal(gotBytes, wantBytes) {
						t.Fatalf("split %v: %d bytes, want %d: first difference at %d", split, len(gotBytes), len(wantBytes), firstDiff(gotBytes, wantBytes))
					}
					got.Output = want.Output
					if !reflect.DeepEqual(got, want) {
						t.Errorf("split %v: stats\n%+v\nwant\n%+v", split, got, want)
					}
					if n, ok := d.boundary[oc.name]; ok && isEach(split) && ms.BoundaryMembers != n {
						t.Errorf("split %v: %d metadata members paired across tasks, want %d", split, ms.BoundaryMembers, n)
					}
					if oc.opts.LZ4 {
						continue
					}
					after, err := os.Stat(out)
					if err != nil {
						t.Fatal(err)
					}
					if !ms.InPlace || ms.BytesCopied != 0 || ms.Linked || ms.BytesInPlace != int64(len(wantBytes))-int64(headerLen(want.Version))-want.Samples*int64(entryLen(want.Version))-int64(ms.MetaBytes) || !os.SameFile(before, after) {
						t.Errorf("split %v: merge stats %+v; the output is the tasks' data file: %v", split, ms, os.SameFile(before, after))
					}
				}
			})
		}
	}
}

// mustGlobOne returns the one file matching pattern ("" when none and
// none is wanted).
func mustGlobOne(t testing.TB, pattern string, want bool) string {
	t.Helper()
	m, err := filepath.Glob(pattern)
	if err != nil {
		t.Fatal(err)
	}
	if len(m) != map[bool]int{true: 1}[want] {
		t.Fatalf("%s: %q", pattern, m)
	}
	if len(m) == 0 {
		return ""
	}
	return m[0]
}

// TestWriteRangeSelectShards: Select sees every row under its shard's
// number in the whole dataset, in both passes of every task.
func TestWriteRangeSelectShards(t *testing.T) {
	ctx := context.Background()
	for _, d := range partDatasets(t) {
		src, err := d.whole(false)
		if err != nil {
			t.Fatal(err)
		}
		shardOf := map[string]int{}
		for k := range src.NumShards() {
			if err := src.Scan(ctx, k, func(rows []dataset.Row) error {
				for _, r := range rows {
					shardOf[string(r.Name)] = k
				}
				return nil
			}); err != nil {
				t.Fatal(err)
			}
		}
		var calls atomic.Int64
		opts := RowsOptions{Select: func(shard int, r *dataset.Row) (string, error) {
			calls.Add(1)
			if want := shardOf[string(r.Name)]; shard != want {
				return "", fmt.Errorf("%s: shard %d, want %d", r.Name, shard, want)
			}
			return skipDotSkip(shard, r)
		}}
		split := testSplits(d.shards)[1]
		dir := t.TempDir()
		for _, lz4 := range []bool{false, true} {
			if err := os.Mkdir(filepath.Join(dir, fmt.Sprint(lz4)), 0o755); err != nil {
				t.Fatal(err)
			}
		}
		for k := range len(split) - 1 {
			p := filepath.Join(dir, fmt.Sprintf("part%02d", k))
			if err := os.Mkdir(p, 0o755); err != nil {
				t.Fatal(err)
			}
			for _, lz4 := range []bool{false, true} {
				o := opts
				o.LZ4 = lz4
				pp := filepath.Join(p, fmt.Sprint(lz4))
				if err := os.Mkdir(pp, 0o755); err != nil {
					t.Fatal(err)
				}
				if _, err := WriteRange(ctx, d.whole, split[k], split[k+1], pp, filepath.Join(dir, fmt.Sprint(lz4)), o); err != nil {
					t.Fatalf("%s: split %v, task %d, lz4 %v: %v", d.name, split, k, lz4, err)
				}
			}
		}
		if len(shardOf) > 0 && calls.Load() == 0 {
			t.Fatalf("%s: Select never called", d.name)
		}
	}
}

// TestMergeInPlaceErrors: a merge of parts written in place refuses,
// leaving nothing at the output, a data file that is gone, a task's
// share that is not in it (its entries zeroed, as a task that never
// wrote leaves them), and parts of the two kinds.
func TestMergeInPlaceErrors(t *testing.T) {
	ctx := context.Background()
	d := partDatasetNamed(t, "v2-rich")
	split := []int{0, d.shards / 3, 2 * d.shards / 3, d.shards}
	write := func(t *testing.T) (dir string, parts []string, data string) {
		dir = t.TempDir()
		for k := range len(split) - 1 {
			p := filepath.Join(dir, fmt.Sprintf("part%02d", k))
			if err := os.Mkdir(p, 0o755); err != nil {
				t.Fatal(err)
			}
			if _, err := WriteRange(ctx, d.whole, split[k], split[k+1], p, dir, RowsOptions{}); err != nil {
				t.Fatal(err)
			}
			parts = append(parts, p)
		}
		return dir, parts, mustGlobOne(t, filepath.Join(dir, "shared-tbl-*.data"), true)
	}
	for _, c := range []struct {
		name   string
		damage func(t *testing.T, parts []string, data string)
		want   string
	}{
		{"gone", func(t *testing.T, parts []string, _ string) { os.Remove(filepath.Join(parts[1], partDataName)) }, "no such file"},
		{"not-written", func(t *testing.T, parts []string, data string) {
			var info partInfo
			b, err := os.ReadFile(filepath.Join(parts[1], partInfoName))
			if err != nil || json.Unmarshal(b, &info) != nil {
				t.Fatal(err)
			}
			f, err := os.OpenFile(data, os.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			zeros := make([]byte, info.Samples*int64(entryLen(2)))
			if _, err := f.WriteAt(zeros, int64(headerLen(2))+info.InPlace.First*int64(entryLen(2))); err != nil {
				t.Fatal(err)
			}
		}, "a task did not write its share"},
		{"mixed", func(t *testing.T, parts []string, _ string) {
			os.RemoveAll(parts[2])
			os.Mkdir(parts[2], 0o755)
			if _, err := WritePart(ctx, d.slice(split[2], split[3]), parts[2], RowsOptions{}); err != nil {
				t.Fatal(err)
			}
		}, "parts of two runs"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir, parts, data := write(t)
			c.damage(t, parts, data)
			out := filepath.Join(dir, "merged.tbl")
			_, _, err := MergeParts(ctx, parts, out, RowsOptions{})
			if !errors.Is(err, ErrPart) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("%v, want ErrPart saying %q", err, c.want)
			}
			if _, err := os.Lstat(out); !errors.Is(err, fs.ErrNotExist) {
				t.Fatalf("the output is there: %v", err)
			}
		})
	}
}

// TestMergeInPlaceGathered: parts written in place on several machines
// and gathered on one (each part's data file its own, holding only its
// share) merge into the same file, each share copied from its part.
func TestMergeInPlaceGathered(t *testing.T) {
	ctx := context.Background()
	d := partDatasetNamed(t, "v2-rich")
	ref := filepath.Join(t.TempDir(), "whole.tbl")
	if _, err := WriteRows(ctx, d.whole, ref, RowsOptions{}); err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile(ref)
	if err != nil {
		t.Fatal(err)
	}
	split := []int{0, 1, d.shards / 2, d.shards}
	dir := t.TempDir()
	var parts []string
	for k := range len(split) - 1 {
		// Each machine's own data directory.
		machine := filepath.Join(dir, fmt.Sprintf("machine%d", k))
		p := filepath.Join(machine, "part")
		if err := os.MkdirAll(p, 0o755); err != nil {
			t.Fatal(err)
		}
		if _, err := WriteRange(ctx, d.whole, split[k], split[k+1], p, machine, RowsOptions{}); err != nil {
			t.Fatal(err)
		}
		parts = append(parts, p)
	}
	out := filepath.Join(dir, "merged.tbl")
	_, ms, err := MergeParts(ctx, parts, out, RowsOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("%d bytes, want %d: first difference at %d", len(got), len(want), firstDiff(got, want))
	}
	if !ms.InPlace || ms.BytesCopied == 0 || ms.BytesInPlace == 0 {
		t.Fatalf("merge stats %+v", ms)
	}
}

// wholeRun writes d's whole source with WriteRows (two workers) and
// returns its stats and bytes: what parts must merge into.
func wholeRun(t *testing.T, d *partDataset, opts RowsOptions) (*RowsStats, []byte) {
	t.Helper()
	ref := filepath.Join(t.TempDir(), "whole.tbl")
	opts.Workers = 2
	want, err := WriteRows(context.Background(), d.whole, ref, opts)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(ref)
	if err != nil {
		t.Fatal(err)
	}
	return want, b
}

// noCount is a dataset whose counting passes fail: a task given it must
// take the run's record of the count.
type noCount struct{ toyFiles }

func (noCount) Scan(context.Context, int, func([]dataset.Row) error) error {
	return errors.New("counted again")
}

// TestWriteRangeCountRecord: the first task of a run leaves its count of
// the whole dataset in the run's directory, and a later task takes it
// rather than counting; a damaged record, or a shard changed since (its
// modification time), is counted again; either way the merge gives what
// WriteRows gives.
func TestWriteRangeCountRecord(t *testing.T) {
	ctx := context.Background()
	d := partDatasetNamed(t, "toy")
	_, wantBytes := wholeRun(t, d, RowsOptions{})
	src, _ := d.whole(true)
	toy := src.(toyFiles)
	split := []int{0, 2, 4, d.shards}
	run := func(t *testing.T, later func(bool) (dataset.PayloadSource, error), between func(dir string)) error {
		dir := t.TempDir()
		var parts []string
		for k := range len(split) - 1 {
			p := filepath.Join(dir, fmt.Sprintf("part%02d", k))
			os.Mkdir(p, 0o755)
			whole := d.whole
			if k > 0 {
				whole = later
			}
			if _, err := WriteRange(ctx, whole, split[k], split[k+1], p, dir, RowsOptions{Workers: 1}); err != nil {
				return fmt.Errorf("task %d: %w", k, err)
			}
			if k == 0 {
				if recs, _ := filepath.Glob(filepath.Join(dir, "shared-tbl-*.count")); len(recs) != 1 {
					t.Fatalf("records after the first task: %q", recs)
				}
				between(dir)
			}
			parts = append(parts, p)
		}
		out := filepath.Join(dir, "merged.tbl")
		if _, _, err := MergeParts(ctx, parts, out, RowsOptions{}); err != nil {
			return err
		}
		if got, _ := os.ReadFile(out); !bytes.Equal(got, wantBytes) {
			t.Errorf("the merged file differs from WriteRows'")
		}
		return nil
	}
	counting := func(counting bool) (dataset.PayloadSource, error) {
		if counting {
			return noCount{toy}, nil
		}
		return d.whole(false)
	}
	if err := run(t, counting, func(string) {}); err != nil {
		t.Fatalf("later tasks over the record: %v", err)
	}
	damage := func(dir string) {
		recs, _ := filepath.Glob(filepath.Join(dir, "shared-tbl-*.count"))
		b, _ := os.ReadFile(recs[0])
		b[len(b)/2] ^= 1
		os.WriteFile(recs[0], b, 0o644)
	}
	if err := run(t, counting, damage); err == nil || !strings.Contains(err.Error(), "counted again") {
		t.Errorf("over a damaged record: %v, want the count run again", err)
	}
	if err := run(t, d.whole, damage); err != nil {
		t.Errorf("counted again over a damaged record: %v", err)
	}
	// Under the name of the run the caller gives, the shards are not
	// looked at: the tasks of one run share its count, another run's
	// count is its own.
	named := func(t *testing.T, first, later string) error {
		dir := t.TempDir()
		for k := range len(split) - 1 {
			p := filepath.Join(dir, fmt.Sprintf("part%02d", k))
			os.Mkdir(p, 0o755)
			whole, o := d.whole, RowsOptions{Workers: 1, Run: first}
			if k > 0 {
				whole, o.Run = counting, later
			}
			if _, err := WriteRange(ctx, whole, split[k], split[k+1], p, dir, o); err != nil {
				return err
			}
		}
		return nil
	}
	if err := named(t, "r1", "r1"); err != nil {
		t.Errorf("tasks of a named run over its record: %v", err)
	}
	if err := named(t, "r1", "r2"); err == nil || !strings.Contains(err.Error(), "counted again") {
		t.Errorf("a task of another run: %v, want the count run again", err)
	}
	touch := func(string) {
		later := time.Now().Add(time.Hour)
		os.Chtimes(toy.paths[3], later, later)
	}
	if err := run(t, counting, touch); err == nil || !strings.Contains(err.Error(), "counted again") {
		t.Errorf("a shard changed since the record: %v, want the count run again", err)
	}
}
