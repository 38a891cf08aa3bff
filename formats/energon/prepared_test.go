package energon

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestPreparedSpooled: shards prepared into a spool of no memory (their
// rows in its file) give the files, and the errors, of WriteMeta; their
// rows come back as they went in; the spool's file is gone once closed.
func TestPreparedSpooled(t *testing.T) {
	for _, c := range append(oracleCases(t), filepath.Join("testdata", "duplicates"), filepath.Join("testdata", "noncontiguous")) {
		shards := caseShards(t, c)
		want := t.TempDir()
		wantErr := WriteMeta(want, shards, MetaOptions{})

		dir := t.TempDir()
		sp := NewSpool(dir, -1)
		var ps []*PreparedShard
		for _, s := range shards {
			p, err := Prepare(s, sp)
			if err != nil {
				t.Fatal(err)
			}
			back, err := p.Shard()
			if err != nil || len(back.Samples) != len(s.Samples) || len(back.Parts) != len(s.Parts) {
				t.Fatalf("%s: %s: rows back: %v", c, s.Name, err)
			}
			for i := range s.Samples {
				if back.Samples[i] != s.Samples[i] {
					t.Fatalf("%s: sample %d back as %+v, want %+v", c, i, back.Samples[i], s.Samples[i])
				}
			}
			for i := range s.Parts {
				if back.Parts[i] != s.Parts[i] {
					t.Fatalf("%s: part %d back as %+v, want %+v", c, i, back.Parts[i], s.Parts[i])
				}
			}
			ps = append(ps, p)
		}
		if sp.Spooled() == 0 && len(shards) > 0 && len(shards[0].Samples) > 0 {
			t.Fatalf("%s: nothing spooled", c)
		}
		samePrepared(t, c, ps, want, wantErr)
		if err := sp.Close(); err != nil {
			t.Fatal(err)
		}
		if ents, _ := os.ReadDir(dir); len(ents) != 0 {
			t.Errorf("%s: %d files left in the spool's directory", c, len(ents))
		}
	}
}

// TestBuilderPrepared: the rows an IdxBuilder prepares are those Prepare
// makes of its Shard: the same rows back, and the same refusal of a name
// that is not UTF-8, a bad key coming before a bad part name met earlier.
func TestBuilderPrepared(t *testing.T) {
	feed := func(b *IdxBuilder) {
		b.AddMember("a.jpg", 0, 512, 10)
		b.AddMember("a.c\xffs", 1024, 1536, 1)
		b.AddMember("b.jpg", 2048, 2560, 3)
		b.AddMember("c\xfe.jpg", 4096, 4608, 3)
		b.AddMemberBytes([]byte("c\xfe.txt"), 5120, 5632, 3)
	}
	var b1, b2 IdxBuilder
	feed(&b1)
	feed(&b2)
	p, err := b1.Prepared(8192, nil)
	if err != nil {
		t.Fatal(err)
	}
	p.Name = "s.tar"
	s := b2.Shard("s.tar", 8192)
	back, err := p.Shard()
	if err != nil || len(back.Samples) != 3 || len(back.Parts) != 5 || back.Samples[2].Key != "c\xfe" || back.Parts[1].Name != "c\xffs" {
		t.Fatalf("rows back: %+v, %v", back, err)
	}
	want := WriteMeta(t.TempDir(), []ShardSamples{s}, MetaOptions{})
	got := WritePrepared(context.Background(), t.TempDir(), []*PreparedShard{p}, MetaOptions{})
	if want == nil || got == nil || got.Error() != want.Error() || !bytes.Contains([]byte(got.Error()), []byte("sample key")) {
		t.Fatalf("got %v, want %v, a sample key's", got, want)
	}
}

// TestPreparedSpooledWindows: a spooled shard's rows, read back a window
// at a time (rows across windows, a key longer than a window, part names
// not interned), come back as they went in, and its keys' hashes, kept in
// the spool too, find a key repeated across shards as in memory.
func TestPreparedSpooledWindows(t *testing.T) {
	var s ShardSamples
	s.Name = "a.tar"
	for i := range 40000 {
		key := fmt.Sprintf("k%06d", i)
		if i == 20000 {
			key = strings.Repeat("x", regionWindow+1000)
		}
		s.Samples = append(s.Samples, Sample{Key: key, Offset: int64(1024 * i), Size: 1024})
		s.Parts = append(s.Parts, Part{Sample: i, Name: fmt.Sprintf("p%d", i%3000), Offset: int64(1024*i + 512), Size: int64(i % 9)})
	}
	other := ShardSamples{Name: "b.tar", Samples: []Sample{{Key: "k012345", Offset: 0, Size: 1024}},
		Parts: []Part{{Sample: 0, Name: "jpg", Offset: 512, Size: 1}}, End: 1024}
	sp := NewSpool(t.TempDir(), -1)
	defer sp.Close()
	p, err := Prepare(s, sp)
	if err != nil {
		t.Fatal(err)
	}
	if p.data != nil || p.hashes != nil {
		t.Fatal("the rows or hashes were not spooled")
	}
	back, err := p.Shard()
	if err != nil {
		t.Fatal(err)
	}
	for i := range s.Samples {
		if back.Samples[i] != s.Samples[i] || back.Parts[i] != s.Parts[i] {
			t.Fatalf("row %d back as %+v %+v", i, back.Samples[i], back.Parts[i])
		}
	}
	q, err := Prepare(other, sp)
	if err != nil {
		t.Fatal(err)
	}
	err = duplicateKeys([]*PreparedShard{p, q})
	var d *DuplicateKeyError
	if !errors.As(err, &d) || !strings.Contains(err.Error(), "k012345") {
		t.Errorf("duplicate across spooled shards: %v", err)
	}
}

// TestBuilderSpills: an IdxBuilder past its Memory spills the complete
// samples' rows, hashes and offsets; its .tar.idx, its prepared rows (in
// a spool or in memory) and the index.sqlite written from them are those
// of a builder that kept everything in memory.
func TestBuilderSpills(t *testing.T) {
	feed := func(b *IdxBuilder) {
		for i := range 5000 {
			key := fmt.Sprintf("d%d/s%05d", i%4, (i*7919)%5000)
			for j, part := range []string{"jpg", "cls", fmt.Sprintf("x%d.json", i%2000)} {
				off := int64(1536*i + 512*j)
				b.AddMember(key+"."+part, off, off+512, int64(i%13))
			}
		}
	}
	const end = 1536 * 5000
	var mem IdxBuilder
	feed(&mem)
	wantIdx := mem.Bytes(end)
	want, err := mem.Prepared(end, nil)
	if err != nil {
		t.Fatal(err)
	}
	want.Name = "a.tar"
	wantDir := t.TempDir()
	if err := WritePrepared(context.Background(), wantDir, []*PreparedShard{want}, MetaOptions{}); err != nil {
		t.Fatal(err)
	}
	wantDB, _ := os.ReadFile(filepath.Join(wantDir, MetaDir, IndexFile))
	for _, spooled := range []bool{false, true} {
		dir := t.TempDir()
		b := IdxBuilder{Memory: 3000, TempDir: dir}
		feed(&b)
		if b.sp == nil || len(b.sp.runs) < 5 || len(b.keys)+len(b.parts)+8*len(b.offsets) > 6000 {
			t.Fatalf("the builder did not spill, or holds too much")
		}
		if got := b.Bytes(end); !bytes.Equal(got, wantIdx) {
			t.Errorf("spooled %v: .tar.idx differs", spooled)
		}
		var sp *Spool
		if spooled {
			sp = NewSpool(dir, -1)
			defer sp.Close()
		}
		p, err := b.Prepared(end, sp)
		if err != nil {
			t.Fatal(err)
		}
		p.Name = "a.tar"
		if spooled != (p.data == nil) {
			t.Errorf("spooled %v: rows in memory %v", spooled, p.data != nil)
		}
		out := t.TempDir()
		if err := WritePrepared(context.Background(), out, []*PreparedShard{p}, MetaOptions{}); err != nil {
			t.Fatal(err)
		}
		if got, _ := os.ReadFile(filepath.Join(out, MetaDir, IndexFile)); !bytes.Equal(got, wantDB) {
			t.Errorf("spooled %v: index.sqlite differs", spooled)
		}
		if ents, _ := os.ReadDir(dir); len(ents) != 0 {
			t.Errorf("spooled %v: %d files left", spooled, len(ents))
		}
	}
}

// TestPrepareCompact: shards kept as Compact gives them (from a spool's
// file, as a task of a partitioned run saves them) and prepared again by
// PrepareCompact give the files, and the errors, of WriteMeta; rows cut
// short, bytes past the last row, a name number past the names kept and
// counts past the rows are ErrFormat, naming the shard.
func TestPrepareCompact(t *testing.T) {
	for _, c := range append(oracleCases(t), filepath.Join("testdata", "duplicates"), filepath.Join("testdata", "noncontiguous")) {
		shards := caseShards(t, c)
		want := t.TempDir()
		wantErr := WriteMeta(want, shards, MetaOptions{})

		sp := NewSpool(t.TempDir(), -1)
		var ps []*PreparedShard
		for _, s := range shards {
			p, err := Prepare(s, sp)
			if err != nil {
				t.Fatal(err)
			}
			kept, err := p.Compact()
			if err != nil {
				t.Fatal(err)
			}
			back, err := PrepareCompact(s.Name, s.End, kept, nil)
			if err != nil {
				t.Fatalf("%s: %s: %v", c, s.Name, err)
			}
			ps = append(ps, back)
		}
		sp.Close()
		samePrepared(t, c, ps, want, wantErr)
	}

	s := ShardSamples{Name: "a.tar", End: 4096,
		Samples: []Sample{{Key: "k0", Offset: 0, Size: 2048}, {Key: "k1", Offset: 2048, Size: 2048}},
		Parts:   []Part{{0, "jpg", 512, 10}, {0, "cls", 1024, 1}, {1, "jpg", 2560, 10}, {1, "cls", 3072, 1}}}
	p, err := Prepare(s, nil)
	if err != nil {
		t.Fatal(err)
	}
	good, _ := p.Compact()
	damaged := map[string]func(c *Compact){
		"cut short":        func(c *Compact) { c.Data = c.Data[:len(c.Data)-1] },
		"past the last":    func(c *Compact) { c.Data = append(c.Data, 0) },
		"names lost":       func(c *Compact) { c.Names = c.Names[:1] },
		"a sample more":    func(c *Compact) { c.Samples++ },
		"a part more":      func(c *Compact) { c.Parts++ },
		"split past data":  func(c *Compact) { c.Split = len(c.Data) + 1 },
		"negative count":   func(c *Compact) { c.Parts = -1 },
		"split in a row":   func(c *Compact) { c.Split-- },
		"no rows, a count": func(c *Compact) { c.Data, c.Split = nil, 0 },
	}
	for what, damage := range damaged {
		c := good
		c.Data = bytes.Clone(good.Data)
		c.Names = append([]string(nil), good.Names...)
		damage(&c)
		if _, err := PrepareCompact("a.tar", 4096, c, nil); !errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), "a.tar") {
			t.Errorf("%s: %v, want ErrFormat naming the shard", what, err)
		}
	}
}

// samePrepared: WritePrepared of ps gives the error WriteMeta gave
// (wantErr), or the files it wrote in want.
func samePrepared(t *testing.T, c string, ps []*PreparedShard, want string, wantErr error) {
	t.Helper()
	got := filepath.Join(t.TempDir(), "out")
	os.Mkdir(got, 0o755)
	err := WritePrepared(context.Background(), got, ps, MetaOptions{})
	if (err == nil) != (wantErr == nil) || err != nil && err.Error() != wantErr.Error() {
		t.Fatalf("%s: %v, want %v", c, err, wantErr)
	}
	if err != nil {
		return
	}
	for _, f := range []string{IndexFile, UUIDFile, SplitYAMLFile, InfoJSONFile} {
		a, _ := os.ReadFile(filepath.Join(want, MetaDir, f))
		b, _ := os.ReadFile(filepath.Join(got, MetaDir, f))
		if len(a) == 0 || !bytes.Equal(a, b) {
			t.Errorf("%s: %s differs from WriteMeta's", c, f)
		}
	}
}

// FuzzPrepareCompact: rows read back from a part (any bytes, any counts)
// are refused with ErrFormat or prepared into rows that decode whole, as
// many as they claim, without a panic; rows Compact gave come back as
// they went.
func FuzzPrepareCompact(f *testing.F) {
	s := ShardSamples{End: 4096,
		Samples: []Sample{{Key: "k0", Offset: 0, Size: 2048}, {Key: "k\xff", Offset: 2048, Size: 2048}},
		Parts:   []Part{{0, "jpg", 512, 10}, {0, "a long name " + strings.Repeat("x", 40), 1024, 1}, {1, "jpg", 2560, 10}}}
	p, err := Prepare(s, nil)
	if err != nil {
		f.Fatal(err)
	}
	c, _ := p.Compact()
	f.Add(c.Data, c.Split, c.Samples, c.Parts, strings.Join(c.Names, "\x00"))
	f.Add([]byte{}, 0, 0, 0, "")
	f.Add([]byte{0xff, 0xff, 0xff}, 1, 1, 1, "jpg")
	f.Fuzz(func(t *testing.T, data []byte, split, samples, parts int, names string) {
		var ns []string
		if names != "" {
			ns = strings.Split(names, "\x00")
		}
		c := Compact{Samples: samples, Parts: parts, Split: split, Names: ns, Data: data}
		p, err := PrepareCompact("a.tar", 4096, c, nil)
		if err != nil {
			if !errors.Is(err, ErrFormat) {
				t.Fatalf("%v, want ErrFormat", err)
			}
			return
		}
		var n, m int
		if err := p.rows(nil, func(Sample) error { n++; return nil }, func(Part) error { m++; return nil }); err != nil || n != samples || m != parts {
			t.Fatalf("prepared rows give %d samples and %d parts (%v), want %d and %d", n, m, err, samples, parts)
		}
	})
}
