package barecat

import (
	"hash/crc32"
	"io"
)

// ReadFiles reads the bytes of several files into one new buffer and
// returns a slice of it per file, checking each file's bounds and crc32c
// as Open's reader does. Files that follow each other in a shard (as
// address order gives them) are read with a single read. It is safe for
// concurrent use.
func (a *Archive) ReadFiles(files []File) ([][]byte, error) {
	var total int64
	for _, f := range files {
		if err := a.check(f); err != nil {
			return nil, err
		}
		total += f.Size
	}
	buf := make([]byte, total)
	out := make([][]byte, len(files))
	pos := int64(0)
	for i := 0; i < len(files); {
		j, end := i+1, files[i].Offset+files[i].Size
		for j < len(files) && files[j].Shard == files[i].Shard && files[j].Offset == end {
			end += files[j].Size
			j++
		}
		sf, err := a.shard(files[i].Shard)
		if err != nil {
			return nil, err
		}
		run := buf[pos : pos+end-files[i].Offset]
		if n, err := sf.ReadAt(run, files[i].Offset); n < len(run) {
			if err == nil || err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return nil, newErr(a.shardPaths[files[i].Shard], files[i].Path, ErrBounds, "reading bytes %d to %d: %v", files[i].Offset, end, err)
		}
		for k := i; k < j; k++ {
			f := files[k]
			out[k] = buf[pos : pos+f.Size : pos+f.Size]
			pos += f.Size
			if f.HasCRC {
				if crc := crc32.Checksum(out[k], castagnoli); crc != f.CRC32C {
					return nil, newErr(a.shardPaths[f.Shard], f.Path, ErrCRC, "the index says %08x, the bytes at offset %d have %08x",
						f.CRC32C, f.Offset, crc)
				}
			}
		}
		i = j
	}
	return out, nil
}
