package tbl

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"strings"
)

// Sizes of the fixed structures.
const (
	HeaderSizeV1 = 32 // v1 header
	EntrySizeV1  = 16 // v1 index entry
	HeaderSizeV2 = 64 // v2 header
	EntrySizeV2  = 24 // v2 index entry
	MetaBlockLen = 16 // v2 metadata block header, before the block's bytes
)

// The magics: "TBL" and the version byte.
const (
	MagicV1 = "TBL\x01"
	MagicV2 = "TBL\x02"
)

// Header flags (v2).
const (
	// FlagCompressed: the writer had LZ4 enabled. It says nothing of any one
	// sample: TurboLoader sets it even when no sample came out smaller.
	FlagCompressed = 1 << 0
	// FlagHasMetadata: the file has a metadata section.
	FlagHasMetadata = 1 << 1
	// FlagHasChecksums: the entries' CRC-16 fields are valid. TurboLoader
	// always sets it, and only checks sample CRCs when it is set.
	FlagHasChecksums = 1 << 2

	knownHeaderFlags = FlagCompressed | FlagHasMetadata | FlagHasChecksums
)

// Sample flags (v2).
const (
	// SampleCompressed: the stored bytes are one raw LZ4 block.
	SampleCompressed = 1 << 0
	// SampleHasMetadata: the metadata section holds entries for the sample.
	SampleHasMetadata = 1 << 1
	// SampleVerified is defined by TurboLoader but never written by it.
	SampleVerified = 1 << 2

	knownSampleFlags = SampleCompressed | SampleHasMetadata | SampleVerified
)

// MaxSampleSize is one more than the largest sample a TBL file can hold:
// sizes are 32-bit.
const MaxSampleSize = 1 << 32

// MaxSamplesV1 and MaxSamplesV2 are the most samples a file can index: the
// 32-bit header_size field must hold the size of the header and index.
const (
	MaxSamplesV1 = (1<<32 - 1 - HeaderSizeV1) / EntrySizeV1
	MaxSamplesV2 = (1<<32 - 1 - HeaderSizeV2) / EntrySizeV2
)

// Sentinel errors, wrapped by *Error.
var (
	// ErrFormat: not a TBL file.
	ErrFormat = errors.New("not a TBL file")
	// ErrVersion: a TBL version this package does not know, or a version
	// field that contradicts the magic.
	ErrVersion = errors.New("unsupported TBL version")
	// ErrCorrupt: fields that contradict each other or the layout.
	ErrCorrupt = errors.New("corrupt TBL file")
	// ErrChecksum: a header CRC-32 or sample CRC-16 does not match.
	ErrChecksum = errors.New("TBL checksum mismatch")
	// ErrTruncated: the file ends before what its header or index describe.
	ErrTruncated = errors.New("truncated TBL file")
	// ErrUnrepresentable: the Writer was given something the format cannot
	// hold (a sample of 4 GiB or more, too many samples, metadata in v1).
	ErrUnrepresentable = errors.New("cannot be represented in a TBL file")
	// ErrChanged: a source gave other samples, or other bytes, when they
	// were written than when they were counted (it changed meanwhile).
	ErrChanged = errors.New("the source changed between counting and writing")
)

// Error locates a problem in a TBL file.
//
// Offset is the byte offset in the file of what is wrong: the header or index
// field when the index is inconsistent, the sample's data when its bytes are
// (checksum, LZ4 block), the end of the file when it is too short.
type Error struct {
	Path   string
	Sample int   // the sample concerned, or -1
	Offset int64 // byte offset in the file
	Err    error // one of the sentinel errors
	Detail string
}

func (e *Error) Error() string {
	if e.Sample >= 0 {
		return fmt.Sprintf("%s: offset %d: sample %d: %v: %s", e.Path, e.Offset, e.Sample, e.Err, e.Detail)
	}
	return fmt.Sprintf("%s: offset %d: %v: %s", e.Path, e.Offset, e.Err, e.Detail)
}

func (e *Error) Unwrap() error { return e.Err }

// Format is a sample's format code.
type Format uint8

// Format codes. Version 1 knows FormatUnknown to TIFF.
const (
	FormatUnknown Format = iota
	JPEG
	PNG
	WEBP
	BMP
	TIFF
	MP4
	AVI
	RAWU8 // decoded RGB bytes, height x width x 3
)

var formatNames = [...]string{"UNKNOWN", "JPEG", "PNG", "WEBP", "BMP", "TIFF", "MP4", "AVI", "RAW_U8"}
var formatExts = [...]string{"bin", "jpg", "png", "webp", "bmp", "tiff", "mp4", "avi", "raw"}

func (f Format) String() string {
	if int(f) < len(formatNames) {
		return formatNames[f]
	}
	return fmt.Sprintf("Format(%d)", uint8(f))
}

// Ext is a file extension, without the dot, for a sample of this format:
// "bin" for FormatUnknown and for codes this package does not know.
func (f Format) Ext() string {
	if int(f) < len(formatExts) {
		return formatExts[f]
	}
	return "bin"
}

// FormatFromName maps a file name to a format by the text after its last
// dot, lowercased, as TurboLoader's converters do: jpg and jpeg, png, webp,
// bmp, tif and tiff, mp4, avi. Anything else, or no dot, is FormatUnknown.
// As in TurboLoader, the dot is searched in the whole name, so "a.jpg/b" has
// the extension "jpg/b".
func FormatFromName(name string) Format {
	dot := strings.LastIndexByte(name, '.')
	if dot < 0 {
		return FormatUnknown
	}
	switch asciiLower(name[dot+1:]) {
	case "jpg", "jpeg":
		return JPEG
	case "png":
		return PNG
	case "webp":
		return WEBP
	case "bmp":
		return BMP
	case "tif", "tiff":
		return TIFF
	case "mp4":
		return MP4
	case "avi":
		return AVI
	}
	return FormatUnknown
}

// asciiLower lowercases A-Z only, as C's tolower does: Unicode case folding
// would map, say, the Kelvin sign to "k".
func asciiLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

// Header is a file's header, both versions in one: fields version 1 lacks
// are zero.
type Header struct {
	Version        int
	NumSamples     uint64
	HeaderSize     uint32 // header plus index, where the data starts
	MetadataOffset uint64 // v2: 0 without metadata
	MetadataSize   uint64 // v2
	Flags          uint32 // v2: FlagCompressed, ...
	CRC32          uint32 // v2: zlib CRC-32 of the header with this field zeroed
}

// headerLen and entryLen are the sizes of the structures of a version.
func headerLen(version int) int {
	if version == 1 {
		return HeaderSizeV1
	}
	return HeaderSizeV2
}

func entryLen(version int) int {
	if version == 1 {
		return EntrySizeV1
	}
	return EntrySizeV2
}

// marshalHeader encodes h (with reserved bytes zero) and, for v2, computes
// and stores its CRC-32, which it also sets in h.
func marshalHeader(h *Header) []byte {
	le := binary.LittleEndian
	if h.Version == 1 {
		b := make([]byte, HeaderSizeV1)
		copy(b, MagicV1)
		le.PutUint32(b[4:], 1)
		le.PutUint64(b[8:], h.NumSamples)
		le.PutUint32(b[16:], h.HeaderSize)
		return b
	}
	b := make([]byte, HeaderSizeV2)
	copy(b, MagicV2)
	le.PutUint32(b[4:], 2)
	le.PutUint64(b[8:], h.NumSamples)
	le.PutUint32(b[16:], h.HeaderSize)
	le.PutUint64(b[24:], h.MetadataOffset)
	le.PutUint64(b[32:], h.MetadataSize)
	le.PutUint32(b[40:], h.Flags)
	h.CRC32 = crc32.ChecksumIEEE(b)
	le.PutUint32(b[44:], h.CRC32)
	return b
}

// headerCRC is the v2 header's CRC-32 computed over b[:64] with the CRC
// field taken as zero.
func headerCRC(b []byte) uint32 {
	var zero [4]byte
	c := crc32.Update(0, crc32.IEEETable, b[:44])
	c = crc32.Update(c, crc32.IEEETable, zero[:])
	return crc32.Update(c, crc32.IEEETable, b[48:HeaderSizeV2])
}

// putEntry encodes sample s into b (entryLen bytes).
func putEntry(b []byte, version int, s *Sample) {
	le := binary.LittleEndian
	le.PutUint64(b[0:], uint64(s.Offset))
	le.PutUint32(b[8:], s.StoredSize)
	if version == 1 {
		b[12] = byte(s.Format)
		b[13], b[14], b[15] = 0, 0, 0
		return
	}
	le.PutUint32(b[12:], s.Size)
	le.PutUint16(b[16:], s.Width)
	le.PutUint16(b[18:], s.Height)
	b[20] = byte(s.Format)
	b[21] = s.Flags
	le.PutUint16(b[22:], s.CRC16)
}

// decodeEntry decodes entry i from b. For v1, Size is StoredSize: nothing is
// compressed.
func decodeEntry(b []byte, version, i int) Sample {
	le := binary.LittleEndian
	s := Sample{
		Index:      i,
		Offset:     int64(le.Uint64(b[0:])), // checked by Open: below 2^63
		StoredSize: le.Uint32(b[8:]),
	}
	if version == 1 {
		s.Size = s.StoredSize
		s.Format = Format(b[12])
		return s
	}
	s.Size = le.Uint32(b[12:])
	s.Width = le.Uint16(b[16:])
	s.Height = le.Uint16(b[18:])
	s.Format = Format(b[20])
	s.Flags = b[21]
	s.CRC16 = le.Uint16(b[22:])
	s.Compressed = s.Flags&SampleCompressed != 0
	if !s.Compressed && s.Size == 0 {
		// The format's header documents an uncompressed_size of 0 as "not
		// compressed", and TurboLoader's reader accepts it: the size is the
		// stored size.
		s.Size = s.StoredSize
	}
	return s
}

// Sample is one index entry.
type Sample struct {
	Index      int
	Offset     int64  // where the stored bytes start in the file
	StoredSize uint32 // bytes in the file: the LZ4 block when Compressed
	Size       uint32 // uncompressed size (v2's uncompressed_size; v1: StoredSize)
	Width      uint16 // v2: image width, 0 when unknown
	Height     uint16 // v2: image height, 0 when unknown
	Format     Format
	Flags      uint8  // v2: SampleCompressed, SampleHasMetadata, SampleVerified
	CRC16      uint16 // v2: CRC-16/MODBUS of the uncompressed bytes
	Compressed bool   // Flags has SampleCompressed
	// Meta holds the sample's metadata entries where a caller attaches them;
	// Reader.Sample leaves it nil (Reader.Metadata reads them).
	Meta []MetaEntry
}
