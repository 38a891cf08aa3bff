package thriftcompact

import (
	"bytes"
	"strings"
	"testing"
)

// TestSkip: a struct is passed over to its stop byte, its fields of every
// type read or skipped; claims longer than the bytes and nesting past 64
// are errors naming the byte, not allocations or a stack overflow.
func TestSkip(t *testing.T) {
	// struct {1: i32 -3, 2: binary "ab", 3: list<i64> [1, 2], 4: struct {1: true}, 5: map<byte,double> {}}
	ok := []byte{0x15, 0x05, 0x18, 2, 'a', 'b', 0x19, 0x26, 2, 4, 0x1c, 0x11, 0x00, 0x1b, 0x00, 0x00, 0xff}
	r := NewReader(ok)
	var ids []int64
	for id, typ := range r.Fields() {
		ids = append(ids, id)
		if id == 1 && typ == I32 {
			if v := r.Varint(); v != -3 {
				t.Errorf("field 1: %d, want -3", v)
			}
			continue
		}
		r.Skip(typ)
	}
	if r.Err() != nil || len(ids) != 5 || r.Byte() != 0xff {
		t.Fatalf("fields %v, err %v: want 5 fields and the byte after the stop", ids, r.Err())
	}

	for _, c := range []struct {
		name string
		b    []byte
		want string
	}{
		{"list longer than its bytes", []byte{0x19, 0xf5, 0xff, 0xff, 0xff, 0xff, 0x07}, "list of 2147483647 elements"},
		{"binary longer than its bytes", []byte{0x18, 0x7f, 'a'}, "value of 127 bytes"},
		{"map longer than its bytes", []byte{0x1b, 0x7f, 0x55, 1}, "map of 127 entries"},
		{"nested too deep", append(bytes.Repeat([]byte{0x1c}, 70), 0), "nested deeper than 64"},
		{"cut short", []byte{0x15}, "bad varint"},
	} {
		r := NewReader(c.b)
		r.Skip(Struct)
		if err := r.Err(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error saying %q", c.name, err, c.want)
		}
	}
}
