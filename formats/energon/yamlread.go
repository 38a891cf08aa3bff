package energon

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// parseYAML reads the YAML of split.yaml and .info.yaml into a node: block
// mappings and sequences (a sequence may sit at its key's indentation, as
// PyYAML writes it), "? key" entries, flow sequences and mappings, plain,
// single- and double-quoted scalars over any number of lines (folded as
// YAML folds them), comments, a leading "---". Anchors, aliases, tags and
// block scalars ("|", ">") are ErrFormat: energon writes none, and a
// reader of its own files needs none.
func parseYAML(data []byte) (*node, error) {
	if !utf8.Valid(data) {
		return nil, fmt.Errorf("%w: YAML that is not UTF-8", ErrFormat)
	}
	p := &yparser{s: strings.ReplaceAll(string(data), "\r\n", "\n")}
	p.s = strings.TrimPrefix(p.s, "\ufeff")
	n, err := p.document()
	if err != nil {
		line := strings.Count(p.s[:min(p.pos, len(p.s))], "\n") + 1
		return nil, fmt.Errorf("%w: YAML line %d: %v", ErrFormat, line, err)
	}
	return n, nil
}

type yparser struct {
	s     string
	pos   int
	depth int
}

var errYAMLDepth = errors.New("nested too deep")

func (p *yparser) enter() error {
	if p.depth++; p.depth > maxDepth {
		return errYAMLDepth
	}
	return nil
}

func (p *yparser) leave() { p.depth-- }

func (p *yparser) document() (*node, error) {
	if ind := p.nextContent(); ind == 0 && p.lineIs("---") {
		p.skipLine()
	}
	n, err := p.block(-1, -1)
	if err != nil {
		return nil, err
	}
	if ind := p.nextContent(); ind == 0 && p.lineIs("...") {
		p.skipLine()
		ind = p.nextContent()
	}
	if p.pos < len(p.s) {
		return nil, errors.New("unexpected content")
	}
	return n, nil
}

// lineIs tells whether the line at pos is marker, alone or before a
// space or a comment.
func (p *yparser) lineIs(marker string) bool {
	rest := p.s[p.pos:]
	if !strings.HasPrefix(rest, marker) {
		return false
	}
	rest = rest[len(marker):]
	return rest == "" || rest[0] == '\n' || rest[0] == ' ' || rest[0] == '\t'
}

// nextContent moves pos to the start of the next line with content (not
// blank, not a comment) and gives its indentation, -1 at the end.
func (p *yparser) nextContent() int {
	for p.pos < len(p.s) {
		i := p.pos
		for i < len(p.s) && p.s[i] == ' ' {
			i++
		}
		j := i
		for j < len(p.s) && p.s[j] == '\t' {
			j++
		}
		if j == len(p.s) || p.s[j] == '\n' || p.s[j] == '#' {
			p.skipLine()
			continue
		}
		return i - p.pos
	}
	return -1
}

// skipLine moves pos past the end of the current line.
func (p *yparser) skipLine() {
	if i := strings.IndexByte(p.s[p.pos:], '\n'); i >= 0 {
		p.pos += i + 1
	} else {
		p.pos = len(p.s)
	}
}

// column is pos's column.
func (p *yparser) column() int {
	return p.pos - (strings.LastIndexByte(p.s[:p.pos], '\n') + 1)
}

// endOfLine checks that only blanks and a comment follow pos on its line,
// and moves past it.
func (p *yparser) endOfLine() error {
	p.skipBlanks()
	if p.pos < len(p.s) && p.s[p.pos] != '\n' && p.s[p.pos] != '#' {
		return fmt.Errorf("unexpected %q", p.s[p.pos:p.pos+min(10, len(p.s)-p.pos)])
	}
	p.skipLine()
	return nil
}

func (p *yparser) skipBlanks() {
	for p.pos < len(p.s) && (p.s[p.pos] == ' ' || p.s[p.pos] == '\t') {
		p.pos++
	}
}

// atLineEnd tells whether nothing but blanks and a comment follow pos.
func (p *yparser) atLineEnd() bool {
	i := p.pos
	for i < len(p.s) && (p.s[i] == ' ' || p.s[i] == '\t') {
		i++
	}
	return i == len(p.s) || p.s[i] == '\n' || p.s[i] == '#'
}

// isIndicator tells whether c at pos, followed by a blank or the end of
// the line, is an indicator ("- ", "? ", ": ").
func (p *yparser) isIndicator(at int, c byte) bool {
	if at >= len(p.s) || p.s[at] != c {
		return false
	}
	return at+1 == len(p.s) || p.s[at+1] == ' ' || p.s[at+1] == '\t' || p.s[at+1] == '\n'
}

// block parses the node that starts on the next line with content, if it
// is indented more than parent; a sequence may also start at seqAt (the
// indentation of the mapping whose value it is). Without one, null.
func (p *yparser) block(parent, seqAt int) (*node, error) {
	if err := p.enter(); err != nil {
		return nil, err
	}
	defer p.leave()
	ind := p.nextContent()
	if ind < 0 {
		return &node{kind: nodeNull}, nil
	}
	if ind == 0 && (p.lineIs("---") || p.lineIs("...")) {
		return &node{kind: nodeNull}, nil
	}
	at := p.pos + ind
	if ind == seqAt && p.isIndicator(at, '-') {
		return p.sequence(ind)
	}
	if ind <= parent {
		return &node{kind: nodeNull}, nil
	}
	p.pos = at
	switch {
	case p.isIndicator(at, '-'):
		return p.sequence(ind)
	case p.isIndicator(at, '?') || p.keyAhead():
		return p.mapping(ind)
	}
	n, err := p.inline(parent)
	if err != nil {
		return nil, err
	}
	return n, p.endOfLine()
}

// keyAhead tells whether a simple key ("key:" and a blank or the end of
// the line) starts at pos.
func (p *yparser) keyAhead() bool {
	save := p.pos
	defer func() { p.pos = save }()
	if _, err := p.key(); err != nil {
		return false
	}
	p.skipBlanks()
	return p.isIndicator(p.pos, ':')
}

// value parses what follows a "?" or ":" indicator of a mapping at
// column ind: a block on the lines below (blockInd as for block), or a
// node inline that ends the line.
func (p *yparser) value(ind, blockInd int) (*node, error) {
	if p.atLineEnd() {
		p.skipLine()
		return p.block(ind, blockInd)
	}
	p.skipBlanks()
	n, err := p.inline(ind)
	if err == nil {
		err = p.endOfLine()
	}
	return n, err
}

// sequence parses a block sequence whose entries start at column ind;
// pos is at the first entry's line or its "-".
func (p *yparser) sequence(ind int) (*node, error) {
	n := &node{kind: nodeSeq}
	for {
		p.pos += ind - p.column()
		p.pos++ // "-"
		var item *node
		var err error
		if p.atLineEnd() {
			p.skipLine()
			item, err = p.block(ind, -1)
		} else {
			p.skipBlanks()
			item, err = p.entry(ind)
		}
		if err != nil {
			return nil, err
		}
		n.items = append(n.items, item)
		next := p.nextContent()
		if next != ind || !p.isIndicator(p.pos+ind, '-') {
			if next > ind {
				return nil, errors.New("unexpected indentation")
			}
			return n, nil
		}
	}
}

// entry parses a sequence entry's content that starts on its "-" line
// at pos: a nested sequence or mapping starting there, or a value.
func (p *yparser) entry(ind int) (*node, error) {
	col := p.column()
	switch {
	case p.isIndicator(p.pos, '-'):
		if err := p.enter(); err != nil {
			return nil, err
		}
		defer p.leave()
		return p.sequence(col)
	case p.isIndicator(p.pos, '?') || p.keyAhead():
		if err := p.enter(); err != nil {
			return nil, err
		}
		defer p.leave()
		return p.mapping(col)
	}
	n, err := p.inline(ind)
	if err != nil {
		return nil, err
	}
	return n, p.endOfLine()
}

// mapping parses a block mapping whose keys start at column ind; pos is
// at the first key.
func (p *yparser) mapping(ind int) (*node, error) {
	n := &node{kind: nodeMap}
	seen := map[string]bool{}
	for {
		p.pos += ind - p.column()
		var key *node
		var err error
		complexKey := p.isIndicator(p.pos, '?')
		if complexKey {
			p.pos++
			if key, err = p.value(ind, -1); err != nil {
				return nil, err
			}
			if p.nextContent() != ind || !p.isIndicator(p.pos+ind, ':') {
				return nil, errors.New(`"?" key without its ":" value`)
			}
			p.pos += ind
		} else {
			if key, err = p.key(); err != nil {
				return nil, err
			}
			p.skipBlanks()
			if !p.isIndicator(p.pos, ':') {
				return nil, errors.New(`a mapping key without ":"`)
			}
		}
		p.pos++ // ":"
		if key.kind == nodeSeq || key.kind == nodeMap {
			return nil, errors.New("a key that is not a scalar")
		}
		val, err := p.value(ind, ind)
		if err != nil {
			return nil, err
		}
		k := key.text
		if key.kind == nodeNull {
			k = ""
		}
		if seen[k] {
			return nil, fmt.Errorf("key %q twice in a mapping", k)
		}
		seen[k] = true
		n.keys, n.vals = append(n.keys, k), append(n.vals, val)
		next := p.nextContent()
		if next != ind || p.isIndicator(p.pos+ind, '-') || ind == 0 && p.lineIs("...") {
			if next > ind {
				return nil, errors.New("unexpected indentation")
			}
			if next == ind && p.isIndicator(p.pos+ind, '-') {
				return nil, errors.New("a sequence entry in a mapping")
			}
			return n, nil
		}
	}
}

// key parses a simple key at pos: a quoted scalar, or plain text up to
// ": ", on one line.
func (p *yparser) key() (*node, error) {
	if p.pos < len(p.s) && (p.s[p.pos] == '"' || p.s[p.pos] == '\'') {
		start := p.pos
		n, err := p.quoted()
		if err == nil && strings.Contains(p.s[start:p.pos], "\n") {
			err = errors.New("a key over more than one line")
		}
		return n, err
	}
	if err := p.plainStart(); err != nil {
		return nil, err
	}
	start := p.pos
	for p.pos < len(p.s) && p.s[p.pos] != '\n' {
		if p.isIndicator(p.pos, ':') || p.s[p.pos] == '#' && p.pos > start && (p.s[p.pos-1] == ' ' || p.s[p.pos-1] == '\t') {
			break
		}
		p.pos++
	}
	text := strings.TrimRight(p.s[start:p.pos], " \t")
	if text == "" {
		return nil, errors.New("an empty key")
	}
	return plainNode(text), nil
}

// plainStart refuses what YAML does not take as the start of a plain
// scalar, and what this reader does not read.
func (p *yparser) plainStart() error {
	if p.pos >= len(p.s) {
		return errors.New("a value is missing")
	}
	switch c := p.s[p.pos]; c {
	case '|', '>':
		return errors.New("a block scalar")
	case '&', '*', '!':
		return errors.New("an anchor, alias or tag")
	case '@', '`', '%', ',', ']', '}':
		return fmt.Errorf("a value that starts with %q", c)
	}
	return nil
}

// plainNode is a plain scalar: null when YAML reads it as null.
func plainNode(text string) *node {
	switch text {
	case "", "~", "null", "Null", "NULL":
		return &node{kind: nodeNull}
	}
	return &node{kind: nodeScalar, text: text}
}

// inline parses a value that starts at pos: a flow collection, a quoted
// scalar, or a plain scalar whose continuation lines are indented more
// than parent.
func (p *yparser) inline(parent int) (*node, error) {
	if p.pos >= len(p.s) || p.s[p.pos] == '\n' || p.s[p.pos] == '#' {
		return &node{kind: nodeNull}, nil
	}
	switch p.s[p.pos] {
	case '[', '{':
		return p.flow()
	case '"', '\'':
		return p.quoted()
	}
	if err := p.plainStart(); err != nil {
		return nil, err
	}
	var lines []string
	blank := 0
	var b strings.Builder
	for {
		start := p.pos
		for p.pos < len(p.s) && p.s[p.pos] != '\n' {
			if p.s[p.pos] == '#' && p.pos > start && (p.s[p.pos-1] == ' ' || p.s[p.pos-1] == '\t') {
				break
			}
			if p.isIndicator(p.pos, ':') {
				return nil, errors.New(`":" in a plain value`)
			}
			p.pos++
		}
		line := strings.Trim(p.s[start:p.pos], " \t")
		if len(lines) > 0 {
			if blank == 0 {
				b.WriteByte(' ')
			} else {
				b.WriteString(strings.Repeat("\n", blank))
			}
		}
		b.WriteString(line)
		lines = append(lines, line)
		if p.pos < len(p.s) && p.s[p.pos] == '#' {
			break // a comment ends the value
		}
		// A next line indented more than parent continues the value;
		// blank lines between count.
		save := p.pos
		p.skipLine()
		blank = 0
		cont := false
		for p.pos < len(p.s) {
			i := p.pos
			for i < len(p.s) && p.s[i] == ' ' {
				i++
			}
			j := i
			for j < len(p.s) && (p.s[j] == ' ' || p.s[j] == '\t') {
				j++
			}
			if j == len(p.s) || p.s[j] == '\n' {
				blank++
				p.skipLine()
				continue
			}
			cont = i-p.pos > parent && p.s[j] != '#' && !(i == p.pos && (strings.HasPrefix(p.s[i:], "---") || strings.HasPrefix(p.s[i:], "...")))
			if cont {
				p.pos = j
			}
			break
		}
		if !cont {
			p.pos = save
			break
		}
	}
	return plainNode(b.String()), nil
}

// quoted parses a single- or double-quoted scalar at pos, which may span
// lines: a line break and the blanks around it fold into a space, or into
// the line feeds of the blank lines that follow it; in double quotes, a
// backslash before the line break joins the lines.
func (p *yparser) quoted() (*node, error) {
	q := p.s[p.pos]
	p.pos++
	var out []byte
	solid := 0 // out's length up to its last character that is no folding blank
	for {
		if p.pos >= len(p.s) {
			return nil, errors.New("a quoted value without its end")
		}
		c := p.s[p.pos]
		switch {
		case c == q && q == '\'' && p.pos+1 < len(p.s) && p.s[p.pos+1] == '\'':
			out = append(out, '\'')
			p.pos += 2
			solid = len(out)
		case c == q:
			p.pos++
			return &node{kind: nodeScalar, text: string(out), quoted: true}, nil
		case c == '\n':
			out = out[:solid]
			p.pos++
			blank := p.skipFoldedLines()
			if blank == 0 {
				out = append(out, ' ')
			} else {
				out = append(out, strings.Repeat("\n", blank)...)
			}
			solid = len(out)
		case c == '\\' && q == '"':
			p.pos++
			if p.pos < len(p.s) && p.s[p.pos] == '\n' {
				p.pos++
				out = append(out, strings.Repeat("\n", p.skipFoldedLines())...)
				solid = len(out)
				continue
			}
			r, err := p.escape()
			if err != nil {
				return nil, err
			}
			out = utf8.AppendRune(out, r)
			solid = len(out)
		default:
			out = append(out, c)
			p.pos++
			if c != ' ' && c != '\t' {
				solid = len(out)
			}
		}
	}
}

// skipFoldedLines skips the blank lines after a line break in a quoted
// value and the blanks that start the next line, giving the number of
// blank lines.
func (p *yparser) skipFoldedLines() int {
	blank := 0
	for {
		p.skipBlanks()
		if p.pos < len(p.s) && p.s[p.pos] == '\n' {
			blank++
			p.pos++
			continue
		}
		return blank
	}
}

// escape reads the escape after a backslash in double quotes.
func (p *yparser) escape() (rune, error) {
	if p.pos >= len(p.s) {
		return 0, errors.New("a backslash at the end")
	}
	c := p.s[p.pos]
	p.pos++
	simple := map[byte]rune{'0': 0, 'a': 7, 'b': 8, 't': 9, '\t': 9, 'n': 10, 'v': 11, 'f': 12, 'r': 13, 'e': 0x1b,
		' ': ' ', '"': '"', '/': '/', '\\': '\\', 'N': 0x85, '_': 0xa0, 'L': 0x2028, 'P': 0x2029}
	if r, ok := simple[c]; ok {
		return r, nil
	}
	n := map[byte]int{'x': 2, 'u': 4, 'U': 8}[c]
	if n == 0 || p.pos+n > len(p.s) {
		return 0, fmt.Errorf("an unknown escape \\%c", c)
	}
	v, err := strconv.ParseUint(p.s[p.pos:p.pos+n], 16, 32)
	if err != nil || v > utf8.MaxRune || v >= 0xd800 && v < 0xe000 {
		return 0, fmt.Errorf("a bad escape \\%c%s", c, p.s[p.pos:p.pos+n])
	}
	p.pos += n
	return rune(v), nil
}

// flow parses a flow sequence "[a, b]" or mapping "{a: b}" at pos, on
// any number of lines.
func (p *yparser) flow() (*node, error) {
	if err := p.enter(); err != nil {
		return nil, err
	}
	defer p.leave()
	open := p.s[p.pos]
	close := byte(']')
	n := &node{kind: nodeSeq}
	if open == '{' {
		close, n.kind = '}', nodeMap
	}
	p.pos++
	seen := map[string]bool{}
	for {
		p.skipFlowSpace()
		if p.pos >= len(p.s) {
			return nil, errors.New("a flow collection without its end")
		}
		if p.s[p.pos] == close {
			p.pos++
			return n, nil
		}
		v, err := p.flowValue()
		if err != nil {
			return nil, err
		}
		if n.kind == nodeMap {
			if v.kind == nodeSeq || v.kind == nodeMap {
				return nil, errors.New("a key that is not a scalar")
			}
			p.skipFlowSpace()
			if p.pos >= len(p.s) || p.s[p.pos] != ':' {
				return nil, errors.New(`a flow mapping key without ":"`)
			}
			p.pos++
			p.skipFlowSpace()
			val, err := p.flowValue()
			if err != nil {
				return nil, err
			}
			if seen[v.text] {
				return nil, fmt.Errorf("key %q twice in a mapping", v.text)
			}
			seen[v.text] = true
			n.keys, n.vals = append(n.keys, v.text), append(n.vals, val)
		} else {
			n.items = append(n.items, v)
		}
		p.skipFlowSpace()
		if p.pos < len(p.s) && p.s[p.pos] == ',' {
			p.pos++
		} else if p.pos >= len(p.s) || p.s[p.pos] != close {
			return nil, errors.New("a flow collection entry without ','")
		}
	}
}

// skipFlowSpace skips blanks, line breaks and comments in a flow
// collection.
func (p *yparser) skipFlowSpace() {
	for p.pos < len(p.s) {
		switch c := p.s[p.pos]; {
		case c == ' ' || c == '\t' || c == '\n':
			p.pos++
		case c == '#' && (p.pos == 0 || strings.ContainsRune(" \t\n", rune(p.s[p.pos-1]))):
			p.skipLine()
		default:
			return
		}
	}
}

// flowValue parses a value inside a flow collection: a nested one, a
// quoted scalar, or plain text on one line up to ",", ":", a bracket.
func (p *yparser) flowValue() (*node, error) {
	if p.pos < len(p.s) {
		switch p.s[p.pos] {
		case '[', '{':
			return p.flow()
		case '"', '\'':
			return p.quoted()
		}
	}
	if err := p.plainStart(); err != nil {
		return nil, err
	}
	start := p.pos
	for p.pos < len(p.s) && !strings.ContainsRune(",[]{}\n", rune(p.s[p.pos])) && !p.isIndicator(p.pos, ':') {
		if p.s[p.pos] == '#' && p.pos > start && (p.s[p.pos-1] == ' ' || p.s[p.pos-1] == '\t') {
			break
		}
		p.pos++
	}
	return plainNode(strings.Trim(p.s[start:p.pos], " \t")), nil
}
