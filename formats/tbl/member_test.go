package tbl

import (
	"reflect"
	"strings"
	"testing"
)

// TestMemberFields: a metadata member carries index fields beside its
// blocks, or instead of them (null: the name gives them), and refuses a
// width without a height.
func TestMemberFields(t *testing.T) {
	for _, m := range []Member{
		{Blocks: []MetaEntry{NameMeta("a.raw")}, Stated: true, Format: RAWU8, HasFormat: true, Width: 4, Height: 2, HasDims: true},
		{Format: Format(200), HasFormat: true},
		{Width: 0, Height: 7, HasDims: true},
		{Blocks: []MetaEntry{}, Stated: true},
	} {
		data := EncodeMember(m)
		if !IsMetaMember([]byte("x"+MetaSuffix), int64(len(data)), data) {
			t.Errorf("%s: not taken for a member", data)
		}
		got, err := DecodeMember(data)
		if err != nil || !reflect.DeepEqual(got, m) {
			t.Errorf("%s: %+v, %v; want %+v", data, got, err, m)
		}
	}
	if got := string(EncodeMember(Member{Format: RAWU8, HasFormat: true, Width: 4, Height: 2, HasDims: true})); got != `{"tbl_metadata":null,"format":8,"width":4,"height":2}`+"\n" {
		t.Errorf("encoded as %s", got)
	}
	for _, bad := range []string{`{"tbl_metadata":null,"width":3}`, `{"tbl_metadata":null,"format":256}`, `{"tbl_metadata":[],"depth":1}`} {
		if _, err := DecodeMember([]byte(bad)); err == nil || !strings.Contains(err.Error(), "TBL metadata member") {
			t.Errorf("%s: %v", bad, err)
		}
	}
}
