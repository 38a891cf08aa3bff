package parquet

import (
	"encoding/binary"
	"fmt"
	"io"

	"github.com/parquet-go/parquet-go/encoding/thrift"
	"github.com/parquet-go/parquet-go/format"
)

// parquet-go allocates what a page header claims (its sizes, the lengths
// of its statistics) before it reads the page, and its LZ4 decoder grows
// its output without bound on damaged bytes. A row group's pages are so
// checked here before parquet-go reads them: each header decodes within
// the bytes that follow it (through parquet-go's own Thrift decoder, over
// those bytes), each page lies inside its column chunk, an uncompressed
// page is as large as it claims, a compressed one at most maxPage, and a
// Snappy page's own length is the page's. LZ4 pages are refused.

// maxPage bounds a page's uncompressed size: far above any page a writer
// makes (1 MiB is usual; a page holds a value whole, an image of 256 MiB).
const maxPage = 256 << 20

// maxHeader bounds a page header (statistics included).
const maxHeader = 1 << 20

// checkCodecs refuses a file whose column chunks use a codec whose
// decoder parquet-go does not bound.
func (f *File) checkCodecs() error {
	for i, rg := range f.pf.Metadata().RowGroups {
		for _, c := range rg.Columns {
			switch c.MetaData.Codec {
			case format.Uncompressed, format.Snappy, format.Gzip, format.Zstd, format.Brotli:
			default:
				return fmt.Errorf("row group %d: codec %s: not read (its decoder does not bound its output on damaged pages): %w", i, c.MetaData.Codec, ErrFormat)
			}
		}
	}
	return nil
}

// checkPages checks the pages of row group g (see above).
func (f *File) checkPages(g int) error {
	rg := f.pf.Metadata().RowGroups[g]
	var proto thrift.CompactProtocol
	buf := make([]byte, 4096)
	for _, c := range rg.Columns {
		m := &c.MetaData
		off := m.DataPageOffset
		if m.DictionaryPageOffset > 0 && m.DictionaryPageOffset < off {
			off = m.DictionaryPageOffset
		}
		end := off + m.TotalCompressedSize
		for off < end {
			var h format.PageHeader
			n := 0
			for size := int64(256); ; size *= 8 {
				size = min(size, end-off, maxHeader)
				if int64(len(buf)) < size {
					buf = make([]byte, size)
				}
				b := buf[:size]
				if _, err := f.f.ReadAt(b, off); err != nil && err != io.EOF {
					return f.fail(off, err)
				}
				h = format.PageHeader{}
				r := proto.NewReaderFromBytes(b)
				err := thrift.NewDecoder(r).Decode(&h)
				if err == nil {
					n = r.(interface{ BytesRead() int }).BytesRead()
					break
				}
				if size == end-off || size == maxHeader {
					return f.fail(off, fmt.Errorf("row group %d, column %v: page header: %v: %w", g, m.PathInSchema, err, ErrFormat))
				}
			}
			bad := func(why string, args ...any) error {
				return f.fail(off, fmt.Errorf("row group %d, column %v: page: "+why+": %w", append(append([]any{g, m.PathInSchema}, args...), ErrFormat)...))
			}
			body := off + int64(n)
			switch {
			case h.CompressedPageSize < 0 || h.UncompressedPageSize < 0:
				return bad("sizes %d and %d", h.CompressedPageSize, h.UncompressedPageSize)
			case body+int64(h.CompressedPageSize) > end:
				return bad("%d bytes past its column chunk's end at %d", h.CompressedPageSize, end)
			case h.UncompressedPageSize > maxPage:
				return bad("%d bytes uncompressed, more than %d", h.UncompressedPageSize, maxPage)
			case m.Codec == format.Uncompressed && h.UncompressedPageSize != h.CompressedPageSize:
				return bad("uncompressed, but %d bytes stored for %d", h.CompressedPageSize, h.UncompressedPageSize)
			}
			if m.Codec == format.Snappy {
				// The compressed bytes start after a v2 page's levels.
				skip := int64(0)
				compressed := true
				if v2 := h.DataPageHeaderV2; v2.Valid {
					skip = int64(v2.V.RepetitionLevelsByteLength) + int64(v2.V.DefinitionLevelsByteLength)
					compressed = !v2.V.IsCompressed.Valid || v2.V.IsCompressed.V
				}
				if compressed && skip < int64(h.CompressedPageSize) {
					var v [binary.MaxVarintLen32]byte
					k, _ := f.f.ReadAt(v[:min(int64(len(v)), int64(h.CompressedPageSize)-skip)], body+skip)
					dlen, w := binary.Uvarint(v[:k])
					if w <= 0 || dlen > uint64(h.UncompressedPageSize) {
						return bad("Snappy claims %d bytes, the page %d", dlen, h.UncompressedPageSize)
					}
				}
			}
			off = body + int64(h.CompressedPageSize)
		}
	}
	return nil
}
