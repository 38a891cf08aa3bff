package sqlitefile

import (
	"fmt"
	"math"
	"slices"
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
// text sqlite_schema keeps of it, and its columns and keys.
func tableSQL(name, sql string) (string, *tableDef, error) {
	l := &lexer{s: sql}
	bad := func(why string) (string, *tableDef, error) {
		return "", nil, fmt.Errorf("%w: table %q: %s: %q", ErrSchema, name, why, sql)
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
	def := &tableDef{rowid: -1}
	var items [][]token
	closing, ok := l.skipParens(func(ts []token) { items = append(items, append([]token(nil), ts...)) })
	if !ok {
		return bad("unclosed column list")
	}
	for _, it := range items {
		if why := def.item(l, it); why != "" {
			return bad(why)
		}
	}
	end := closing.end
	save := l.pos
	if t := l.next(); t.kind != tkEOF && !l.isPunct(t, ';') {
		// Table options: WITHOUT ROWID changes the b-tree; STRICT does not.
		for ; t.kind != tkEOF && !l.isPunct(t, ';'); t = l.next() {
			if l.is(t, "WITHOUT") {
				if !l.is(l.next(), "ROWID") {
					return bad("WITHOUT not followed by ROWID")
				}
				def.noRowid = true
			}
			if l.is(t, "STRICT") {
				def.strict = true
			}
		}
		l.pos = save
		end = l.statementEnd()
	}
	if def.noRowid {
		if why := def.withoutRowid(); why != "" {
			return bad(why)
		}
	}
	if def.strict {
		for i := range def.cols {
			if why := def.strictType(i); why != "" {
				return bad(why)
			}
		}
	}
	return "CREATE TABLE " + sql[nt.start:end], def, nil
}

// tableDef is what the writer needs of a table's column list: each
// column's name and what SQLite does to a value stored in it, and the
// keys SQLite gives an automatic index.
type tableDef struct {
	cols   []column
	keys   [][]int // the columns of each automatic index, in order
	rowid  int     // the INTEGER PRIMARY KEY column, or -1
	pk     []int   // the PRIMARY KEY's columns, if any
	strict bool
	// noRowid: a WITHOUT ROWID table, whose b-tree is an index b-tree
	// of whole rows in the order of its PRIMARY KEY.
	noRowid bool
}

type column struct {
	name    string
	typ     string // the declared type, upper case, words joined by a blank
	aff     affinity
	notNull bool
	// virtual: a generated column that is not stored (GENERATED ALWAYS
	// AS (...) [VIRTUAL]): its value is in no record, only in the keys of
	// the indexes over it.
	virtual bool
}

// withoutRowid checks the one kind of WITHOUT ROWID table the writer
// builds, and says what it cannot build of others ("" if nothing): the
// PRIMARY KEY over the first columns, in order (SQLite's records then
// hold the columns in the table's order), no other key, no generated
// column. The key is the table's b-tree itself, not an automatic index.
func (d *tableDef) withoutRowid() string {
	if d.rowid >= 0 { // an INTEGER PRIMARY KEY is no rowid alias here
		d.pk, d.rowid = []int{d.rowid}, -1
	} else if len(d.keys) > 0 && slices.Equal(d.keys[0], d.pk) {
		d.keys = d.keys[1:]
	}
	if len(d.pk) == 0 {
		return "a WITHOUT ROWID table without a PRIMARY KEY"
	}
	if len(d.keys) > 0 {
		return "a WITHOUT ROWID table with UNIQUE constraints"
	}
	for i, c := range d.pk {
		if c != i {
			return "a WITHOUT ROWID table whose PRIMARY KEY is not its first columns in order"
		}
		d.cols[c].notNull = true // as SQLite enforces
	}
	for _, c := range d.cols {
		if c.virtual {
			return "a WITHOUT ROWID table with a generated column"
		}
	}
	return ""
}

// affinity is a column's type affinity (https://www.sqlite.org/datatype3.html):
// what SQLite converts a value to before it stores it.
type affinity uint8

const (
	affBlob affinity = iota // no conversion
	affText
	affNumeric
	affInteger
	affReal
)

var affinityNames = [...]string{"BLOB", "TEXT", "NUMERIC", "INTEGER", "REAL"}

// affinityOf is SQLite's rule for a declared type, in its order.
func affinityOf(typ string) affinity {
	switch {
	case strings.Contains(typ, "INT"):
		return affInteger
	case strings.Contains(typ, "CHAR"), strings.Contains(typ, "CLOB"), strings.Contains(typ, "TEXT"):
		return affText
	case typ == "", strings.Contains(typ, "BLOB"):
		return affBlob
	case strings.Contains(typ, "REAL"), strings.Contains(typ, "FLOA"), strings.Contains(typ, "DOUB"):
		return affReal
	}
	return affNumeric
}

// columnKeywords end a column's type name: they start its constraints.
var columnKeywords = map[string]bool{
	"CONSTRAINT": true, "PRIMARY": true, "NOT": true, "NULL": true, "UNIQUE": true, "CHECK": true,
	"DEFAULT": true, "COLLATE": true, "REFERENCES": true, "GENERATED": true, "AS": true,
}

// item reads one item of a column list, a column or a table constraint,
// and says what the writer cannot build of it ("" if nothing).
func (d *tableDef) item(l *lexer, ts []token) string {
	if len(ts) == 0 {
		return "an empty column definition"
	}
	if l.is(ts[0], "CONSTRAINT") && len(ts) > 2 {
		ts = ts[2:]
	}
	switch {
	case l.is(ts[0], "PRIMARY"), l.is(ts[0], "UNIQUE"):
		return d.tableKey(l, ts)
	case l.is(ts[0], "CHECK"), l.is(ts[0], "FOREIGN"):
		return ""
	}
	name, ok := l.name(ts[0])
	if !ok {
		return "a column without a name"
	}
	typ, i := columnType(l, ts)
	col := len(d.cols)
	d.cols = append(d.cols, column{name: name, typ: typ, aff: affinityOf(typ)})
	return d.columnConstraints(l, ts, i, col)
}

// columnType reads the type name that follows a column's name in ts[0],
// words joined by a blank in upper case, and returns it with the index of
// the first token after it. A size in parentheses (VARCHAR(65535),
// DECIMAL(10, 5)) is skipped: it changes nothing SQLite stores.
func columnType(l *lexer, ts []token) (string, int) {
	i := 1
	var typ []string
	for ; i < len(ts) && (ts[i].kind == tkWord || ts[i].kind == tkIdent) && !columnKeywords[strings.ToUpper(l.text(ts[i]))]; i++ {
		t, _ := l.name(ts[i])
		typ = append(typ, strings.ToUpper(t))
	}
	if i < len(ts) && l.isPunct(ts[i], '(') {
		i = skipGroup(l, ts, i)
	}
	return strings.Join(typ, " "), i
}

// columnConstraints reads the constraints of column col, ts[i:] on, at
// the top level (what parentheses hold, a CHECK or a DEFAULT expression,
// is skipped), and says what the writer cannot build of them ("" if
// nothing): a key becomes an index, or the rowid's alias.
func (d *tableDef) columnConstraints(l *lexer, ts []token, i, col int) string {
	name, typ := d.cols[col].name, d.cols[col].typ
	generated, stored := false, false
	defer func() { d.cols[col].virtual = generated && !stored }()
	for ; i < len(ts); i++ {
		t := ts[i]
		switch {
		case l.isPunct(t, '('):
			i = skipGroup(l, ts, i) - 1
		case l.is(t, "DEFAULT"):
			if i+1 < len(ts) && (l.isPunct(ts[i+1], '-') || l.isPunct(ts[i+1], '+')) {
				i++
			}
			i++ // the value, or the ( of an expression, skipped next
			if i < len(ts) && l.isPunct(ts[i], '(') {
				i = skipGroup(l, ts, i) - 1
			}
		case l.is(t, "COLLATE"):
			if i+1 < len(ts) {
				if why := collation(l, ts[i+1], name); why != "" {
					return why
				}
				i++
			}
		case l.is(t, "NOT") && i+1 < len(ts) && l.is(ts[i+1], "NULL"):
			d.cols[col].notNull = true
			i++
		case l.is(t, "PRIMARY"):
			i++ // KEY
			if i+1 < len(ts) && l.is(ts[i+1], "DESC") {
				return fmt.Sprintf("column %q: PRIMARY KEY DESC (the writer orders keys ascending)", name)
			}
			d.pk = []int{col}
			if typ == "INTEGER" && d.rowid < 0 {
				d.rowid = col // the rowid's alias: no index
			} else {
				d.key([]int{col})
			}
		case l.is(t, "UNIQUE"):
			d.key([]int{col})
		case l.is(t, "GENERATED"), l.is(t, "AS"):
			// The caller gives the value SQLite would compute; a
			// STORED one goes in the record, a VIRTUAL one (the
			// default) only in index keys.
			generated = true
		case generated && l.is(t, "STORED"):
			stored = true
		}
	}
	return ""
}

// tableKey reads a table's PRIMARY KEY (...) or UNIQUE (...) constraint.
func (d *tableDef) tableKey(l *lexer, ts []token) string {
	pk := l.is(ts[0], "PRIMARY")
	i := 1
	if pk {
		i++ // KEY
	}
	if i >= len(ts) || !l.isPunct(ts[i], '(') {
		return "a key constraint without its column list"
	}
	end := skipGroup(l, ts, i) - 1 // the closing parenthesis
	var cols []int
	for j := i + 1; j < end; j++ {
		n, ok := l.name(ts[j])
		col := d.column(n)
		if !ok || ts[j].kind == tkStr && col < 0 {
			return "a key over an expression"
		}
		if col < 0 {
			return fmt.Sprintf("a key over %q, which is no column", n)
		}
		cols = append(cols, col)
		for j++; j < end && !l.isPunct(ts[j], ','); j++ {
			switch {
			case l.is(ts[j], "COLLATE") && j+1 < end:
				if why := collation(l, ts[j+1], n); why != "" {
					return why
				}
				j++
			case l.is(ts[j], "DESC"):
				return fmt.Sprintf("column %q: DESC in a key (the writer orders keys ascending)", n)
			case l.is(ts[j], "ASC"):
			default:
				return "a key over an expression"
			}
		}
	}
	if len(cols) == 0 {
		return "a key without columns"
	}
	if pk {
		d.pk = cols
	}
	if pk && len(cols) == 1 && d.cols[cols[0]].typ == "INTEGER" && d.rowid < 0 {
		d.rowid = cols[0]
		return ""
	}
	d.key(cols)
	return ""
}

// key adds a key's automatic index, unless an earlier key has the same
// columns: SQLite makes no second index for it.
func (d *tableDef) key(cols []int) {
	for _, k := range d.keys {
		if slices.Equal(k, cols) {
			return
		}
	}
	d.keys = append(d.keys, cols)
}

// column is the place of the column named n (any case), or -1.
func (d *tableDef) column(n string) int {
	for i, c := range d.cols {
		if strings.EqualFold(c.name, n) {
			return i
		}
	}
	return -1
}

// strictType refuses a type a STRICT table does not take.
func (d *tableDef) strictType(i int) string {
	switch d.cols[i].typ {
	case "INT", "INTEGER", "REAL", "TEXT", "BLOB", "ANY":
		return ""
	}
	return fmt.Sprintf("column %q: type %q in a STRICT table", d.cols[i].name, d.cols[i].typ)
}

// collation refuses a collation other than BINARY: the writer orders an
// index's text by its bytes, as BINARY does, and would write an index
// SQLite then reads in the wrong order.
func collation(l *lexer, t token, col string) string {
	if c, _ := l.name(t); !strings.EqualFold(c, "BINARY") {
		return fmt.Sprintf("column %q: COLLATE %s (only BINARY is supported: the writer orders keys by their bytes)", col, c)
	}
	return ""
}

// skipGroup gives the place after the parenthesis that closes ts[i].
func skipGroup(l *lexer, ts []token, i int) int {
	depth := 0
	for ; i < len(ts); i++ {
		switch {
		case l.isPunct(ts[i], '('):
			depth++
		case l.isPunct(ts[i], ')'):
			if depth--; depth == 0 {
				return i + 1
			}
		}
	}
	return i
}

// indexSQL checks a CREATE INDEX statement for index name on table over
// ncols plain columns, unique or not, and gives the text sqlite_schema
// keeps of it and the names of the columns it indexes.
func indexSQL(name, table string, ncols int, unique bool, sql string) (string, []string, error) {
	l := &lexer{s: sql}
	bad := func(why string) (string, []string, error) {
		return "", nil, fmt.Errorf("%w: index %q: %s: %q", ErrSchema, name, why, sql)
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
	var names []string
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
		n, ok := l.name(ts[0])
		if !ok || ts[0].kind == tkStr {
			itemErr = "a column that is not a name (indexes over expressions are not supported)"
			return
		}
		names = append(names, n)
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
	return kw + sql[nt.start:end], names, nil
}

// suspect gives the kinds of value (bits 1<<Kind) that mismatch must look
// at in column i; the others are stored as they are.
func (d *tableDef) suspect(i int) uint8 {
	const (
		null  = 1 << KindNull
		num   = 1<<KindInt | 1<<KindReal
		text  = 1 << KindText
		reals = 1 << KindReal
	)
	c := &d.cols[i]
	var m uint8
	if c.notNull {
		m |= null
	}
	switch {
	case d.strict:
		if c.typ != "ANY" {
			m |= 0xff &^ null
		}
	case c.aff == affText:
		m |= num
	case c.aff == affReal:
		m |= text
	case c.aff == affInteger, c.aff == affNumeric:
		m |= text | reals
	}
	return m
}

// mismatch says why SQLite would not store v in column i as the writer
// does ("" if it would): INSERT applies the column's affinity first,
// and a STRICT table refuses what its type does not take. (A REAL column
// takes integers: SQLite stores a REAL that is a whole number as an
// integer too, and reads either back as a REAL.) rowid: the column is
// the rowid's alias, where NULL stands for the next rowid.
func (d *tableDef) mismatch(i int, v Value, rowid bool) string {
	c := &d.cols[i]
	if v.k == KindNull {
		if c.notNull && !rowid {
			return "NULL in a NOT NULL column"
		}
		return ""
	}
	if d.strict {
		want := KindNull
		switch c.typ {
		case "INT", "INTEGER":
			want = KindInt
		case "TEXT":
			want = KindText
		case "BLOB":
			want = KindBlob
		case "REAL":
			if v.k == KindInt {
				return ""
			}
			want = KindReal
		}
		if want != KindNull && v.k != want {
			return fmt.Sprintf("%v %s in a STRICT %s column", v.k, v.short(), c.typ)
		}
		return ""
	}
	switch c.aff {
	case affText:
		if v.k == KindInt || v.k == KindReal {
			return fmt.Sprintf("%v %s in a column of TEXT affinity (%s): SQLite would store it as text", v.k, v.short(), c.typ)
		}
	case affInteger, affNumeric, affReal:
		if v.k == KindText && numericText(v.s) {
			return fmt.Sprintf("text %s in a column of %s affinity (%s): SQLite would store it as a number", v.short(), affinityNames[c.aff], c.typ)
		}
		if c.aff != affReal && v.k == KindReal && wholeFloat(v.Float64()) {
			return fmt.Sprintf("REAL %s in a column of %s affinity (%s): SQLite would store it as an INTEGER", v.short(), affinityNames[c.aff], c.typ)
		}
	}
	return ""
}

// numericText says whether SQLite's numeric affinities convert s: a
// decimal integer or real literal, with blanks around it (not hex).
func numericText(s string) bool {
	s = strings.Trim(s, " \t\n\f\r\v")
	i := 0
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		i++
	}
	digits := 0
	for ; i < len(s) && '0' <= s[i] && s[i] <= '9'; i++ {
		digits++
	}
	if i < len(s) && s[i] == '.' {
		for i++; i < len(s) && '0' <= s[i] && s[i] <= '9'; i++ {
			digits++
		}
	}
	if digits == 0 {
		return false
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		e := i
		for ; i < len(s) && '0' <= s[i] && s[i] <= '9'; i++ {
		}
		if i == e {
			return false
		}
	}
	return i == len(s)
}

// wholeFloat: a REAL that SQLite's INTEGER and NUMERIC affinities turn
// into an INTEGER (a whole number strictly inside the int64 range).
func wholeFloat(f float64) bool {
	return f == math.Trunc(f) && f > -9223372036854775808.0 && f < 9223372036854775807.0
}
