package tbl_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/itarconv/itarconv/formats/tbl"
)

// Reading one sample of a TBL v2 file by the name its metadata holds (a
// TBL index has no names: they live in the metadata section).
func ExampleSampleName() {
	dir, _ := os.MkdirTemp("", "example-tbl")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "pets.tbl")
	w, err := tbl.Create(path, tbl.WriterOptions{Version: 2, NumSamples: 2})
	if err != nil {
		fmt.Println(err)
		return
	}
	w.Add(tbl.JPEG, strings.NewReader("cat"), 3, []tbl.MetaEntry{tbl.NameMeta("cat.jpg")})
	w.Add(tbl.PNG, strings.NewReader("dog"), 3, []tbl.MetaEntry{tbl.NameMeta("dog.png")})
	if err := w.Close(); err != nil {
		fmt.Println(err)
		return
	}
	r, err := tbl.Open(path)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer r.Close()
	for i := range r.Len() {
		meta, _ := r.Metadata(i)
		if name, _ := tbl.SampleName(meta); name == "dog.png" {
			b, err := r.ReadSample(i, nil)
			fmt.Printf("sample %d, %s: %s %v\n", i, r.Sample(i).Format, b, err)
		}
	}
	// Output: sample 1, PNG: dog <nil>
}
