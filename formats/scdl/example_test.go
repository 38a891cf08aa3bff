package scdl_test

import (
	"fmt"

	"github.com/itarconv/itarconv/formats/scdl"
)

// Reading one cell of an SCDL archive by its row index (the key a
// conversion to tar gives it: 000000002): its values and gene indices, raw
// little-endian in the header's dtypes.
func ExampleArchive_Rows() {
	a, err := scdl.Open("testdata/conformance/scdl/basic_50x30_f32/scdl")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer a.Close()
	it := a.Rows(2, 3)
	for it.Next() {
		fmt.Printf("cell %09d: %d values (%v), %d bytes of gene indices\n",
			it.Row(), len(it.Values())/4, a.Header().Arrays[0].DType, len(it.Genes()))
	}
	if err := it.Err(); err != nil {
		fmt.Println(err)
	}
	// Output: cell 000000002: 3 values (float32), 3 bytes of gene indices
}
