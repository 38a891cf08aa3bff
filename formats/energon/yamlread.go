package energon

import (
	"bytes"
	"fmt"
	"io"
	"unicode/utf8"

	"gopkg.in/yaml.v3"
)

// maxYAMLSize bounds split.yaml and .info.yaml, checked before parsing:
// a parsed document takes some tens of times its size in memory.
// Energon's files are far smaller (.info.yaml has a line of some 40 bytes
// a shard: 16 MiB is 400,000 shards).
const maxYAMLSize = 16 << 20

// parseYAML reads split.yaml or .info.yaml with yaml.v3 into a node, the
// tree the readers of .info.json and split.json read too. It takes one
// UTF-8 document and refuses (ErrFormat) what energon never writes and
// what would let a file say something its reader does not see: a key
// twice in a mapping, a key that is not a scalar, anchors, aliases,
// tags, block scalars ("|", ">"), a second document.
func parseYAML(data []byte) (*node, error) {
	if len(data) > maxYAMLSize {
		return nil, fmt.Errorf("%w: YAML of more than %d bytes", ErrFormat, maxYAMLSize)
	}
	if !utf8.Valid(data) {
		// yaml.v3 would also take UTF-16; energon reads UTF-8.
		return nil, fmt.Errorf("%w: YAML that is not UTF-8", ErrFormat)
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err == io.EOF {
		return &node{kind: nodeNull}, nil // nothing but comments
	} else if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrFormat, err)
	}
	var next yaml.Node
	switch err := dec.Decode(&next); {
	case err == nil:
		return nil, fmt.Errorf("%w: YAML line %d: a second document", ErrFormat, next.Line)
	case err != io.EOF:
		return nil, fmt.Errorf("%w: %v", ErrFormat, err)
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) != 1 {
		return nil, fmt.Errorf("%w: YAML that is no document", ErrFormat)
	}
	return fromYAML(doc.Content[0], 0)
}

// fromYAML converts a node yaml.v3 parsed, checking what parseYAML
// refuses.
func fromYAML(y *yaml.Node, depth int) (*node, error) {
	switch {
	case depth > maxDepth:
		return nil, yamlError(y, "nested too deep")
	case y.Kind == yaml.AliasNode || y.Anchor != "":
		return nil, yamlError(y, "an anchor or alias")
	case y.Style&yaml.TaggedStyle != 0:
		return nil, yamlError(y, "a tag")
	}
	switch y.Kind {
	case yaml.ScalarNode:
		switch {
		case y.Style&(yaml.LiteralStyle|yaml.FoldedStyle) != 0:
			return nil, yamlError(y, "a block scalar")
		case y.ShortTag() == "!!null":
			return &node{kind: nodeNull}, nil
		}
		quoted := y.Style&(yaml.SingleQuotedStyle|yaml.DoubleQuotedStyle) != 0
		return &node{kind: nodeScalar, text: y.Value, quoted: quoted}, nil
	case yaml.SequenceNode:
		n := &node{kind: nodeSeq, items: make([]*node, len(y.Content))}
		for i, c := range y.Content {
			item, err := fromYAML(c, depth+1)
			if err != nil {
				return nil, err
			}
			n.items[i] = item
		}
		return n, nil
	case yaml.MappingNode:
		n := &node{kind: nodeMap}
		seen := make(map[string]bool, len(y.Content)/2)
		for i := 0; i+1 < len(y.Content); i += 2 {
			k, err := fromYAML(y.Content[i], depth+1)
			if err != nil {
				return nil, err
			}
			if k.kind != nodeScalar && k.kind != nodeNull {
				return nil, yamlError(y.Content[i], "a key that is not a scalar")
			}
			if seen[k.text] { // a null key is ""
				return nil, yamlError(y.Content[i], fmt.Sprintf("key %q twice in a mapping", k.text))
			}
			seen[k.text] = true
			v, err := fromYAML(y.Content[i+1], depth+1)
			if err != nil {
				return nil, err
			}
			n.keys, n.vals = append(n.keys, k.text), append(n.vals, v)
		}
		return n, nil
	}
	return nil, yamlError(y, "an unknown kind of node")
}

// yamlError is ErrFormat at y's place in the document.
func yamlError(y *yaml.Node, what string) error {
	return fmt.Errorf("%w: YAML line %d column %d: %s", ErrFormat, y.Line, y.Column, what)
}
