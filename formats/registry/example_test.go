package registry_test

import (
	"context"
	"fmt"
	"log"

	_ "github.com/itarconv/itarconv/fold" // registers the tar format; import the formats you read
	"github.com/itarconv/itarconv/formats/registry"
)

// Open any dataset by what it is, list its entries and read one: the same
// calls for tar shards, a Barecat, a TBL or an SCDL archive.
func Example_openAnyFormat() {
	path := "../../examples/webdataset/imagenet-train-000000.tar" // or x.barecat, x.tbl, an SCDL directory
	f := registry.Detect(path)
	if f == nil {
		log.Fatalf("%s: no format recognised", path)
	}
	ds, err := f.Open([]string{path}, registry.OpenOptions{})
	if err != nil {
		log.Fatal(err)
	}
	defer ds.Close()
	n := 0
	err = ds.List(context.Background(), func(e registry.Entry) error {
		if n < 3 {
			fmt.Println(e.Name, e.Size)
		}
		n++
		return nil
	})
	if err != nil {
		log.Fatal(err)
	}
	cls, err := ds.ReadEntry("sample0003.cls")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%s: %d %s; sample0003.cls holds %q\n", f.Label, n, ds.Unit(), cls)
	// Output:
	// sample0000.jpg 206
	// sample0000.cls 1
	// sample0000.json 29
	// tar: 18 members; sample0003.cls holds "2"
}
