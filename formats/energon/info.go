package energon

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"unicode/utf8"
)

// infoJSON is .info.json as energon writes it: Python's json.dump of
// {"energon_version": ..., "shard_counts": {shard: count, ...}} with
// indent=2 and Python's defaults otherwise (", " and ": " separators, no
// trailing newline, every character outside printable ASCII escaped), the
// shards in tar_file_id order.
func infoJSON(version string, shards []ShardSamples) []byte {
	return infoJSONOf(version, lines(shards))
}

// shardLine is a shard's line of .info.json: its name and its number of
// samples.
type shardLine struct {
	Name    string
	Samples int
}

func lines(shards []ShardSamples) []shardLine {
	ls := make([]shardLine, len(shards))
	for i, s := range shards {
		ls[i] = shardLine{s.Name, len(s.Samples)}
	}
	return ls
}

func infoJSONOf(version string, shards []shardLine) []byte {
	b := []byte("{\n  \"energon_version\": ")
	b = appendPyJSONString(b, version)
	b = append(b, ",\n  \"shard_counts\": {"...)
	for i, s := range shards {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, "\n    "...)
		b = appendPyJSONString(b, s.Name)
		b = append(b, ": "...)
		b = strconv.AppendInt(b, int64(s.Samples), 10)
	}
	if len(shards) > 0 {
		b = append(b, "\n  "...)
	}
	return append(b, "}\n}"...)
}

// appendPyJSONString appends s (UTF-8) as Python's json module writes a
// string with ensure_ascii: '"', '\\' and the characters outside ' '..'~'
// escaped, the usual five by their letter, the others as \u and four
// lower-case hex digits (a surrogate pair beyond U+FFFF).
func appendPyJSONString(b []byte, s string) []byte {
	const hexDigits = "0123456789abcdef"
	u := func(b []byte, r rune) []byte {
		return append(b, '\\', 'u', hexDigits[r>>12&15], hexDigits[r>>8&15], hexDigits[r>>4&15], hexDigits[r&15])
	}
	b = append(b, '"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b = append(b, '\\', byte(r))
		case r == '\n':
			b = append(b, '\\', 'n')
		case r == '\r':
			b = append(b, '\\', 'r')
		case r == '\t':
			b = append(b, '\\', 't')
		case r == '\b':
			b = append(b, '\\', 'b')
		case r == '\f':
			b = append(b, '\\', 'f')
		case r >= ' ' && r <= '~':
			b = append(b, byte(r))
		case r >= 0x10000:
			r -= 0x10000
			b = u(b, 0xd800|r>>10)
			b = u(b, 0xdc00|r&0x3ff)
		default:
			b = u(b, r)
		}
	}
	return append(b, '"')
}

// infoYAML is the legacy .info.yaml as energon rewrites it: PyYAML's
// yaml.dump of the same object as .info.json, with its defaults, keys
// sorted (shards by their characters).
func infoYAML(version string, shards []ShardSamples) []byte {
	return infoYAMLOf(version, lines(shards))
}

func infoYAMLOf(version string, shards []shardLine) []byte {
	counts := make([]ypair, len(shards))
	for i, s := range shards {
		counts[i] = ypair{key: s.Name, val: &ynode{kind: yInt, text: strconv.Itoa(s.Samples)}}
	}
	sortPairs(counts)
	return emitYAML(&ynode{kind: yMap, pairs: []ypair{
		{key: "energon_version", val: &ynode{kind: yStr, text: version}},
		{key: "shard_counts", val: &ynode{kind: yMap, pairs: counts}},
	}})
}

// A node is a parsed .nv-meta file (JSON or YAML): a scalar, a sequence,
// a mapping (keys in order), or null.
type node struct {
	kind   nodeKind
	text   string // scalar
	quoted bool   // scalar: a JSON string, a quoted YAML scalar
	items  []*node
	keys   []string
	vals   []*node
}

type nodeKind int

const (
	nodeNull nodeKind = iota
	nodeScalar
	nodeSeq
	nodeMap
)

func (k nodeKind) String() string {
	return [...]string{"null", "a scalar", "a list", "a mapping"}[k]
}

// maxDepth bounds the nesting of a parsed file: energon's have three
// levels.
const maxDepth = 64

// parseJSON reads a JSON document into a node, keeping the order of keys;
// a key twice in an object is ErrFormat.
func parseJSON(data []byte) (*node, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	n, err := jsonValue(dec, 0)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrFormat, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("%w: data after the JSON value", ErrFormat)
	}
	return n, nil
}

func jsonValue(dec *json.Decoder, depth int) (*node, error) {
	if depth > maxDepth {
		return nil, errors.New("nested too deep")
	}
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case nil:
		return &node{kind: nodeNull}, nil
	case string:
		return &node{kind: nodeScalar, text: t, quoted: true}, nil
	case json.Number:
		return &node{kind: nodeScalar, text: string(t)}, nil
	case bool:
		return &node{kind: nodeScalar, text: strconv.FormatBool(t)}, nil
	case json.Delim:
		switch t {
		case '[':
			n := &node{kind: nodeSeq}
			for dec.More() {
				v, err := jsonValue(dec, depth+1)
				if err != nil {
					return nil, err
				}
				n.items = append(n.items, v)
			}
			_, err := dec.Token()
			return n, err
		case '{':
			n := &node{kind: nodeMap}
			seen := map[string]bool{}
			for dec.More() {
				k, err := dec.Token()
				if err != nil {
					return nil, err
				}
				key, _ := k.(string)
				if seen[key] {
					return nil, fmt.Errorf("key %q twice in an object", key)
				}
				seen[key] = true
				v, err := jsonValue(dec, depth+1)
				if err != nil {
					return nil, err
				}
				n.keys, n.vals = append(n.keys, key), append(n.vals, v)
			}
			_, err := dec.Token()
			return n, err
		}
	}
	return nil, fmt.Errorf("unexpected %v", tok)
}

// info is what .info.json (or .info.yaml) says.
type info struct {
	version string // "" for null
	names   []string
	counts  []int64
}

// readInfo interprets a parsed .info.json or .info.yaml as energon's
// loader does (strictly: no other key).
func readInfo(n *node) (*info, error) {
	if n.kind != nodeMap {
		return nil, fmt.Errorf("%w: %s, not a mapping", ErrFormat, n.kind)
	}
	in := &info{}
	haveCounts := false
	for i, k := range n.keys {
		v := n.vals[i]
		switch k {
		case "energon_version":
			switch v.kind {
			case nodeNull:
			case nodeScalar:
				in.version = v.text
			default:
				return nil, fmt.Errorf("%w: energon_version is %s", ErrFormat, v.kind)
			}
		case "shard_counts":
			if v.kind != nodeMap {
				return nil, fmt.Errorf("%w: shard_counts is %s, not a mapping", ErrFormat, v.kind)
			}
			haveCounts = true
			for j, name := range v.keys {
				c := v.vals[j]
				if c.kind != nodeScalar || c.quoted {
					return nil, fmt.Errorf("%w: the count of shard %q is no number", ErrFormat, name)
				}
				count, err := strconv.ParseInt(c.text, 10, 64)
				if err != nil || count < 0 {
					return nil, fmt.Errorf("%w: the count of shard %q is %q", ErrFormat, name, c.text)
				}
				in.names = append(in.names, name)
				in.counts = append(in.counts, count)
			}
		default:
			return nil, fmt.Errorf("%w: unknown key %q", ErrFormat, k)
		}
	}
	if !haveCounts {
		return nil, fmt.Errorf("%w: no shard_counts", ErrFormat)
	}
	seen := make(map[string]bool, len(in.names))
	for _, name := range in.names {
		if seen[name] {
			return nil, fmt.Errorf("%w: shard %q twice in shard_counts", ErrFormat, name)
		}
		if !utf8.ValidString(name) {
			return nil, fmt.Errorf("%w: shard name %q is not UTF-8", ErrFormat, name)
		}
		seen[name] = true
	}
	return in, nil
}
