package parquet

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"unicode/utf8"

	pq "github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress"
	"github.com/parquet-go/parquet-go/encoding"
)

// KeyColumn is the column holding each sample's key, as WebDataset names
// it.
const KeyColumn = "__key__"

// MetadataKey is the key-value metadata entry where the datasets library
// keeps a file's features.
const MetadataKey = "huggingface"

// Errors, for errors.Is.
var (
	// ErrNotRepresentable: a row that a Hub Parquet dataset has no place
	// for (a directory, a name without an extension, ...).
	ErrNotRepresentable = errors.New("not representable in Parquet")
	// ErrFormat: not a Parquet file, or one this package cannot read.
	ErrFormat = errors.New("not a readable Parquet file")
)

// kind is how a column stores its members' bytes.
type kind int

const (
	kindBinary kind = iota // Value("binary")
	kindString             // Value("string"): UTF-8 text
	kindInt64              // Value("int64"): a canonical decimal integer
	kindImage              // Image: struct {bytes: binary, path: string}
)

// dtype is the datasets Value dtype of a kind (kindImage has none).
func (k kind) dtype() string {
	return [...]string{"binary", "string", "int64", ""}[k]
}

// column is one column of a written dataset, besides the key.
type column struct {
	name string // the extension
	kind kind
	leaf int // its first leaf column
}

// imageExts are the extensions written as the Image feature: the image
// formats Pillow (and so the datasets library) decodes.
var imageExts = map[string]bool{"jpg": true, "jpeg": true, "png": true, "webp": true, "gif": true, "bmp": true,
	"tif": true, "tiff": true, "ppm": true, "pgm": true, "pbm": true, "pnm": true}

// fileExts are the extensions a struct {bytes, path} column read back may
// take from its column's name or its path (images, and the audio formats
// of the datasets Audio feature).
var fileExts = map[string]bool{"wav": true, "flac": true, "mp3": true, "ogg": true, "opus": true, "m4a": true}

func init() {
	for e := range imageExts {
		fileExts[e] = true
	}
}

// candidate is the kind a column of that extension may be stored as,
// should every member's bytes parse so.
func candidate(ext string) kind {
	switch {
	case imageExts[ext]:
		return kindImage
	case ext == "cls":
		return kindInt64
	case ext == "txt" || ext == "json":
		return kindString
	}
	return kindBinary
}

// fits tells whether a member's bytes can be stored in a column of kind k
// (of extension ext).
func fits(k kind, ext string, b []byte) bool {
	switch k {
	case kindInt64:
		v, err := strconv.ParseInt(string(b), 10, 64)
		return err == nil && strconv.FormatInt(v, 10) == string(b)
	case kindString:
		if ext == "json" {
			return utf8.Valid(b) && json.Valid(b)
		}
		return utf8.Valid(b)
	}
	return true
}

// splitName splits a member's name as WebDataset does: the key is the
// name up to the first dot of its last element, the extension the rest.
func splitName(name []byte) (key, ext []byte, ok bool) {
	base := 0
	for i := len(name) - 1; i >= 0; i-- {
		if name[i] == '/' {
			base = i + 1
			break
		}
	}
	for i := base; i < len(name); i++ {
		if name[i] == '.' {
			if i == base || i == len(name)-1 {
				return nil, nil, false
			}
			return name[:i], name[i+1:], true
		}
	}
	return nil, nil, false
}

// layout is a written dataset's columns, and its Parquet schema.
type layout struct {
	cols   []column
	leaves int // leaf columns, the key's included
	schema *pq.Schema
	// skipBounds are the paths of the binary leaves, whose pages keep no
	// min/max (comparing blobs costs, and says nothing).
	skipBounds [][]string
}

// newLayout makes the schema of cols: the key, then each column, all
// optional as pyarrow writes them.
func newLayout(cols []column) *layout {
	l := &layout{cols: cols}
	fields := orderedGroup{{KeyColumn, pq.Optional(pq.String())}}
	leaf := 1
	for i := range cols {
		c := &l.cols[i]
		c.leaf = leaf
		var n pq.Node
		switch c.kind {
		case kindImage:
			n = pq.Optional(orderedGroup{{"bytes", pq.Optional(pq.Leaf(pq.ByteArrayType))}, {"path", pq.Optional(pq.String())}})
			l.skipBounds = append(l.skipBounds, []string{c.name, "bytes"})
			leaf += 2
		case kindString:
			n = pq.Optional(pq.String())
			leaf++
		case kindInt64:
			n = pq.Optional(pq.Int(64))
			leaf++
		default:
			n = pq.Optional(pq.Leaf(pq.ByteArrayType))
			l.skipBounds = append(l.skipBounds, []string{c.name})
			leaf++
		}
		fields = append(fields, namedNode{c.name, n})
	}
	l.leaves = leaf
	l.schema = pq.NewSchema("schema", fields)
	return l
}

// features is the "huggingface" metadata of the layout, as the datasets
// library writes it: {"info": {"features": {name: feature, ...}}}, the
// features in column order, each as Features.to_dict gives it (defaults
// left out, "_type" last).
func (l *layout) features() string {
	var b strings.Builder
	b.WriteString(`{"info": {"features": {`)
	feature := func(name string, k kind) {
		q, _ := json.Marshal(name)
		b.Write(q)
		if k == kindImage {
			b.WriteString(`: {"_type": "Image"}`)
			return
		}
		fmt.Fprintf(&b, `: {"dtype": %q, "_type": "Value"}`, k.dtype())
	}
	feature(KeyColumn, kindString)
	for _, c := range l.cols {
		b.WriteString(", ")
		feature(c.name, c.kind)
	}
	b.WriteString("}}}")
	return b.String()
}

// namedNode is a field of an orderedGroup.
type namedNode struct {
	name string
	node pq.Node
}

// orderedGroup is a group whose fields keep the order given (pq.Group
// sorts them by name): the columns in the order the extensions first
// appear, the key first, as the datasets library writes them.
type orderedGroup []namedNode

func (g orderedGroup) ID() int                     { return 0 }
func (g orderedGroup) String() string              { return pq.Group(g.group()).String() }
func (g orderedGroup) Type() pq.Type               { return pq.Group(nil).Type() }
func (g orderedGroup) Optional() bool              { return false }
func (g orderedGroup) Repeated() bool              { return false }
func (g orderedGroup) Required() bool              { return true }
func (g orderedGroup) Leaf() bool                  { return false }
func (g orderedGroup) Encoding() encoding.Encoding { return nil }
func (g orderedGroup) Compression() compress.Codec { return nil }
func (g orderedGroup) GoType() reflect.Type        { return pq.Group(g.group()).GoType() }
func (g orderedGroup) group() map[string]pq.Node   { return groupOf(g) }
func (g orderedGroup) Fields() []pq.Field {
	f := make([]pq.Field, len(g))
	for i := range g {
		f[i] = &orderedField{g[i].node, g[i].name}
	}
	return f
}

func groupOf(g orderedGroup) map[string]pq.Node {
	m := make(map[string]pq.Node, len(g))
	for _, f := range g {
		m[f.name] = f.node
	}
	return m
}

type orderedField struct {
	pq.Node
	name string
}

func (f *orderedField) Name() string { return f.name }

// Value is used by parquet-go to write Go values of a struct type; rows
// are written here as pq.Row values, never so.
func (f *orderedField) Value(base reflect.Value) reflect.Value {
	if base.Kind() == reflect.Map {
		return base.MapIndex(reflect.ValueOf(f.name))
	}
	return reflect.Value{}
}
