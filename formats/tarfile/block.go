package tarfile

import "fmt"

// Block is one header block read on its own, without the pax or long-name
// headers that may precede it: what a reader that jumps straight to a
// header's offset can see.
type Block struct {
	NameField []byte // the 100-byte name field, up to its first NUL
	Typeflag  byte
	Size      int64 // the size field
	Format    Format
}

// ParseBlock checks a 512-byte header block's checksum and reads its name,
// type and size fields.
func ParseBlock(b []byte) (Block, error) {
	if len(b) < BlockSize {
		return Block{}, fmt.Errorf("short header block: %w", ErrTruncated)
	}
	b = b[:BlockSize]
	if isZeroBlock(b) {
		return Block{}, fmt.Errorf("zero block (end of archive), not a header: %w", ErrHeader)
	}
	if !checksumOK(b) {
		return Block{}, ErrChecksum
	}
	size, ok := parseNumeric(b[offSize : offSize+12])
	if !ok || size < 0 {
		return Block{}, fmt.Errorf("size field is not a number: %w", ErrHeader)
	}
	return Block{
		NameField: append([]byte(nil), cString(b[offName:offName+100])...),
		Typeflag:  b[offTypeflag],
		Size:      size,
		Format:    formatOf(b),
	}, nil
}
