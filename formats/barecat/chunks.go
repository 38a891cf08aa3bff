package barecat

import (
	"context"
	"hash/crc32"
	"io"
)

// Cursor marks a place in the files of an archive, in one order: a path
// (ByPath), or a shard, offset and row id (ByAddress; the row id tells
// apart files at the same address, such as empty ones).
type Cursor struct {
	Path   string
	Shard  int
	Offset int64
	RowID  int64
}

// Cursors cuts the files, in order, into runs of every files and returns
// the cursor of each run's first file. FilesBetween then reads the runs
// independently, so that several goroutines can share the work.
func (a *Archive) Cursors(ctx context.Context, order Order, every int) ([]Cursor, error) {
	q := `SELECT path, 0, 0, 0 FROM files ORDER BY path`
	if order == ByAddress {
		q = `SELECT '', shard, offset, rowid FROM files ORDER BY shard, offset, rowid`
	}
	rows, err := a.db.QueryContext(ctx, q)
	if err != nil {
		return nil, a.queryErr(ctx, "files", err)
	}
	defer rows.Close()
	var out []Cursor
	for n := 0; rows.Next(); n++ {
		if n%every != 0 {
			continue
		}
		var c Cursor
		if err := rows.Scan(&c.Path, &c.Shard, &c.Offset, &c.RowID); err != nil {
			return nil, a.queryErr(ctx, "files", err)
		}
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		return nil, a.queryErr(ctx, "files", err)
	}
	return out, nil
}

// FilesBetween streams, in order, the files from cursor from (included) to
// cursor to (excluded; nil: to the end).
func (a *Archive) FilesBetween(ctx context.Context, order Order, from Cursor, to *Cursor, fn func(File) error) error {
	var q string
	var args []any
	if order == ByAddress {
		q = `SELECT ` + fileColumns + ` FROM files WHERE (shard, offset, rowid) >= (?, ?, ?)`
		args = []any{from.Shard, from.Offset, from.RowID}
		if to != nil {
			q += ` AND (shard, offset, rowid) < (?, ?, ?)`
			args = append(args, to.Shard, to.Offset, to.RowID)
		}
		q += ` ORDER BY shard, offset, rowid`
	} else {
		q = `SELECT ` + fileColumns + ` FROM files WHERE path >= ?`
		args = []any{from.Path}
		if to != nil {
			q += ` AND path < ?`
			args = append(args, to.Path)
		}
		q += ` ORDER BY path`
	}
	return a.queryFiles(ctx, q, args, func(f File, bad *Error) error {
		if bad != nil {
			return bad
		}
		return fn(f)
	})
}

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
