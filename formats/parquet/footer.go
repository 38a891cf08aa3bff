package parquet

import (
	"errors"
	"fmt"

	"github.com/itarconv/itarconv/internal/thriftcompact"
)

// parquet-go decodes a footer's lists into slices as long as their
// headers claim, before it reads an element: a list header of a damaged
// footer claiming two billion row groups is that many structs allocated
// (and scanned by the collector). checkLists walks the footer's Thrift
// compact encoding once, decoding nothing (thriftcompact's Skip), and
// refuses a list, set, map or binary value that claims more bytes than
// are left to hold it, and nesting too deep; parquet-go then decodes what
// passed.

var errLists = errors.New("Thrift list longer than its bytes")

// checkLists checks the Thrift compact struct b (see above).
func checkLists(b []byte) error {
	r := thriftcompact.NewReader(b)
	r.Skip(thriftcompact.Struct)
	if err := r.Err(); err != nil {
		return fmt.Errorf("footer %v: %w", err, errLists)
	}
	return nil
}
