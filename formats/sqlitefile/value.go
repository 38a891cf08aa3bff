package sqlitefile

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"math/bits"
	"strconv"
	"strings"
	"unsafe"
)

// Kind is the storage class of a Value, as SQLite names them.
type Kind uint8

// The storage classes, in the order SQLite sorts them: NULL first, then
// numbers (INTEGER and REAL compared by value), TEXT, BLOB.
const (
	KindNull Kind = iota
	KindInt
	KindReal
	KindText
	KindBlob
)

// String names the storage class as SQLite's typeof() does.
func (k Kind) String() string {
	switch k {
	case KindNull:
		return "null"
	case KindInt:
		return "integer"
	case KindReal:
		return "real"
	case KindText:
		return "text"
	case KindBlob:
		return "blob"
	}
	return "kind(" + strconv.Itoa(int(k)) + ")"
}

// Value is one column value of a row. It is a small struct passed by value
// (no interface, no allocation): Text and Blob keep a reference to the
// caller's bytes, which must not change until Append returns; Append copies
// what it keeps.
type Value struct {
	s string // TEXT or BLOB content
	n int64  // INTEGER, or the bits of a REAL
	k Kind
}

// Null is SQL NULL.
func Null() Value { return Value{} }

// Int is an INTEGER, stored in the fewest bytes that hold it (the constants
// 0 and 1 in none, as schema format 4 allows).
func Int(v int64) Value { return Value{k: KindInt, n: v} }

// Real is a REAL, always stored as an 8-byte IEEE float (serial type 7),
// an integral value included; sqlite reads it back as that REAL. A NaN is
// NULL, as SQLite stores it.
func Real(f float64) Value {
	if f != f {
		return Value{}
	}
	return Value{k: KindReal, n: int64(math.Float64bits(f))}
}

// Text is a TEXT value; s should be UTF-8, the database's text encoding
// (SQLite stores whatever bytes it is given and so does this package).
func Text(s string) Value { return Value{k: KindText, s: s} }

// TextBytes is Text for bytes, without copying them.
func TextBytes(b []byte) Value { return Value{k: KindText, s: bytesString(b)} }

// Blob is a BLOB value (nil is an empty BLOB, not NULL), without copying b.
func Blob(b []byte) Value { return Value{k: KindBlob, s: bytesString(b)} }

func bytesString(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(&b[0], len(b))
}

// Kind is v's storage class.
func (v Value) Kind() Kind { return v.k }

// Int64 is an INTEGER's value (a REAL's, truncated; 0 for the others).
func (v Value) Int64() int64 {
	if v.k == KindReal {
		return int64(v.Float64())
	}
	if v.k == KindInt {
		return v.n
	}
	return 0
}

// Float64 is a REAL's value (an INTEGER's, converted; 0 for the others).
func (v Value) Float64() float64 {
	switch v.k {
	case KindReal:
		return math.Float64frombits(uint64(v.n))
	case KindInt:
		return float64(v.n)
	}
	return 0
}

// Text is the content of a TEXT or BLOB ("" for the others).
func (v Value) Text() string { return v.s }

// String is v as an SQL literal: NULL, 42, 1.5, 'it”s', X'00FF'.
func (v Value) String() string {
	switch v.k {
	case KindNull:
		return "NULL"
	case KindInt:
		return strconv.FormatInt(v.n, 10)
	case KindReal:
		return strconv.FormatFloat(v.Float64(), 'g', -1, 64)
	case KindText:
		return "'" + strings.ReplaceAll(v.s, "'", "''") + "'"
	}
	return "X'" + strings.ToUpper(hexString(v.s)) + "'"
}

func hexString(s string) string {
	const digits = "0123456789abcdef"
	b := make([]byte, 2*len(s))
	for i := 0; i < len(s); i++ {
		b[2*i], b[2*i+1] = digits[s[i]>>4], digits[s[i]&15]
	}
	return string(b)
}

// maxLength is SQLite's default SQLITE_MAX_LENGTH: sqlite refuses to read
// a TEXT or BLOB longer than this.
const maxLength = 1000000000

// serial is v's serial type in a record and the length of its body.
func (v *Value) serial() (uint64, int) {
	switch v.k {
	case KindInt:
		return intSerial(v.n)
	case KindText:
		return uint64(len(v.s))*2 + 13, len(v.s)
	case KindReal:
		return 7, 8
	case KindBlob:
		return uint64(len(v.s))*2 + 12, len(v.s)
	}
	return 0, 0
}

// intSerial is the smallest serial type for an integer: 8 and 9 are the
// constants 0 and 1, 1..6 big-endian integers of 1, 2, 3, 4, 6, 8 bytes.
// The type follows from the number of bits of x's magnitude (of ^x for a
// negative x), a sign bit apart: one instruction and a table, where a
// chain of comparisons would cost a branch each.
func intSerial(x int64) (uint64, int) {
	if uint64(x) <= 1 {
		return 8 + uint64(x), 0
	}
	s := intSerialOfLen[bits.Len64(uint64(x^(x>>63)))]
	return uint64(s), int(fixedSize[s])
}

// intSerialOfLen is the serial type of an integer whose magnitude takes
// the index's bits, and a sign bit.
var intSerialOfLen = [65]uint8{
	1, 1, 1, 1, 1, 1, 1, 1, // up to 7 bits
	2, 2, 2, 2, 2, 2, 2, 2, // 15
	3, 3, 3, 3, 3, 3, 3, 3, // 23
	4, 4, 4, 4, 4, 4, 4, 4, // 31
	5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, // 47
	6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, // 63, and 64 for none
}

// serialSize is the body length of a serial type.
func serialSize(st uint64) int {
	if st >= 12 {
		return int((st - 12) / 2)
	}
	return int(fixedSize[st])
}

var fixedSize = [16]uint8{0, 1, 2, 3, 4, 6, 8, 8, 0, 0, 0, 0, 0, 0, 0, 0}

// putInt writes the body of a number of serial type st exactly.
func putInt(b []byte, x int64, st uint64) int {
	switch st {
	case 1:
		b[0] = byte(x)
		return 1
	case 2:
		binary.BigEndian.PutUint16(b, uint16(x))
		return 2
	case 3:
		_ = b[2]
		b[0], b[1], b[2] = byte(x>>16), byte(x>>8), byte(x)
		return 3
	case 4:
		binary.BigEndian.PutUint32(b, uint32(x))
		return 4
	case 5:
		_ = b[5]
		b[0], b[1] = byte(x>>40), byte(x>>32)
		binary.BigEndian.PutUint32(b[2:], uint32(x))
		return 6
	case 6, 7:
		binary.BigEndian.PutUint64(b, uint64(x))
		return 8
	}
	return 0 // 0, 8, 9: no body
}

// getInt reads an integer body of serial type st (1..6, 8, 9).
func getInt(b []byte, st uint64) int64 {
	switch st {
	case 1:
		return int64(int8(b[0]))
	case 2:
		return int64(int16(binary.BigEndian.Uint16(b)))
	case 3:
		return int64(int32(uint32(b[0])<<24|uint32(b[1])<<16|uint32(b[2])<<8) >> 8)
	case 4:
		return int64(int32(binary.BigEndian.Uint32(b)))
	case 5:
		return int64(uint64(binary.BigEndian.Uint16(b))<<48|uint64(binary.BigEndian.Uint32(b[2:]))<<16) >> 16
	case 6:
		return int64(binary.BigEndian.Uint64(b))
	case 9:
		return 1
	}
	return 0
}

// varintLen is the length of v as an SQLite varint: 7 bits a byte, big
// end first, the ninth byte (if any) holding 8 bits.
func varintLen(v uint64) int {
	if v <= 0x7f {
		return 1
	}
	if v > 0x00ffffffffffffff {
		return 9
	}
	n := 2
	for v >>= 14; v != 0; v >>= 7 {
		n++
	}
	return n
}

// putVarint writes v at b and says how many bytes it took. The one-byte
// case (serial types of numbers and short strings, most lengths) is
// inlined where it is called.
func putVarint(b []byte, v uint64) int {
	if v <= 0x7f {
		b[0] = byte(v)
		return 1
	}
	return putVarintLong(b, v)
}

func putVarintLong(b []byte, v uint64) int {
	if v <= 0x3fff {
		b[0], b[1] = byte(v>>7)|0x80, byte(v&0x7f)
		return 2
	}
	if v > 0x00ffffffffffffff {
		b[8] = byte(v)
		v >>= 8
		for i := 7; i >= 0; i-- {
			b[i] = byte(v&0x7f) | 0x80
			v >>= 7
		}
		return 9
	}
	n := varintLen(v)
	b[n-1] = byte(v & 0x7f)
	for i := n - 2; i >= 0; i-- {
		v >>= 7
		b[i] = byte(v&0x7f) | 0x80
	}
	return n
}

// getVarint reads a varint at b.
func getVarint(b []byte) (uint64, int) {
	if b[0] < 0x80 {
		return uint64(b[0]), 1
	}
	var v uint64
	for i := 0; i < 8; i++ {
		v = v<<7 | uint64(b[i]&0x7f)
		if b[i] < 0x80 {
			return v, i + 1
		}
	}
	return v<<8 | uint64(b[8]), 9
}

// headerLen is the length of a record header whose serial types take sum
// bytes: the header's own length, a varint, counts itself.
func headerLen(sum int) int {
	n := 1
	for varintLen(uint64(sum+n)) > n {
		n++
	}
	return sum + n
}

// class orders serial types into SQLite's storage classes for sorting:
// NULL, number, TEXT, BLOB.
func class(st uint64) int {
	switch {
	case st == 0:
		return 0
	case st < 12:
		return 1
	case st&1 == 1:
		return 2
	}
	return 3
}

// cmpNumbers compares two numeric bodies of serial types sa and sb by
// value, an INTEGER and a REAL as numbers (not as floats).
func cmpNumbers(sa uint64, a []byte, sb uint64, b []byte) int {
	switch {
	case sa != 7 && sb != 7:
		return cmp3(getInt(a, sa), getInt(b, sb))
	case sa == 7 && sb == 7:
		x := math.Float64frombits(binary.BigEndian.Uint64(a))
		y := math.Float64frombits(binary.BigEndian.Uint64(b))
		if x < y {
			return -1
		}
		if x > y {
			return 1
		}
		return 0
	case sa == 7:
		return -cmpIntReal(getInt(b, sb), math.Float64frombits(binary.BigEndian.Uint64(a)))
	}
	return cmpIntReal(getInt(a, sa), math.Float64frombits(binary.BigEndian.Uint64(b)))
}

// cmpIntReal compares an integer with a float exactly, where converting
// either to the other's type could round.
func cmpIntReal(i int64, r float64) int {
	if r < -9223372036854775808.0 {
		return 1
	}
	if r >= 9223372036854775808.0 {
		return -1
	}
	t := int64(r) // r truncated; exact where |r| >= 2^53
	if c := cmp3(i, t); c != 0 {
		return c
	}
	// i == trunc(r): r's fraction decides; float64(t) is exact here.
	if f := float64(t); r > f {
		return -1
	} else if r < f {
		return 1
	}
	return 0
}

func cmp3(a, b int64) int {
	if a < b {
		return -1
	}
	if a > b {
		return 1
	}
	return 0
}

// cmpRecords compares the first nf fields of two records (all of them for
// nf < 0) as SQLite compares index keys with the BINARY collation.
//
// It is the sort's inner loop, so the usual case goes first: two fields of
// the same serial type (keys of one index mostly share their layout), whose
// bodies then compare as bytes, an integer's first byte taken as signed.
// Fields of different types, and REALs, go the general way.
func cmpRecords(a, b []byte, nf int) int {
	ha, i := getVarint(a)
	hb, j := getVarint(b)
	da, db := int(ha), int(hb)
	for ; nf != 0 && i < int(ha) && j < int(hb); nf-- {
		sa, sb := uint64(a[i]), uint64(b[j])
		if sa|sb < 0x80 {
			i++
			j++
		} else {
			var n int
			sa, n = getVarint(a[i:])
			i += n
			sb, n = getVarint(b[j:])
			j += n
		}
		if sa == sb && sa != 7 {
			l := serialSize(sa)
			if l == 0 {
				continue
			}
			x, y := a[da:da+l], b[db:db+l]
			da += l
			db += l
			if x[0] != y[0] {
				if sa < 7 {
					return cmp3(int64(int8(x[0])), int64(int8(y[0])))
				}
				return cmp3(int64(x[0]), int64(y[0]))
			}
			if l <= 8 {
				// A number, or a short string: a loop costs less than
				// a call.
				for i := 1; i < l; i++ {
					if x[i] != y[i] {
						return cmp3(int64(x[i]), int64(y[i]))
					}
				}
				continue
			}
			if c := bytes.Compare(x[1:], y[1:]); c != 0 {
				return c
			}
			continue
		}
		la, lb := serialSize(sa), serialSize(sb)
		ca, cb := class(sa), class(sb)
		if ca != cb {
			return cmp3(int64(ca), int64(cb))
		}
		var c int
		switch ca {
		case 1:
			c = cmpNumbers(sa, a[da:da+la], sb, b[db:db+lb])
		case 2, 3:
			c = bytes.Compare(a[da:da+la], b[db:db+lb])
		}
		if c != 0 {
			return c
		}
		da += la
		db += lb
	}
	return 0
}

// decodeRecord gives a record's fields as Values (copies).
func decodeRecord(r []byte) []Value {
	h, i := getVarint(r)
	d := int(h)
	var vals []Value
	for i < int(h) {
		st, n := getVarint(r[i:])
		i += n
		l := serialSize(st)
		body := r[d : d+l]
		d += l
		switch {
		case st == 0:
			vals = append(vals, Null())
		case st == 7:
			vals = append(vals, Real(math.Float64frombits(binary.BigEndian.Uint64(body))))
		case st < 12:
			vals = append(vals, Int(getInt(body, st)))
		case st&1 == 1:
			vals = append(vals, Text(string(body)))
		default:
			vals = append(vals, Value{k: KindBlob, s: string(body)})
		}
	}
	return vals
}

// short is String cut for a message: a long TEXT or BLOB does not grow it.
func (v Value) short() string {
	const keep = 64
	if (v.k == KindText || v.k == KindBlob) && len(v.s) > keep {
		head := v
		head.s = v.s[:keep]
		return fmt.Sprintf("%s... (%d bytes)", head, len(v.s))
	}
	return v.String()
}
