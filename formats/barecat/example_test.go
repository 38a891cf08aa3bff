package barecat_test

import (
	"fmt"

	"github.com/itarconv/itarconv/formats/barecat"
)

// Reading one file of a Barecat archive by its path: one index lookup,
// then the bytes, checked against their crc32c.
func ExampleArchive_Lookup() {
	a, err := barecat.Open("testdata/conformance/barecat/basic/basic.barecat")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer a.Close()
	f, err := a.Lookup("a.txt")
	if err != nil {
		fmt.Println(err)
		return
	}
	b, err := a.ReadFile(f)
	fmt.Printf("%d bytes, %v: %q\n", f.Size, err, b)
	// Output: 14 bytes, <nil>: "hello barecat\n"
}
