package tarfile

import (
	"errors"
	"fmt"
)

// Sentinel errors. A scan error is an *Error that wraps one of these, so a
// caller can test the kind with errors.Is and still print where it happened.
var (
	// ErrNotTar: the file does not start with a tar header.
	ErrNotTar = errors.New("not a tar archive")
	// ErrCompressed: the file is gzip, zstd, bzip2, xz, lz4 or compress data.
	ErrCompressed = errors.New("compressed file: decompress first; a compressed tar has no random access")
	// ErrChecksum: a header block's stored checksum does not match its bytes.
	ErrChecksum = errors.New("bad header checksum")
	// ErrTruncated: the file ends inside a header, an extension or a payload.
	ErrTruncated = errors.New("truncated archive")
	// ErrHeader: a header has an invalid field (size, pax record, ...).
	ErrHeader = errors.New("invalid tar header")
)

// Error locates a scan failure: the file, the byte offset of the header block
// concerned, and what is wrong there.
type Error struct {
	Path   string // the shard's path, "" when scanning an unnamed reader
	Offset int64  // byte offset of the header block
	Err    error  // one of the sentinel errors above
	Detail string // what exactly is wrong, for people
}

func (e *Error) Error() string {
	name := e.Path
	if name == "" {
		name = "tar"
	}
	if e.Detail == "" {
		return fmt.Sprintf("%s: offset %d: %v", name, e.Offset, e.Err)
	}
	return fmt.Sprintf("%s: offset %d: %v: %s", name, e.Offset, e.Err, e.Detail)
}

func (e *Error) Unwrap() error { return e.Err }
