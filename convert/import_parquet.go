package convert

// Parquet converts through the registry's Open and Create (no converter
// of its own here): linking its package registers it.
import _ "github.com/itarconv/itarconv/formats/parquet"
