package energon

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"
)

// This file writes YAML as PyYAML's yaml.dump writes energon's split.yaml
// and .info.yaml (default Dumper, default options: block style, indent 2,
// width 80, no unicode, "\n" line breaks): a mapping of mappings, lists of
// strings and integers. Every string takes the style PyYAML's emitter
// picks for it (plain, single- or double-quoted), with its line folding,
// so that any shard name comes out byte for byte as PyYAML writes it.

// ykind is the kind of a node to emit.
type ykind int

const (
	yStr ykind = iota
	yInt       // text holds the decimal number
	ySeq
	yMap
)

// ynode is a node to emit.
type ynode struct {
	kind  ykind
	text  string
	items []*ynode
	pairs []ypair
}

// ypair is an entry of a mapping: keys are strings.
type ypair struct {
	key string
	val *ynode
}

// sortPairs sorts a mapping's entries as yaml.dump's sort_keys does: by
// key, comparing characters (as UTF-8 bytes compare).
func sortPairs(p []ypair) {
	slices.SortStableFunc(p, func(a, b ypair) int { return strings.Compare(a.key, b.key) })
}

// The emitter's constants: PyYAML's best_indent and best_width.
const (
	yamlIndent = 2
	yamlWidth  = 80
)

// yemitter is PyYAML's Emitter reduced to the nodes above: its state is
// the same (the indentation stack, the column, whether the last character
// written was white space or indentation, the contexts of the node being
// written), and so are its decisions.
type yemitter struct {
	out        []byte
	indents    []int
	indent     int // -1: none yet
	flowLevel  int
	mapCtx     bool
	simpleKey  bool
	column     int
	whitespace bool
	indention  bool
}

// emitYAML writes a document as yaml.dump does: implicit start, the root
// node, a final line break.
func emitYAML(root *ynode) []byte {
	e := &yemitter{indent: -1, whitespace: true, indention: true}
	e.node(root, false, false)
	e.writeIndent()
	return e.out
}

func (e *yemitter) node(n *ynode, mapping, simpleKey bool) {
	e.mapCtx, e.simpleKey = mapping, simpleKey
	switch n.kind {
	case yStr, yInt:
		e.increaseIndent(true, false)
		e.scalar(n)
		e.popIndent()
	case ySeq:
		if len(n.items) == 0 {
			e.emptyFlow("[", "]")
			return
		}
		e.increaseIndent(false, e.mapCtx && !e.indention)
		for _, item := range n.items {
			e.writeIndent()
			e.writeIndicator("-", true, false, true)
			e.node(item, false, false)
		}
		e.popIndent()
	case yMap:
		if len(n.pairs) == 0 {
			e.emptyFlow("{", "}")
			return
		}
		e.increaseIndent(false, false)
		for _, p := range n.pairs {
			e.writeIndent()
			key := &ynode{kind: yStr, text: p.key}
			if simpleKeyOK(p.key) {
				e.node(key, true, true)
				e.writeIndicator(":", false, false, false)
			} else {
				e.writeIndicator("?", true, false, true)
				e.node(key, true, false)
				e.writeIndent()
				e.writeIndicator(":", true, false, true)
			}
			e.node(p.val, true, false)
		}
		e.popIndent()
	}
}

// emptyFlow writes an empty collection, "[]" or "{}", in flow style.
func (e *yemitter) emptyFlow(open, close string) {
	e.writeIndicator(open, true, true, false)
	e.flowLevel++
	e.increaseIndent(true, false)
	e.popIndent()
	e.flowLevel--
	e.writeIndicator(close, false, false, false)
}

// simpleKeyOK tells whether a string key is written as "key: value" or,
// too long (with its tag "!!str", 128 characters or more) or spanning
// lines, as "? key" and ": value" on lines of their own.
func simpleKeyOK(key string) bool {
	a := analyzeScalar([]rune(key))
	return len("!!str")+a.length < 128 && !a.empty && !a.multiline
}

func (e *yemitter) increaseIndent(flow, indentless bool) {
	e.indents = append(e.indents, e.indent)
	switch {
	case e.indent < 0 && flow:
		e.indent = yamlIndent
	case e.indent < 0:
		e.indent = 0
	case !indentless:
		e.indent += yamlIndent
	}
}

func (e *yemitter) popIndent() {
	e.indent = e.indents[len(e.indents)-1]
	e.indents = e.indents[:len(e.indents)-1]
}

func (e *yemitter) write(s string) {
	e.out = append(e.out, s...)
	e.column += utf8.RuneCountInString(s)
}

func (e *yemitter) writeIndicator(ind string, needWhitespace, whitespace, indention bool) {
	if !e.whitespace && needWhitespace {
		ind = " " + ind
	}
	e.whitespace = whitespace
	e.indention = e.indention && indention
	e.write(ind)
}

func (e *yemitter) writeIndent() {
	indent := max(e.indent, 0)
	if !e.indention || e.column > indent || (e.column == indent && !e.whitespace) {
		e.writeLineBreak('\n')
	}
	if e.column < indent {
		e.whitespace = true
		e.write(strings.Repeat(" ", indent-e.column))
	}
}

func (e *yemitter) writeLineBreak(br rune) {
	e.whitespace = true
	e.indention = true
	e.out = utf8.AppendRune(e.out, br)
	e.column = 0
}

// scalarAnalysis is what PyYAML's analyze_scalar finds in a string.
type scalarAnalysis struct {
	length                          int // characters
	empty, multiline                bool
	allowFlowPlain, allowBlockPlain bool
	allowSingleQuoted               bool
}

func isBreak(ch rune) bool { return ch == '\n' || ch == 0x85 || ch == 0x2028 || ch == 0x2029 }

func isSpaceOrBreak(ch rune) bool {
	return ch == 0 || ch == ' ' || ch == '\t' || ch == '\r' || isBreak(ch)
}

// analyzeScalar decides which styles can write s, with the rules of
// PyYAML's analyze_scalar (allow_unicode off: any character outside
// printable ASCII, but the line feed, needs double quotes).
func analyzeScalar(s []rune) scalarAnalysis {
	if len(s) == 0 {
		return scalarAnalysis{empty: true, allowBlockPlain: true, allowSingleQuoted: true}
	}
	flowInd, blockInd := scalarIndicators(s)
	sp := scanSpaces(s)
	a := scalarAnalysis{length: len(s), multiline: sp.lineBreaks, allowFlowPlain: true, allowBlockPlain: true, allowSingleQuoted: true}
	if sp.leadingSpace || sp.leadingBreak || sp.trailingSpace || sp.trailingBreak {
		a.allowFlowPlain, a.allowBlockPlain = false, false
	}
	if sp.breakSpace {
		a.allowFlowPlain, a.allowBlockPlain, a.allowSingleQuoted = false, false, false
	}
	if sp.spaceBreak || sp.special {
		a.allowFlowPlain, a.allowBlockPlain, a.allowSingleQuoted = false, false, false
	}
	if sp.lineBreaks {
		a.allowFlowPlain, a.allowBlockPlain = false, false
	}
	if flowInd {
		a.allowFlowPlain = false
	}
	if blockInd {
		a.allowBlockPlain = false
	}
	return a
}

// scalarIndicators reports whether a non-empty s holds a YAML indicator
// that a plain scalar cannot carry in flow context (flowInd) or in block
// context (blockInd): read back plain, it would start a comment, a
// sequence, a mapping key... These are the first half of PyYAML's
// analyze_scalar loop.
func scalarIndicators(s []rune) (flowInd, blockInd bool) {
	if str := string(s); strings.HasPrefix(str, "---") || strings.HasPrefix(str, "...") {
		blockInd, flowInd = true, true
	}
	precededByWS := true
	followedByWS := len(s) == 1 || isSpaceOrBreak(s[1])
	for i, ch := range s {
		if i == 0 {
			if strings.ContainsRune("#,[]{}&*!|>'\"%@`", ch) {
				flowInd, blockInd = true, true
			}
			if ch == '?' || ch == ':' {
				flowInd = true
				if followedByWS {
					blockInd = true
				}
			}
			if ch == '-' && followedByWS {
				flowInd, blockInd = true, true
			}
		} else {
			if strings.ContainsRune(",?[]{}", ch) {
				flowInd = true
			}
			if ch == ':' {
				flowInd = true
				if followedByWS {
					blockInd = true
				}
			}
			if ch == '#' && precededByWS {
				flowInd, blockInd = true, true
			}
		}
		precededByWS = isSpaceOrBreak(ch)
		followedByWS = i+2 >= len(s) || isSpaceOrBreak(s[i+2])
	}
	return flowInd, blockInd
}

// scalarSpaces says where spaces and line breaks sit in a scalar, and
// whether it holds a character that only double quotes can write: the
// second half of PyYAML's analyze_scalar loop, which rules out the plain
// and single-quoted styles that would lose or fold those characters.
type scalarSpaces struct {
	lineBreaks, special                                      bool
	leadingSpace, leadingBreak, trailingSpace, trailingBreak bool
	breakSpace, spaceBreak                                   bool // a space after a break, a break after a space
}

func scanSpaces(s []rune) scalarSpaces {
	var sp scalarSpaces
	prevSpace, prevBreak := false, false
	for i, ch := range s {
		if isBreak(ch) {
			sp.lineBreaks = true
		}
		if !(ch == '\n' || ch >= 0x20 && ch <= 0x7e) {
			sp.special = true
		}
		switch {
		case ch == ' ':
			if i == 0 {
				sp.leadingSpace = true
			}
			if i == len(s)-1 {
				sp.trailingSpace = true
			}
			if prevBreak {
				sp.breakSpace = true
			}
			prevSpace, prevBreak = true, false
		case isBreak(ch):
			if i == 0 {
				sp.leadingBreak = true
			}
			if i == len(s)-1 {
				sp.trailingBreak = true
			}
			if prevSpace {
				sp.spaceBreak = true
			}
			prevSpace, prevBreak = false, true
		default:
			prevSpace, prevBreak = false, false
		}
	}
	return sp
}

// scalar writes a string or an integer in the style PyYAML chooses: plain
// when the analysis allows it and YAML would read the plain text back as
// this string (not as a number, a boolean, null...), else single-quoted
// when allowed, else double-quoted. A key is never folded.
func (e *yemitter) scalar(n *ynode) {
	text := []rune(n.text)
	a := analyzeScalar(text)
	implicit := n.kind == yInt || !resolvesAsOther(n.text)
	split := !e.simpleKey
	plainOK := e.flowLevel > 0 && a.allowFlowPlain || e.flowLevel == 0 && a.allowBlockPlain
	switch {
	case implicit && !(e.simpleKey && (a.empty || a.multiline)) && plainOK:
		e.writePlain(text, split)
	case a.allowSingleQuoted && !(e.simpleKey && a.multiline):
		e.writeSingleQuoted(text, split)
	default:
		e.writeDoubleQuoted(text, split)
	}
}

func (e *yemitter) writePlain(text []rune, split bool) {
	if len(text) == 0 {
		return
	}
	if !e.whitespace {
		e.write(" ")
	}
	e.whitespace, e.indention = false, false
	spaces, breaks := false, false
	start := 0
	for end := 0; end <= len(text); end++ {
		ch := rune(-1)
		if end < len(text) {
			ch = text[end]
		}
		switch {
		case spaces:
			if ch != ' ' {
				if start+1 == end && e.column > yamlWidth && split {
					e.writeIndent()
					e.whitespace, e.indention = false, false
				} else {
					e.write(string(text[start:end]))
				}
				start = end
			}
		case breaks:
			if !isBreak(ch) {
				if text[start] == '\n' {
					e.writeLineBreak('\n')
				}
				for _, br := range text[start:end] {
					e.writeLineBreak(br)
				}
				e.writeIndent()
				e.whitespace, e.indention = false, false
				start = end
			}
		default:
			if ch < 0 || ch == ' ' || isBreak(ch) {
				e.write(string(text[start:end]))
				start = end
			}
		}
		if ch >= 0 {
			spaces, breaks = ch == ' ', isBreak(ch)
		}
	}
}

func (e *yemitter) writeSingleQuoted(text []rune, split bool) {
	e.writeIndicator("'", true, false, false)
	spaces, breaks := false, false
	start := 0
	for end := 0; end <= len(text); end++ {
		ch := rune(-1)
		if end < len(text) {
			ch = text[end]
		}
		switch {
		case spaces:
			if ch != ' ' {
				if start+1 == end && e.column > yamlWidth && split && start != 0 && end != len(text) {
					e.writeIndent()
				} else {
					e.write(string(text[start:end]))
				}
				start = end
			}
		case breaks:
			if ch < 0 || !isBreak(ch) {
				if text[start] == '\n' {
					e.writeLineBreak('\n')
				}
				for _, br := range text[start:end] {
					e.writeLineBreak(br)
				}
				e.writeIndent()
				start = end
			}
		default:
			if ch < 0 || ch == ' ' || isBreak(ch) || ch == '\'' {
				if start < end {
					e.write(string(text[start:end]))
					start = end
				}
			}
		}
		if ch == '\'' {
			e.write("''")
			start = end + 1
		}
		if ch >= 0 {
			spaces, breaks = ch == ' ', isBreak(ch)
		}
	}
	e.writeIndicator("'", false, false, false)
}

// yamlEscapes are the characters double quotes write by a letter.
var yamlEscapes = map[rune]string{
	0: "0", 0x07: "a", 0x08: "b", 0x09: "t", 0x0a: "n", 0x0b: "v", 0x0c: "f", 0x0d: "r", 0x1b: "e",
	'"': "\"", '\\': "\\", 0x85: "N", 0xa0: "_", 0x2028: "L", 0x2029: "P",
}

func (e *yemitter) writeDoubleQuoted(text []rune, split bool) {
	e.writeIndicator("\"", true, false, false)
	start := 0
	for end := 0; end <= len(text); end++ {
		ch := rune(-1)
		if end < len(text) {
			ch = text[end]
		}
		if ch < 0 || ch == '"' || ch == '\\' || !(ch >= 0x20 && ch <= 0x7e) {
			if start < end {
				e.write(string(text[start:end]))
				start = end
			}
			if ch >= 0 {
				var esc string
				switch l, ok := yamlEscapes[ch]; {
				case ok:
					esc = "\\" + l
				case ch <= 0xff:
					esc = fmt.Sprintf("\\x%02X", ch)
				case ch <= 0xffff:
					esc = fmt.Sprintf("\\u%04X", ch)
				default:
					esc = fmt.Sprintf("\\U%08X", ch)
				}
				e.write(esc)
				start = end + 1
			}
		}
		if 0 < end && end < len(text)-1 && (ch == ' ' || start >= end) && e.column+(end-start) > yamlWidth && split {
			// After an escape, start is end+1: Python's text[start:end]
			// is then empty.
			e.write(string(text[min(start, end):end]) + "\\")
			if start < end {
				start = end
			}
			e.writeIndent()
			e.whitespace, e.indention = false, false
			if text[start] == ' ' {
				e.write("\\")
			}
		}
	}
	e.writeIndicator("\"", false, false, false)
}

// YAML 1.1's implicit types, as PyYAML's Resolver tells them from a plain
// scalar: each expression with the first characters it applies to.
// Python's "$" also matches before a final newline: "\n?\z".
var yamlResolvers = []struct {
	first string // "" matches the empty string
	re    *regexp.Regexp
}{
	{"yYnNtTfFoO", regexp.MustCompile(`^(?:yes|Yes|YES|no|No|NO|true|True|TRUE|false|False|FALSE|on|On|ON|off|Off|OFF)\n?\z`)},
	{"-+0123456789.", regexp.MustCompile(`^(?:[-+]?(?:[0-9][0-9_]*)\.[0-9_]*(?:[eE][-+][0-9]+)?|\.[0-9][0-9_]*(?:[eE][-+][0-9]+)?|[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+\.[0-9_]*|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))\n?\z`)},
	{"-+0123456789", regexp.MustCompile(`^(?:[-+]?0b[0-1_]+|[-+]?0[0-7_]+|[-+]?(?:0|[1-9][0-9_]*)|[-+]?0x[0-9a-fA-F_]+|[-+]?[1-9][0-9_]*(?::[0-5]?[0-9])+)\n?\z`)},
	{"<", regexp.MustCompile(`^(?:<<)\n?\z`)},
	{"~nN", regexp.MustCompile(`^(?:~|null|Null|NULL|)\n?\z`)},
	{"0123456789", regexp.MustCompile(`^(?:[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]|[0-9][0-9][0-9][0-9]-[0-9][0-9]?-[0-9][0-9]?(?:[Tt]|[ \t]+)[0-9][0-9]?:[0-9][0-9]:[0-9][0-9](?:\.[0-9]*)?(?:[ \t]*(?:Z|[-+][0-9][0-9]?(?::[0-9][0-9])?))?)\n?\z`)},
	{"=", regexp.MustCompile(`^(?:=)\n?\z`)},
	{"!&*", regexp.MustCompile(`^(?:!|&|\*)\n?\z`)},
}

// resolvesAsOther tells whether YAML would read s, written plain, as
// something else than this string; then it must be quoted.
func resolvesAsOther(s string) bool {
	if s == "" {
		return true // null
	}
	first, _ := utf8.DecodeRuneInString(s)
	for _, r := range yamlResolvers {
		if strings.ContainsRune(r.first, first) && r.re.MatchString(s) {
			return true
		}
	}
	return false
}
