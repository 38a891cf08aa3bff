package barecat

import (
	"errors"
	"hash/crc32"

	"github.com/itarconv/itarconv/internal/mapped"
)

// Views holds the bytes of some files as ViewFiles found them.
type Views struct {
	// Data holds each file's bytes, in the order of the files asked for.
	Data    [][]byte
	a       *Archive
	regions []*mapped.Region // the parts of shards mapped for them
}

// ViewFiles returns the bytes of files as ReadFiles does, with the same
// checks of bounds and crc32c, but without copying them where the system
// can map the shards into memory: the files' parts of their shards are
// mapped read-only, and the bytes stay in the system's page cache rather
// than in this process. The bytes are valid until Release (or the
// archive's Close). Where a shard cannot be mapped, the bytes are read
// into memory instead.
//
// The mappings show the shards as they are: a shard rewritten while it is
// read may give bytes other than those checked.
func (a *Archive) ViewFiles(files []File) (*Views, error) {
	for _, f := range files {
		if err := a.check(f); err != nil {
			return nil, err
		}
	}
	v := &Views{a: a, Data: make([][]byte, len(files))}
	// One region per shard, from the first file to the end of the last: a
	// run of files in address order maps exactly their pages.
	type span struct {
		lo, hi int64
		r      *mapped.Region
	}
	spans := map[int]*span{}
	for _, f := range files {
		if f.Size == 0 {
			continue
		}
		s := spans[f.Shard]
		if s == nil {
			s = &span{lo: f.Offset, hi: f.Offset + f.Size}
			spans[f.Shard] = s
		}
		s.lo, s.hi = min(s.lo, f.Offset), max(s.hi, f.Offset+f.Size)
	}
	for shard, s := range spans {
		sf, err := a.shard(shard)
		if err != nil {
			v.unmap()
			return nil, err
		}
		if s.r, err = mapped.Map(sf, s.lo, s.hi-s.lo); err != nil {
			v.unmap()
			return a.readViews(files)
		}
		v.regions = append(v.regions, s.r)
	}
	if !a.track(v) {
		v.unmap()
		return nil, newErr(a.indexPath, "", ErrClosed, "archive closed")
	}
	var cur *File
	err := mapped.Guard(func() error {
		for i := range files {
			cur = &files[i]
			f := cur
			b := []byte{} // an empty file maps nothing; its crc32c is still checked
			if f.Size > 0 {
				b = spans[f.Shard].r.Bytes(f.Offset, f.Size)
			}
			if f.HasCRC {
				if crc := crc32.Checksum(b, castagnoli); crc != f.CRC32C {
					return newErr(a.shardPaths[f.Shard], f.Path, ErrCRC, "the index says %08x, the bytes at offset %d have %08x",
						f.CRC32C, f.Offset, crc)
				}
			}
			v.Data[i] = b
		}
		return nil
	})
	if errors.Is(err, mapped.ErrGone) {
		err = newErr(a.shardPaths[cur.Shard], cur.Path, ErrBounds,
			"bytes %d to %d are gone: the shard shrank after the archive was opened", cur.Offset, cur.Offset+cur.Size)
	}
	if err != nil {
		v.Release()
		return nil, err
	}
	return v, nil
}

// readViews is ViewFiles by reading.
func (a *Archive) readViews(files []File) (*Views, error) {
	data, err := a.ReadFiles(files)
	if err != nil {
		return nil, err
	}
	return &Views{Data: data}, nil // a nil: nothing to unmap
}

// track records v as live, so that Close unmaps it; false if the archive
// is closed.
func (a *Archive) track(v *Views) bool {
	if len(v.regions) == 0 {
		return true
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.closed {
		return false
	}
	if a.views == nil {
		a.views = map[*Views]struct{}{}
	}
	a.views[v] = struct{}{}
	return true
}

// Release gives back what holds the bytes; Data must not be used after.
func (v *Views) Release() {
	if v == nil {
		return
	}
	if v.a == nil { // read, not mapped
		v.Data = nil
		return
	}
	v.a.mu.Lock()
	defer v.a.mu.Unlock()
	if _, live := v.a.views[v]; live { // else Close has unmapped it
		delete(v.a.views, v)
	}
	v.unmap()
}

func (v *Views) unmap() {
	for _, r := range v.regions {
		r.Close()
	}
	v.regions, v.Data = nil, nil
}
