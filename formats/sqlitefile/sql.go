package sqlitefile

import (
	"fmt"
	"strings"
)

// sqlite_schema.sql keeps a CREATE statement nearly as it was typed, but
// not quite: SQLite rebuilds its start, "CREATE TABLE " or "CREATE [UNIQUE]
// INDEX ", and keeps the typed text from the object's own name on (so a
// TEMP, an IF NOT EXISTS, a "main." before the name are gone), up to
//
//   - for a table without options after its column list: that list's
//     closing parenthesis;
//   - otherwise (a table with options such as STRICT, an index): the end of
//     the statement, trailing blanks and comments included, the closing
//     semicolon excluded.
//
// The functions here reproduce that from a light tokenizer, enough to find
// those places, the names, and what this writer cannot build (a WITHOUT
// ROWID table, a partial index, an index over expressions, DESC or a
// collation other than BINARY); they do not check the SQL otherwise: sqlite
// parses it when it opens the database.

// token kinds
const (
	tkEOF   = 0
	tkWord  = 'w' // keyword, bare identifier or number
	tkIdent = 'i' // "quoted", [bracketed] or `quoted` identifier
	tkStr   = 's' // 'string'
	tkPunct = 'p' // any other character
)

type token struct {
	kind       byte
	start, end int
}

// lexer walks the tokens of one statement, skipping blanks and comments.
type lexer struct {
	s   string
	pos int
}

func (l *lexer) next() token {
	s := l.s
	i := l.pos
	for i < len(s) {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f':
			i++
		case c == '-' && i+1 < len(s) && s[i+1] == '-':
			for i < len(s) && s[i] != '\n' {
				i++
			}
		case c == '/' && i+1 < len(s) && s[i+1] == '*':
			if e := strings.Index(s[i+2:], "*/"); e >= 0 {
				i += e + 4
			} else {
				i = len(s)
			}
		default:
			goto tok
		}
	}
	l.pos = i
	return token{kind: tkEOF, start: i, end: i}
tok:
	start := i
	c := s[i]
	kind := byte(tkPunct)
	switch {
	case c == '"' || c == '`' || c == '\'':
		kind = tkIdent
		if c == '\'' {
			kind = tkStr
		}
		i++
		for i < len(s) {
			if s[i] == c {
				if i+1 < len(s) && s[i+1] == c {
					i += 2
					continue
				}
				break
			}
			i++
		}
		i++
	case c == '[':
		kind = tkIdent
		for i < len(s) && s[i] != ']' {
			i++
		}
		i++
	case isWordByte(c):
		kind = tkWord
		for i < len(s) && isWordByte(s[i]) {
			i++
		}
	default:
		i++
	}
	if i > len(s) {
		i = len(s)
	}
	l.pos = i
	return token{kind: kind, start: start, end: i}
}

func isWordByte(c byte) bool {
	return c == '_' || c == '$' || c >= 0x80 ||
		'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}

func (l *lexer) text(t token) string { return l.s[t.start:t.end] }

// is says whether t is the keyword kw (any case).
func (l *lexer) is(t token, kw string) bool {
	return t.kind == tkWord && strings.EqualFold(l.text(t), kw)
}

func (l *lexer) isPunct(t token, c byte) bool {
	return t.kind == tkPunct && l.s[t.start] == c
}

// name is the identifier t stands for, unquoted.
func (l *lexer) name(t token) (string, bool) {
	s := l.text(t)
	switch t.kind {
	case tkWord:
		return s, true
	case tkIdent, tkStr:
		if len(s) < 2 {
			return "", false
		}
		q := s[0]
		inner := s[1 : len(s)-1]
		if q == '[' {
			return inner, true
		}
		return strings.ReplaceAll(inner, string([]byte{q, q}), string(q)), true
	}
	return "", false
}

// objectName reads [schema.]name and gives the name and its token.
func (l *lexer) objectName() (string, token, bool) {
	t := l.next()
	n, ok := l.name(t)
	if !ok {
		return "", t, false
	}
	save := l.pos
	if dot := l.next(); l.isPunct(dot, '.') {
		t = l.next()
		n, ok = l.name(t)
		return n, t, ok
	}
	l.pos = save
	return n, t, true
}

// skipParens reads up to the parenthesis that closes one already read,
// and gives the closing token; it calls item at each top-level comma and
// at the end with the tokens of the item between.
func (l *lexer) skipParens(item func([]token)) (token, bool) {
	depth := 0
	var cur []token
	for {
		t := l.next()
		switch {
		case t.kind == tkEOF:
			return t, false
		case l.isPunct(t, '('):
			depth++
		case l.isPunct(t, ')'):
			if depth == 0 {
				if item != nil {
					item(cur)
				}
				return t, true
			}
			depth--
		case depth == 0 && l.isPunct(t, ','):
			if item != nil {
				item(cur)
			}
			cur = cur[:0]
			continue
		}
		cur = append(cur, t)
	}
}

// statementEnd reads to the end of the statement and gives where its
// stored text ends: before a semicolon, or at the end of the string.
func (l *lexer) statementEnd() int {
	for {
		t := l.next()
		if t.kind == tkEOF {
			return len(l.s)
		}
		if l.isPunct(t, ';') {
			return t.start
		}
	}
}

// skipIfNotExists reads past an IF NOT EXISTS clause, if one comes next
// (SQLite does not keep it in sqlite_schema); it is false for IF without
// NOT EXISTS.
func (l *lexer) skipIfNotExists() bool {
	save := l.pos
	if !l.is(l.next(), "IF") {
		l.pos = save
		return true
	}
	return l.is(l.next(), "NOT") && l.is(l.next(), "EXISTS")
}

// tableSQL checks a CREATE TABLE statement for table name and gives the
// text sqlite_schema keeps of it.
func tableSQL(name, sql string) (string, error) {
	l := &lexer{s: sql}
	bad := func(why string) (string, error) {
		return "", fmt.Errorf("%w: table %q: %s: %q", ErrSchema, name, why, sql)
	}
	if !l.is(l.next(), "CREATE") {
		return bad("not a CREATE TABLE statement")
	}
	t := l.next()
	if l.is(t, "TEMP") || l.is(t, "TEMPORARY") {
		return bad("a TEMP table is not kept in the database file")
	}
	if l.is(t, "VIRTUAL") {
		return bad("virtual tables are not supported")
	}
	if !l.is(t, "TABLE") {
		return bad("not a CREATE TABLE statement")
	}
	if !l.skipIfNotExists() {
		return bad("IF without NOT EXISTS")
	}
	n, nt, ok := l.objectName()
	if !ok {
		return bad("no table name")
	}
	if n != name {
		return bad(fmt.Sprintf("the statement creates table %q", n))
	}
	if !l.isPunct(l.next(), '(') {
		return bad("no column list (CREATE TABLE ... AS SELECT is not supported)")
	}
	closing, ok := l.skipParens(nil)
	if !ok {
		return bad("unclosed column list")
	}
	end := closing.end
	save := l.pos
	if t := l.next(); t.kind != tkEOF && !l.isPunct(t, ';') {
		// Table options: WITHOUT ROWID changes the b-tree; STRICT does not.
		for ; t.kind != tkEOF && !l.isPunct(t, ';'); t = l.next() {
			if l.is(t, "WITHOUT") {
				return bad("WITHOUT ROWID tables are not supported")
			}
		}
		l.pos = save
		end = l.statementEnd()
	}
	return "CREATE TABLE " + sql[nt.start:end], nil
}

// indexSQL checks a CREATE INDEX statement for index name on table over
// ncols plain columns, unique or not, and gives the text sqlite_schema
// keeps of it.
func indexSQL(name, table string, ncols int, unique bool, sql string) (string, error) {
	l := &lexer{s: sql}
	bad := func(why string) (string, error) {
		return "", fmt.Errorf("%w: index %q: %s: %q", ErrSchema, name, why, sql)
	}
	if !l.is(l.next(), "CREATE") {
		return bad("not a CREATE INDEX statement")
	}
	t := l.next()
	if l.is(t, "UNIQUE") != unique {
		return bad(fmt.Sprintf("UNIQUE in the statement does not match unique=%v", unique))
	}
	if unique {
		t = l.next()
	}
	if !l.is(t, "INDEX") {
		return bad("not a CREATE INDEX statement")
	}
	if !l.skipIfNotExists() {
		return bad("IF without NOT EXISTS")
	}
	n, nt, ok := l.objectName()
	if !ok {
		return bad("no index name")
	}
	if n != name {
		return bad(fmt.Sprintf("the statement creates index %q", n))
	}
	if !l.is(l.next(), "ON") {
		return bad("no ON")
	}
	tn, ok := l.name(l.next())
	if !ok || !strings.EqualFold(tn, table) {
		return bad(fmt.Sprintf("the index is on %q, not on table %q", tn, table))
	}
	if !l.isPunct(l.next(), '(') {
		return bad("no column list")
	}
	items := 0
	var itemErr string
	_, ok = l.skipParens(func(ts []token) {
		items++
		if itemErr != "" {
			return
		}
		if len(ts) == 0 {
			itemErr = "an empty column"
			return
		}
		if _, ok := l.name(ts[0]); !ok || ts[0].kind == tkStr {
			itemErr = "a column that is not a name (indexes over expressions are not supported)"
			return
		}
		rest := ts[1:]
		if len(rest) >= 2 && l.is(rest[0], "COLLATE") {
			if c, _ := l.name(rest[1]); !strings.EqualFold(c, "BINARY") {
				itemErr = "a collation other than BINARY"
				return
			}
			rest = rest[2:]
		}
		if len(rest) == 1 && l.is(rest[0], "ASC") {
			rest = rest[1:]
		}
		if len(rest) != 0 {
			if l.is(rest[0], "DESC") {
				itemErr = "a DESC column"
			} else {
				itemErr = "a column that is not a name (indexes over expressions are not supported)"
			}
		}
	})
	if !ok {
		return bad("unclosed column list")
	}
	if itemErr != "" {
		return bad(itemErr)
	}
	if items != ncols {
		return bad(fmt.Sprintf("%d columns in the statement, %d given", items, ncols))
	}
	save := l.pos
	if l.is(l.next(), "WHERE") {
		return bad("partial indexes are not supported")
	}
	l.pos = save
	end := l.statementEnd()
	kw := "CREATE INDEX "
	if unique {
		kw = "CREATE UNIQUE INDEX "
	}
	return kw + sql[nt.start:end], nil
}
