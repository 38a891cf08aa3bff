package convert

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/itarconv/itarconv/fold"
	"github.com/itarconv/itarconv/formats/barecat"
	"github.com/itarconv/itarconv/formats/registry"
	"github.com/itarconv/itarconv/formats/scdl"
	"github.com/itarconv/itarconv/formats/tbl"
	"github.com/itarconv/itarconv/partition"
)

// TestPairsTakeFormatOptions: the converters of their own read a format's
// own options from Source and Target, and from nowhere else, as the
// registry's Open and Create do: a fold chosen by the tar format's
// options, a TBL version and TurboLoader's selection by the TBL format's,
// wrapping by Barecat's, cells per shard by SCDL's. Options of a type the
// format does not take are refused (ErrOptionsType) by every pair, on
// either side, never dropped for the defaults, and nothing is written.
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
	v2 := filepath.Join(out, "v2.tbl")
	res, err := Convert(ctx, []string{src}, v2, ConvertOptions{Source: fold.OpenOptions{Fold: "train"}, Target: tbl.RowsOptions{Compat: "turboloader"}})
	if err != nil {
		t.Fatal(err)
	}
	if st := res.Stats.(*tbl.RowsStats); st.NamesKept {
		t.Errorf("tar to TBL with Target compat turboloader kept names: %+v", st)
	}

	val := filepath.Join(out, "val.barecat")
	if _, err := Convert(ctx, []string{src}, val, ConvertOptions{Source: fold.OpenOptions{Fold: "val"}}); err != nil {
		t.Fatal(err)
	}
	if got := coverRead(t, "barecat", val); len(got) != 1 || got["v/only.txt"] != "val's own" {
		t.Errorf("tar to Barecat of the fold Source names: %v", got)
	}
	train := filepath.Join(out, "train.barecat")
	res, err = Convert(ctx, []string{src}, train, ConvertOptions{Source: fold.OpenOptions{Fold: "train"}, Target: barecat.CreateOptions{Wrap: true}})
	if err != nil {
		t.Fatal(err)
	}
	if st := res.Stats.(*BarecatStats); st.Shards != 1 {
		t.Errorf("tar to Barecat wrapped: %+v", st)
	}
	if links, _ := filepath.Glob(train + "-shard-*"); len(links) != 1 || !isSymlink(links[0]) {
		t.Errorf("tar to Barecat with Target Wrap: shards %v, want one link", links)
	}
	sameFiles(t, "tar to Barecat wrapped", coverRead(t, "barecat", train), want)

	cells := filepath.Join(out, "cells.scdl")
	writeSynthSCDL(t, cells, 30)
	split := filepath.Join(out, "split")
	if _, err := Convert(ctx, []string{cells}, split, ConvertOptions{To: "tar", Source: scdl.OpenOptions{CellsPerShard: 10}}); err != nil {
		t.Fatal(err)
	}
	if shards, _ := filepath.Glob(filepath.Join(split, SCDLCellsFold+"_*.tar")); len(shards) != 3 {
		t.Errorf("SCDL to tar with Source 10 cells per shard: %d shards of 30 cells, want 3", len(shards))
	}
	tblNamed := filepath.Join(out, "named.tbl")
	if _, err := Convert(ctx, []string{cells}, tblNamed, ConvertOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := Convert(ctx, []string{train}, filepath.Join(out, "x.tbl"), ConvertOptions{Target: tbl.RowsOptions{Compat: "turboloader"}}); !errors.Is(err, errCompatNotTar) {
		t.Errorf("Barecat to TBL with compat turboloader: %v, want errCompatNotTar", err)
	}

	for _, c := range []struct {
		pair     string
		src, dst string
		o        ConvertOptions
	}{
		{"tar to TBL", src, "x.tbl", ConvertOptions{Source: fold.OpenOptions{Fold: "train"}, Target: fold.CreateOptions{}}},
		{"tar to TBL", src, "x.tbl", ConvertOptions{Source: "train"}},
		{"tar to TBL", src, "x.tbl", ConvertOptions{Source: fold.OpenOptions{Fold: "train"}, Target: tbl.RowsOptions{Compat: "other"}}},
		{"tar to Barecat", src, "x.barecat", ConvertOptions{Source: fold.OpenOptions{Fold: "train"}, Target: tbl.RowsOptions{}}},
		{"tar to Barecat", src, "x.barecat", ConvertOptions{Source: barecat.OpenOptions{}}},
		{"tar to SCDL", src, "x.scdl", ConvertOptions{To: "scdl", Target: 1}},
		{"tar to SCDL", src, "x.scdl", ConvertOptions{To: "scdl", Source: scdl.OpenOptions{}}},
		{"tar to tar", src, "tars", ConvertOptions{To: "tar", Source: barecat.OpenOptions{}}},
		{"tar to tar", src, "tars", ConvertOptions{To: "tar", Source: fold.OpenOptions{Fold: "train"}, Target: fold.OpenOptions{}}},
		{"SCDL to tar", cells, "tars", ConvertOptions{To: "tar", Source: fold.OpenOptions{}}},
		{"SCDL to tar", cells, "tars", ConvertOptions{To: "tar", Target: scdl.OpenOptions{}}},
		{"Barecat to tar, reusing", train, "tars", ConvertOptions{To: "tar", Source: fold.OpenOptions{}}},
		{"Barecat to tar, reusing", train, "tars", ConvertOptions{To: "tar", Source: barecat.OpenOptions{ReuseTars: true}, Target: tbl.RowsOptions{}}},
		{"Barecat to tar", train, "tars", ConvertOptions{To: "tar", Target: barecat.CreateOptions{}}},
		{"TBL to SCDL", tblNamed, "x.scdl", ConvertOptions{To: "scdl", Source: tbl.RowsOptions{}}},
		{"TBL to SCDL", tblNamed, "x.scdl", ConvertOptions{To: "scdl", Target: scdl.OpenOptions{}}},
		{"TBL to Barecat", tblNamed, "x.barecat", ConvertOptions{Target: barecat.OpenOptions{}}},
		{"TBL to Barecat", tblNamed, "x.barecat", ConvertOptions{Target: &barecat.CreateOptions{Wrap: true}}},
		{"SCDL to TBL", cells, "x.tbl", ConvertOptions{Source: barecat.OpenOptions{}}},
	} {
		dst := filepath.Join(out, c.dst)
		if _, err := Convert(ctx, []string{c.src}, dst, c.o); !errors.Is(err, registry.ErrOptionsType) && !errors.Is(err, tbl.ErrCompat) && !errors.Is(err, barecat.ErrTarOnly) {
			t.Errorf("%s with %T, %T: %v, want ErrOptionsType", c.pair, c.o.Source, c.o.Target, err)
		}
		if _, err := os.Stat(dst); err == nil {
			t.Errorf("%s: %s was written", c.pair, c.dst)
		}
	}

	// A partitioned run's two halves read them as one run does.
	for _, c := range []struct {
		pair string
		dst  string
		o    ConvertOptions
	}{
		{"tar to TBL", "x.tbl", ConvertOptions{Target: barecat.CreateOptions{}}},
		{"tar to TBL", "x.tbl", ConvertOptions{Source: tbl.RowsOptions{}}},
		{"tar to Barecat", "x.barecat", ConvertOptions{Target: tbl.RowsOptions{}}},
		{"tar to tar", "tars", ConvertOptions{To: "tar", ShardSize: 1 << 20, Target: fold.OpenOptions{}}},
	} {
		c.o.Source = orDefault(c.o.Source, fold.OpenOptions{Fold: "train"})
		dst, dir := filepath.Join(out, c.dst), t.TempDir()
		if _, _, _, err := ConvertPart(ctx, []string{src}, dst, c.o, partition.Task{N: 1}, dir); !errors.Is(err, registry.ErrOptionsType) {
			t.Errorf("%s, a part, with %T, %T: %v, want ErrOptionsType", c.pair, c.o.Source, c.o.Target, err)
		}
		if _, err := MergeConverted(ctx, []string{src}, dst, c.o, []string{dir}); !errors.Is(err, registry.ErrOptionsType) {
			t.Errorf("%s, the merge, with %T, %T: %v, want ErrOptionsType", c.pair, c.o.Source, c.o.Target, err)
		}
		if _, err := os.Stat(dst); err == nil {
			t.Errorf("%s: %s was written", c.pair, c.dst)
		}
	}
}

func orDefault(v, def any) any {
	if v == nil {
		return def
	}
	return v
}

func isSymlink(path string) bool {
	st, err := os.Lstat(path)
	return err == nil && st.Mode()&os.ModeSymlink != 0
}
