package taridx

import (
	"encoding/binary"
	"errors"
	"fmt"
)

const (
	// HeaderSize is the size of the fixed header.
	HeaderSize = 64
	// RecordSize is the size of one row record.
	RecordSize = 32
	// Magic opens every TARIDX file, NUL-padded to 8 bytes.
	Magic = "TARIDX"
	// Major and Minor are the format version this package writes.
	Major = 1
	Minor = 0
	// FlagContiguous is set when rows are grouped by (keyhash, crashid).
	FlagContiguous = 0x01
	// MaxShards is the number of shards a 16-bit fid can address.
	MaxShards = 1 << 16
	// TarBlock is the distance from a row's offset to its payload.
	TarBlock = 512
)

// Sentinel errors, wrapped by *Error.
var (
	// ErrFormat: not a TARIDX file, or a layout this reader cannot parse.
	ErrFormat = errors.New("not a valid TARIDX file")
	// ErrCorrupt: the header's counts or offsets disagree with the content.
	ErrCorrupt = errors.New("corrupt TARIDX file")
	// ErrVersion: a major version this reader does not know.
	ErrVersion = errors.New("unsupported TARIDX version")
)

// Error locates a problem in a TARIDX file.
type Error struct {
	Path   string
	Offset int64 // byte offset in the file
	Err    error // ErrFormat, ErrCorrupt or ErrVersion
	Detail string
}

func (e *Error) Error() string {
	return fmt.Sprintf("%s: offset %d: %v: %s", e.Path, e.Offset, e.Err, e.Detail)
}

func (e *Error) Unwrap() error { return e.Err }

// Header is the fixed 64-byte header.
type Header struct {
	Major, Minor     uint16
	RecSize, HdrSize uint16
	NStems, NRows    uint64
	NExt, NCrash     uint32
	OffCrash, OffArr uint64
	Flags            uint8
	Reserved         [7]byte
}

// Contiguous reports the contiguity flag.
func (h *Header) Contiguous() bool { return h.Flags&FlagContiguous != 0 }

// MarshalBinary encodes the header in its 64-byte form.
func (h *Header) MarshalBinary() ([]byte, error) {
	b := make([]byte, HeaderSize)
	copy(b, Magic)
	le := binary.LittleEndian
	le.PutUint16(b[8:], h.Major)
	le.PutUint16(b[10:], h.Minor)
	le.PutUint16(b[12:], h.RecSize)
	le.PutUint16(b[14:], h.HdrSize)
	le.PutUint64(b[16:], h.NStems)
	le.PutUint64(b[24:], h.NRows)
	le.PutUint32(b[32:], h.NExt)
	le.PutUint32(b[36:], h.NCrash)
	le.PutUint64(b[40:], h.OffCrash)
	le.PutUint64(b[48:], h.OffArr)
	b[56] = h.Flags
	copy(b[57:], h.Reserved[:])
	return b, nil
}

// decodeHeader decodes the 64 bytes of b; the magic is checked by the caller.
func decodeHeader(b []byte) Header {
	le := binary.LittleEndian
	var h Header
	h.Major = le.Uint16(b[8:])
	h.Minor = le.Uint16(b[10:])
	h.RecSize = le.Uint16(b[12:])
	h.HdrSize = le.Uint16(b[14:])
	h.NStems = le.Uint64(b[16:])
	h.NRows = le.Uint64(b[24:])
	h.NExt = le.Uint32(b[32:])
	h.NCrash = le.Uint32(b[36:])
	h.OffCrash = le.Uint64(b[40:])
	h.OffArr = le.Uint64(b[48:])
	h.Flags = b[56]
	copy(h.Reserved[:], b[57:64])
	return h
}

// Row is one member record.
type Row struct {
	Fid     uint16 // shard position in the fold
	Offset  uint64 // offset of the member's tar header block
	Size    uint64 // payload size
	ExtID   uint16 // index into the extension table
	CrashID uint32 // 0, or 1+index into the crash-stem table
	KeyHash uint64 // xxh64 of the stem
}

// DataOffset is where the row's payload starts in its shard.
func (r Row) DataOffset() uint64 { return r.Offset + TarBlock }

// Key is the sample key the row belongs to.
func (r Row) Key() Key { return Key{r.KeyHash, r.CrashID} }

// Key identifies a sample: rows of one sample share it.
type Key struct {
	Hash    uint64
	CrashID uint32
}

// PutRow encodes r into b[:RecordSize].
func PutRow(b []byte, r Row) {
	le := binary.LittleEndian
	le.PutUint16(b[0:], r.Fid)
	le.PutUint64(b[2:], r.Offset)
	le.PutUint64(b[10:], r.Size)
	le.PutUint16(b[18:], r.ExtID)
	le.PutUint32(b[20:], r.CrashID)
	le.PutUint64(b[24:], r.KeyHash)
}

// DecodeRow decodes b[:RecordSize].
func DecodeRow(b []byte) Row {
	le := binary.LittleEndian
	return Row{
		Fid:     le.Uint16(b[0:]),
		Offset:  le.Uint64(b[2:]),
		Size:    le.Uint64(b[10:]),
		ExtID:   le.Uint16(b[18:]),
		CrashID: le.Uint32(b[20:]),
		KeyHash: le.Uint64(b[24:]),
	}
}
