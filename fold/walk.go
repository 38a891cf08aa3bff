package fold

import (
	"context"
	"io"

	"github.com/itarconv/itarconv/formats/tarfile"
	"github.com/itarconv/itarconv/formats/taridx"
)

// headerView is what a shard holds at one header offset: the member whose
// own header it is (full name) and the block's own fields (100-byte name).
type headerView struct {
	member    bool // a member's own header (not a pax, long-name or sparse block)
	regular   bool
	block     bool   // the raw header-block walk (glzn's) stops here
	name      string // full name when member, else the block's name field
	field     string // the block's name field
	size      int64  // payload size (member) or size field (block)
	fieldSize int64  // the block's size field
	typ       byte
}

// headerStream walks one kind of header of a shard in offset order: the
// members (full names), or the raw header blocks as glzn hops from one to
// the next by their size fields.
type headerStream struct {
	path   string
	opts   tarfile.Options
	ctx    context.Context // the walk's, for a remote shard's reads
	f      shardScan
	cur    *tarfile.Member // nil at the end
	skipTo int64           // after reopening past zero blocks: what was seen
	// tolerant: the block walk follows size fields blindly and may derail
	// where the member walk did not; what it saw before still stands.
	tolerant bool
}

func openStream(ctx context.Context, path string, opts tarfile.Options, blocks bool) (*headerStream, error) {
	opts.HeaderBlocks = blocks
	f, err := openScan(ctx, path, opts)
	if err != nil {
		return nil, err
	}
	return &headerStream{ctx: ctx, path: path, opts: opts, f: f, tolerant: blocks}, nil
}

func (h *headerStream) close() {
	if h.f != nil {
		h.f.Close()
		h.f = nil
	}
}

// advance moves to the next header. want is the highest offset a row
// points at (-1 for none): when the archive ends before it, the index was
// built from concatenated archives, and the shard is read on past zero
// blocks as the index was.
func (h *headerStream) advance(want int64) error {
	for {
		m, err := h.f.Next()
		if err == io.EOF {
			if eof := h.f.Offset(); !h.opts.IgnoreZeros && want >= eof {
				h.close()
				h.opts.IgnoreZeros = true
				f, err := openScan(h.ctx, h.path, h.opts)
				if err != nil {
					return err
				}
				h.f, h.skipTo = f, eof
				continue
			}
			h.cur = nil
			return nil
		}
		if err != nil {
			h.cur = nil
			if h.tolerant {
				return nil
			}
			return err
		}
		if m.HeaderOffset < h.skipTo {
			continue
		}
		h.cur = m
		return nil
	}
}

// walkShard merges a shard's headers, read in offset order, with n rows
// sorted by offset (rowOff(k) is row k's): at(k, v) is called for every
// row, with what stands at its offset (nil when no header starts there),
// and, when extra is set, extra(off, v) for every header no row points at.
// Without extra the walk stops after the last row. Memory stays constant:
// nothing is kept of a header once the walk has passed it.
func walkShard(ctx context.Context, path string, opts tarfile.Options, n int, rowOff func(k int) uint64,
	at func(k int, v *headerView) error, extra func(off uint64, v *headerView)) error {
	want := int64(-1)
	if n > 0 {
		want = int64(rowOff(n - 1))
	}
	mem, err := openStream(ctx, path, opts, false)
	if err != nil {
		return err
	}
	defer mem.close()
	blk, err := openStream(ctx, path, opts, true)
	if err != nil {
		return err
	}
	defer blk.close()
	if err := mem.advance(want); err != nil {
		return err
	}
	if err := blk.advance(want); err != nil {
		return err
	}
	k := 0
	for mem.cur != nil || blk.cur != nil {
		if extra == nil && k == n {
			return nil
		}
		if k%4096 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		var v headerView
		off, err := nextHeader(mem, blk, want, &v)
		if err != nil {
			return err
		}
		matched := false
		if k, matched, err = rowsAt(k, n, off, rowOff, at, &v); err != nil {
			return err
		}
		if !matched && extra != nil {
			extra(uint64(off), &v)
		}
	}
	for ; k < n; k++ {
		if err := at(k, nil); err != nil {
			return err
		}
	}
	return nil
}

// nextHeader fills v with what stands at the lowest offset either stream
// is at, the member's header and the raw block's merged (both walks stop
// at a plain member's header; only one at a pax or long-name block, or
// where the block walk derailed), advances the streams that stood there
// and returns that offset.
func nextHeader(mem, blk *headerStream, want int64, v *headerView) (int64, error) {
	off := int64(-1)
	if mem.cur != nil {
		off = mem.cur.HeaderOffset
	}
	if blk.cur != nil && (off < 0 || blk.cur.HeaderOffset < off) {
		off = blk.cur.HeaderOffset
	}
	if m := mem.cur; m != nil && m.HeaderOffset == off {
		*v = headerView{member: true, regular: m.IsRegular(), name: taridx.DecodeName(m.Name), size: m.Size, typ: m.Typeflag}
		if err := mem.advance(want); err != nil {
			return off, err
		}
	}
	if b := blk.cur; b != nil && b.HeaderOffset == off {
		if !v.member {
			v.typ, v.size = b.Typeflag, b.Size
		}
		v.block, v.field, v.fieldSize = true, taridx.DecodeName(b.Name), b.Size
		if err := blk.advance(want); err != nil {
			return off, err
		}
	}
	return off, nil
}

// rowsAt calls at for the rows from k on that point before off (nothing
// stands there: at gets nil) and those that point at off (at gets v), and
// returns the next row and whether any pointed at off.
func rowsAt(k, n int, off int64, rowOff func(k int) uint64, at func(k int, v *headerView) error, v *headerView) (int, bool, error) {
	for k < n && rowOff(k) < uint64(off) {
		if err := at(k, nil); err != nil {
			return k, false, err
		}
		k++
	}
	matched := false
	for k < n && rowOff(k) == uint64(off) {
		if err := at(k, v); err != nil {
			return k, matched, err
		}
		k++
		matched = true
	}
	return k, matched, nil
}
