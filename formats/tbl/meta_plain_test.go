package tbl

import (
	"bytes"
	"encoding/json"
	"math/rand"
	"testing"
)

// TestNameMetaPlain: the names NameMeta writes without the JSON encoder
// come out as the encoder writes them, every byte value tried in them.
func TestNameMetaPlain(t *testing.T) {
	names := []string{"", "a.jpg", "dir/sub/0001.cls", "a&b<c>.png", `q"uote`, `back\slash`, "tab\there", "\x7f", "é.jpg", "\u2028", "\xff"}
	for c := range 256 {
		names = append(names, "x"+string([]byte{byte(c)})+".jpg")
	}
	rng := rand.New(rand.NewSource(1))
	for range 2000 {
		b := make([]byte, rng.Intn(40))
		for i := range b {
			b[i] = byte(0x20 + rng.Intn(0x60))
		}
		names = append(names, string(b))
	}
	for _, name := range names {
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		v := nameJSON{Name: name}
		if !plainJSON(name) {
			continue // the encoder's own path
		}
		enc.Encode(v)
		want := bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
		if got := NameMeta(name); got.Type != MetaJSON || !bytes.Equal(got.Data, want) {
			t.Errorf("NameMeta(%q) = %s, the encoder writes %s", name, got.Data, want)
		}
		if back, ok := SampleName([]MetaEntry{NameMeta(name)}); !ok || back != name {
			t.Errorf("NameMeta(%q) names %q back", name, back)
		}
	}
}

// TestPlainNameAsDecoded: a block read without the JSON decoder reads as
// the decoder reads it; blocks that only look like one go to the decoder.
func TestPlainNameAsDecoded(t *testing.T) {
	blocks := []string{`{"name":"a.jpg"}`, `{"name":""}`, `{"name":"a\"b"}`, `{"name":"a"} `, `{"name":"a","x":1}`, `{"name":"\u0041"}`,
		`{"name":"é"}`, `{"name":"a"}}`, `{"name":"a\\"}`, `{"name":"}`, `{"name":"a""}`}
	for _, b := range blocks {
		name, plain := plainName([]byte(b))
		var obj map[string]json.RawMessage
		var want string
		valid := json.Unmarshal([]byte(b), &obj) == nil && json.Unmarshal(obj["name"], &want) == nil && len(obj) == 1
		if plain && (!valid || name != want) {
			t.Errorf("plainName(%s) = %q, the decoder reads %q (valid %v)", b, name, want, valid)
		}
		got, other, ok := NameFields([]MetaEntry{{Type: MetaJSON, Data: []byte(b)}})
		if valid && (!ok || got != want || other != nil) {
			t.Errorf("NameFields(%s) = %q, %v, %v; want %q", b, got, other, ok, want)
		}
	}
}
