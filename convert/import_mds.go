package convert

// The MDS format reaches conversions through the registry alone: linking
// its package registers it.
import _ "github.com/itarconv/itarconv/formats/mds"
