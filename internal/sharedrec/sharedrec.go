package sharedrec

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"os"
	"path/filepath"
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Seal returns content with the CRC-32C of name and content appended.
func Seal(name string, content []byte) []byte {
	sum := crc32.Update(crc32.Checksum([]byte(name), castagnoli), castagnoli, content)
	return binary.LittleEndian.AppendUint32(content, sum)
}

// Put writes the record name in dir, leaving things as they are where
// that fails. The temporary file's name begins with tmpPrefix (a name the
// directory's cleaning removes).
func Put(dir, name, tmpPrefix string, content []byte) {
	f, err := os.CreateTemp(dir, tmpPrefix+"*")
	if err != nil {
		return
	}
	_, err = f.Write(Seal(name, content))
	if cerr := f.Close(); err != nil || cerr != nil || os.Rename(f.Name(), filepath.Join(dir, name)) != nil {
		os.Remove(f.Name())
	}
}

// Get reads the record name in dir: its content, or nil where there is
// none whole, or it is longer than max bytes.
func Get(dir, name string, max int) []byte {
	f, err := os.Open(filepath.Join(dir, name))
	if err != nil {
		return nil
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil || st.Size() < 4 || st.Size() > int64(max)+4 {
		return nil
	}
	b := make([]byte, st.Size())
	if n, _ := f.ReadAt(b, 0); n != len(b) {
		return nil
	}
	if !bytes.Equal(Seal(name, bytes.Clone(b[:len(b)-4])), b) {
		return nil
	}
	return b[:len(b)-4]
}
