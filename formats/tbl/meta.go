package tbl

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"strings"
	"unicode/utf8"
)

// MetaEntry is one v2 metadata block: typed bytes attached to a sample.
type MetaEntry struct {
	Type uint16 // MetaJSON, MetaProtobuf, MetaMsgpack or MetaCustom
	Data []byte
}

// Metadata types TurboLoader defines.
const (
	MetaJSON     = 1
	MetaProtobuf = 2
	MetaMsgpack  = 3
	MetaCustom   = 255
)

// The keys NameMeta writes. A TBL entry has no name field: the metadata
// section is the only place a sample's name (its tar member name, say) can
// live. TurboLoader's converters never write one; these are our convention.
const (
	nameKey    = "name"
	nameB64Key = "name_base64"
)

type nameJSON struct {
	Name string `json:"name"`
	// Raw holds the name's bytes when they are not valid UTF-8, which JSON
	// strings cannot carry: Name then has U+FFFD in their place.
	Raw string `json:"name_base64,omitempty"`
}

// NameMeta returns a JSON entry {"name": name}. A name that is not valid
// UTF-8 (tar names are bytes) also gets "name_base64", its exact bytes, so
// that SampleName gives them back unchanged.
func NameMeta(name string) MetaEntry {
	if plainJSON(name) {
		// What the encoder below writes, without its reflection: most
		// names are printable ASCII, and a conversion writes one a sample.
		b := make([]byte, 0, len(name)+len(`{"name":""}`))
		b = append(b, `{"name":"`...)
		b = append(b, name...)
		return MetaEntry{Type: MetaJSON, Data: append(b, `"}`...)}
	}
	v := nameJSON{Name: name}
	if !utf8.ValidString(name) {
		v.Name = strings.ToValidUTF8(name, "\uFFFD")
		v.Raw = base64.StdEncoding.EncodeToString([]byte(name))
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false) // "a&b.jpg" stays readable
	enc.Encode(v)            // cannot fail: two strings
	return MetaEntry{Type: MetaJSON, Data: bytes.TrimSuffix(buf.Bytes(), []byte("\n"))}
}

// plainJSON tells whether a JSON string holds s as it is: printable
// ASCII without a quote or a backslash.
func plainJSON(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' {
			return false
		}
	}
	return true
}

// plainName reads a block NameMeta writes without the JSON encoder,
// {"name":"<printable ASCII>"}, as the decoder would, without it: a
// conversion from TBL reads one a sample.
func plainName(data []byte) (string, bool) {
	const pre, post = `{"name":"`, `"}`
	if len(data) < len(pre)+len(post) || string(data[:len(pre)]) != pre || string(data[len(data)-len(post):]) != post {
		return "", false
	}
	name := string(data[len(pre) : len(data)-len(post)])
	return name, plainJSON(name)
}

// SampleName returns the name held by the first JSON entry of meta whose
// object has a string "name" (preferring the exact bytes of "name_base64"
// when present), as NameMeta writes them.
func SampleName(meta []MetaEntry) (name string, ok bool) {
	name, _, ok = NameFields(meta)
	return name, ok
}

// NameFields is SampleName that also returns the other keys of the JSON
// object the name was found in (nil when there are none), so that nothing
// a writer put beside the name is lost.
func NameFields(meta []MetaEntry) (name string, other map[string]json.RawMessage, ok bool) {
	for _, m := range meta {
		if m.Type != MetaJSON {
			continue
		}
		if name, ok := plainName(m.Data); ok {
			return name, nil, true
		}
		var obj map[string]json.RawMessage
		if json.Unmarshal(m.Data, &obj) != nil {
			continue
		}
		raw, found := obj[nameKey]
		if !found || len(raw) == 0 || raw[0] != '"' || json.Unmarshal(raw, &name) != nil {
			continue
		}
		delete(obj, nameKey)
		if raw, found := obj[nameB64Key]; found {
			var s string
			if len(raw) > 0 && raw[0] == '"' && json.Unmarshal(raw, &s) == nil {
				if b, err := base64.StdEncoding.DecodeString(s); err == nil {
					name = string(b)
					delete(obj, nameB64Key)
				}
			}
		}
		if len(obj) == 0 {
			obj = nil
		}
		return name, obj, true
	}
	return "", nil, false
}
