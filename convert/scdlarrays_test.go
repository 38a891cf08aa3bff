package convert

import "github.com/itarconv/itarconv/formats/scdl"

// scdlArrays are the files rebuilt from the cells, not kept in scdlmeta.
var scdlArrays = map[string]bool{scdl.DataFile: true, scdl.RowPtrFile: true, scdl.ColPtrFile: true}
