module github.com/itarconv/itarconv

go 1.24

require github.com/cespare/xxhash/v2 v2.3.0
