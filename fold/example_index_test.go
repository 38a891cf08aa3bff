package fold_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/itarconv/itarconv/fold"
	"github.com/itarconv/itarconv/loaders"
	_ "github.com/itarconv/itarconv/loaders/all" // registers energon, wids, DALI, ratarmount
)

// Index tar shards for random access (TARIDX) and, from the same pass over
// their headers, for other loaders: here energon and WebDataset's wids,
// written into a directory of their own. Shards given as URLs
// (https://..., s3://...) are indexed the same way, read by ranges.
func ExampleBuildIndex() {
	dir, err := os.MkdirTemp("", "example-index")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	ctx := context.Background()
	shards := []string{"../examples/webdataset/imagenet-train-000000.tar", "../examples/webdataset/imagenet-train-000001.tar"}

	var kinds []loaders.Loader
	for _, name := range []string{"energon", "wids"} {
		l, err := loaders.New(name, loaders.Options{OutDir: dir})
		if err != nil {
			log.Fatal(err)
		}
		kinds = append(kinds, l)
	}
	set := loaders.NewSet(kinds...)
	st, err := fold.BuildIndex(ctx, shards, filepath.Join(dir, "imagenet-train.taridx"), fold.IndexOptions{Loaders: set})
	if err != nil {
		log.Fatal(err)
	}
	written, err := set.Finish(ctx)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%d members, %d samples, extensions %v\n", st.Rows, st.Stems, st.Exts)
	fmt.Printf("energon: %d files, wids: %d file\n", written.Written["energon"], written.Written["wids"])
	// Output:
	// 36 members, 12 samples, extensions [jpg cls json]
	// energon: 6 files, wids: 1 file
}
