package tbl

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"unicode/utf8"
)

// A TBL v2 sample's metadata is a list of typed blocks (JSON, MessagePack,
// Protobuf, anything). In a tar fold, a sample whose blocks are exactly
// the one {"name": ...} block its member name gives back keeps no more than
// that name. Any other list (more blocks, other types, other keys, JSON
// that does not parse, or none at all in a file that has metadata) travels
// in a member of its own, just before the sample's and named after it with
// MetaSuffix, so that TBL -> tar -> TBL gives every block back, type and
// bytes, in order:
//
//	{"tbl_metadata":[{"type":1,"text":"{\"name\":\"a.jpg\",\"label\":3}"},{"type":3,"base64":"gaFhAQ=="}]}
//
// "text" holds blocks that are valid UTF-8 (JSON strings carry them
// exactly), "base64" the others. The member is JSON that tools can read;
// its exact opening (MetaMagic) and its place before a member of the
// name it extends tell it from an ordinary file.
//
// The member also carries the index fields that neither the sample's name
// nor its bytes give back (see Member): a format other than its name's
// extension says (RAW_U8, whose ".raw" names no format, or a code outside
// the enum), and (v2) a width and height other than those the bytes'
// headers give (TurboLoader's writer stores whatever its caller passes).
// "tbl_metadata" is then null where the member says nothing of the
// blocks:
//
//	{"tbl_metadata":null,"format":8,"width":640,"height":480}
const (
	MetaSuffix = ".tblmeta.json"
	MetaMagic  = `{"tbl_metadata":`
	// metaMemberMax bounds a metadata member: larger files with the suffix are
	// ordinary members (memory stays bounded whatever the input).
	metaMemberMax = 16 << 20
)

// Member is what a metadata member says of the sample after it.
type Member struct {
	// Blocks are the sample's metadata blocks, in order, when Stated.
	// Otherwise the member says nothing of them: the sample gets what its
	// name gives (a {"name": ...} block where names are kept).
	Blocks []MetaEntry
	Stated bool
	// Format replaces the format the name's extension gives, when
	// HasFormat.
	Format    Format
	HasFormat bool
	// Width and Height replace those the sample's bytes give (v2), when
	// HasDims.
	Width, Height uint16
	HasDims       bool
}

type metaBlock struct {
	Type   uint16  `json:"type"`
	Text   *string `json:"text,omitempty"`
	Base64 string  `json:"base64,omitempty"`
}

type memberJSON struct {
	Blocks *[]metaBlock `json:"tbl_metadata"`
	Format *uint8       `json:"format,omitempty"`
	Width  *uint16      `json:"width,omitempty"`
	Height *uint16      `json:"height,omitempty"`
}

// EncodeMetaMember writes blocks as a metadata member's payload.
func EncodeMetaMember(blocks []MetaEntry) []byte {
	return EncodeMember(Member{Blocks: blocks, Stated: true})
}

// EncodeMember writes m as a metadata member's payload.
func EncodeMember(m Member) []byte {
	var out memberJSON
	if m.Stated {
		blocks := make([]metaBlock, 0, len(m.Blocks))
		for _, b := range m.Blocks {
			mb := metaBlock{Type: b.Type}
			if utf8.Valid(b.Data) {
				s := string(b.Data)
				mb.Text = &s
			} else {
				mb.Base64 = base64.StdEncoding.EncodeToString(b.Data)
			}
			blocks = append(blocks, mb)
		}
		out.Blocks = &blocks
	}
	if m.HasFormat {
		f := uint8(m.Format)
		out.Format = &f
	}
	if m.HasDims {
		out.Width, out.Height = &m.Width, &m.Height
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.Encode(out) // strings and numbers only: cannot fail
	return buf.Bytes()
}

// IsMetaMember tells whether a member is a metadata member by its name and
// the first bytes of its payload.
func IsMetaMember(name []byte, size int64, head []byte) bool {
	return bytes.HasSuffix(name, []byte(MetaSuffix)) && size >= int64(len(MetaMagic)) && size <= metaMemberMax &&
		bytes.HasPrefix(head, []byte(MetaMagic))
}

// DecodeMetaMember reads a metadata member's payload back into blocks
// (none when the member states none: see DecodeMember).
func DecodeMetaMember(data []byte) ([]MetaEntry, error) {
	m, err := DecodeMember(data)
	return m.Blocks, err
}

// DecodeMember reads a metadata member's payload.
func DecodeMember(data []byte) (Member, error) {
	var in memberJSON
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&in); err != nil {
		return Member{}, fmt.Errorf("TBL metadata member: %w", err)
	}
	var m Member
	if in.Blocks != nil {
		m.Stated = true
		m.Blocks = make([]MetaEntry, 0, len(*in.Blocks))
		for i, b := range *in.Blocks {
			switch {
			case b.Text != nil && b.Base64 == "":
				m.Blocks = append(m.Blocks, MetaEntry{Type: b.Type, Data: []byte(*b.Text)})
			case b.Text == nil:
				d, err := base64.StdEncoding.DecodeString(b.Base64)
				if err != nil {
					return Member{}, fmt.Errorf("TBL metadata member: block %d: %w", i, err)
				}
				m.Blocks = append(m.Blocks, MetaEntry{Type: b.Type, Data: d})
			default:
				return Member{}, fmt.Errorf("TBL metadata member: block %d has both text and base64", i)
			}
		}
	}
	if in.Format != nil {
		m.Format, m.HasFormat = Format(*in.Format), true
	}
	switch {
	case in.Width != nil && in.Height != nil:
		m.Width, m.Height, m.HasDims = *in.Width, *in.Height, true
	case in.Width != nil || in.Height != nil:
		return Member{}, fmt.Errorf("TBL metadata member: a width without a height, or a height without a width")
	}
	return m, nil
}

// apply sets the index fields m gives in p, for a file of version.
func (m *Member) apply(p *Prepared, version int) {
	if m.HasFormat {
		p.Format = m.Format
	}
	if m.HasDims && version == 2 {
		p.Width, p.Height = m.Width, m.Height
	}
}

// applyEntry sets the index fields m gives in an encoded index entry e
// of version.
func (m *Member) applyEntry(e []byte, version int) {
	if version == 1 {
		if m.HasFormat {
			e[12] = byte(m.Format)
		}
		return
	}
	if m.HasFormat {
		e[20] = byte(m.Format)
	}
	if m.HasDims {
		binary.LittleEndian.PutUint16(e[16:], m.Width)
		binary.LittleEndian.PutUint16(e[18:], m.Height)
	}
}

// nameFormat is the format a writer of version gives a sample by its
// name alone.
func nameFormat(version int, name string) Format {
	f := FormatFromName(name)
	if version == 1 && f > TIFF {
		f = FormatUnknown // v1 knows formats up to TIFF
	}
	return f
}

// onlyName tells whether blocks are exactly the block NameMeta(name)
// writes: the member's name then gives them back.
func onlyName(blocks []MetaEntry, name string) bool {
	if len(blocks) != 1 || blocks[0].Type != MetaJSON {
		return false
	}
	return bytes.Equal(blocks[0].Data, NameMeta(name).Data)
}

// badJSON tells whether any JSON-typed block does not parse.
func hasBadJSON(blocks []MetaEntry) bool {
	for _, b := range blocks {
		if _, plain := plainName(b.Data); b.Type == MetaJSON && !plain && !json.Valid(b.Data) {
			return true
		}
	}
	return false
}
