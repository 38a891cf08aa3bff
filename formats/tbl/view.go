package tbl

import (
	"errors"
	"fmt"

	"github.com/itarconv/itarconv/internal/mapped"
	"github.com/pierrec/lz4/v4"
)

// Views holds the bytes of a run of samples as ViewSamples found them.
type Views struct {
	// Data holds each sample's uncompressed bytes, in order.
	Data   [][]byte
	region *mapped.Region
}

// ViewSamples returns the uncompressed bytes of samples from to to-1,
// checked as ReadSample checks them. Where the file can be mapped into
// memory, stored samples are not copied: their bytes point into a
// read-only mapping of the file, valid until Release, and stay in the
// system's page cache rather than in this process. Compressed samples are
// decoded into new memory.
func (r *Reader) ViewSamples(from, to int) (*Views, error) {
	if from < 0 || to > r.Len() || from > to {
		return nil, fmt.Errorf("%s: samples %d to %d of %d", r.path, from, to, r.Len())
	}
	v := &Views{Data: make([][]byte, to-from)}
	lo, hi := int64(-1), int64(0)
	var decoded int
	for i := from; i < to; i++ {
		s, err := r.entry(i)
		if err != nil {
			return nil, err
		}
		if s.StoredSize > 0 {
			if lo < 0 {
				lo = s.Offset
			}
			lo, hi = min(lo, s.Offset), max(hi, s.Offset+int64(s.StoredSize))
		}
		if s.Compressed {
			decoded += int(s.Size)
		}
	}
	if lo < 0 || r.f == nil {
		return r.readViews(v, from, to)
	}
	var err error
	if v.region, err = mapped.Map(r.f, lo, hi-lo); err != nil {
		if errors.Is(err, mapped.ErrUnsupported) {
			return r.readViews(v, from, to)
		}
		return nil, err
	}
	arena := make([]byte, 0, decoded) // one allocation for the chunk's decoded samples
	var s Sample
	err = mapped.Guard(func() error {
		for i := from; i < to; i++ {
			var err error
			if s, err = r.entry(i); err != nil {
				return err
			}
			data := []byte{}
			if s.StoredSize > 0 {
				// (an empty sample's offset may lie outside the region)
				data = v.region.Bytes(s.Offset, int64(s.StoredSize))
			}
			if s.Compressed {
				n := len(arena)
				out := arena[n : n+int(s.Size)]
				if err := r.decode(&s, data, out); err != nil {
					return err
				}
				arena, data = arena[:n+len(out)], out
			}
			if err := r.checkCRC(&s, crc16Update(crc16Init, data)); err != nil {
				return err
			}
			v.Data[i-from] = data
		}
		return nil
	})
	if errors.Is(err, mapped.ErrGone) {
		err = r.fail(ErrTruncated, s.Index, s.Offset, "the file shrank while it was read")
	}
	if err != nil {
		v.Release()
		return nil, err
	}
	return v, nil
}

// readViews is ViewSamples by reading.
func (r *Reader) readViews(v *Views, from, to int) (*Views, error) {
	for i := from; i < to; i++ {
		data, err := r.ReadSample(i, nil)
		if err != nil {
			return nil, err
		}
		v.Data[i-from] = data
	}
	return v, nil
}

// decode decodes sample s's LZ4 block into out, which must take exactly
// its uncompressed size.
func (r *Reader) decode(s *Sample, block, out []byte) error {
	n, err := lz4.UncompressBlock(block, out)
	if err != nil {
		return r.fail(ErrCorrupt, s.Index, s.Offset, "LZ4 block of %d bytes does not decode to uncompressed_size %d bytes: %v", s.StoredSize, s.Size, err)
	}
	if n != len(out) {
		return r.fail(ErrCorrupt, s.Index, s.Offset, "LZ4 block of %d bytes decodes to %d bytes, uncompressed_size is %d", s.StoredSize, n, s.Size)
	}
	return nil
}

// Release gives back the mapping; Data must not be used afterwards.
func (v *Views) Release() {
	if v != nil {
		v.region.Close()
		v.Data = nil
	}
}
