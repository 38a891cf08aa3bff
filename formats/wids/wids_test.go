package wids

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/itarconv/itarconv/internal/pathguard"
)

func TestShortName(t *testing.T) {
	for in, want := range map[string]string{
		"imagenet-train-000000.tar":     "imagenet-train",
		"train_0000.tar":                "train_0000",
		"0000.tar":                      "",
		"sets/val-1.tar":                "sets-val",
		"/data/x/x-train-x-01.tar":      "data-x-train",
		"a.b.tar":                       "a-b",
		"shard.tar.gz":                  "shard-tar",
		".tar":                          "tar",
		"..tar":                         "tar",
		"d.x/noext":                     "d-x-noext",
		"caf\xc3\xa9-2024_b.tar":        "caf-2024_b",
		"x\xffy.tar":                    "x-y",
		"../sets/9-A_1.tar":             "sets-A_1",
		"":                              "",
		"12.34":                         "",
		"pipe:curl -s http://h/a-0.tar": "pipe-curl-s-http-h-a",
	} {
		if got := ShortName(in); got != want {
			t.Errorf("ShortName(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestURL(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		indexDir, shard, want string
		err                   bool
	}{
		{dir, filepath.Join(dir, "train_0000.tar"), "train_0000.tar", false},
		{dir, filepath.Join(dir, "sets", "a b.tar"), "sets/a b.tar", false},
		{filepath.Join(dir, "idx"), filepath.Join(dir, "s.tar"), "../s.tar", false},
		{dir, filepath.Join(dir, "d;x", "s.tar"), "d;x/s.tar", false},
		{dir, filepath.Join(dir, "x", "c:y.tar"), "x/c:y.tar", false},
		{dir, filepath.Join(dir, "9:y.tar"), "9:y.tar", false},
		{dir, filepath.Join(dir, "a%20b.tar"), "a%20b.tar", false},
		{dir, filepath.Join(dir, "c:y.tar"), "", true},
		{dir, filepath.Join(dir, "s3:y.tar"), "", true},
		{dir, filepath.Join(dir, "a#1.tar"), "", true},
		{dir, filepath.Join(dir, "a?.tar"), "", true},
		{dir, filepath.Join(dir, "a;1.tar"), "", true},
		{dir, filepath.Join(dir, "a\tb.tar"), "", true},
		{dir, filepath.Join(dir, " a.tar"), "", true},
		{dir, filepath.Join(dir, "a\xff.tar"), "", true},
	}
	for _, tt := range tests {
		got, err := URL(tt.indexDir, tt.shard)
		if got != tt.want || (err != nil) != tt.err || err != nil && !errors.Is(err, ErrURL) {
			t.Errorf("URL(%q, %q) = %q, %v", tt.indexDir, tt.shard, got, err)
		}
	}
}

func TestBytes(t *testing.T) {
	tests := []struct {
		name string
		ix   Index
		want string
	}{
		{"no shard", Index{}, `{
  "__kind__": "wids-shard-index-v1",
  "wids_version": 1,
  "shardlist": []
}`},
		{"fields left out", Index{Shards: []Shard{{URL: "b.tar", NSamples: 2, FileSize: -1}, {URL: "a.tar", MD5Sum: "d41d8cd98f00b204e9800998ecf8427e", FileSize: 0}}}, `{
  "__kind__": "wids-shard-index-v1",
  "wids_version": 1,
  "shardlist": [
    {
      "url": "a.tar",
      "md5sum": "d41d8cd98f00b204e9800998ecf8427e",
      "nsamples": 0,
      "filesize": 0
    },
    {
      "url": "b.tar",
      "nsamples": 2
    }
  ]
}`},
		{"escapes", Index{Name: "\x00\b\f\n\r\t\x1f\x7f\"\\/é\u2028😀\xff", Info: "i", Shards: []Shard{{URL: "s.tar", NSamples: 1, FileSize: 10240}}}, `{
  "__kind__": "wids-shard-index-v1",
  "wids_version": 1,
  "shardlist": [
    {
      "url": "s.tar",
      "nsamples": 1,
      "filesize": 10240
    }
  ],
  "name": "\u0000\b\f\n\r\t\u001f\u007f\"\\/\u00e9\u2028\ud83d\ude00\udcff",
  "info": "i"
}`},
	}
	for _, tt := range tests {
		if got := string(tt.ix.Bytes()); got != tt.want {
			t.Errorf("%s:\n%s\nwant:\n%s", tt.name, got, tt.want)
		}
	}
}

func TestNew(t *testing.T) {
	in := []Shard{{URL: "x-1.tar"}, {URL: "x-0.tar"}, {URL: "x-0.tar", NSamples: 1}}
	ix := New(in)
	want := []Shard{{URL: "x-0.tar"}, {URL: "x-0.tar", NSamples: 1}, {URL: "x-1.tar"}}
	if ix.Name != "x" || !slices.Equal(ix.Shards, want) {
		t.Errorf("New: %+v", ix)
	}
	if in[0].URL != "x-1.tar" {
		t.Errorf("New reordered its argument")
	}
	if ix := New(nil); ix.Name != "" || len(ix.Shards) != 0 {
		t.Errorf("New(nil): %+v", ix)
	}
}

func TestParse(t *testing.T) {
	ix, err := Parse([]byte("\xef\xbb\xbf" + `{"wids_version": 1, "keep": false, "shardlist": [
		{"url": "a_\udcff\u00e9.tar", "nsamples": 0, "weight": 2}]}`))
	if err != nil {
		t.Fatal(err)
	}
	want := Shard{URL: "a_\xffé.tar", NSamples: 0, FileSize: -1}
	if len(ix.Shards) != 1 || ix.Shards[0] != want || ix.Name != "" {
		t.Errorf("Parse: %+v", ix)
	}
}

func TestParseErrors(t *testing.T) {
	shard := `{"url": "a.tar", "nsamples": 3}`
	for name, body := range map[string]string{
		"empty":              ``,
		"not an object":      `[]`,
		"null":               `null`,
		"trailing data":      `{"wids_version": 1, "shardlist": [` + shard + `]} x`,
		"not UTF-8":          `{"wids_version": 1, "name": "` + "\xff" + `", "shardlist": [` + shard + `]}`,
		"no version":         `{"shardlist": [` + shard + `]}`,
		"version 2":          `{"wids_version": 2, "shardlist": [` + shard + `]}`,
		"version string":     `{"wids_version": "1", "shardlist": [` + shard + `]}`,
		"version float":      `{"wids_version": 1.0, "shardlist": [` + shard + `]}`,
		"other kind":         `{"__kind__": "x", "wids_version": 1, "shardlist": [` + shard + `]}`,
		"datasets":           `{"wids_version": 1, "datasets": [], "shardlist": [` + shard + `]}`,
		"no shardlist":       `{"wids_version": 1}`,
		"shardlist null":     `{"wids_version": 1, "shardlist": null}`,
		"shardlist empty":    `{"wids_version": 1, "shardlist": []}`,
		"shardlist object":   `{"wids_version": 1, "shardlist": {}}`,
		"shard not object":   `{"wids_version": 1, "shardlist": ["a.tar"]}`,
		"shard null":         `{"wids_version": 1, "shardlist": [null]}`,
		"no url":             `{"wids_version": 1, "shardlist": [{"nsamples": 3}]}`,
		"url empty":          `{"wids_version": 1, "shardlist": [{"url": "", "nsamples": 3}]}`,
		"url number":         `{"wids_version": 1, "shardlist": [{"url": 1, "nsamples": 3}]}`,
		"url surrogate":      `{"wids_version": 1, "shardlist": [{"url": "\udc41.tar", "nsamples": 3}]}`,
		"url high alone":     `{"wids_version": 1, "shardlist": [{"url": "\ud83d.tar", "nsamples": 3}]}`,
		"url high, high":     `{"wids_version": 1, "shardlist": [{"url": "\ud83d\ud83d.tar", "nsamples": 3}]}`,
		"url escapes joined": `{"wids_version": 1, "shardlist": [{"url": "\udcc3\udca9.tar", "nsamples": 3}]}`,
		"no nsamples":        `{"wids_version": 1, "shardlist": [{"url": "a.tar"}]}`,
		"nsamples negative":  `{"wids_version": 1, "shardlist": [{"url": "a.tar", "nsamples": -1}]}`,
		"nsamples float":     `{"wids_version": 1, "shardlist": [{"url": "a.tar", "nsamples": 3.0}]}`,
		"nsamples exponent":  `{"wids_version": 1, "shardlist": [{"url": "a.tar", "nsamples": 3e0}]}`,
		"nsamples huge":      `{"wids_version": 1, "shardlist": [{"url": "a.tar", "nsamples": 99999999999999999999}]}`,
		"nsamples bool":      `{"wids_version": 1, "shardlist": [{"url": "a.tar", "nsamples": true}]}`,
		"nsamples NaN":       `{"wids_version": 1, "shardlist": [{"url": "a.tar", "nsamples": NaN}]}`,
		"filesize negative":  `{"wids_version": 1, "shardlist": [{"url": "a.tar", "nsamples": 3, "filesize": -2}]}`,
		"filesize string":    `{"wids_version": 1, "shardlist": [{"url": "a.tar", "nsamples": 3, "filesize": "2"}]}`,
		"md5sum short":       `{"wids_version": 1, "shardlist": [{"url": "a.tar", "nsamples": 3, "md5sum": "abc"}]}`,
		"md5sum upper":       `{"wids_version": 1, "shardlist": [{"url": "a.tar", "nsamples": 3, "md5sum": "D41D8CD98F00B204E9800998ECF8427E"}]}`,
		"name number":        `{"wids_version": 1, "name": 3, "shardlist": [` + shard + `]}`,
		"name null":          `{"wids_version": 1, "name": null, "shardlist": [` + shard + `]}`,
	} {
		if _, err := Parse([]byte(body)); !errors.Is(err, ErrFormat) {
			t.Errorf("%s: %v, want ErrFormat", name, err)
		}
	}
}

// FuzzParse: any bytes parse into an index that writes and parses back to
// itself (its shards in the tool's order), or fail with ErrFormat.
func FuzzParse(f *testing.F) {
	seeds, _ := filepath.Glob(filepath.Join("testdata", "*", DefaultName))
	for _, s := range seeds {
		b, _ := os.ReadFile(s)
		f.Add(b)
	}
	f.Add([]byte(`{"wids_version": 1, "shardlist": [{"url": "\udcff\ud83d\ude00", "nsamples": 0}], "info": "\u0000"}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		ix, err := Parse(b)
		if err != nil {
			if !errors.Is(err, ErrFormat) {
				t.Fatalf("%v is not ErrFormat", err)
			}
			return
		}
		if len(ix.Shards) == 0 {
			t.Fatal("an index without shards")
		}
		out := ix.Bytes()
		back, err := Parse(out)
		if err != nil {
			t.Fatalf("written back, %v:\n%s", err, out)
		}
		sorted := slices.Clone(ix.Shards)
		sortShards(sorted)
		if back.Name != ix.Name || back.Base != ix.Base || back.Info != ix.Info || !slices.Equal(back.Shards, sorted) {
			t.Fatalf("%+v\nwritten and read back as\n%+v", ix, back)
		}
		if again := back.Bytes(); string(again) != string(out) {
			t.Fatalf("written twice differently:\n%s\n%s", out, again)
		}
		for _, s := range ix.Shards {
			if s.NSamples < 0 || s.URL == "" || s.MD5Sum != "" && !isMD5(s.MD5Sum) {
				t.Fatalf("shard %+v", s)
			}
		}
	})
}

// TestDuplicate: an index naming one shard 20 times parses (the loader
// takes it) and is reported as listing it twice.
func TestDuplicate(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"wids_version": 1, "shardlist": [`)
	for i := range 20 {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString(`{"url": "train-0.tar", "nsamples": 3, "filesize": 10240}`)
	}
	b.WriteString("]}")
	ix, err := Parse([]byte(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	url, first, second, ok := Duplicate(ix.Shards)
	if !ok || url != "train-0.tar" || first != 0 || second != 1 {
		t.Errorf("Duplicate = %q, %d, %d, %v; want train-0.tar, 0, 1", url, first, second, ok)
	}
	err = ix.CheckDuplicates()
	if !errors.Is(err, ErrDuplicate) || !strings.Contains(err.Error(), `"train-0.tar" at shardlist[0] and shardlist[1]`) {
		t.Errorf("CheckDuplicates: %v", err)
	}
	for _, c := range []struct {
		urls []string
		dup  bool
	}{
		{[]string{"a.tar", "b.tar", "./sub/../a.tar"}, true},
		{[]string{"a.tar", "b.tar", "sub/a.tar"}, false},
		{[]string{"http://h/a.tar", "http://h/b.tar"}, false},
		{[]string{"http://h/a.tar", "https://h/b.tar", "http://h/a.tar"}, true},
	} {
		var shards []Shard
		for _, u := range c.urls {
			shards = append(shards, Shard{URL: u})
		}
		if _, _, _, ok := Duplicate(shards); ok != c.dup {
			t.Errorf("Duplicate(%q) = %v, want %v", c.urls, ok, c.dup)
		}
	}
	if err := New([]Shard{{URL: "a.tar"}, {URL: "b.tar"}}).CheckDuplicates(); err != nil {
		t.Errorf("no duplicate: %v", err)
	}
}

// TestFileMD5Context: the sum takes the caller's context, and a FIFO is
// refused, not waited on.
func TestFileMD5Context(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "a.tar")
	os.WriteFile(file, []byte("abc"), 0o644)
	if sum, err := FileMD5Context(context.Background(), file); err != nil || sum != "900150983cd24fb0d6963f7d28e17f72" {
		t.Errorf("md5 of abc: %s, %v", sum, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := FileMD5Context(ctx, file); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
	fifo := filepath.Join(dir, "f.tar")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	done := make(chan error, 1)
	go func() { _, err := FileMD5(fifo); done <- err }()
	select {
	case err := <-done:
		if !errors.Is(err, pathguard.ErrNotRegular) {
			t.Errorf("FIFO: %v, want ErrNotRegular", err)
		}
	case <-time.After(5 * time.Second):
		w, _ := os.OpenFile(fifo, os.O_WRONLY, 0)
		w.Close()
		t.Fatal("FIFO: still waiting after 5 s")
	}
}
