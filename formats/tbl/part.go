package tbl

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/itarconv/itarconv/dataset"
	"github.com/itarconv/itarconv/internal/safefile"
)

// A partitioned run writes a TBL file in N tasks: each writes a part, a
// directory holding
//
//	part.tbl       exactly what WriteRows writes over the task's rows alone
//	trailing.meta  only when the task's last row is a metadata member: its
//	               blocks, in the layout of the metadata section (sample 0)
//	part.json      the part's record (partInfo), written last
//
// and MergeParts joins them. A TBL file's whole-file decisions are few:
// the sample count (which places the data, so every offset), the header's
// metadata flag, offset and size, and the sample numbers of the metadata
// blocks. MergeParts recomputes them all from the parts' headers and
// indexes, and rewrites the index and the metadata block headers, which
// are small; the samples' bytes are stored in part.tbl exactly as they
// appear in the output (checksum, dimensions and LZ4 depend on the sample
// alone), so it copies them as ranges.
//
// The one decision that crosses a task boundary is the pairing of a
// metadata member with the sample after it: a task that ends on a member
// cannot know whether the next task opens with its sample. Its part.tbl
// has the member as an ordinary sample (what WriteRows does with a member
// nothing follows), its last; part.json says so and names the member, and
// every part records its first row as the pairing sees it. MergeParts then
// decides as the single run would: if the next part with any row opens
// with the member's sample, the member's sample and entry are dropped from
// the end of its part and its blocks (trailing.meta) replace those of the
// first sample of the other.
const (
	partTBLName      = "part.tbl"
	partInfoName     = "part.json"
	partTrailingName = "trailing.meta"

	partFormat = "itarconv-tbl-part"
	// partVersion is the version of the part layout and record. A merge
	// refuses parts of another version rather than guess.
	partVersion = 1
	// partInfoMax bounds part.json: it holds two names and a few counts.
	partInfoMax = 16 << 20
)

// ErrPart is wrapped by every error MergeParts returns about a part it
// cannot use: a record of another version or options, a file cut short or
// changed since the part was written, fields that contradict each other.
var ErrPart = errors.New("unusable part of a partitioned TBL run")

// PartStats describes a part WritePart wrote.
type PartStats struct {
	Dir string `json:"dir"`
	// RowsStats are the part's own figures, as WriteRows gives them over
	// the task's rows (Output is the part's part.tbl). The merged file's
	// may differ by a metadata member paired across a task boundary.
	RowsStats
	// PendingMember tells that the task's last row is a metadata member,
	// which MergeParts gives to the next task's first sample if that is
	// the sample it is named after.
	PendingMember bool `json:"pending_member"`
}

// partEdges is what writeRows tells WritePart of the rows at the ends of
// a task's share: the first row, and the metadata member left waiting
// after the last.
type partEdges struct {
	seen  bool
	first edgeRow
	last  *pendingMeta
}

// edgeRow is a part's first row, as the pairing of metadata members sees
// it.
type edgeRow struct {
	Name   []byte `json:"name"` // raw bytes: names need not be UTF-8
	Sample bool   `json:"sample"`
	Meta   bool   `json:"metadata_member"`
}

// trailingMember is the metadata member a part ends on.
type trailingMember struct {
	Name   []byte `json:"name"`
	Blocks int64  `json:"blocks"` // in trailing.meta
	Size   int64  `json:"size"`   // trailing.meta's size in bytes
	// NoBlocks: the member states no blocks (Member.Stated is false).
	NoBlocks bool `json:"no_blocks,omitempty"`
	// The index fields it gives (Member), where it gives them.
	Format *uint8  `json:"format,omitempty"`
	Width  *uint16 `json:"width,omitempty"`
	Height *uint16 `json:"height,omitempty"`
}

// member is what the trailing member says, its blocks aside.
func (t *trailingMember) member() Member {
	m := Member{Stated: !t.NoBlocks}
	if t.Format != nil {
		m.Format, m.HasFormat = Format(*t.Format), true
	}
	if t.Width != nil && t.Height != nil {
		m.Width, m.Height, m.HasDims = *t.Width, *t.Height, true
	}
	return m
}

// partInfo is part.json.
type partInfo struct {
	Format        string `json:"format"`
	PartVersion   int    `json:"part_version"`
	TBLVersion    int    `json:"tbl_version"`
	LZ4           bool   `json:"lz4"`
	NoNames       bool   `json:"no_names"`
	NoMetaMembers bool   `json:"no_meta_members"`
	Samples       int64  `json:"samples"`   // in part.tbl
	FileSize      int64  `json:"file_size"` // part.tbl's size
	// First is nil when the task had no rows at all: a member waiting
	// before it then waits on for the next part.
	First       *edgeRow         `json:"first_row,omitempty"`
	Trailing    *trailingMember  `json:"trailing_member,omitempty"`
	Skipped     map[string]int64 `json:"skipped"`
	MetaMembers int64            `json:"metadata_members"`
	MetaDropped int64            `json:"metadata_dropped"`
	// InPlace is set for a part whose samples were written in place into
	// the run's shared data file (WriteRange): it has no part.tbl, and
	// Samples counts the samples it wrote there.
	InPlace *inPlace `json:"in_place,omitempty"`
}

// WritePart writes one task's part of a partitioned run into dir, an
// empty directory the caller made: what MergeParts needs to join this
// task's rows (a contiguous share of the whole dataset's rows, in order,
// such as dataset.Slice gives) with the other tasks' into exactly what
// WriteRows writes over all the rows. newSource and opts are as for
// WriteRows (Select sees the shard numbers of the sources newSource
// makes); every task of a run, and the merge, must be given the same
// Version, LZ4, NoNames and NoMetaMembers.
func WritePart(ctx context.Context, newSource func(counting bool) (dataset.PayloadSource, error), dir string, opts RowsOptions) (*PartStats, error) {
	if opts.Version == 0 {
		opts.Version = 2
	}
	if _, err := os.Stat(filepath.Join(dir, partInfoName)); err == nil {
		return nil, fmt.Errorf("writing a TBL part in %s: it already holds one", dir)
	}
	edges := &partEdges{}
	tblPath := filepath.Join(dir, partTBLName)
	st, err := writeRows(ctx, newSource, tblPath, opts, edges)
	if err != nil {
		return nil, err
	}
	fi, err := os.Stat(tblPath)
	if err != nil {
		return nil, err
	}
	info := partInfo{
		Format: partFormat, PartVersion: partVersion,
		TBLVersion: opts.Version, LZ4: opts.LZ4, NoNames: opts.NoNames, NoMetaMembers: opts.NoMetaMembers,
		Samples: st.Samples, FileSize: fi.Size(),
		Skipped: st.Skipped, MetaMembers: st.MetaMembers, MetaDropped: st.MetaDropped,
	}
	if edges.seen {
		info.First = &edges.first
	}
	if m := edges.last; m != nil {
		mm := &m.member
		blocks := appendBlocks(nil, 0, mm.Blocks)
		if err := writeWhole(filepath.Join(dir, partTrailingName), blocks); err != nil {
			return nil, err
		}
		t := &trailingMember{Name: []byte(m.name), Blocks: int64(len(mm.Blocks)), Size: int64(len(blocks)), NoBlocks: !mm.Stated}
		if mm.HasFormat {
			f := uint8(mm.Format)
			t.Format = &f
		}
		if mm.HasDims {
			t.Width, t.Height = &mm.Width, &mm.Height
		}
		info.Trailing = t
	}
	data, err := json.MarshalIndent(&info, "", "  ")
	if err != nil {
		return nil, err
	}
	// The record last: a part without it is no part.
	if err := writeWhole(filepath.Join(dir, partInfoName), append(data, '\n')); err != nil {
		return nil, err
	}
	return &PartStats{Dir: dir, RowsStats: *st, PendingMember: info.Trailing != nil}, nil
}

// writeWhole writes a small file under a temporary name and renames it
// into place.
func writeWhole(path string, data []byte) error {
	f, err := safefile.Create(path)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Abort()
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return f.Commit()
}

// appendBlocks appends blocks to b as the metadata section lays them out,
// each with a 16-byte header naming sample.
func appendBlocks(b []byte, sample uint64, blocks []MetaEntry) []byte {
	for _, m := range blocks {
		b = appendBlockHeader(b, sample, uint32(len(m.Data)), m.Type)
		b = append(b, m.Data...)
	}
	return b
}

// appendBlockHeader appends a metadata block's header (as Writer.addMeta
// writes it).
func appendBlockHeader(b []byte, sample uint64, size uint32, typ uint16) []byte {
	var h [MetaBlockLen]byte
	le := binary.LittleEndian
	le.PutUint64(h[0:], sample)
	le.PutUint32(h[8:], size)
	le.PutUint16(h[12:], typ)
	return append(b, h[:]...)
}

// parseBlocks reads the blocks of a trailing.meta file, all of sample 0.
func parseBlocks(data []byte, want int64) ([]MetaEntry, error) {
	var blocks []MetaEntry
	le := binary.LittleEndian
	for off := 0; off < len(data); {
		if len(data)-off < MetaBlockLen {
			return nil, fmt.Errorf("offset %d: a block header cut short (%d of %d bytes)", off, len(data)-off, MetaBlockLen)
		}
		h := data[off : off+MetaBlockLen]
		sample, size, typ := le.Uint64(h), le.Uint32(h[8:]), le.Uint16(h[12:])
		if sample != 0 || h[14] != 0 || h[15] != 0 {
			return nil, fmt.Errorf("offset %d: a block header of sample %d, reserved bytes %x (want sample 0, zeros)", off, sample, h[14:16])
		}
		off += MetaBlockLen
		if int64(size) > int64(len(data)-off) {
			return nil, fmt.Errorf("offset %d: a block of %d bytes, %d left", off, size, len(data)-off)
		}
		blocks = append(blocks, MetaEntry{Type: typ, Data: data[off : off+int(size) : off+int(size)]})
		off += int(size)
	}
	if int64(len(blocks)) != want {
		return nil, fmt.Errorf("%d blocks, the part recorded %d", len(blocks), want)
	}
	return blocks, nil
}

// decodePartInfo parses and checks part.json on its own (the part's files
// are checked against it by the merge).
func decodePartInfo(data []byte) (*partInfo, error) {
	if len(data) > partInfoMax {
		return nil, fmt.Errorf("%d bytes: not a part record (at most %d)", len(data), partInfoMax)
	}
	// The format and version first, leniently: a part of another version
	// is reported as such, not as a field this reader does not know.
	var head struct {
		Format      string `json:"format"`
		PartVersion int    `json:"part_version"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		return nil, fmt.Errorf("not a part record: %v", err)
	}
	if head.Format != partFormat {
		return nil, fmt.Errorf("not a part record: format %q (want %q)", head.Format, partFormat)
	}
	if head.PartVersion != partVersion {
		return nil, fmt.Errorf("a part of format version %d: this merge reads version %d", head.PartVersion, partVersion)
	}
	info := new(partInfo)
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(info); err != nil {
		return nil, fmt.Errorf("part record: %v", err)
	}
	if dec.More() {
		return nil, errors.New("part record: data after the record")
	}
	if err := info.check(); err != nil {
		return nil, fmt.Errorf("part record: %v", err)
	}
	return info, nil
}

// check refuses a record whose fields contradict each other.
func (p *partInfo) check() error {
	limit := int64(MaxSamplesV2)
	if p.TBLVersion == 1 {
		limit = MaxSamplesV1
	}
	switch {
	case p.TBLVersion != 1 && p.TBLVersion != 2:
		return fmt.Errorf("TBL version %d", p.TBLVersion)
	case p.TBLVersion == 1 && p.LZ4:
		return errors.New("TBL version 1 with LZ4")
	case p.Samples < 0 || p.Samples > limit:
		return fmt.Errorf("%d samples", p.Samples)
	case p.InPlace == nil && p.FileSize < int64(headerLen(p.TBLVersion))+p.Samples*int64(entryLen(p.TBLVersion)):
		return fmt.Errorf("a file of %d bytes for %d samples", p.FileSize, p.Samples)
	case p.Samples > 0 && p.First == nil:
		return fmt.Errorf("%d samples but no first row", p.Samples)
	case p.MetaMembers < 0 || p.MetaDropped < 0 || p.MetaMembers > p.Samples || p.MetaDropped > p.MetaMembers:
		return fmt.Errorf("%d metadata members, %d dropped, for %d samples", p.MetaMembers, p.MetaDropped, p.Samples)
	}
	if ip := p.InPlace; ip != nil {
		hdr, ent := int64(headerLen(p.TBLVersion)), int64(entryLen(p.TBLVersion))
		switch {
		case p.LZ4:
			return errors.New("written in place with LZ4")
		case !filepath.IsAbs(ip.Data) || ip.Layout == "":
			return fmt.Errorf("in place into %q, layout %q", ip.Data, ip.Layout)
		case ip.Total < 0 || ip.Total > limit || ip.First < 0 || ip.First > ip.Total-p.Samples:
			return fmt.Errorf("samples %d to %d of %d", ip.First, ip.First+p.Samples, ip.Total)
		case ip.DataSize < 0 || ip.DataBytes < 0 || ip.MetaSize < 0 || ip.DataBytes > ip.DataSize:
			return fmt.Errorf("%d bytes of %d, %d of metadata", ip.DataBytes, ip.DataSize, ip.MetaSize)
		case ip.DataOffset < hdr+ip.Total*ent || ip.DataOffset-(hdr+ip.Total*ent) > ip.DataSize-ip.DataBytes:
			return fmt.Errorf("data at offset %d, %d bytes, in a file of %d samples and %d bytes", ip.DataOffset, ip.DataBytes, ip.Total, ip.DataSize)
		case ip.TrailPaired != (p.Trailing != nil):
			return fmt.Errorf("a trailing member paired %v, recorded %v", ip.TrailPaired, p.Trailing != nil)
		}
	}
	for reason, n := range p.Skipped {
		if n <= 0 {
			return fmt.Errorf("%d rows skipped as %q", n, reason)
		}
	}
	if t := p.Trailing; t != nil {
		switch {
		case p.NoMetaMembers:
			return errors.New("a trailing metadata member, with metadata members off")
		case p.Samples < 1 && p.InPlace == nil || p.First == nil:
			return errors.New("a trailing metadata member in a part without samples")
		case !bytes.HasSuffix(t.Name, []byte(MetaSuffix)):
			return fmt.Errorf("a trailing metadata member named %q", t.Name)
		case t.Blocks < 0 || t.Size < MetaBlockLen*t.Blocks || (t.Blocks == 0) != (t.Size == 0):
			return fmt.Errorf("a trailing metadata member of %d blocks in %d bytes", t.Blocks, t.Size)
		}
	}
	return nil
}

// options tells whether the part was written with opts' format options.
func (p *partInfo) options(opts RowsOptions) error {
	if p.TBLVersion != opts.Version || p.LZ4 != opts.LZ4 || p.NoNames != opts.NoNames || p.NoMetaMembers != opts.NoMetaMembers {
		return fmt.Errorf("written as TBL v%d, lz4 %v, no names %v, no metadata members %v; the merge asks for v%d, lz4 %v, no names %v, no metadata members %v",
			p.TBLVersion, p.LZ4, p.NoNames, p.NoMetaMembers, opts.Version, opts.LZ4, opts.NoNames, opts.NoMetaMembers)
	}
	return nil
}
