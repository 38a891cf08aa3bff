package wids

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/itarconv/itarconv/formats/tarfile"
)

// count walks the shard at path and counts its samples as the loader
// does; repeated says whether a file name came again.
func count(t *testing.T, path string) (n int, repeated bool, err error) {
	t.Helper()
	var c Counter
	_, err = tarfile.Walk(path, tarfile.Options{}, c.Add)
	if err != nil && !errors.Is(err, ErrName) && !errors.Is(err, ErrHeader) {
		t.Fatalf("%s: %v", path, err)
	}
	st, serr := os.Stat(path)
	if serr != nil {
		t.Fatal(serr)
	}
	n, err = c.Samples(st.Size())
	return n, c.Repeated(), err
}

// samples are the counts of every shard of testdata that the tool indexed,
// and refused the error for every shard it could not.
var (
	samples = map[string]int{
		"digits_only/0000.tar":                 3,
		"digits_only/0001.tar":                 3,
		"dirs_links_gnutar/train_0000.tar":     3, // the symlink and the hard link are no files
		"duplicates/train_0000.tar":            3, // a.jpg twice is one name; b.jpg again after c is none
		"duplicates/train_0001.tar":            1,
		"empty_shard_middle/train_0000.tar":    2,
		"empty_shard_middle/train_0001.tar":    0, // zero blocks only
		"empty_shard_middle/train_0002.tar":    2,
		"empty_shard_middle/train_0004.tar":    1,
		"gnu_longname_py/train_0000.tar":       3, // long names are seen as their 100 first bytes
		"multidot_names/train_0000.tar":        14,
		"nested_dirs_gnutar/train_0000.tar":    5,
		"nested_dirs_gnutar/train_0001.tar":    4,
		"noncontiguous/train_0000.tar":         5,
		"noncontiguous/train_0001.tar":         3,
		"nul_size_stop/train_0000.tar":         1, // the walk ends at a size field of NULs
		"options/train_0000.tar":               3,
		"pax_py/train_0000.tar":                3, // pax paths unseen: "caf?.jpg", "???.png", ...
		"raw_names/train_0000.tar":             11,
		"subdir/sets/train-0.tar":              3,
		"subdir/sets/val-1.tar":                2,
		"ustar_basic/train_0000.tar":           3,
		"ustar_basic/train_0001.tar":           3,
		"ustar_basic/val_0000.tar":             2,
		"ustar_prefix/train_0000.tar":          1, // the prefix unseen: p.jpg and p.cls
		"ustar_prefix/train_0001.tar":          1,
		"webdataset/imagenet-train-000000.tar": 6,
		"webdataset/imagenet-train-000001.tar": 6,
		"dir_with_size/train_0000.tar":         -1,
		"empty_shard_middle/train_0003.tar":    -1,
		"newline_name/train_0000.tar":          -1,
		"nonutf8_after_nul/train_0000.tar":     -1,
		"nonutf8_name/train_0000.tar":          -1,
		"nonutf8_symlink/train_0000.tar":       -1,
		"nul_size_regular/train_0000.tar":      -1,
		"pax_size/train_0000.tar":              -1,
		"size_nul_terminated/train_0000.tar":   -1,
		"typeflag_nonascii/train_0000.tar":     -1,
	}
	// repeats are the shards where a file name comes again.
	repeats = map[string]bool{
		"duplicates/train_0000.tar": true,
		"raw_names/train_0000.tar":  true,
	}
	refused = map[string]error{
		"dir_with_size/train_0000.tar":       ErrHeader, // the loader hops over a header
		"empty_shard_middle/train_0003.tar":  ErrEmpty,
		"newline_name/train_0000.tar":        ErrName,
		"nonutf8_after_nul/train_0000.tar":   ErrName, // after the NUL, but in the field
		"nonutf8_name/train_0000.tar":        ErrName,
		"nonutf8_symlink/train_0000.tar":     ErrName, // not a file, but its name is read
		"nul_size_regular/train_0000.tar":    ErrHeader,
		"pax_size/train_0000.tar":            ErrHeader, // a pax size record, the field 0
		"size_nul_terminated/train_0000.tar": ErrHeader,
		"typeflag_nonascii/train_0000.tar":   ErrHeader,
	}
)

// indexFor adjusts a case's index to the tool's command line where it was
// not the shards in sorted order.
var indexFor = map[string]func(ix *Index){
	// widsindex create sets/val-1.tar sets/train-0.tar: the name comes
	// from the first argument, the shards are sorted.
	"subdir": func(ix *Index) { ix.Name = ShortName("sets/val-1.tar") },
	"options": func(ix *Index) {
		info, _ := os.ReadFile(filepath.Join("testdata", "options", "info.txt"))
		ix.Name, ix.Base, ix.Info = `my set ☃ "v1"`, "https://example.com/data/", string(info)
	},
}

var md5Line = regexp.MustCompile(`\n *"md5sum": "[0-9a-f]{32}",`)

// TestOracle: every case of testdata gets, byte for byte, the index
// widsindex create wrote over its shards, with MD5 sums and without (the
// tool's lines of them removed); every shard it could not index, and
// every shard its loader reads otherwise than its structure, is refused
// with the error that says why.
func TestOracle(t *testing.T) {
	cases, _ := filepath.Glob(filepath.Join("testdata", "*"))
	seen := 0
	for _, dir := range cases {
		name := filepath.Base(dir)
		if name == "urls" || !isDir(dir) {
			continue // TestOracleURLs
		}
		t.Run(name, func(t *testing.T) {
			var shards []Shard
			err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
				if err != nil || !strings.HasSuffix(path, ".tar") {
					return err
				}
				seen++
				rel := filepath.ToSlash(strings.TrimPrefix(path, "testdata"+string(filepath.Separator)))
				want, known := samples[rel]
				if !known {
					t.Errorf("%s: no count in the table", rel)
				}
				n, repeated, err := count(t, path)
				if werr := refused[rel]; werr != nil || err != nil {
					if !errors.Is(err, werr) || werr == nil {
						t.Errorf("%s: %v, want %v", rel, err, werr)
					}
					return nil
				}
				if n != want || repeated != repeats[rel] {
					t.Errorf("%s: %d samples, repeated %v; want %d, %v", rel, n, repeated, want, repeats[rel])
				}
				u, err := URL(dir, path)
				if err != nil {
					t.Fatal(err)
				}
				sum, err := FileMD5(path)
				if err != nil {
					t.Fatal(err)
				}
				st, _ := os.Stat(path)
				shards = append(shards, Shard{URL: u, MD5Sum: sum, NSamples: n, FileSize: st.Size()})
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			want, err := os.ReadFile(filepath.Join(dir, DefaultName))
			if errors.Is(err, os.ErrNotExist) {
				if len(shards) > 0 {
					t.Errorf("the tool wrote no index; %d shards counted here", len(shards))
				}
				return
			}
			slices.Reverse(shards) // the tool sorts them
			ix := New(shards)
			if f := indexFor[name]; f != nil {
				f(ix)
			}
			if got := ix.Bytes(); !bytes.Equal(got, want) {
				t.Errorf("with md5sum:\n%s\nwant:\n%s", got, want)
			}
			for i := range ix.Shards {
				ix.Shards[i].MD5Sum = ""
			}
			if got, want := ix.Bytes(), md5Line.ReplaceAll(want, nil); !bytes.Equal(got, want) {
				t.Errorf("without md5sum:\n%s\nwant:\n%s", got, want)
			}
		})
	}
	if seen < 38 {
		t.Errorf("only %d shards in testdata", seen)
	}
}

// TestOracleURLs: the tool's escaping and order of shard names that are
// not ASCII, not UTF-8 or not printable (each a copy of one shard, which
// testdata holds once: such names have no place in a source tree).
func TestOracleURLs(t *testing.T) {
	shard := filepath.Join("testdata", "ustar_basic", "train_0000.tar")
	n, _, err := count(t, shard)
	if err != nil {
		t.Fatal(err)
	}
	sum, err := FileMD5(shard)
	if err != nil {
		t.Fatal(err)
	}
	var shards []Shard
	for _, u := range []string{
		"b-1.tar", "a_\xff.tar", "a_😀.tar", "a_\ue000.tar", "a_é.tar",
		"a_\x7f.tar", `a_q"b.tar`, "a_\x01.tar", "B-2.tar",
	} {
		shards = append(shards, Shard{URL: u, MD5Sum: sum, NSamples: n, FileSize: 10240})
	}
	want, err := os.ReadFile(filepath.Join("testdata", "urls", DefaultName))
	if err != nil {
		t.Fatal(err)
	}
	ix := New(shards)
	if got := ix.Bytes(); !bytes.Equal(got, want) {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
	back, err := Parse(want)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(back.Shards, ix.Shards) || back.Name != "B" {
		t.Errorf("Parse: %+v, want %+v", back, ix)
	}
}

// TestParseOracle: every index the tool wrote parses into what it says,
// and writes back to the same bytes.
func TestParseOracle(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("testdata", "*", DefaultName))
	if len(files) < 17 {
		t.Fatalf("only %d indexes in testdata", len(files))
	}
	for _, f := range files {
		b, _ := os.ReadFile(f)
		ix, err := Parse(b)
		if err != nil {
			t.Errorf("%s: %v", f, err)
			continue
		}
		for _, s := range ix.Shards {
			if s.FileSize <= 0 || !isMD5(s.MD5Sum) || s.URL == "" {
				t.Errorf("%s: %+v", f, s)
			}
		}
		if got := ix.Bytes(); !bytes.Equal(got, b) {
			t.Errorf("%s: written back:\n%s", f, got)
		}
	}
}

func isDir(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.IsDir()
}
