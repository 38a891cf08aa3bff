package cli

import (
	"context"
	"io"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/itarconv/itarconv/formats/barecat"
	"github.com/itarconv/itarconv/formats/tbl"
)

// contents maps every file a dataset holds to its bytes, read by its own
// format's reader: a directory's tar shards (every fold, or fold train
// of a directory holding several), a Barecat
// archive, a TBL v2 file (by the names its metadata keeps).
func contents(t *testing.T, format, path string) map[string]string {
	t.Helper()
	out := map[string]string{}
	switch format {
	case "tar":
		shards, _ := filepath.Glob(filepath.Join(path, "train_*.tar"))
		if len(shards) == 0 {
			shards, _ = filepath.Glob(filepath.Join(path, "*.tar"))
		}
		for name, b := range tarMembers(t, shards...) {
			out[strings.TrimPrefix(name, "./")] = b
		}
	case "barecat":
		a, err := barecat.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		defer a.Close()
		err = a.Files(context.Background(), barecat.ByPath, func(f barecat.File) error {
			r, err := a.Open(f)
			if err != nil {
				return err
			}
			b, err := io.ReadAll(r)
			out[f.Path] = string(b)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	case "tbl":
		r, err := tbl.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		for i := range r.Len() {
			m, _ := r.Metadata(i)
			name, ok := tbl.SampleName(m)
			b, err := r.ReadSample(i, nil)
			if err != nil || !ok {
				t.Fatalf("%s: sample %d: %q, %v", path, i, name, err)
			}
			out[name] = string(b)
		}
	default:
		t.Fatalf("no reader for %s", format)
	}
	if len(out) == 0 {
		t.Fatalf("%s: no files", path)
	}
	return out
}

// TestEveryPairRoundTrips converts between every two formats in both
// directions (12 pairs) and back: every file's name and bytes come back as
// they were, and every output passes its own format's verify. Tar shards,
// Barecat and TBL carry a tar fold's files; SCDL carries an SCDL archive,
// which all four hold.
func TestEveryPairRoundTrips(t *testing.T) {
	target := map[string]string{"tar": "fold", "barecat": "x.barecat", "tbl": "x.tbl", "scdl": "archive"}
	convert := func(t *testing.T, src, dst, to string, extra ...string) {
		t.Helper()
		args := append([]string{"convert", "-q", "--to", to}, extra...)
		if code, _, stderr := run(t, append(args, src, dst)...); code != 0 {
			t.Fatalf("convert %s -> %s: exit %d: %s", src, dst, code, stderr)
		}
		if code, _, stderr := run(t, "verify", "-q", dst); code != 0 {
			t.Fatalf("verify %s: exit %d: %s", dst, code, stderr)
		}
	}
	// The datasets of each format: made from the tar fold, or from the
	// SCDL archive.
	tarFold := copyCase(t, "ustar_basic")
	archive := scdlCase(t, "basic_50x30_f32")
	of := map[string]map[string]string{"tar": {}, "scdl": {}} // format -> data -> path
	for _, f := range []string{"barecat", "tbl"} {
		of[f] = map[string]string{}
		p := filepath.Join(t.TempDir(), target[f])
		convert(t, tarFold, p, f, "--fold", "train")
		of[f]["tar"] = p
		p = filepath.Join(t.TempDir(), target[f])
		convert(t, archive, p, f)
		of[f]["scdl"] = p
	}
	of["tar"]["tar"], of["scdl"]["scdl"] = tarFold, archive
	of["tar"]["scdl"] = filepath.Join(t.TempDir(), "fold")
	convert(t, archive, of["tar"]["scdl"], "tar")

	formats := []string{"tar", "barecat", "tbl", "scdl"}
	for _, from := range formats {
		for _, to := range formats {
			if from == to {
				continue
			}
			t.Run(from+"-"+to, func(t *testing.T) {
				data := "tar"
				if from == "scdl" || to == "scdl" {
					data = "scdl"
				}
				src := of[from][data]
				var fold []string
				if from == "tar" && data == "tar" {
					fold = []string{"--fold", "train"}
				}
				mid := filepath.Join(t.TempDir(), target[to])
				convert(t, src, mid, to, fold...)
				back := filepath.Join(t.TempDir(), target[from])
				if to == "tar" && data == "tar" {
					fold = []string{"--fold", "train"}
				} else {
					fold = nil
				}
				convert(t, mid, back, from, fold...)
				if from == "scdl" {
					sameDirs(t, src, back)
					return
				}
				if want, got := contents(t, from, src), contents(t, from, back); !reflect.DeepEqual(want, got) {
					t.Errorf("%d files, %d back; differ", len(want), len(got))
				}
			})
		}
	}
}
