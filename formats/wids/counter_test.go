package wids

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/itarconv/itarconv/formats/tarfile"
)

// header is a 512-byte header block with the fields the loader reads.
func header(name string, typeflag byte, sizeField string) []byte {
	b := make([]byte, tarfile.BlockSize)
	copy(b[offName:offName+lenName], name)
	copy(b[offSize:offSize+lenSize], sizeField)
	b[offTypeflag] = typeflag
	return b
}

// feed is a shard in the making: members laid out one after the other, as
// the scanner reports them.
type feed struct {
	c   Counter
	off int64
	err error
}

// add adds a member of size bytes whose own header is blk.
func (f *feed) add(blk []byte, size int64) {
	m := &tarfile.Member{Block: blk, HeaderOffset: f.off, FirstOffset: f.off, DataOffset: f.off + 512, Size: size}
	f.off = m.DataOffset + blocks(size)
	if err := f.c.Add(m); err != nil && f.err == nil {
		f.err = err
	}
}

// file adds a regular file with a well-formed size field.
func (f *feed) file(name string, size int64) {
	f.add(header(name, '0', fmt.Sprintf("%011o\x00", size)), size)
}

// reference counts as the loader does, literally: names into a dictionary
// in first-insertion order, then runs of keys.
func reference(names []string) (samples int, repeated bool) {
	var order []string
	seen := map[string]bool{}
	for _, n := range names {
		if n == "" {
			continue // no file to the loader
		}
		repeated = repeated || seen[n]
		if !seen[n] {
			seen[n] = true
			order = append(order, n)
		}
	}
	n, last, started := 0, "", false
	for _, name := range order {
		k, ok, _ := sampleKey([]byte(name))
		if !ok {
			continue
		}
		if !started || string(k) != last {
			n++
		}
		last, started = string(k), true
	}
	return n, repeated
}

// TestCounterReference: shards of names drawn from a few keys, in order,
// shuffled, repeated, against the loader's literal procedure.
func TestCounterReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	keys := []string{"a", "b", "c", "d/e", "d.x/y", "", "n"}
	exts := []string{".jpg", ".cls", ".json", ".a.b", ""}
	for trial := range 3000 {
		var names []string
		for range rng.IntN(12) {
			names = append(names, keys[rng.IntN(len(keys))]+exts[rng.IntN(len(exts))])
		}
		if trial%3 == 0 { // keys in order: the path without a set
			names = sortedByKey(names)
		}
		if trial%50 == 0 { // a sample of many members
			for i := range 2 * maxRun {
				names = append(names, fmt.Sprintf("z.%d", i%(maxRun+rng.IntN(2*maxRun))))
			}
		}
		var f feed
		for _, n := range names {
			f.file(n, int64(len(n)))
		}
		got, err := f.c.Samples(f.off + 1024)
		if err != nil || f.err != nil {
			t.Fatalf("%q: %v, %v", names, err, f.err)
		}
		if want, rep := reference(names); got != want || f.c.Repeated() != rep {
			t.Fatalf("%q: %d samples, repeated %v; want %d, %v", names, got, f.c.Repeated(), want, rep)
		}
	}
}

func sortedByKey(names []string) []string {
	out := append([]string(nil), names...)
	for i := range out {
		for j := i + 1; j < len(out); j++ {
			ki, _, _ := sampleKey([]byte(out[i]))
			kj, _, _ := sampleKey([]byte(out[j]))
			if string(kj) < string(ki) {
				out[i], out[j] = out[j], out[i]
			}
		}
	}
	return out
}

// TestCounter: what the loader sees of single header blocks.
func TestCounter(t *testing.T) {
	type member struct {
		name     string
		typeflag byte
		size     string // the size field; "" for "%011o\x00" of len(data)
		data     int64  // the bytes that follow the header
	}
	reg := func(name string) member { return member{name: name, typeflag: '0'} }
	tests := []struct {
		name    string
		members []member
		want    int
		err     error
	}{
		{"plain", []member{reg("a.jpg"), reg("a.cls"), reg("b.jpg")}, 2, nil},
		{"old regular type", []member{{name: "a.jpg", typeflag: 0}, reg("b.jpg")}, 2, nil},
		{"contiguous file is none", []member{{name: "a.jpg", typeflag: '7'}, reg("b.jpg")}, 1, nil},
		{"dirs, links, fifos are none", []member{{name: "d.x/", typeflag: '5'}, {name: "l.jpg", typeflag: '2'}, {name: "h.jpg", typeflag: '1'}, {name: "p.jpg", typeflag: '6'}}, 0, nil},
		{"pax header name", []member{reg("././@PaxHeader"), reg("a.jpg")}, 1, nil},
		{"no dot", []member{reg("a.jpg"), reg("noext"), reg("a.cls")}, 1, nil},
		{"dot in a directory", []member{reg("a.b/c"), reg("a.jpg")}, 1, nil},
		{"hidden", []member{reg(".h"), reg("x/.h"), reg("x/.i")}, 2, nil},
		{"junk after a NUL", []member{reg("j.jpg\x00zz"), reg("k.jpg"), reg("j.jpg")}, 3, nil},
		{"leading NULs", []member{reg("\x00\x00a.jpg"), reg("b.jpg"), reg("a.jpg")}, 2, nil},
		{"line break at the end", []member{reg("a.jpg\n"), reg("a.cls")}, 1, nil},
		{"line break inside", []member{reg("a\nb.jpg")}, 0, ErrName},
		{"line break inside a name without dot", []member{reg("a\nb"), reg("c.jpg")}, 1, nil},
		{"not UTF-8", []member{reg("caf\xe9.jpg")}, 0, ErrName},
		{"not UTF-8, not a file", []member{{name: "d\xff/", typeflag: '5'}}, 0, ErrName},
		{"full 100 bytes", []member{reg(strings.Repeat("x", 96) + ".jpg")}, 1, nil},
		{"type flag not ASCII", []member{{name: "a.jpg", typeflag: 0xe9}}, 0, ErrHeader},
		{"size with spaces", []member{{name: "a.jpg", typeflag: '0', size: "        14  ", data: 12}}, 1, nil},
		{"size of 12 digits", []member{{name: "a.jpg", typeflag: '0', size: "000000000014", data: 12}}, 1, nil},
		{"size ended early", []member{{name: "a.jpg", typeflag: '0', size: "14\x00", data: 12}}, 0, ErrHeader},
		{"size of NULs ends the walk", []member{reg("a.jpg"), {name: "d/", typeflag: '5', size: "\x00"}, reg("b.jpg"), {name: "c\xff"}}, 1, nil},
		{"size of NULs in a file", []member{{name: "a.jpg", typeflag: '0', size: "\x00"}}, 0, ErrHeader},
		{"size base-256", []member{{name: "a.jpg", typeflag: '0', size: "\x80\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x0c", data: 12}}, 0, ErrHeader},
		{"size not the payload", []member{{name: "d/", typeflag: '5', size: "00000001000\x00", data: 0}, reg("a.jpg")}, 0, ErrHeader},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var f feed
			for _, m := range tt.members {
				size := m.size
				if size == "" {
					size = fmt.Sprintf("%011o\x00", m.data)
				}
				f.add(header(m.name, m.typeflag, size), m.data)
			}
			got, err := f.c.Samples(f.off + 1024)
			if f.err != nil && err == nil {
				t.Fatalf("Add failed (%v), Samples did not", f.err)
			}
			if !errors.Is(err, tt.err) || (err == nil) != (tt.err == nil) {
				t.Fatalf("error %v, want %v", err, tt.err)
			}
			if err == nil && got != tt.want {
				t.Errorf("%d samples, want %d", got, tt.want)
			}
		})
	}
}

// TestCounterWalk: members must come as the loader's walk meets them.
func TestCounterWalk(t *testing.T) {
	blk := header("a.jpg", '0', "00000000003\x00")
	var c Counter
	// A pax global header, reported without its block: skipped, and the
	// next member may begin anywhere after it.
	if err := c.Add(&tarfile.Member{Typeflag: 'g', HeaderOffset: 0, FirstOffset: 0, DataOffset: 512}); err != nil {
		t.Fatal(err)
	}
	if err := c.Add(&tarfile.Member{Block: blk, HeaderOffset: 2048, FirstOffset: 1024, DataOffset: 2560, Size: 3}); err != nil {
		t.Fatal(err)
	}
	// A gap (zero blocks read past): the loader's walk ended before it.
	err := c.Add(&tarfile.Member{Block: blk, HeaderOffset: 5120, FirstOffset: 5120, DataOffset: 5632, Size: 3})
	if !errors.Is(err, ErrHeader) {
		t.Fatalf("gap: %v", err)
	}
	if _, err := c.Samples(10240); !errors.Is(err, ErrHeader) {
		t.Errorf("Samples after a failed Add: %v", err)
	}
	var empty Counter
	if _, err := empty.Samples(0); !errors.Is(err, ErrEmpty) {
		t.Errorf("a file of no byte: %v", err)
	}
	if n, err := empty.Samples(10240); n != 0 || err != nil {
		t.Errorf("no member: %d, %v", n, err)
	}
}

// TestCounterHeaderBlocks: walked block by block (every header a member,
// as the loader walks), the shards of testdata count the same.
func TestCounterHeaderBlocks(t *testing.T) {
	for rel, want := range samples {
		if refused[rel] != nil {
			continue
		}
		var c Counter
		path := filepath.Join("testdata", filepath.FromSlash(rel))
		if _, err := tarfile.Walk(path, tarfile.Options{HeaderBlocks: true}, c.Add); err != nil {
			t.Errorf("%s: %v", rel, err)
			continue
		}
		st, _ := os.Stat(path)
		if n, err := c.Samples(st.Size()); n != want || err != nil {
			t.Errorf("%s: %d, %v; want %d", rel, n, err, want)
		}
	}
}

// TestCounterAllocs: a shard in key order costs no allocation per member
// but the growth of the names' storage.
func TestCounterAllocs(t *testing.T) {
	blks := make([][]byte, 4096)
	for i := range blks {
		blks[i] = header(fmt.Sprintf("sample%06d.jpg", i), '0', "00000000000\x00")
	}
	var c Counter
	var m tarfile.Member
	i := 0
	allocs := testing.AllocsPerRun(len(blks)-1, func() {
		m = tarfile.Member{Block: blks[i], HeaderOffset: int64(i) * 512, FirstOffset: int64(i) * 512, DataOffset: int64(i)*512 + 512}
		i++
		if err := c.Add(&m); err != nil {
			t.Fatal(err)
		}
	})
	if allocs > 0.05 {
		t.Errorf("%.3f allocations per member", allocs)
	}
}

func BenchmarkCounter(b *testing.B) {
	for _, order := range []string{"sorted", "shuffled"} {
		b.Run(order, func(b *testing.B) {
			const n = 1 << 14
			blks := make([][]byte, n)
			perm := rand.New(rand.NewPCG(3, 4)).Perm(n / 2)
			for i := range blks {
				k := i / 2
				if order == "shuffled" {
					k = perm[k]
				}
				blks[i] = header(fmt.Sprintf("shard/sample%08d.%s", k, []string{"jpg", "cls"}[i%2]), '0', "00000000000\x00")
			}
			b.ResetTimer()
			for b.Loop() {
				var c Counter
				for i, blk := range blks {
					off := int64(i) * 512
					if err := c.Add(&tarfile.Member{Block: blk, HeaderOffset: off, FirstOffset: off, DataOffset: off + 512}); err != nil {
						b.Fatal(err)
					}
				}
				if got, _ := c.Samples(1); got != n/2 {
					b.Fatalf("%d samples", got)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/member")
		})
	}
}

// TestCounterManyNames: names kept over several chunks, then a key that
// goes back (the names go to a set): a name of the first chunk that comes
// again is a repeat; the samples are the reference's.
func TestCounterManyNames(t *testing.T) {
	var names []string
	for i := range 12000 {
		names = append(names, fmt.Sprintf("dir/sample-%06d.jpg", i/2), fmt.Sprintf("dir/sample-%06d.cls", i/2))
		if i%2 == 1 {
			names = names[:len(names)-1]
		}
	}
	names = append(names, "a.jpg", "dir/sample-000003.jpg", "zz.jpg")
	var f feed
	for _, n := range names {
		f.file(n, 1)
	}
	got, err := f.c.Samples(f.off + 1024)
	want, rep := reference(names)
	if err != nil || f.err != nil || got != want || !rep || !f.c.Repeated() {
		t.Fatalf("%d samples, repeated %v (%v, %v); want %d, repeated", got, f.c.Repeated(), err, f.err, want)
	}
}

// TestCounterSpills: past Memory, the names before the current sample go
// to a temporary file; the count, and a repeat found once keys stop
// increasing (the names then read back), are those of the reference.
func TestCounterSpills(t *testing.T) {
	var names []string
	for i := range 3000 {
		names = append(names, fmt.Sprintf("s%05d.jpg", i), fmt.Sprintf("s%05d.cls", i))
	}
	for _, tail := range [][]string{nil, {"s00007.jpg"}, {"a.jpg", "s00007.cls"}, {"a.jpg", "b.jpg"}} {
		all := append(append([]string(nil), names...), tail...)
		f := &feed{}
		f.c.Memory, f.c.TempDir = 1000, t.TempDir()
		for _, n := range all {
			f.file(n, 1)
		}
		if len(f.c.spilled) == 0 && tail == nil {
			t.Fatalf("no names spilled")
		}
		if tail == nil && f.c.held > 2*(4<<10) {
			t.Errorf("%d bytes of names in memory", f.c.held)
		}
		got, err := f.c.Samples(1)
		wantN, wantRep := reference(all)
		if err != nil || f.err != nil || got != wantN || f.c.Repeated() != wantRep {
			t.Errorf("tail %q: %d samples, repeated %v (%v, %v); want %d, %v", tail, got, f.c.Repeated(), err, f.err, wantN, wantRep)
		}
		f.c.Release()
	}
}
