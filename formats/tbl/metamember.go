package tbl

import (
	"bytes"
	"encoding/base64"
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
const (
	MetaSuffix = ".tblmeta.json"
	MetaMagic  = `{"tbl_metadata":[`
	// metaMemberMax bounds a metadata member: larger files with the suffix are
	// ordinary members (memory stays bounded whatever the input).
	metaMemberMax = 16 << 20
)

type metaBlock struct {
	Type   uint16  `json:"type"`
	Text   *string `json:"text,omitempty"`
	Base64 string  `json:"base64,omitempty"`
}

// EncodeMetaMember writes blocks as a metadata member's payload.
func EncodeMetaMember(blocks []MetaEntry) []byte {
	out := struct {
		Blocks []metaBlock `json:"tbl_metadata"`
	}{Blocks: []metaBlock{}}
	for _, b := range blocks {
		mb := metaBlock{Type: b.Type}
		if utf8.Valid(b.Data) {
			s := string(b.Data)
			mb.Text = &s
		} else {
			mb.Base64 = base64.StdEncoding.EncodeToString(b.Data)
		}
		out.Blocks = append(out.Blocks, mb)
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

// DecodeMetaMember reads a metadata member's payload back into blocks.
func DecodeMetaMember(data []byte) ([]MetaEntry, error) {
	var in struct {
		Blocks []metaBlock `json:"tbl_metadata"`
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&in); err != nil {
		return nil, fmt.Errorf("TBL metadata member: %w", err)
	}
	blocks := make([]MetaEntry, 0, len(in.Blocks))
	for i, b := range in.Blocks {
		switch {
		case b.Text != nil && b.Base64 == "":
			blocks = append(blocks, MetaEntry{Type: b.Type, Data: []byte(*b.Text)})
		case b.Text == nil:
			d, err := base64.StdEncoding.DecodeString(b.Base64)
			if err != nil {
				return nil, fmt.Errorf("TBL metadata member: block %d: %w", i, err)
			}
			blocks = append(blocks, MetaEntry{Type: b.Type, Data: d})
		default:
			return nil, fmt.Errorf("TBL metadata member: block %d has both text and base64", i)
		}
	}
	return blocks, nil
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
		if b.Type == MetaJSON && !json.Valid(b.Data) {
			return true
		}
	}
	return false
}
