package fold_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/itarconv/itarconv/fold"
)

// Reading one member of a fold of tar shards by its key and extension,
// through the fold's TARIDX index.
func ExampleFold_Lookup() {
	dir, _ := os.MkdirTemp("", "example-fold")
	defer os.RemoveAll(dir)
	shards := []string{"../examples/webdataset/train_0000.tar", "../examples/webdataset/train_0001.tar"}
	index := filepath.Join(dir, "train.taridx")
	if _, err := fold.BuildIndex(context.Background(), shards, index, fold.IndexOptions{}); err != nil {
		fmt.Println(err)
		return
	}
	f, err := fold.Open(index, shards)
	if err != nil {
		fmt.Println(err)
		return
	}
	members, err := f.Lookup("sample0000.cls")
	if err != nil {
		fmt.Println(err)
		return
	}
	f.Copy(os.Stdout, members[0])
	fmt.Println()
	// Output: 1
}
