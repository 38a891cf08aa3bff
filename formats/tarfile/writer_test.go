package tarfile

import (
	"archive/tar"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestWriterRollsOverAndRenames(t *testing.T) {
	dir := t.TempDir()
	w, err := Create(WriterOptions{Dir: dir, Fold: "train", ShardSize: 8 << 10})
	if err != nil {
		t.Fatal(err)
	}
	var locs []Location
	for i := 0; i < 10; i++ {
		body := bytes.Repeat([]byte{byte('a' + i)}, 1500+i)
		name := strings.Repeat("d/", i) + "f" + string(rune('0'+i)) + ".bin"
		loc, err := w.Add(Member{Name: []byte(name), Typeflag: tar.TypeReg, Size: int64(len(body)), Mode: 0o640, UID: 7, GID: 8,
			ModTime: 1700000000, ModTimeNsec: int32(i * 1000)}, bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		locs = append(locs, loc)
	}
	// Before Close, no shard has its final name.
	if m, _ := filepath.Glob(filepath.Join(dir, "train_*.tar")); len(m) != 0 {
		t.Fatalf("shards visible before Close: %v", m)
	}
	shards, err := w.Close()
	if err != nil {
		t.Fatal(err)
	}
	if len(shards) < 2 || filepath.Base(shards[0]) != "train_0000.tar" {
		t.Fatalf("shards %v", shards)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != len(shards) {
		t.Errorf("directory holds %d entries for %d shards", len(entries), len(shards))
	}
	// Read back with archive/tar: names, bytes, metadata; and each
	// location's header is where the index will say.
	i := 0
	for fid, p := range shards {
		data, _ := os.ReadFile(p)
		if int64(len(data)) > 8<<10 {
			t.Errorf("%s: %d bytes, over the limit", p, len(data))
		}
		tr := tar.NewReader(bytes.NewReader(data))
		for {
			h, err := tr.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(tr)
			if locs[i].Shard != fid || len(body) != 1500+i || body[0] != byte('a'+i) || h.Mode != 0o640 || h.Uid != 7 ||
				h.ModTime.UnixNano() != 1700000000*1e9+int64(i*1000) {
				t.Errorf("member %d: fid %d, %+v", i, locs[i].Shard, h)
			}
			off := locs[i].HeaderOffset
			if !bytes.HasPrefix(data[off:off+100], []byte(h.Name)) && len(h.Name) <= 100 {
				t.Errorf("member %d: no header named %q at %d", i, h.Name, off)
			}
			i++
		}
	}
	if i != 10 {
		t.Errorf("read %d members", i)
	}
}

func TestUnsafeNames(t *testing.T) {
	w, _ := Create(WriterOptions{Dir: t.TempDir(), Fold: "train"})
	defer w.Abort()
	for _, name := range []string{"/etc/passwd", "../x", "a/../../x", "a/..", "", "."} {
		if _, err := w.Add(Member{Name: []byte(name), Typeflag: tar.TypeReg}, nil); !errors.Is(err, ErrUnsafeName) {
			t.Errorf("%q: %v, want ErrUnsafeName", name, err)
		}
	}
	for _, name := range []string{"a..b", "..a/b", "a/b/"} {
		if err := CheckName(name); err != nil {
			t.Errorf("%q: %v", name, err)
		}
	}
}

func TestAbortLeavesNothing(t *testing.T) {
	dir := t.TempDir()
	w, _ := Create(WriterOptions{Dir: dir, Fold: "val", ShardSize: 2048})
	for i := 0; i < 5; i++ {
		w.Add(Member{Name: []byte("x.bin"), Typeflag: tar.TypeReg, Size: 1000}, bytes.NewReader(make([]byte, 1000)))
	}
	w.Abort()
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("left behind: %v", entries)
	}
}

func TestShardNameDigits(t *testing.T) {
	for _, tt := range []struct {
		i, n int
		want string
	}{{0, 1, "a_0000.tar"}, {9999, 10000, "a_9999.tar"}, {5, 10001, "a_00005.tar"}} {
		if got := ShardName("a", tt.i, tt.n, 4); got != tt.want {
			t.Errorf("ShardName(%d of %d) = %s, want %s", tt.i, tt.n, got, tt.want)
		}
	}
}

// Members the writer formats itself (plain ustar headers) come out byte for
// byte as archive/tar writes them, mixed with members it hands to
// archive/tar (pax: sub-second times, long or non-ASCII names).
func TestFastHeadersMatchArchiveTar(t *testing.T) {
	long := strings.Repeat("x", 101)
	members := []struct {
		m    Member
		body string
	}{
		{Member{Name: []byte("000000042.values.npy"), Typeflag: tar.TypeReg, Mode: 0o644}, strings.Repeat("v", 528)},
		{Member{Name: []byte("a/b/"), Typeflag: tar.TypeDir, Mode: 0o755, UID: 1000, GID: 100, ModTime: 1700000000}, ""},
		{Member{Name: []byte("empty"), Typeflag: tar.TypeReg, Mode: 0o600, ModTime: 1<<33 - 1}, ""},
		{Member{Name: []byte("nsec.json"), Typeflag: tar.TypeReg, Mode: 0o644, ModTime: 5, ModTimeNsec: 7}, "{}"},
		{Member{Name: []byte("exact512"), Typeflag: tar.TypeReg, Mode: 0o644, UID: 1<<21 - 1, GID: 1<<21 - 1}, strings.Repeat("e", 512)},
		{Member{Name: []byte("link"), Typeflag: tar.TypeSymlink, Linkname: []byte("a/b/../target name"), Mode: 0o777}, ""},
		{Member{Name: []byte(strings.Repeat("n", 100)), Typeflag: tar.TypeReg, Mode: 0o644}, "hundred"},
		{Member{Name: []byte("dir/" + long), Typeflag: tar.TypeReg, Mode: 0o644}, "long"},
		{Member{Name: []byte("caf\u00e9"), Typeflag: tar.TypeReg, Mode: 0o644}, "utf8"},
		{Member{Name: []byte("big-uid"), Typeflag: tar.TypeReg, Mode: 0o644, UID: 1 << 21}, "gnu or pax"},
		{Member{Name: []byte("tail.genes.npy"), Typeflag: tar.TypeReg, Mode: 0o644}, strings.Repeat("g", 1000)},
	}
	dir := t.TempDir()
	w, err := Create(WriterOptions{Dir: dir, Fold: "t"})
	if err != nil {
		t.Fatal(err)
	}
	var want bytes.Buffer
	tw := tar.NewWriter(&want)
	for _, c := range members {
		m := c.m
		if m.Typeflag == tar.TypeReg {
			m.Size = int64(len(c.body))
		}
		if _, err := w.Add(m, strings.NewReader(c.body)); err != nil {
			t.Fatal(err)
		}
		h := &tar.Header{Name: string(m.Name), Typeflag: m.Typeflag, Linkname: string(m.Linkname), Size: m.Size, Mode: m.Mode,
			Uid: int(m.UID), Gid: int(m.GID), ModTime: time.Unix(m.ModTime, int64(m.ModTimeNsec))}
		if m.ModTimeNsec != 0 {
			h.Format = tar.FormatPAX
		}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		io.WriteString(tw, c.body)
	}
	tw.Close()
	shards, err := w.Close()
	if err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(shards[0])
	if !bytes.Equal(got, want.Bytes()) {
		for i := 0; i < min(len(got), want.Len()); i += 512 {
			if !bytes.Equal(got[i:i+512], want.Bytes()[i:i+512]) {
				t.Fatalf("block at %d differs:\n got %q\nwant %q", i, got[i:i+512], want.Bytes()[i:i+512])
			}
		}
		t.Fatalf("%d bytes, archive/tar wrote %d", len(got), want.Len())
	}
	if !fastUSTAR(&members[0].m) || fastUSTAR(&members[3].m) || fastUSTAR(&members[7].m) || fastUSTAR(&members[8].m) {
		t.Error("fastUSTAR takes the wrong members")
	}
}

// A large payload from an *os.File is copied file to file, between members
// that go through the buffer.
func TestDirectCopyOfLargeFiles(t *testing.T) {
	dir := t.TempDir()
	big := bytes.Repeat([]byte("0123456789abcdef"), (3<<20)/16+5)
	src := filepath.Join(dir, "big.bin")
	os.WriteFile(src, big, 0o644)
	w, err := Create(WriterOptions{Dir: dir, Fold: "d"})
	if err != nil {
		t.Fatal(err)
	}
	add := func(name string, data io.Reader, size int) {
		if _, err := w.Add(Member{Name: []byte(name), Typeflag: tar.TypeReg, Size: int64(size), Mode: 0o644}, data); err != nil {
			t.Fatal(err)
		}
	}
	add("a.txt", strings.NewReader("small"), 5)
	f, _ := os.Open(src)
	add("big.bin", f, len(big))
	f.Close()
	add("z.txt", strings.NewReader("after"), 5)
	shards, err := w.Close()
	if err != nil {
		t.Fatal(err)
	}
	sh, _ := os.Open(shards[0])
	defer sh.Close()
	tr := tar.NewReader(sh)
	for _, want := range []string{"small", string(big), "after"} {
		if _, err := tr.Next(); err != nil {
			t.Fatal(err)
		}
		got, _ := io.ReadAll(tr)
		if string(got) != want {
			t.Fatalf("payload of %d bytes differs", len(got))
		}
	}
	if _, err := tr.Next(); err != io.EOF {
		t.Fatalf("after the last member: %v", err)
	}
}

// AddBytes, which references payloads until Flush, writes the same bytes
// as Add: around the size where it stops copying, past the gather buffer,
// with pax headers between, and past the pieces one writev takes.
func TestAddBytesMatchesAdd(t *testing.T) {
	sizes := []int{0, 1, 511, 512, refMin - 1, refMin, refMin + 1, 10000}
	big := []int{gatherBuf - 512, gatherBuf + 1, 3 * gatherBuf}
	var members []Member
	var payloads [][]byte
	for i := 0; i < 2*maxIov; i++ {
		size := sizes[i%len(sizes)]
		if i%100 == 99 {
			size = big[i/100%len(big)]
		}
		m := Member{Name: []byte(fmt.Sprintf("d/%05d.bin", i)), Typeflag: tar.TypeReg, Size: int64(size), Mode: 0o644, ModTime: 1700000000}
		switch i % 7 {
		case 3:
			m.ModTimeNsec = 5 // a pax header
		case 5:
			m.Name = []byte(fmt.Sprintf("d/%s%05d.bin", strings.Repeat("x", 120), i)) // a long name
		case 6:
			m.Typeflag, m.Size, size = tar.TypeDir, 0, 0
			m.Name = []byte(fmt.Sprintf("d%05d/", i))
		}
		p := make([]byte, size)
		for k := range p {
			p[k] = byte(i + k*7)
		}
		members, payloads = append(members, m), append(payloads, p)
	}
	write := func(useBytes bool) []byte {
		dir := t.TempDir()
		w, err := Create(WriterOptions{Dir: dir, Fold: "t"})
		if err != nil {
			t.Fatal(err)
		}
		var scratch []byte
		for i, m := range members {
			if useBytes {
				// A fresh copy per member, overwritten after each Flush:
				// what was written must not change.
				scratch = append(scratch[:0:0], payloads[i]...)
				if _, err := w.AddBytes(m, scratch); err != nil {
					t.Fatal(err)
				}
				if i%50 == 49 {
					if err := w.Flush(); err != nil {
						t.Fatal(err)
					}
					for k := range scratch {
						scratch[k] = 0xEE
					}
				}
				continue
			}
			if _, err := w.Add(m, bytes.NewReader(payloads[i])); err != nil {
				t.Fatal(err)
			}
		}
		shards, err := w.Close()
		if err != nil {
			t.Fatal(err)
		}
		if len(shards) != 1 {
			t.Fatalf("%d shards", len(shards))
		}
		data, err := os.ReadFile(shards[0])
		if err != nil {
			t.Fatal(err)
		}
		return data
	}
	want, got := write(false), write(true)
	if !bytes.Equal(got, want) {
		t.Fatalf("AddBytes wrote %d bytes, Add %d; first difference at %d", len(got), len(want), firstDiff(got, want))
	}
	// And archive/tar reads every member back with its bytes.
	tr := tar.NewReader(bytes.NewReader(got))
	for i := range members {
		h, err := tr.Next()
		if err != nil {
			t.Fatalf("member %d: %v", i, err)
		}
		body, _ := io.ReadAll(tr)
		if h.Name != string(members[i].Name) || !bytes.Equal(body, payloads[i]) {
			t.Fatalf("member %d: %q, %d bytes", i, h.Name, len(body))
		}
	}
}

func TestAddBytesRefusesWrongSize(t *testing.T) {
	w, err := Create(WriterOptions{Dir: t.TempDir(), Fold: "t"})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Abort()
	_, err = w.AddBytes(Member{Name: []byte("a"), Typeflag: tar.TypeReg, Size: 3}, []byte("ab"))
	if err == nil || !strings.Contains(err.Error(), "2 payload bytes for a member of 3") {
		t.Fatalf("err = %v", err)
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

// TestMemberCutShort: once part of a member is in a shard (a payload that
// ends early, bytes the system would not write), the writer refuses more
// and Close leaves nothing behind, naming the output and the bytes.
func TestMemberCutShort(t *testing.T) {
	t.Run("short payload", func(t *testing.T) {
		dir := t.TempDir()
		w, err := Create(WriterOptions{Dir: dir, Fold: "t"})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Add(Member{Name: []byte("ok"), Typeflag: tar.TypeReg, Size: 2}, strings.NewReader("ok")); err != nil {
			t.Fatal(err)
		}
		_, err = w.Add(Member{Name: []byte("short"), Typeflag: tar.TypeReg, Size: 10}, strings.NewReader("abc"))
		if err == nil || !strings.Contains(err.Error(), "payload ended after 3 of 10 bytes") {
			t.Fatalf("short payload: %v", err)
		}
		if _, err2 := w.Add(Member{Name: []byte("next"), Typeflag: tar.TypeReg}, nil); err2 == nil {
			t.Error("the writer took a member after one was cut short")
		}
		if _, err := w.Close(); err == nil || !strings.Contains(err.Error(), "cut short") {
			t.Errorf("Close: %v", err)
		}
		if m, _ := filepath.Glob(filepath.Join(dir, "*")); len(m) != 0 {
			t.Errorf("left behind: %v", m)
		}
	})
	t.Run("write error", func(t *testing.T) {
		dir := t.TempDir()
		w, err := Create(WriterOptions{Dir: dir, Fold: "t"})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Add(Member{Name: []byte("a"), Typeflag: tar.TypeReg, Size: 1}, strings.NewReader("a")); err != nil {
			t.Fatal(err)
		}
		// The shard's file fails under the writer: the queued bytes are lost.
		w.temps[0].File.Close()
		big := bytes.Repeat([]byte("x"), refMin)
		if _, err := w.AddBytes(Member{Name: []byte("b"), Typeflag: tar.TypeReg, Size: int64(len(big))}, big); err != nil {
			t.Fatal(err) // queued, not yet written
		}
		err = w.Flush()
		if err == nil || !strings.Contains(err.Error(), filepath.Join(dir, "t_0.tar")+", bytes 0 to ") {
			t.Fatalf("Flush: %v, want the output named with the bytes lost", err)
		}
		if _, err := w.AddBytes(Member{Name: []byte("c"), Typeflag: tar.TypeReg}, nil); err == nil {
			t.Error("the writer took a member after a write error")
		}
		if _, err := w.Close(); err == nil {
			t.Error("Close committed a shard that lost bytes")
		}
		if m, _ := filepath.Glob(filepath.Join(dir, "*")); len(m) != 0 {
			t.Errorf("left behind: %v", m)
		}
	})
}

// A member the scanner returns goes to the writer as it is: names that are
// not UTF-8 keep their bytes, pax records their values, and scanning the
// written shard gives the same members back.
func TestScannedMembersWriteBack(t *testing.T) {
	dir := t.TempDir()
	w, err := Create(WriterOptions{Dir: dir, Fold: "a"})
	if err != nil {
		t.Fatal(err)
	}
	in := []struct {
		m    Member
		body string
	}{
		{Member{Name: []byte("plain.txt"), Typeflag: TypeReg, Mode: 0o644, ModTime: 1700000000}, "plain"},
		{Member{Name: []byte("caf\xe9/na\xefve.bin"), Typeflag: TypeReg, Mode: 0o600, ModTime: 1700000001}, "latin-1"},
		{Member{Name: []byte("rec.json"), Typeflag: TypeReg, Mode: 0o644, ModTime: 1700000002,
			PAX: []PAXRecord{{"comment", "first"}, {"SCHILY.xattr.user.k", "v"}, {"comment", "last"}}}, "{}"},
		{Member{Name: []byte("ln"), Linkname: []byte("caf\xe9"), Typeflag: TypeSymlink, Mode: 0o777}, ""},
	}
	for _, c := range in {
		m := c.m
		if m.Typeflag == TypeReg {
			m.Size = int64(len(c.body))
		}
		if _, err := w.AddBytes(m, []byte(c.body)); err != nil {
			t.Fatal(err)
		}
	}
	shards, err := w.Close()
	if err != nil {
		t.Fatal(err)
	}
	f, err := Open(shards[0], Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	// Write what was scanned into a second fold, member for member.
	w2, err := Create(WriterOptions{Dir: dir, Fold: "b"})
	if err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(shards[0])
	for i, c := range in {
		m, err := f.Next()
		if err != nil {
			t.Fatalf("member %d: %v", i, err)
		}
		if !bytes.Equal(m.Name, c.m.Name) || !bytes.Equal(m.Linkname, c.m.Linkname) {
			t.Errorf("member %d: name %q link %q, want %q %q", i, m.Name, m.Linkname, c.m.Name, c.m.Linkname)
		}
		if got := string(data[m.DataOffset : m.DataOffset+m.Size]); got != c.body {
			t.Errorf("member %d: payload %q, want %q", i, got, c.body)
		}
		if v, _ := m.PAXValue("comment"); c.m.PAX != nil && v != "last" {
			t.Errorf("member %d: comment %q, want the last record", i, v)
		}
		if v, _ := m.PAXValue("SCHILY.xattr.user.k"); c.m.PAX != nil && v != "v" {
			t.Errorf("member %d: xattr %q", i, v)
		}
		if _, err := w2.AddBytes(*m, data[m.DataOffset:m.DataOffset+m.Size]); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := f.Next(); err != io.EOF {
		t.Fatalf("after the last member: %v", err)
	}
	shards2, err := w2.Close()
	if err != nil {
		t.Fatal(err)
	}
	data2, _ := os.ReadFile(shards2[0])
	if !bytes.Equal(data2, data) {
		t.Errorf("written back: %d bytes differ from the %d scanned; first difference at %d", len(data2), len(data), firstDiff(data2, data))
	}
}

func TestCheckNameBytes(t *testing.T) {
	for _, name := range []string{"/etc/passwd", "../x", "a/../../x", "a/..", "", ".", "./", "/", "//", "a/../"} {
		if err := CheckName([]byte(name)); !errors.Is(err, ErrUnsafeName) {
			t.Errorf("%q: %v, want ErrUnsafeName", name, err)
		}
		if err := CheckName(name); !errors.Is(err, ErrUnsafeName) {
			t.Errorf("%q as a string: %v, want ErrUnsafeName", name, err)
		}
	}
	for _, name := range []string{"a..b", "..a/b", "a/b/", "caf\xe9", "a/.../b", "./a", "a//b", "..."} {
		if err := CheckName([]byte(name)); err != nil {
			t.Errorf("%q: %v", name, err)
		}
	}
}
