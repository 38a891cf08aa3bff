package fold_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/itarconv/itarconv/fold"
)

// Reading one member of a fold of tar shards by its key and extension,
// through the fold's TARIDX index. The index lies apart from its shards,
// so its manifest names them: Open needs the index only.
func ExampleFold_Lookup() {
	dir, _ := os.MkdirTemp("", "example-fold")
	defer os.RemoveAll(dir)
	shards := []string{"../examples/webdataset/imagenet-train-000000.tar", "../examples/webdataset/imagenet-train-000001.tar"}
	index := filepath.Join(dir, "imagenet-train.taridx")
	if _, err := fold.BuildIndex(context.Background(), shards, index, fold.IndexOptions{}); err != nil {
		fmt.Println(err)
		return
	}
	f, err := fold.Open(index, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	members, err := f.Lookup("sample0000.cls")
	if err != nil {
		fmt.Println(err)
		return
	}
	f.Copy(context.Background(), os.Stdout, members[0])
	fmt.Println()
	// Output: 1
}
