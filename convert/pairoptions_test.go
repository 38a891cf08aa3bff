package convert

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/itarconv/itarconv/fold"
	"github.com/itarconv/itarconv/formats/registry"
	"github.com/itarconv/itarconv/formats/tbl"
)

// TestPairsTakeFormatOptions: the converters of their own (tar shards
// into TBL, Barecat, SCDL) read a format's own options from Source and
// Target as the registry's Open and Create do: a fold chosen by the tar
// format's options, a TBL version by the TBL format's; options of a type
// the format does not take are refused (ErrOptionsType), never dropped
// for the defaults.
func TestPairsTakeFormatOptions(t *testing.T) {
	ctx := context.Background()
	src, want := coverFold(t, 1)
	coverTar(t, filepath.Join(src, "val_0000.tar"), "v/only.txt", "val's own")
	out := t.TempDir()

	v1 := filepath.Join(out, "v1.tbl")
	if _, err := Convert(ctx, []string{src}, v1, ConvertOptions{Source: fold.OpenOptions{Fold: "train"}, Target: tbl.RowsOptions{Version: 1}}); err != nil {
		t.Fatal(err)
	}
	r, err := tbl.Open(v1)
	if err != nil {
		t.Fatal(err)
	}
	if r.Version() != 1 {
		t.Errorf("tar to TBL with Target version 1: version %d", r.Version())
	}
	r.Close()

	val := filepath.Join(out, "val.barecat")
	if _, err := Convert(ctx, []string{src}, val, ConvertOptions{Source: fold.OpenOptions{Fold: "val"}}); err != nil {
		t.Fatal(err)
	}
	if got := coverRead(t, "barecat", val); len(got) != 1 || got["v/only.txt"] != "val's own" {
		t.Errorf("tar to Barecat of the fold Source names: %v", got)
	}
	train := filepath.Join(out, "train.barecat")
	if _, err := Convert(ctx, []string{src}, train, ConvertOptions{Fold: "train"}); err != nil {
		t.Fatal(err)
	}
	sameFiles(t, "tar to Barecat of the fold Fold names", coverRead(t, "barecat", train), want)

	for _, c := range []struct {
		src, dst string
		o        ConvertOptions
	}{
		{src, "x.tbl", ConvertOptions{Fold: "train", Target: fold.CreateOptions{}}},
		{src, "x.tbl", ConvertOptions{Source: "train"}},
		{src, "x.barecat", ConvertOptions{Fold: "train", Target: tbl.RowsOptions{}}},
		{src, "x.scdl", ConvertOptions{To: "scdl", Target: 1}},
		{train, "tars", ConvertOptions{To: "tar", ReuseTars: true, Source: fold.OpenOptions{}}},
		{train, "tars", ConvertOptions{To: "tar", ReuseTars: true, Target: tbl.RowsOptions{}}},
	} {
		dst := filepath.Join(out, c.dst)
		if _, err := Convert(ctx, []string{c.src}, dst, c.o); !errors.Is(err, registry.ErrOptionsType) {
			t.Errorf("to %s with %T, %T: %v, want ErrOptionsType", c.dst, c.o.Source, c.o.Target, err)
		}
		if _, err := os.Stat(dst); err == nil {
			t.Errorf("%s was written", c.dst)
		}
	}
}
