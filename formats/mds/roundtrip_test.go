package mds_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/itarconv/itarconv/dataset"
	"github.com/itarconv/itarconv/formats/formattest"
	"github.com/itarconv/itarconv/formats/mds"
	"github.com/itarconv/itarconv/formats/registry"
)

// convert writes in as the named format at out, through the registry.
func convert(t *testing.T, in registry.Input, to, out string, opts registry.CreateOptions) *registry.Result {
	t.Helper()
	res, err := registry.Lookup(to).Create(context.Background(), in, out, opts)
	if err != nil {
		t.Fatalf("to %s: %v", to, err)
	}
	return res
}

func open(t *testing.T, format, path string) registry.Dataset {
	t.Helper()
	ds, err := registry.Lookup(format).Open([]string{path}, registry.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ds.Close() })
	return ds
}

// TestTarRoundTrip: tar shards -> MDS -> tar shards gives the same
// members, in the same order, with the same names and bytes: names in
// directories, with several dots, hidden, past ASCII; a key met again
// later; members of a sample in any order; a column in some samples
// only; values that are and are not integers, UTF-8, JSON; an empty one.
func TestTarRoundTrip(t *testing.T) {
	in := []formattest.Shard{{
		{Name: "a/x.cls", Data: []byte("3")},
		{Name: "a/x.seg.png", Data: []byte("\x89PNG\r\n\x1a\nnot really")},
		{Name: "a/x.txt", Data: []byte("hello")},
		{Name: "a/y.cls", Data: []byte("-12")},
		{Name: "a/y.seg.png", Data: []byte("png too")},
		{Name: "a/y.txt", Data: []byte{0xff, 0}},
		{Name: "b.d/.hidden.txt", Data: []byte("dot first")},
		{Name: "été/z.json", Data: []byte(`{"ok": true}`)},
		{Name: "été/z.cls", Data: []byte("007")},
	}, {
		{Name: "a/x.cls", Data: []byte("4")},
		{Name: "a/x.txt", Data: []byte{}},
		{Name: "k.jpg", Data: []byte{0xff, 0xd8, 0xff, 0xe0, 1, 2, 3}},
		{Name: "k.json", Data: []byte(`not json`)},
	}}
	dir := t.TempDir()
	tar := filepath.Join(dir, "tar")
	convert(t, &formattest.Rows{Shards: in}, "tar", tar, registry.CreateOptions{Workers: 2})
	m := filepath.Join(dir, "mds")
	res := convert(t, open(t, "tar", tar), "mds", m, registry.CreateOptions{Workers: 2, ShardSize: 200})
	if st, _ := registry.StatsAs[*mds.WriteStats](res); st.Members != 13 || st.Samples != 6 || st.Shards < 3 {
		t.Errorf("stats %+v", st)
	}
	back := filepath.Join(dir, "back")
	convert(t, open(t, "mds", m), "tar", back, registry.CreateOptions{Workers: 2})
	got := formattest.Files(formattest.ReadSample(t, "tar", back))
	want := formattest.Files(in)
	if len(got) != len(want) {
		t.Fatalf("%d members back, want %d: %v", len(got), len(want), got)
	}
	for i := range want {
		if got[i].Name != want[i].Name || string(got[i].Data) != string(want[i].Data) {
			t.Errorf("member %d: %q %q, want %q %q", i, got[i].Name, got[i].Data, want[i].Name, want[i].Data)
		}
	}
	// The encodings chosen: an integer column of canonical integers only.
	d, err := mds.Open(m)
	if err != nil {
		t.Fatal(err)
	}
	s0 := d.Index().Shards[0]
	if strings.Join(s0.ColumnNames, " ") != "__key__ cls seg.png txt" || strings.Join(s0.ColumnEncodings, " ") != "str int bytes str" {
		t.Errorf("first shard: %q %q", s0.ColumnNames, s0.ColumnEncodings)
	}
}

// TestRefused: rows MDS cannot hold as they are are refused, naming the
// member and why, with an error wrapping ErrUnkeepable; nothing is left.
func TestRefused(t *testing.T) {
	for _, c := range []struct {
		name  string
		files []formattest.File
		why   string
	}{
		{"no extension", []formattest.File{{Name: "dir/README", Data: []byte("x")}}, "no extension"},
		{"twice", []formattest.File{{Name: "k.txt", Data: []byte("a")}, {Name: "k.cls", Data: []byte("1")}, {Name: "k.txt", Data: []byte("b")}}, "a second .txt"},
		{"twice, in a shard begun", []formattest.File{{Name: "a.cls", Data: []byte("1")}, {Name: "a.txt", Data: []byte("a")},
			{Name: "b.txt", Data: []byte("b")}, {Name: "b.txt", Data: []byte("c")}}, "a second .txt"},
		{"not UTF-8", []formattest.File{{Name: "k.t\xffxt", Data: []byte("a")}}, "not UTF-8"},
		{"key column", []formattest.File{{Name: "k.__key__", Data: []byte("a")}}, "key's column"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			_, err := mds.Write(context.Background(), &formattest.Rows{Shards: []formattest.Shard{c.files}}, filepath.Join(dir, "out"), registry.CreateOptions{})
			if !errors.Is(err, mds.ErrUnkeepable) || !strings.Contains(err.Error(), c.why) || strings.Contains(err.Error(), "\n") {
				t.Errorf("%v, want ErrUnkeepable saying %q", err, c.why)
			}
			if m, _ := filepath.Glob(filepath.Join(dir, "*")); len(m) != 0 {
				t.Errorf("left %v", m)
			}
		})
	}
}

// TestNotFilesSkipped: rows that are not files (a directory) are left
// out, and the result says so.
func TestNotFilesSkipped(t *testing.T) {
	src := &dirRows{in: &formattest.Rows{Shards: []formattest.Shard{{{Name: "k.txt", Data: []byte("a")}}}}}
	res, err := registry.Lookup("mds").Create(context.Background(), src, filepath.Join(t.TempDir(), "out"), registry.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if st, _ := registry.StatsAs[*mds.WriteStats](res); st.Skipped != 1 || st.Members != 1 || len(res.Warnings) != 1 {
		t.Errorf("stats %+v, warnings %q", st, res.Warnings)
	}
}

// dirRows adds a directory row before the rows.
type dirRows struct{ in *formattest.Rows }

func (d *dirRows) Rows(listing bool) (dataset.PayloadSource, error) {
	src, err := d.in.Rows(listing)
	return &dirSource{src}, err
}

type dirSource struct{ dataset.PayloadSource }

func (s *dirSource) Scan(ctx context.Context, shard int, emit func([]dataset.Row) error) error {
	if err := emit([]dataset.Row{{Name: []byte("dir/"), Kind: dataset.KindDir, Offset: -1}}); err != nil {
		return err
	}
	return s.PayloadSource.Scan(ctx, shard, emit)
}

// TestEncodingDowngrade: a column's encoding is the richest its values
// so far allow; a value it cannot hold closes the shard, and the column
// stays plainer after (the run's values decide, not the shard's alone).
func TestEncodingDowngrade(t *testing.T) {
	var files []formattest.File
	for i, cls := range []string{"1", "2", "07", "3"} {
		k := fmt.Sprintf("k%d", i)
		files = append(files, formattest.File{Name: k + ".cls", Data: []byte(cls)}, formattest.File{Name: k + ".json", Data: []byte(`{"a": 1}`)})
	}
	files = append(files, formattest.File{Name: "k4.cls", Data: []byte("4")}, formattest.File{Name: "k4.json", Data: []byte(`{`)})
	out := filepath.Join(t.TempDir(), "out")
	if _, err := mds.Write(context.Background(), &formattest.Rows{Shards: []formattest.Shard{files}}, out, registry.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	d, err := mds.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range d.Index().Shards {
		got = append(got, fmt.Sprintf("%d:%s", s.Samples, strings.Join(s.ColumnEncodings[1:], ",")))
	}
	if want := "2:int,json 2:str,json 1:str,str"; strings.Join(got, " ") != want {
		t.Errorf("shards %q, want %q", got, want)
	}
	back := formattest.Files(formattest.ReadSample(t, "mds", out))
	for i := range files {
		if back[i].Name != files[i].Name || string(back[i].Data) != string(files[i].Data) {
			t.Errorf("member %d: %q %q, want %q %q", i, back[i].Name, back[i].Data, files[i].Name, files[i].Data)
		}
	}
}

// TestCancelFromTar: a conversion from tar shards (values held as spans
// of their files) canceled midway ends with context.Canceled and leaves
// nothing but the input.
func TestCancelFromTar(t *testing.T) {
	var sh formattest.Shard
	for i := 0; i < 2000; i++ {
		sh = append(sh, formattest.File{Name: fmt.Sprintf("k%05d.bin", i), Data: bytes.Repeat([]byte{byte(i)}, 3000)})
	}
	dir := t.TempDir()
	tar := filepath.Join(dir, "tar")
	convert(t, &formattest.Rows{Shards: []formattest.Shard{sh, sh}}, "tar", tar, registry.CreateOptions{Workers: 2})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	_, err := registry.Lookup("mds").Create(ctx, open(t, "tar", tar), filepath.Join(dir, "out"), registry.CreateOptions{Workers: 2, ShardSize: 1 << 20,
		Progress: func(p dataset.Progress) {
			if p.Rows > 500 {
				cancel()
			}
		}})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("%v, want context.Canceled", err)
	}
	if m, _ := filepath.Glob(filepath.Join(dir, "*")); len(m) != 1 {
		t.Errorf("left %v", m)
	}
}
