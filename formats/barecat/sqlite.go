package barecat

import (
	"database/sql"
	"database/sql/driver"
	"fmt"
	"strings"
	"unicode/utf8"

	"modernc.org/sqlite"
)

// driverName is a database/sql driver of this package's own (the pure-Go
// SQLite of modernc.org/sqlite), so that the SQL functions it registers
// exist on this package's connections only.
const driverName = "itarconv-barecat-sqlite"

// Names of the functions the bulk load's table definitions use (loadDDL).
const (
	loadParentLen = "itarconv_barecat_parent_len"
	loadParent    = "itarconv_barecat_parent"
)

func init() {
	d := &sqlite.Driver{}
	// parent_len(path) is the length in characters of path's parent, for
	// substr(path, 1, n); NULL where that would not be exact (text that
	// is not valid UTF-8, or holds a NUL, which ends SQLite's substr).
	// Returning a number spares copying a string out of Go and back.
	err := d.RegisterFunction(loadParentLen, &sqlite.FunctionImpl{
		NArgs: 1, Deterministic: true, VolatileArgs: true,
		Scalar: func(_ *sqlite.FunctionContext, args []driver.Value) (driver.Value, error) {
			p, ok := args[0].(string)
			if !ok || !utf8.ValidString(p) || strings.IndexByte(p, 0) >= 0 {
				return nil, nil
			}
			return int64(utf8.RuneCountInString(sqlParent(p))), nil
		},
	})
	if err == nil {
		// parent(path) is the parent itself, for what parent_len leaves.
		err = d.RegisterFunction(loadParent, &sqlite.FunctionImpl{
			NArgs: 1, Deterministic: true, VolatileArgs: true, // the result is copied at once
			Scalar: func(_ *sqlite.FunctionContext, args []driver.Value) (driver.Value, error) {
				switch p := args[0].(type) {
				case nil:
					return nil, nil
				case string:
					return sqlParent(p), nil
				case []byte:
					return sqlParent(string(p)), nil
				}
				return nil, fmt.Errorf("path is %T, not text", args[0])
			},
		})
	}
	if err != nil {
		panic(err)
	}
	sql.Register(driverName, d)
}

// sqlParent computes the schema's parent expression (parentExpr) exactly
// as SQLite does: for valid UTF-8 without NUL bytes, that is p up to its
// last "/", trailing slashes removed.
func sqlParent(p string) string {
	if utf8.ValidString(p) && strings.IndexByte(p, 0) < 0 {
		return strings.TrimRight(p[:strings.LastIndexByte(p, '/')+1], "/")
	}
	return sqlRtrim(sqlRtrim(p, strings.ReplaceAll(p, "/", "")), "/")
}

// sqlRtrim is SQLite's rtrim(x, set) on text, invalid UTF-8 included:
// the set is split into characters as SQLite splits them (a byte >= 0xC0
// takes the continuation bytes 0x80-0xBF after it), and while x ends with
// one of them (the first that matches, in the set's order) it is removed.
// SQLite reads the set as a C string: it ends at a NUL byte.
func sqlRtrim(x, set string) string {
	if i := strings.IndexByte(set, 0); i >= 0 {
		set = set[:i]
	}
	var chars []string
	for i := 0; i < len(set); {
		j := i + 1
		if set[i] >= 0xC0 {
			for j < len(set) && set[j]&0xC0 == 0x80 {
				j++
			}
		}
		chars = append(chars, set[i:j])
		i = j
	}
	for len(x) > 0 {
		n := 0
		for _, c := range chars {
			if strings.HasSuffix(x, c) {
				n = len(c)
				break
			}
		}
		if n == 0 {
			return x
		}
		x = x[:len(x)-n]
	}
	return x
}
