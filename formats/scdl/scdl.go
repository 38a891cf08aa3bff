package scdl

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
)

// Version written by this package: what bionemo-scdl 0.1.3 writes (its
// schema document says 0.0.9, but the code writes 0.1.0).
const (
	VersionMajor = 0
	VersionMinor = 1
	VersionPoint = 0
)

// PackageVersion is the bionemo-scdl version string that version.json holds
// in the archives this package writes by default.
const PackageVersion = "0.1.3"

// EndianNetwork is the only endianness value a header may hold.
const EndianNetwork = 1

// BackendMemmapV0 is the only backend value a header may hold.
const BackendMemmapV0 = 1

// Array names in the header, and the files they describe.
const (
	ArrayData   = "DATA"
	ArrayRowPtr = "ROWPTR"
	ArrayColPtr = "COLPTR"

	HeaderFile   = "header.sch"
	DataFile     = "data.npy"
	RowPtrFile   = "row_ptr.npy"
	ColPtrFile   = "col_ptr.npy"
	MetadataFile = "metadata.json"
	VersionFile  = "version.json"

	// VarFeatures is the feature index whose blocks give each row's
	// number of genes; Features is its name before bionemo-scdl 0.1.
	VarFeatures = "var_features"
	Features    = "features"
	ObsFeatures = "obs_features"
	// CumSumFile is a feature index's block boundaries, inside its folder.
	CumSumFile = "cumulative_sum_index.npy"
)

// DType is the header's ArrayDType enum.
type DType uint32

// The dtypes a header may name.
const (
	Uint8            DType = 1
	Uint16           DType = 2
	Uint32           DType = 3
	Uint64           DType = 4
	Float16          DType = 5
	Float32          DType = 6
	Float64          DType = 7
	StringArray      DType = 8 // feature indices only: no fixed item size
	FixedStringArray DType = 9 // feature indices only: no fixed item size
)

var dtypeNames = [...]string{"", "uint8", "uint16", "uint32", "uint64", "float16", "float32", "float64", "string", "fixed_string"}

// Valid reports whether d is one of the nine dtypes of the enum.
func (d DType) Valid() bool { return d >= Uint8 && d <= FixedStringArray }

// Numeric reports whether d is a fixed-size numeric dtype (Uint8..Float64).
func (d DType) Numeric() bool { return d >= Uint8 && d <= Float64 }

// Unsigned reports whether d is one of the unsigned integer dtypes.
func (d DType) Unsigned() bool { return d >= Uint8 && d <= Uint64 }

// ItemSize is the size in bytes of one element, 0 for the string arrays
// and for values outside the enum.
func (d DType) ItemSize() int {
	switch d {
	case Uint8:
		return 1
	case Uint16, Float16:
		return 2
	case Uint32, Float32:
		return 4
	case Uint64, Float64:
		return 8
	}
	return 0
}

// String is numpy's name for the dtype ("float32"), as bionemo maps it.
func (d DType) String() string {
	if d.Valid() {
		return dtypeNames[d]
	}
	return fmt.Sprintf("DType(%d)", uint32(d))
}

// SmallestUint is the smallest unsigned dtype that holds x, as bionemo's
// smallest_uint_dtype picks row_ptr's (x = nnz) and col_ptr's (x = n_genes-1).
func SmallestUint(x uint64) DType {
	switch {
	case x <= math.MaxUint8:
		return Uint8
	case x <= math.MaxUint16:
		return Uint16
	case x <= math.MaxUint32:
		return Uint32
	}
	return Uint64
}

// maxUint is the largest value an unsigned dtype holds.
func maxUint(d DType) uint64 {
	switch d {
	case Uint8:
		return math.MaxUint8
	case Uint16:
		return math.MaxUint16
	case Uint32:
		return math.MaxUint32
	}
	return math.MaxUint64
}

// Sentinel errors, wrapped by *Error.
var (
	// ErrFormat: not an SCDL header or archive (bad magic), or bytes this
	// reader cannot parse (a flag other than 0 or 1, bad UTF-8, trailing
	// bytes, a malformed NPY or Parquet footer).
	ErrFormat = errors.New("not a valid SCDL archive")
	// ErrTruncated: a header or file ends before its content does.
	ErrTruncated = errors.New("truncated SCDL data")
	// ErrUnsupported: a value outside what bionemo-scdl knows (endianness,
	// backend, dtype, array name, NPY dtype).
	ErrUnsupported = errors.New("unsupported SCDL data")
	// ErrCorrupt: parts of the archive disagree (a file's size and the
	// header's length, row_ptr, gene indices, the feature index).
	ErrCorrupt = errors.New("corrupt SCDL archive")
	// ErrEmpty: an archive without cells or without non-zero values, which
	// bionemo-scdl can neither write nor open.
	ErrEmpty = errors.New("empty SCDL archive")
	// ErrInvalid: the writer or MarshalBinary was given something bionemo's
	// writer would refuse, or was misused.
	ErrInvalid = errors.New("invalid SCDL input")
	// ErrNotArchive: an existing output that Overwrite (--force) would
	// replace is not an SCDL archive: Overwrite replaces an archive,
	// never a directory that holds anything else.
	ErrNotArchive = errors.New("not an SCDL archive, so not replaced")
)

// Error locates a problem in an SCDL archive.
type Error struct {
	Path   string // the file concerned, "" when decoding bytes in memory
	Offset int64  // byte offset in that file, or -1 where none applies
	Err    error  // one of the sentinel errors above
	Detail string
}

func (e *Error) Error() string {
	s := ""
	if e.Path != "" {
		s = e.Path + ": "
	}
	if e.Offset >= 0 {
		s += fmt.Sprintf("offset %d: ", e.Offset)
	}
	return s + e.Err.Error() + ": " + e.Detail
}

func (e *Error) Unwrap() error { return e.Err }

func errorf(path string, off int64, kind error, format string, args ...any) *Error {
	return &Error{Path: path, Offset: off, Err: kind, Detail: fmt.Sprintf(format, args...)}
}

// AppendUint64s decodes raw, little-endian elements of the unsigned dtype
// d and appends them to dst.
func AppendUint64s(dst []uint64, d DType, raw []byte) ([]uint64, error) {
	n, err := count(d, raw)
	if err != nil || !d.Unsigned() {
		if err == nil {
			err = fmt.Errorf("scdl: %v is not an unsigned dtype", d)
		}
		return dst, err
	}
	for i := range n {
		dst = append(dst, getUint(d, raw, i))
	}
	return dst, nil
}

// AppendFloat64s decodes raw, little-endian elements of the numeric dtype
// d (integers and floats alike) and appends them to dst as float64.
func AppendFloat64s(dst []float64, d DType, raw []byte) ([]float64, error) {
	n, err := count(d, raw)
	if err != nil {
		return dst, err
	}
	le := binary.LittleEndian
	for i := range n {
		var v float64
		switch d {
		case Float16:
			v = float64(halfToFloat32(le.Uint16(raw[2*i:])))
		case Float32:
			v = float64(math.Float32frombits(le.Uint32(raw[4*i:])))
		case Float64:
			v = math.Float64frombits(le.Uint64(raw[8*i:]))
		default:
			v = float64(getUint(d, raw, i))
		}
		dst = append(dst, v)
	}
	return dst, nil
}

func count(d DType, raw []byte) (int, error) {
	size := d.ItemSize()
	if size == 0 {
		return 0, fmt.Errorf("scdl: %v has no fixed item size", d)
	}
	if len(raw)%size != 0 {
		return 0, fmt.Errorf("scdl: %d bytes are not a whole number of %v elements", len(raw), d)
	}
	return len(raw) / size, nil
}

// getUint reads element i of an unsigned little-endian array.
func getUint(d DType, b []byte, i int) uint64 {
	switch d {
	case Uint8:
		return uint64(b[i])
	case Uint16:
		return uint64(binary.LittleEndian.Uint16(b[2*i:]))
	case Uint32:
		return uint64(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return binary.LittleEndian.Uint64(b[8*i:])
}

// putUint writes v as element i of an unsigned little-endian array.
func putUint(d DType, b []byte, i int, v uint64) {
	switch d {
	case Uint8:
		b[i] = byte(v)
	case Uint16:
		binary.LittleEndian.PutUint16(b[2*i:], uint16(v))
	case Uint32:
		binary.LittleEndian.PutUint32(b[4*i:], uint32(v))
	default:
		binary.LittleEndian.PutUint64(b[8*i:], v)
	}
}

// firstAtLeast returns the index of the first element of an unsigned
// little-endian array that is >= limit, or -1. The loops are per dtype: this
// runs over every gene index when an archive is opened.
func firstAtLeast(d DType, b []byte, limit uint64) int {
	switch d {
	case Uint8:
		for i, v := range b {
			if uint64(v) >= limit {
				return i
			}
		}
	case Uint16:
		for i := 0; i+1 < len(b); i += 2 {
			if uint64(binary.LittleEndian.Uint16(b[i:])) >= limit {
				return i / 2
			}
		}
	case Uint32:
		for i := 0; i+3 < len(b); i += 4 {
			if uint64(binary.LittleEndian.Uint32(b[i:])) >= limit {
				return i / 4
			}
		}
	default:
		for i := 0; i+7 < len(b); i += 8 {
			if binary.LittleEndian.Uint64(b[i:]) >= limit {
				return i / 8
			}
		}
	}
	return -1
}

// halfToFloat32 converts an IEEE 754 binary16 value.
func halfToFloat32(h uint16) float32 {
	sign := uint32(h>>15) << 31
	exp := uint32(h>>10) & 0x1f
	frac := uint32(h) & 0x3ff
	switch {
	case exp == 0x1f: // inf, NaN
		return math.Float32frombits(sign | 0xff<<23 | frac<<13)
	case exp == 0 && frac == 0:
		return math.Float32frombits(sign)
	case exp == 0: // subnormal: normalise
		e := uint32(127 - 15 + 1)
		for frac&0x400 == 0 {
			frac <<= 1
			e--
		}
		return math.Float32frombits(sign | e<<23 | (frac&0x3ff)<<13)
	}
	return math.Float32frombits(sign | (exp+127-15)<<23 | frac<<13)
}
