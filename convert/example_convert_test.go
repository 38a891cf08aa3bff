package convert_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/itarconv/itarconv/convert"
	"github.com/itarconv/itarconv/formats/barecat"
	"github.com/itarconv/itarconv/formats/registry"
	"github.com/itarconv/itarconv/formats/tbl"
)

// Convert any format into any other, by the paths' formats: here the
// example's tar shards into TBL, then that TBL into a Barecat archive. The
// result says what was written; StatsAs gives the target format's own
// figures, typed.
func ExampleConvert() {
	dir, err := os.MkdirTemp("", "example-convert")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	ctx := context.Background()
	shards := []string{"../examples/webdataset/imagenet-train-000000.tar", "../examples/webdataset/imagenet-train-000001.tar"}

	res, err := convert.Convert(ctx, shards, filepath.Join(dir, "train.tbl"), convert.ConvertOptions{})
	if err != nil {
		log.Fatal(err)
	}
	st, _ := registry.StatsAs[*tbl.RowsStats](res)
	fmt.Printf("%s: %d members, %d bytes, TBL v%d\n", filepath.Base(res.Output), res.Members, res.Bytes, st.Version)

	res, err = convert.Convert(ctx, []string{res.Output}, filepath.Join(dir, "train.barecat"), convert.ConvertOptions{})
	if err != nil {
		log.Fatal(err)
	}
	bst, _ := registry.StatsAs[*barecat.RowsStats](res)
	fmt.Printf("%s: %d members in %d shard\n", filepath.Base(res.Output), res.Members, bst.Shards)
	// Output:
	// train.tbl: 36 members, 5281 bytes, TBL v2
	// train.barecat: 36 members in 1 shard
}
