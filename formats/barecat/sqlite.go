package barecat

import (
	"database/sql"
	"strings"
	"unicode/utf8"

	"modernc.org/sqlite"
)

// driverName is a database/sql driver of this package's own (the pure-Go
// SQLite of modernc.org/sqlite), for the Reader.
const driverName = "itarconv-barecat-sqlite"

func init() {
	sql.Register(driverName, &sqlite.Driver{})
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
