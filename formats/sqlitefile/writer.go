package sqlitefile

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/itarconv/itarconv/internal/syswrite"
)

// Errors, for errors.Is.
var (
	// ErrUnique: two rows have the same key in a UNIQUE index; the error
	// is a *UniqueError, which names the index and the values.
	ErrUnique = errors.New("sqlitefile: UNIQUE constraint failed")
	// ErrSchema: a table or index this writer cannot declare as given (a
	// name that does not match its CREATE statement, a column out of
	// range, an index declared after rows were appended, a kind of table
	// or index it does not build).
	ErrSchema = errors.New("sqlitefile: unsupported schema")
	// ErrRowid: a row whose rowid is not above the table's last one, or
	// not an integer.
	ErrRowid = errors.New("sqlitefile: rowid out of order")
	// ErrTooLarge: a row longer than SQLite reads (SQLITE_MAX_LENGTH's
	// default, 1e9 bytes), or a database of more pages than SQLite numbers.
	ErrTooLarge = errors.New("sqlitefile: too large")
	// ErrClosed: the writer was closed.
	ErrClosed = errors.New("sqlitefile: writer closed")
	// ErrType: a value that does not match its column: SQLite would
	// convert it to another type before storing it (its column's
	// affinity), or refuse it (a NULL in a NOT NULL column, a row of more
	// values than columns).
	ErrType = errors.New("sqlitefile: value does not match its column")
)

// DefaultPageSize is the page size SQLite itself defaults to.
const DefaultPageSize = 4096

// DefaultVersion is the SQLITE_VERSION_NUMBER written in the header's
// version-valid-for field, by default.
const DefaultVersion = 3040001

// maxPages is the most pages SQLite numbers (2^32 - 2).
const maxPages = 4294967294

// Options tune a Writer. The zero value is SQLite's defaults.
type Options struct {
	// PageSize is a power of two from 512 to 65536; 0 is DefaultPageSize.
	PageSize int
	// Version is the SQLITE_VERSION_NUMBER for the header; 0 is
	// DefaultVersion.
	Version uint32
	// Memory bounds the keys Close gathers in memory for the indexes of
	// a table whose rows it is given again (Table.KeysFrom): past it (as
	// the rows' sizes tell), each index's keys are streamed instead, built
	// anew from the rows for each of two passes and kept nowhere, which
	// takes more time. 0 is DefaultMemory; negative streams always.
	//
	// With TempFile, it also bounds the keys that Append gathers for all
	// the indexes together: past it, they are written out as sorted runs
	// (see spill.go).
	Memory int64
	// Concurrent makes the keys that Append gathers for a table's
	// indexes on other goroutines, one an index, beside the appends (see
	// concurrent.go): the bytes of TextBytes and Blob values must then
	// stay unchanged until Close returns, not only until Append does.
	Concurrent bool
	// Context, if not nil, stops Close's sorting, merging and writing of
	// the indexes once it is done: Close then fails with its error.
	Context context.Context
	// TempFile, if not nil, gives a new temporary file (empty, open for
	// reading and writing) for the keys past Memory. The writer closes
	// and removes it when Close returns. Nil keeps every key in memory.
	TempFile func() (*os.File, error)
}

// DefaultMemory is Options.Memory's default.
const DefaultMemory = 256 << 20

// Writer writes one database. Its methods are not safe for concurrent use.
type Writer struct {
	f    io.WriteSeeker
	base int64 // where the database starts in f

	pageSize, usable int
	maxLocalTable    int // most payload a table leaf cell keeps on its page
	maxLocalIndex    int // likewise for index cells
	minLocal         int // least a cell keeps on its page if it spills
	version          uint32
	memory           int64       // Options.Memory
	wa               io.WriterAt // f, if its WriteAt can be used: indexes are then written side by side

	npages uint32 // pages numbered so far (page 1 included)
	out    []byte // pages written but not yet flushed to f
	page1  []byte
	tmp    page   // interior and index pages being built
	ovfl   []byte // an overflow page being built

	tables []*Table
	order  []any // *Table and explicit *index, in creation order
	names  map[string]bool
	err    error // sticky: the first error that leaves the file unusable

	// rebalanced counts the levels whose last page took a key or child
	// from the page before (index leaves, index interior, table interior),
	// for tests to find the row counts that do so.
	rebalanced [3]int
	// sorted counts the indexes whose keys were in order at Close (as
	// they came, or put in order as they came), sorted by sortNearly, by
	// the radix sort, and streamed from rows given again (KeysFrom), for
	// tests to see each way taken.
	sorted [4]int
	stat   *statTable // Analyze's, nil if not called
	closed bool

	ctx        context.Context // Options.Context, or nil
	concurrent bool            // Options.Concurrent
	keyBytesA  atomic.Int64    // keyBytes, as the goroutines of Concurrent count them

	// Keys past the budget (Options.TempFile; see spill.go).
	tempFile func() (*os.File, error)
	runs     *os.File
	runEnd   int64
	spillBuf *bufio.Writer
	keyBytes int64 // of the keys the indexes that Append feeds hold
	spillAt  int64 // keyBytes past which they are spilled; 0: never
}

// outFlush: pages go to the file in writes of this many bytes (see
// syswrite).
const outFlush = syswrite.MaxWrite

// New starts a database at f's current offset (normally an empty file).
// The pages are written in order as they fill; page 1 is written last, by
// Close, so the file is no database until Close succeeds. Close does not
// close f.
func New(f io.WriteSeeker, opts Options) (*Writer, error) {
	ps := opts.PageSize
	if ps == 0 {
		ps = DefaultPageSize
	}
	if ps < 512 || ps > 65536 || ps&(ps-1) != 0 {
		return nil, fmt.Errorf("sqlitefile: page size %d: not a power of two from 512 to 65536", ps)
	}
	base, err := f.Seek(0, io.SeekCurrent)
	if err != nil {
		return nil, fmt.Errorf("sqlitefile: %w", err)
	}
	w := &Writer{
		f: f, base: base,
		pageSize: ps, usable: ps,
		version: opts.Version,
		memory:  opts.Memory,
		page1:   make([]byte, ps),
		tmp:     newPage(ps),
		ovfl:    make([]byte, ps),
		names:   map[string]bool{},
		npages:  1,
	}
	w.ctx, w.concurrent = opts.Context, opts.Concurrent
	if opts.TempFile != nil {
		w.tempFile = opts.TempFile
		w.spillAt = opts.Memory
		if w.spillAt <= 0 {
			w.spillAt = DefaultMemory
		}
	}
	if w.version == 0 {
		w.version = DefaultVersion
	}
	// The payload fractions are fixed in the header (64, 32, 32), and these
	// follow from them and the usable size.
	w.maxLocalTable = w.usable - 35
	w.maxLocalIndex = (w.usable-12)*64/255 - 23
	w.minLocal = (w.usable-12)*32/255 - 23
	// Page 1's place, to be overwritten at Close.
	w.out = make([]byte, ps, 64*ps)
	if wa, ok := f.(io.WriterAt); ok {
		// A zero-length WriteAt fails where WriteAt cannot be used (a
		// file opened to append).
		if _, err := wa.WriteAt(nil, base); err == nil {
			w.wa = wa
		}
	}
	return w, nil
}

// emit numbers a page and writes it after the others.
func (w *Writer) emit(b []byte) (uint32, error) {
	if w.err != nil {
		return 0, w.err
	}
	if w.npages >= maxPages {
		w.err = fmt.Errorf("%w: more than %d pages", ErrTooLarge, uint32(maxPages))
		return 0, w.err
	}
	w.npages++
	w.out = append(w.out, b[:w.pageSize]...)
	if len(w.out) >= outFlush {
		if err := w.flush(); err != nil {
			return 0, err
		}
	}
	return w.npages, nil
}

func (w *Writer) flush() error {
	if _, err := w.f.Write(w.out); err != nil {
		w.err = fmt.Errorf("sqlitefile: writing pages: %w", err)
		return w.err
	}
	w.out = w.out[:0]
	return nil
}

// Table is a table being loaded.
type Table struct {
	w     *Writer
	name  string
	sql   string
	tree  tableTree
	rows  int64
	alias int // the INTEGER PRIMARY KEY column, or -1
	auto  []*index
	idx   []*index // every index on the table
	seq   bool     // AUTOINCREMENT
	need  int      // values a row must have: the indexes' columns
	st    []uint64 // scratch: serial types of a row
	rec   []byte   // scratch: a record that spills
	root  uint32
	def   *tableDef // what the CREATE statement declares; nil for sqlite_*
	look  []uint8   // per column, the kinds of value checkRow looks at (1<<Kind)
	ready bool      // the declarations were checked against def
	// keysFrom, if not nil, gives the rows again at Close, for the
	// indexes' keys (see KeysFrom).
	keysFrom func(yield func(values []Value) error) error
	bytes    int64 // of the rows' records
	early    int64 // KeysEarly's size, 0 when not called
	started  bool  // the first row came
	// virtual marks the generated columns that are not stored (nil if
	// none): their values are left out of the records, kept in the keys.
	virtual []bool
	rv      []Value  // scratch: a record's values, the virtual left out
	rst     []uint64 // scratch: their serial types
	feed    *keyFeed // Options.Concurrent's batches, once rows came
	// rowsIdx holds the records of a WITHOUT ROWID table (nil for a
	// rowid table), written at Close as the index b-tree they are.
	rowsIdx *index
}

// Table declares a table, created by createSQL (a CREATE TABLE statement
// for a rowid table named name; sqlite_schema keeps it as SQLite would).
// Its rows are then appended with Append. A declaration the writer cannot
// honour makes the writer fail: the error comes back from Append and Close.
func (w *Writer) Table(name, createSQL string) *Table {
	t := &Table{w: w, name: name, alias: -1}
	t.tree.leaf = newPage(w.pageSize)
	if err := w.declare(name); err != nil {
		w.fail(err)
		return t
	}
	sql, def, err := tableSQL(name, createSQL)
	if err != nil {
		w.fail(err)
		return t
	}
	t.sql, t.def = sql, def
	t.look = make([]uint8, len(def.cols))
	for i := range def.cols {
		t.look[i] = def.suspect(i)
		if def.cols[i].virtual {
			if t.virtual == nil {
				t.virtual = make([]bool, len(def.cols))
			}
			t.virtual[i] = true
		}
	}
	if def.noRowid {
		t.rowsIdx = &index{name: name, t: t, cols: def.pk, unique: true, ordered: true, noRowid: true}
	}
	w.tables = append(w.tables, t)
	w.order = append(w.order, t)
	return t
}

// fail records the first error that makes the database unwritable.
func (w *Writer) fail(err error) {
	if w.err == nil {
		w.err = err
	}
}

// schemaObject is a view or a trigger: a row of sqlite_schema and nothing
// else (root page 0), which SQLite compiles from its text when it reads
// the schema.
type schemaObject struct{ typ, name, table, sql string }

// View declares a view, kept in sqlite_schema in its place among the
// other objects. createSQL is stored as it is given, as SQLite stores a
// view's text; nothing checks it but SQLite, when it opens the file.
func (w *Writer) View(name, createSQL string) error {
	return w.object("view", name, name, createSQL)
}

// Trigger declares a trigger on table (a table or a view), as View does.
func (w *Writer) Trigger(name, table, createSQL string) error {
	return w.object("trigger", name, table, createSQL)
}

func (w *Writer) object(typ, name, table, createSQL string) error {
	if w.err != nil {
		return w.err
	}
	if err := w.declare(name); err != nil {
		w.fail(err)
		return err
	}
	w.order = append(w.order, &schemaObject{typ, name, table, createSQL})
	return nil
}

// declare reserves a schema name (names are case-insensitive in SQLite).
func (w *Writer) declare(name string) error {
	if w.closed {
		return ErrClosed
	}
	k := strings.ToLower(name)
	if name == "" || strings.HasPrefix(k, "sqlite_") {
		return fmt.Errorf("%w: %q: a reserved name", ErrSchema, name)
	}
	if w.names[k] {
		return fmt.Errorf("%w: %q: declared twice", ErrSchema, name)
	}
	w.names[k] = true
	return nil
}

// RowidColumn says column col is the table's INTEGER PRIMARY KEY: an alias
// of the rowid, which SQLite stores as NULL in the row. Append then takes
// an INTEGER at col as the row's rowid (above the last one) and NULL as
// the next rowid. It must come before the first row.
func (t *Table) RowidColumn(col int) *Table {
	if t.rows > 0 || col < 0 {
		t.w.fail(fmt.Errorf("%w: table %q: rowid column %d declared after rows or out of range", ErrSchema, t.name, col))
		return t
	}
	if t.def != nil && t.def.rowid != col {
		t.w.fail(fmt.Errorf("%w: table %q: column %d is not the statement's INTEGER PRIMARY KEY%s", ErrSchema, t.name, col, t.rowidName()))
		return t
	}
	t.alias = col
	idx := t.idx
	t.idx, t.need = nil, 0
	for _, x := range idx {
		t.indexed(x)
	}
	return t
}

// Autoincrement says the table was declared with INTEGER PRIMARY KEY
// AUTOINCREMENT (call RowidColumn first): SQLite then keeps the largest
// rowid it handed out in the table sqlite_sequence, which Close writes
// (created, as SQLite does, after the first such table and its automatic
// indexes).
func (t *Table) Autoincrement() *Table {
	if t.alias < 0 {
		t.w.fail(fmt.Errorf("%w: table %q: AUTOINCREMENT without a RowidColumn", ErrSchema, t.name))
	}
	t.seq = true
	return t
}

// AutoIndex declares the index SQLite creates for a UNIQUE or PRIMARY KEY
// (other than an INTEGER PRIMARY KEY) constraint of the table, over the
// given columns: sqlite_autoindex_<table>_<N>, N counting from 1 in the
// order the constraints appear in the CREATE TABLE statement (a constraint
// on the same columns as an earlier one gets no index: do not declare it).
// Declare them in that order, before the first row.
func (t *Table) AutoIndex(columns ...int) error {
	name := fmt.Sprintf("sqlite_autoindex_%s_%d", t.name, len(t.auto)+1)
	x, err := t.index(name, columns, true)
	if err == nil && t.def != nil {
		if n := len(t.auto); n >= len(t.def.keys) {
			err = fmt.Errorf("%w: %s: the statement of table %q has %d UNIQUE or PRIMARY KEY constraints that SQLite gives an index", ErrSchema, name, t.name, len(t.def.keys))
		} else if !slices.Equal(columns, t.def.keys[n]) {
			err = fmt.Errorf("%w: %s: columns %v, but the statement's constraint %d is over columns %v", ErrSchema, name, columns, n+1, t.def.keys[n])
		}
	}
	if err != nil {
		t.w.fail(err)
		return err
	}
	if t.w.names[strings.ToLower(name)] {
		err := fmt.Errorf("%w: %q: declared twice", ErrSchema, name)
		t.w.fail(err)
		return err
	}
	t.w.names[strings.ToLower(name)] = true
	t.auto = append(t.auto, x)
	t.indexed(x)
	return nil
}

func (t *Table) index(name string, columns []int, unique bool) (*index, error) {
	if t.w.closed {
		return nil, ErrClosed
	}
	if t.sql == "" {
		return nil, fmt.Errorf("%w: index %q: table %q was not declared", ErrSchema, name, t.name)
	}
	if t.rows > 0 {
		return nil, fmt.Errorf("%w: index %q: declared after rows of table %q", ErrSchema, name, t.name)
	}
	if len(columns) == 0 {
		return nil, fmt.Errorf("%w: index %q: no columns", ErrSchema, name)
	}
	if t.rowsIdx != nil {
		return nil, fmt.Errorf("%w: index %q: on WITHOUT ROWID table %q", ErrSchema, name, t.name)
	}
	for _, c := range columns {
		if c < 0 {
			return nil, fmt.Errorf("%w: index %q: column %d", ErrSchema, name, c)
		}
	}
	return &index{name: name, t: t, cols: append([]int(nil), columns...), unique: unique, ordered: true}, nil
}

// indexed adds an index to those Append feeds.
func (t *Table) indexed(x *index) {
	t.idx = append(t.idx, x)
	for _, c := range x.cols {
		if c != t.alias {
			t.need = max(t.need, c+1)
		}
	}
}

// Index declares an index named name over the given columns (0-based, in
// order) of a table, created by createSQL (a CREATE [UNIQUE] INDEX
// statement, kept as SQLite keeps it). Its key for each row is those
// columns' values and the rowid; Close sorts them with SQLite's rules (NULL
// first, then numbers by value, TEXT by its bytes, BLOB) and, for a unique
// index, fails with ErrUnique on two rows with the same non-NULL key.
// Declare it before the table's first row.
func (w *Writer) Index(name, table, createSQL string, columns []int, unique bool) error {
	var t *Table
	for _, c := range w.tables {
		if strings.EqualFold(c.name, table) {
			t = c
		}
	}
	err := func() error {
		if t == nil {
			return fmt.Errorf("%w: index %q: no table %q", ErrSchema, name, table)
		}
		x, err := t.index(name, columns, unique)
		if err != nil {
			return err
		}
		var names []string
		if x.sql, names, err = indexSQL(name, t.name, len(columns), unique, createSQL); err != nil {
			return err
		}
		for i, n := range names {
			if c := t.def.column(n); c != columns[i] {
				return fmt.Errorf("%w: index %q: column %d given for %q, which is column %d of table %q: %q", ErrSchema, name, columns[i], n, c, t.name, createSQL)
			}
		}
		if err := w.declare(name); err != nil {
			return err
		}
		t.indexed(x)
		w.order = append(w.order, x)
		return nil
	}()
	if err != nil {
		w.fail(err)
	}
	return err
}

// Append adds a row, the values of its columns in order (fewer values than
// columns leave the rest to their DEFAULT, as SQLite reads short rows; at
// least one value, and the indexed columns, must be given). Its rowid is
// the last one plus 1 (1 for the first row), or the INTEGER given in the
// RowidColumn. The row goes to the table's current leaf page; a full leaf
// is written to the file. A row refused (ErrRowid, ErrSchema, ErrTooLarge)
// is not added and the writer goes on; an error writing f is final.
func (t *Table) Append(values ...Value) error {
	if t.w.closed {
		return ErrClosed
	}
	if t.w.err != nil {
		return t.w.err
	}
	if !t.ready {
		if err := t.declared(); err != nil {
			t.w.fail(err)
			return err
		}
	}
	if !t.started {
		t.started = true
		t.startKeys()
	}
	if len(values) > len(t.look) {
		return fmt.Errorf("%w: table %q: a row of %d values, the table has %d columns", ErrType, t.name, len(values), len(t.look))
	}
	return t.add(values)
}

// declared checks, before the first row, that the caller declared what
// the CREATE statement makes SQLite create: each automatic index and the
// rowid's alias.
func (t *Table) declared() error {
	t.ready = true
	if t.def == nil {
		return nil
	}
	if n := len(t.def.keys); len(t.auto) != n {
		return fmt.Errorf("%w: table %q: %d automatic indexes declared, the statement's UNIQUE and PRIMARY KEY constraints make %d", ErrSchema, t.name, len(t.auto), n)
	}
	if t.def.rowid >= 0 && t.alias < 0 {
		return fmt.Errorf("%w: table %q: no RowidColumn declared%s", ErrSchema, t.name, t.rowidName())
	}
	return nil
}

func (t *Table) rowidName() string {
	if t.def.rowid < 0 {
		return " (it has none)"
	}
	return fmt.Sprintf(" (column %d, %q, is)", t.def.rowid, t.def.cols[t.def.rowid].name)
}

// checkRow refuses a row SQLite would store otherwise: a NULL in a NOT
// NULL column, a value its column's affinity converts. add calls it for a
// row that has a value of a kind its column's look bits name.
func (t *Table) checkRow(values []Value) error {
	for i, v := range values {
		if t.look[i]&(1<<v.k) == 0 {
			continue
		}
		if why := t.def.mismatch(i, v, i == t.alias); why != "" {
			return fmt.Errorf("%w: table %q, column %q: %s", ErrType, t.name, t.def.cols[i].name, why)
		}
	}
	return nil
}

// add is Append, for the tables Close writes too.
func (t *Table) add(values []Value) error {
	rowid, err := t.nextRowid(values)
	if err != nil {
		return err
	}
	// The record's serial types (in t.st, reused from row to row) and
	// sizes, inline: this is the loop of every row.
	if len(t.st) < len(values) {
		t.st = make([]uint64, len(values))
	}
	st := t.st[:len(values)]
	sum, body := 0, 0
	look := t.look[:min(len(values), len(t.look))] // none for sqlite_*
	suspect := uint8(0)
	for i := range values {
		v := &values[i] // Value.serial, inline
		if i < len(look) {
			suspect |= look[i] & (1 << v.k)
		}
		var s uint64
		var n int
		switch v.k {
		case KindInt:
			s, n = intSerial(v.n)
		case KindText:
			n = len(v.s)
			s = uint64(n)*2 + 13
		case KindReal:
			s, n = 7, 8
		case KindBlob:
			n = len(v.s)
			s = uint64(n)*2 + 12
		}
		st[i] = s
		sum += varintLen(s)
		body += n
	}
	if suspect != 0 {
		// A value whose kind may not suit its column (the look-up
		// table says so): the row is checked before it is stored.
		if err := t.checkRow(values); err != nil {
			return err
		}
	}
	if a := t.alias; a >= 0 && a < len(values) {
		// The rowid column holds NULL in the row: SQLite keeps the
		// rowid in the cell, not in the record.
		sum -= varintLen(st[a]) - 1
		body -= serialSize(st[a])
		st[a] = 0
	}
	recVals, recSt := values, st
	if t.virtual != nil {
		recVals, recSt = t.rv[:0], t.rst[:0]
		for i := range values {
			if i < len(t.virtual) && t.virtual[i] {
				sum -= varintLen(st[i])
				body -= serialSize(st[i])
				continue
			}
			recVals, recSt = append(recVals, values[i]), append(recSt, st[i])
		}
		t.rv, t.rst = recVals, recSt
	}
	hdr := headerLen(sum)
	size := hdr + body
	if size > maxLength {
		return fmt.Errorf("%w: table %q: a row of %d bytes", ErrTooLarge, t.name, size)
	}
	if x := t.rowsIdx; x != nil {
		// A WITHOUT ROWID table: the record is an index key, kept for
		// Close.
		off, b := x.room(uvarintLen(size) + size)
		putRecord(b[putUvarint(b, uint64(size)):], recVals, recSt, hdr)
		x.n++
		if x.ordered {
			x.keep(off)
		}
		t.rows++
		t.bytes += int64(size)
		return nil
	}
	if size <= t.w.maxLocalTable {
		// The common case, inline: the record goes straight into the leaf.
		sz := varintLen(uint64(size)) + varintLen(uint64(rowid)) + size
		if !t.tree.leaf.fits(sz, t.tree.hdr+8) {
			if err := t.w.makeRoom(&t.tree, sz); err != nil {
				return err
			}
		}
		c := t.tree.leaf.cell(sz)
		k := putVarint(c, uint64(size))
		k += putVarint(c[k:], uint64(rowid))
		putRecord(c[k:], recVals, recSt, hdr)
		t.tree.last = rowid
	} else if err := t.addLarge(rowid, recVals, recSt, hdr, size); err != nil {
		return err
	}
	t.rows++
	t.bytes += int64(size)
	if t.feed == nil && t.w.concurrent && len(t.idx) > 0 && t.keysFrom == nil {
		t.feed = newKeyFeed(len(t.idx))
	}
	if t.feed != nil {
		if err := t.feedKeys(values, st, rowid); err != nil {
			t.w.fail(err)
			return err
		}
	} else if len(t.idx) > 0 && t.keysFrom == nil {
		t.addKeys(values, st, rowid)
		if w := t.w; w.spillAt > 0 && w.keyBytes > w.spillAt {
			if err := w.spillKeys(); err != nil {
				w.fail(err)
				return err
			}
		}
	}
	return nil
}

// KeysFrom says that the table's indexes take their keys at Close, from
// the rows that rows gives again, rather than as each row is appended:
// each index then gathers its keys in a pass of its own, the indexes side
// by side (when f takes WriteAt), which leaves Append only the table's
// pages to write. rows must give the same rows as Append was given, in the
// same order (Close fails if their number differs), or their first values
// only, up to the last column an index or the rowid reads; it may be called
// several times at once; the values passed to yield are not kept. It must
// come before the first row.
func (t *Table) KeysFrom(rows func(yield func(values []Value) error) error) *Table {
	if t.rows > 0 {
		t.w.fail(fmt.Errorf("%w: table %q: KeysFrom after rows", ErrSchema, t.name))
		return t
	}
	t.keysFrom = rows
	return t
}

// streams says whether the keys of the table's indexes are streamed: if
// gathered, they would take more memory than Options.Memory (a key is
// not much longer than its row).
func (t *Table) streams() bool { return t.over(t.bytes, t.rows) }

// over says whether the keys of rows of size bytes in all would take more
// than Options.Memory.
func (t *Table) over(size, rows int64) bool {
	budget := t.w.memory
	if budget == 0 {
		budget = DefaultMemory
	}
	return budget < 0 || (size+8*rows)*int64(len(t.idx)) > budget
}

// KeysEarly says, for a table given KeysFrom, about how many bytes its
// rows' records will take in all. If its indexes' keys are then to be
// gathered in memory (within Options.Memory) and f takes WriteAt, they are
// gathered, sorted and planned from the table's first row on, each index
// on a goroutine of its own, beside the appends, rather than at Close.
// It must come before the first row.
func (t *Table) KeysEarly(size int64) *Table {
	if t.rows > 0 || t.keysFrom == nil {
		t.w.fail(fmt.Errorf("%w: table %q: KeysEarly after rows or without KeysFrom", ErrSchema, t.name))
		return t
	}
	t.early = max(size, 1)
	return t
}

// pending is an index's keys gathered, sorted and planned early (see
// KeysEarly): done is closed once the rest is set.
type pending struct {
	done chan struct{}
	n    int64 // rows given again
	ks   keySource
	pl   *indexPlan
	way  int
	err  error
}

// startKeys starts the early gathering of the table's indexes' keys, if
// KeysEarly asked for it. The goroutines read nothing of t that the
// appends change (its rows and sizes are compared at Close).
func (t *Table) startKeys() {
	w := t.w
	if t.early == 0 || w.wa == nil || w.err != nil || t.over(t.early, int64(1)) {
		return
	}
	for _, x := range t.idx {
		p := &pending{done: make(chan struct{})}
		x.pending = p
		sub := w.sub()
		go func() {
			defer close(p.done)
			p.n, p.err = t.gather(x)
			if p.err != nil {
				return
			}
			p.way = x.sort()
			p.ks = x.source()
			p.pl, p.err = sub.plan(x, p.ks)
		}()
	}
}

// gather gives index x the keys of the table's rows, from keysFrom.
func (t *Table) gather(x *index) (int64, error) {
	return t.keys(x.cols, func(values []Value, st []uint64, rowid int64) {
		x.add(values, st, t.alias, rowid)
	})
}

// keys calls add with each row given again by keysFrom, the serial types
// of its values in columns cols (the rowid column's being the rowid's) and
// its rowid, and says how many rows came (see counted).
func (t *Table) keys(cols []int, add func(values []Value, st []uint64, rowid int64)) (int64, error) {
	var st []uint64
	var n, last int64
	err := t.keysFrom(func(values []Value) error {
		rowid := last + 1
		if t.alias >= 0 && t.alias < len(values) && values[t.alias].k == KindInt {
			rowid = values[t.alias].n
		}
		if len(values) < t.need {
			return fmt.Errorf("%w: table %q: an index needs column %d, the row has %d values", ErrSchema, t.name, t.need-1, len(values))
		}
		// The serial types of the columns the index reads, the others
		// left 0.
		if cap(st) < len(values) {
			st = make([]uint64, len(values))
		}
		st = st[:len(values)]
		for _, c := range cols {
			if c < len(values) {
				st[c], _ = values[c].serial()
			}
		}
		if t.alias >= 0 {
			for len(st) <= t.alias {
				st = append(st, 0)
			}
			st[t.alias], _ = intSerial(rowid)
		}
		add(values, st, rowid)
		n++
		last = rowid
		return nil
	})
	return n, err
}

// counted checks, at Close, that the rows given again were those
// appended.
func (t *Table) counted(n int64) error {
	if n != t.rows {
		return fmt.Errorf("%w: table %q: %d rows appended, %d given again for the indexes", ErrSchema, t.name, t.rows, n)
	}
	return nil
}

// nextRowid gives the row's rowid, the one after the last unless the
// rowid's alias column holds it, and refuses a row SQLite could not hold:
// a rowid not above the last (the b-tree is written in order), no values,
// or fewer values than an index reads.
func (t *Table) nextRowid(values []Value) (int64, error) {
	rowid := t.tree.last + 1
	if t.rows == 0 {
		rowid = 1
	}
	if t.alias >= 0 && t.alias < len(values) {
		switch v := values[t.alias]; v.k {
		case KindInt:
			rowid = v.n
		case KindNull:
		default:
			return 0, fmt.Errorf("%w: table %q: the rowid column holds a %v, not an integer", ErrRowid, t.name, v.k)
		}
	}
	if t.rows > 0 && rowid <= t.tree.last {
		return 0, fmt.Errorf("%w: table %q: rowid %d after %d", ErrRowid, t.name, rowid, t.tree.last)
	}
	if len(values) == 0 {
		return 0, fmt.Errorf("%w: table %q: a row of no values (SQLite's integrity_check refuses an empty record)", ErrSchema, t.name)
	}
	if len(values) < t.need {
		return 0, fmt.Errorf("%w: table %q: an index needs column %d, the row has %d values", ErrSchema, t.name, t.need-1, len(values))
	}
	return rowid, nil
}

// addLarge writes the cell of a record of size bytes too large to sit in
// the leaf whole: built whole, then given to addRecord, which spills what
// does not fit to overflow pages.
func (t *Table) addLarge(rowid int64, values []Value, st []uint64, hdr, size int) error {
	if cap(t.rec) < size {
		t.rec = make([]byte, size)
	}
	rec := t.rec[:size]
	putRecord(rec, values, st, hdr)
	if err := t.w.addRecord(&t.tree, rowid, rec); err != nil {
		return err
	}
	if cap(t.rec) > 1<<20 {
		t.rec = nil // keep no large record
	}
	return nil
}

// addKeys gives the row to each of the table's indexes.
func (t *Table) addKeys(values []Value, st []uint64, rowid int64) {
	if t.alias >= 0 {
		// The key holds the rowid where the row holds NULL.
		for len(st) <= t.alias {
			st = append(st, 0)
		}
		st[t.alias], _ = intSerial(rowid)
		t.st = st
	}
	for _, x := range t.idx {
		t.w.keyBytes += int64(x.add(values, st, t.alias, rowid))
	}
}

// putRecord writes a record: its header (length, serial types) then the
// values' bodies, both as it goes through the values. A number's body is
// written 8 bytes at once, its own first, where the record has 8 bytes
// left: the bytes past it are the next fields', written after. The last
// number may not have them, and is written exactly.
func putRecord(b []byte, vals []Value, st []uint64, hdr int) {
	h := putVarint(b, uint64(hdr))
	k := hdr
	for i := range vals {
		s := st[i]
		h += putVarint(b[h:], s)
		if s >= 12 {
			k += copy(b[k:], vals[i].s)
			continue
		}
		n := int(fixedSize[s&15])
		if len(b)-k >= 8 {
			binary.BigEndian.PutUint64(b[k:], uint64(vals[i].n)<<(64-8*uint(n)))
		} else {
			putInt(b[k:], vals[i].n, s)
		}
		k += n
	}
}

// Close writes what is left: each table's last leaf and interior pages,
// each index's b-tree, sqlite_sequence if a table is AUTOINCREMENT, and
// page 1 (the header and sqlite_schema). If f has a Truncate method, the
// file is cut to the database's end.
//
// A failed Close (or one after an error that made the writer fail)
// leaves f as the pages written so far left it: from the start offset,
// in batches of about 1 MiB, the place of page 1 zero-filled, then
// pages, possibly a batch cut short by the write that failed; nothing
// was written at all if the rows never filled a batch. It is cut to no
// size and not removed. A non-empty remnant is no database (SQLite
// refuses a file whose first bytes are zero), but an empty file is one,
// an empty database, to SQLite: so a caller removes the file, or writes
// under a temporary name and renames it into place only when Close
// succeeds.
func (w *Writer) Close() error {
	if w.closed {
		return ErrClosed
	}
	w.closed = true
	defer w.closeRuns()
	for _, t := range w.tables {
		if !t.ready && w.err == nil {
			w.fail(t.declared()) // a table with no rows
		}
	}
	if w.err != nil {
		return w.err
	}
	err := w.finish()
	if err != nil {
		w.fail(err)
	}
	return err
}

// finish writes, in this order, what Close has left to write: the
// tables' last pages, the indexes' b-trees, sqlite_sequence, and
// sqlite_schema, then page 1, which names them all.
func (w *Writer) finish() error {
	if err := w.finishTrees(); err != nil {
		return err
	}
	if err := w.writeStat(); err != nil {
		return err
	}
	seqRoot, err := w.writeSequence()
	if err != nil {
		return err
	}
	n, err := w.writeSchema(seqRoot)
	if err != nil {
		return err
	}
	return w.writePage1(n)
}

// finishTrees writes each table's last leaf and interior pages, then each
// index's b-tree (sorted here, at the end, when all its keys are known),
// and keeps their roots for sqlite_schema.
func (w *Writer) finishTrees() error {
	for _, t := range w.tables {
		var root uint32
		var err error
		if x := t.rowsIdx; x != nil {
			root, err = w.buildIndex(x)
		} else {
			root, err = w.finishTable(&t.tree, false)
		}
		var ue *UniqueError
		if errors.As(err, &ue) {
			return err
		}
		if err != nil {
			return fmt.Errorf("sqlitefile: table %q: %w", t.name, err)
		}
		t.root = root
	}
	w.drainKeys()
	if w.spillAt > 0 && w.keyBytesA.Load() > w.spillAt {
		// The indexes' goroutines count their keys as they take them,
		// maybe after Append last looked: keys past the budget go out
		// here, whatever the goroutines' timing.
		w.keyBytesA.Store(0)
		if err := w.spillKeys(); err != nil {
			return err
		}
	}
	var idx []*index
	for _, t := range w.tables {
		idx = append(idx, t.idx...)
	}
	if err := w.spillRest(idx); err != nil {
		return err
	}
	if w.wa != nil && len(idx) > 1 {
		return w.buildParallel(idx, w.wa)
	}
	for _, x := range idx {
		ks, pl, way, err := w.prepareIndex(x)
		w.sorted[way]++
		root := uint32(0)
		if err == nil {
			w.rebalanced[0] += pl.fixed[0]
			w.rebalanced[1] += pl.fixed[1]
			root, err = w.write(pl, ks)
		}
		var ue *UniqueError
		if errors.As(err, &ue) {
			return err
		}
		if err != nil {
			return fmt.Errorf("sqlitefile: index %q: %w", x.name, err)
		}
		x.root = root
		x.chunks, x.tail = nil, nil
	}
	return nil
}

// prepareIndex gathers, sorts and plans an index's keys, and gives where
// they are to be read from for write, and how they were sorted (as
// index.sort says, or 3: streamed). The keys of a table's rows given
// again (KeysFrom) are gathered from them; past Options.Memory, they are
// first taken as a stream, kept nowhere, which works if they come nearly
// in order (see stream).
func (w *Writer) prepareIndex(x *index) (keySource, *indexPlan, int, error) {
	t := x.t
	if len(x.runs) > 0 {
		ks, err := w.merged(x)
		if err != nil {
			return ks, nil, 3, err
		}
		pl, err := w.plan(x, ks)
		return ks, pl, 3, err
	}
	if p := x.pending; p != nil {
		<-p.done
		x.pending = nil
		if p.err == nil {
			p.err = t.counted(p.n)
		}
		return p.ks, p.pl, p.way, p.err
	}
	if t.keysFrom != nil {
		if t.streams() {
			ks := t.stream(x)
			pl, err := w.plan(x, ks)
			if !errors.Is(err, errDisorder) {
				return ks, pl, 3, err
			}
		}
		n, err := t.gather(x)
		if err == nil {
			err = t.counted(n)
		}
		if err != nil {
			return keySource{}, nil, 0, err
		}
	}
	way := x.sort()
	ks := x.source()
	pl, err := w.plan(x, ks)
	return ks, pl, way, err
}

// buildIndex sorts, plans and writes the b-tree of an index, one after
// the other, and gives its root.
func (w *Writer) buildIndex(x *index) (uint32, error) {
	way := x.sort()
	w.sorted[way]++
	ks := x.source()
	pl, err := w.plan(x, ks)
	if err != nil {
		return 0, err
	}
	w.rebalanced[0] += pl.fixed[0]
	w.rebalanced[1] += pl.fixed[1]
	root, err := w.write(pl, ks)
	x.chunks, x.tail = nil, nil
	return root, err
}

// statTable is sqlite_stat1's place among the schema's objects (see
// Analyze).
type statTable struct {
	tables []string
	root   uint32
}

// Analyze has Close write the table sqlite_stat1 as ANALYZE of the
// given tables (in that order) would, at this place in sqlite_schema: a
// row per index of each table that has rows, "N d1 d2 ...", N its rows
// and di the average number of rows that share the index's first i
// columns, rounded up (rounded down to 1 where it is 2 and the rows
// nearly all differ), as SQLite writes them; the indexes of a table come
// in the reverse of their declaration order, as SQLite lists them. The
// figures are exact: those of an ANALYZE without an analysis_limit. It
// may come after rows, before Close.
func (w *Writer) Analyze(tables ...string) error {
	if w.err != nil {
		return w.err
	}
	if w.closed {
		return ErrClosed
	}
	if w.stat != nil {
		err := fmt.Errorf("%w: Analyze called twice", ErrSchema)
		w.fail(err)
		return err
	}
	for _, name := range tables {
		t := w.table(name)
		if t == nil {
			err := fmt.Errorf("%w: Analyze: table %q not declared", ErrSchema, name)
			w.fail(err)
			return err
		}
		for _, x := range t.indexes() {
			x.stat = make([]int64, len(x.cols))
		}
	}
	w.stat = &statTable{tables: tables}
	w.order = append(w.order, w.stat)
	return nil
}

// indexes are the table's indexes in declaration order; a WITHOUT ROWID
// table's b-tree, the index of its PRIMARY KEY, is the first.
func (t *Table) indexes() []*index {
	if t.rowsIdx != nil {
		return append([]*index{t.rowsIdx}, t.idx...)
	}
	return t.idx
}

// table is the table named name (any case), or nil.
func (w *Writer) table(name string) *Table {
	for _, t := range w.tables {
		if strings.EqualFold(t.name, name) {
			return t
		}
	}
	return nil
}

// writeStat writes sqlite_stat1 (see Analyze) from the counts the
// indexes' plans made.
func (w *Writer) writeStat() error {
	if w.stat == nil {
		return nil
	}
	st := &Table{w: w, name: "sqlite_stat1", alias: -1}
	st.tree.leaf = newPage(w.pageSize)
	for _, name := range w.stat.tables {
		t := w.table(name)
		if t.rows == 0 {
			continue
		}
		idx := t.indexes()
		if len(idx) == 0 {
			// A table without an index: its rows only.
			if err := st.add([]Value{Text(t.name), Null(), Text(strconv.FormatInt(t.rows, 10))}); err != nil {
				return err
			}
		}
		for i := len(idx) - 1; i >= 0; i-- {
			x := idx[i]
			b := strconv.AppendInt(nil, t.rows, 10)
			for _, d := range x.stat {
				v := (t.rows + d - 1) / d
				if v == 2 && t.rows*10 <= d*11 {
					v = 1
				}
				b = append(b, ' ')
				b = strconv.AppendInt(b, v, 10)
			}
			if err := st.add([]Value{Text(t.name), Text(x.name), Text(string(b))}); err != nil {
				return err
			}
		}
	}
	root, err := w.finishTable(&st.tree, false)
	if err != nil {
		return fmt.Errorf("sqlitefile: sqlite_stat1: %w", err)
	}
	w.stat.root = root
	return nil
}

// writeSequence writes sqlite_sequence, a row per AUTOINCREMENT table
// that has rows, its largest rowid, and returns its root page: 0 when no
// table is AUTOINCREMENT, and SQLite then has no such table.
func (w *Writer) writeSequence() (uint32, error) {
	hasSeq := false
	for _, t := range w.tables {
		hasSeq = hasSeq || t.seq
	}
	if !hasSeq {
		return 0, nil
	}
	seq := &Table{w: w, name: "sqlite_sequence", alias: -1}
	seq.tree.leaf = newPage(w.pageSize)
	for _, t := range w.tables {
		if t.seq && t.rows > 0 {
			if err := seq.add([]Value{Text(t.name), Int(t.tree.last)}); err != nil {
				return 0, err
			}
		}
	}
	root, err := w.finishTable(&seq.tree, false)
	if err != nil {
		return 0, fmt.Errorf("sqlitefile: sqlite_sequence: %w", err)
	}
	return root, nil
}

// writeSchema writes sqlite_schema, rooted in page 1, in creation order:
// each table, its automatic indexes, sqlite_sequence (root seqRoot) after
// the first AUTOINCREMENT table, the explicit indexes where they were
// declared. It returns the number of rows, which page 1's schema cookie
// holds.
func (w *Writer) writeSchema(seqRoot uint32) (int, error) {
	schema := &Table{w: w, name: "sqlite_schema", alias: -1}
	schema.tree.leaf = newPage(w.pageSize)
	schema.tree.hdr = 100
	n := 0
	row := func(typ, name, tbl string, root uint32, sql Value) error {
		n++
		return schema.add([]Value{Text(typ), Text(name), Text(tbl), Int(int64(root)), sql})
	}
	for _, o := range w.order {
		var err error
		switch o := o.(type) {
		case *Table:
			err = row("table", o.name, o.name, o.root, Text(o.sql))
			for _, x := range o.auto {
				if err == nil {
					err = row("index", x.name, o.name, x.root, Null())
				}
			}
			if err == nil && o.seq && seqRoot != 0 {
				err = row("table", "sqlite_sequence", "sqlite_sequence", seqRoot, Text("CREATE TABLE sqlite_sequence(name,seq)"))
				seqRoot = 0
			}
		case *index:
			err = row("index", o.name, o.t.name, o.root, Text(o.sql))
		case *schemaObject:
			err = row(o.typ, o.name, o.table, 0, Text(o.sql))
		case *statTable:
			err = row("table", "sqlite_stat1", "sqlite_stat1", o.root, Text("CREATE TABLE sqlite_stat1(tbl,idx,stat)"))
		}
		if err != nil {
			return 0, err
		}
	}
	if _, err := w.finishTable(&schema.tree, true); err != nil {
		return 0, fmt.Errorf("sqlitefile: sqlite_schema: %w", err)
	}
	return n, nil
}

// writePage1 flushes the pages still buffered, then writes page 1 (the
// header and sqlite_schema's root) in its place at the start, last, so
// that the file is no database until everything else is written; and it
// leaves f at, and cut to, the database's end.
func (w *Writer) writePage1(schemaObjects int) error {
	if err := w.flush(); err != nil {
		return err
	}
	w.header(uint32(schemaObjects))
	if _, err := w.f.Seek(w.base, io.SeekStart); err != nil {
		return fmt.Errorf("sqlitefile: writing page 1: %w", err)
	}
	if _, err := w.f.Write(w.page1); err != nil {
		return fmt.Errorf("sqlitefile: writing page 1: %w", err)
	}
	end := w.base + int64(w.npages)*int64(w.pageSize)
	if tr, ok := w.f.(interface{ Truncate(int64) error }); ok {
		if err := tr.Truncate(end); err != nil {
			return fmt.Errorf("sqlitefile: %w", err)
		}
	}
	if _, err := w.f.Seek(end, io.SeekStart); err != nil {
		return fmt.Errorf("sqlitefile: %w", err)
	}
	return nil
}

// header fills the first 100 bytes of page 1 as sqlite3 would for a
// database it wrote in one transaction.
func (w *Writer) header(schemaObjects uint32) {
	h := w.page1[:100]
	copy(h, "SQLite format 3\x00")
	ps := uint16(w.pageSize)
	if w.pageSize == 65536 {
		ps = 1
	}
	binary.BigEndian.PutUint16(h[16:], ps)
	h[18], h[19] = 1, 1 // legacy rollback journal, not WAL
	h[20] = byte(w.pageSize - w.usable)
	h[21], h[22], h[23] = 64, 32, 32                  // payload fractions (fixed)
	binary.BigEndian.PutUint32(h[24:], 1)             // file change counter
	binary.BigEndian.PutUint32(h[28:], w.npages)      // database size in pages
	binary.BigEndian.PutUint32(h[32:], 0)             // no freelist trunk page
	binary.BigEndian.PutUint32(h[36:], 0)             // no free pages
	binary.BigEndian.PutUint32(h[40:], schemaObjects) // schema cookie
	binary.BigEndian.PutUint32(h[44:], 4)             // schema format
	binary.BigEndian.PutUint32(h[48:], 0)             // default cache size
	binary.BigEndian.PutUint32(h[52:], 0)             // no auto-vacuum
	binary.BigEndian.PutUint32(h[56:], 1)             // UTF-8
	binary.BigEndian.PutUint32(h[60:], 0)             // user_version
	binary.BigEndian.PutUint32(h[64:], 0)             // no incremental vacuum
	binary.BigEndian.PutUint32(h[68:], 0)             // application_id
	clear(h[72:92])
	binary.BigEndian.PutUint32(h[92:], 1) // version-valid-for = change counter
	binary.BigEndian.PutUint32(h[96:], w.version)
}

// buildParallel sorts, plans and writes the indexes' b-trees side by side,
// the file's pages the same as build writes them one after the other: each
// index's pages are counted first (plan), which places every index's first
// page, then each index is written at its own pages, through WriterAt.
// Sorting and writing the indexes is most of the time Close takes.
func (w *Writer) buildParallel(idx []*index, wa io.WriterAt) error {
	if err := w.flush(); err != nil {
		return err
	}
	subs := make([]*Writer, len(idx))
	plans := make([]*indexPlan, len(idx))
	ways := make([]int, len(idx))
	errs := make([]error, len(idx))
	each := func(f func(i int)) {
		var wg sync.WaitGroup
		sem := make(chan struct{}, runtime.GOMAXPROCS(0))
		for i := range idx {
			wg.Add(1)
			sem <- struct{}{}
			go func() {
				defer func() { <-sem; wg.Done() }()
				f(i)
			}()
		}
		wg.Wait()
	}
	sources := make([]keySource, len(idx))
	each(func(i int) {
		subs[i] = w.sub()
		sources[i], plans[i], ways[i], errs[i] = subs[i].prepareIndex(idx[i])
	})
	next := w.npages
	for i, x := range idx {
		w.sorted[ways[i]]++
		var ue *UniqueError
		if errors.As(errs[i], &ue) {
			return errs[i]
		}
		if errs[i] != nil {
			return fmt.Errorf("sqlitefile: index %q: %w", x.name, errs[i])
		}
		w.rebalanced[0] += plans[i].fixed[0]
		w.rebalanced[1] += plans[i].fixed[1]
		if uint64(next)+uint64(plans[i].pages) >= maxPages {
			return fmt.Errorf("%w: more than %d pages", ErrTooLarge, uint32(maxPages))
		}
		// The index's pages follow the previous one's, numbered from
		// next+1, at their place in the file.
		s := subs[i]
		s.npages = next
		s.f = io.NewOffsetWriter(wa, w.base+int64(next)*int64(w.pageSize))
		next += plans[i].pages
	}
	each(func(i int) {
		s, x := subs[i], idx[i]
		first := s.npages
		root, err := s.write(plans[i], sources[i])
		if err == nil {
			err = s.flush()
		}
		if err == nil && s.npages-first != plans[i].pages {
			err = fmt.Errorf("wrote %d pages, planned %d", s.npages-first, plans[i].pages)
		}
		x.root, errs[i] = root, err
		x.chunks, x.tail = nil, nil
	})
	for i, x := range idx {
		if errs[i] != nil {
			return fmt.Errorf("sqlitefile: index %q: %w", x.name, errs[i])
		}
	}
	w.npages = next
	if _, err := w.f.Seek(w.base+int64(next)*int64(w.pageSize), io.SeekStart); err != nil {
		return fmt.Errorf("sqlitefile: %w", err)
	}
	return nil
}

// sub is a writer of the same database for one index of buildParallel:
// its own scratch pages and buffer, the same settings.
func (w *Writer) sub() *Writer {
	return &Writer{
		pageSize: w.pageSize, usable: w.usable,
		maxLocalTable: w.maxLocalTable, maxLocalIndex: w.maxLocalIndex, minLocal: w.minLocal,
		version: w.version,
		tmp:     newPage(w.pageSize),
		ovfl:    make([]byte, w.pageSize),
		out:     make([]byte, 0, outFlush+w.pageSize),
		ctx:     w.ctx,
	}
}

// canceled is Options.Context's error, looked at once every 4096 keys
// (k counts them).
func (w *Writer) canceled(k int) error {
	if w.ctx == nil || k&4095 != 0 {
		return nil
	}
	return w.ctx.Err()
}
