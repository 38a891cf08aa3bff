package convert_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/itarconv/itarconv/convert"
	"github.com/itarconv/itarconv/dataset"
	"github.com/itarconv/itarconv/formats/barecat"
	"github.com/itarconv/itarconv/formats/scdl"
	"github.com/itarconv/itarconv/formats/tbl"
)

// Converting a fold of tar shards into a TBL file: every regular member
// becomes a sample, named in the metadata section.
func ExampleTarToTBL() {
	out := filepath.Join(os.TempDir(), "example-webdataset.tbl")
	defer os.Remove(out)
	shards := []string{"../examples/webdataset/imagenet-train-000000.tar", "../examples/webdataset/imagenet-train-000001.tar"}
	st, err := convert.TarToTBL(context.Background(), shards, out, convert.TBLOptions{Version: 2})
	if err != nil {
		fmt.Println(err)
		return
	}
	r, err := tbl.Open(out)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer r.Close()
	m, _ := r.Metadata(0)
	name, _ := tbl.SampleName(m)
	fmt.Println(st.Samples, "samples; the first is", name)
	// Output: 36 samples; the first is sample0000.jpg
}

// Converting an SCDL archive to a Barecat archive and back: the cells
// and the archive's other files travel as rows, and the archive comes
// back byte for byte.
func ExampleToSCDL() {
	dir, _ := os.MkdirTemp("", "example-scdl")
	defer os.RemoveAll(dir)
	a, err := scdl.Open("../formats/scdl/testdata/conformance/scdl/basic_50x30_f32/scdl")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer a.Close()
	src, _ := convert.NewSCDLSource(a, scdl.ModeCells)
	bc := filepath.Join(dir, "cells.barecat")
	if _, err := convert.ToBarecat(context.Background(), src, bc, convert.BarecatOptions{}); err != nil {
		fmt.Println(err)
		return
	}
	archive, err := barecat.Open(bc)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer archive.Close()
	st, err := convert.ToSCDL(context.Background(), func(counting bool) (dataset.PayloadSource, error) {
		return &barecat.Source{Archive: archive, Order: barecat.ByAddress, NoData: counting}, nil
	}, filepath.Join(dir, "back"), convert.SCDLImportOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(st.Mode, st.Cells, "cells,", st.NNZ, "values,", st.Files, "files")
	// Output: cells 50 cells, 285 values, 14 files
}

// Reading one cell's member of an SCDL archive by the name a conversion
// gives it.
func Example_scdlMember() {
	a, err := scdl.Open("../formats/scdl/testdata/conformance/scdl/basic_50x30_f32/scdl")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer a.Close()
	b, err := scdl.Member(a, "000000002.json")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(string(b))
	// Output: {"row": 2, "block": 0, "n_genes": 30}
}
