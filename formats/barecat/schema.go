package barecat

import (
	_ "embed"
	"fmt"
	"regexp"
	"strings"
)

// schemaText is the schema of barecat 0.3.1 as SQLite stores it in
// sqlite_master (it is the on-disk format): each entry is a line
// "-- <type> <name> (on <table>)", the CREATE statement verbatim, ";" and a
// blank line, in sqlite_master order. It is the schema_dump.sql of an
// archive barecat made without files; archives with files also hold the
// sqlite_stat1 table that ANALYZE creates.
//
//go:embed schema_0_3.sql
var schemaText string

// schemaEntry is one object of the schema.
type schemaEntry struct {
	Type, Name, Table, SQL string
}

var schemaHeader = regexp.MustCompile(`(?m)^-- (table|index|trigger|view) (\S+) \(on (\S+)\)\n`)

// parseSchemaDump splits a schema dump into its entries.
func parseSchemaDump(text string) ([]schemaEntry, error) {
	locs := schemaHeader.FindAllStringSubmatchIndex(text, -1)
	if len(locs) == 0 || locs[0][0] != 0 {
		return nil, fmt.Errorf("schema dump does not start with an entry header")
	}
	var out []schemaEntry
	for i, l := range locs {
		end := len(text)
		if i+1 < len(locs) {
			end = locs[i+1][0]
		}
		body, ok := strings.CutSuffix(text[l[1]:end], ";\n\n")
		if !ok {
			return nil, fmt.Errorf("schema entry %s does not end with \";\\n\\n\"", text[l[4]:l[5]])
		}
		out = append(out, schemaEntry{text[l[2]:l[3]], text[l[4]:l[5]], text[l[6]:l[7]], body})
	}
	return out, nil
}

// formatSchemaDump is the inverse of parseSchemaDump.
func formatSchemaDump(entries []schemaEntry) string {
	var b strings.Builder
	for _, e := range entries {
		fmt.Fprintf(&b, "-- %s %s (on %s)\n%s;\n\n", e.Type, e.Name, e.Table, e.SQL)
	}
	return b.String()
}

// schema03 is schemaText parsed: tables, then indexes, then triggers.
var schema03 = func() []schemaEntry {
	e, err := parseSchemaDump(schemaText)
	if err != nil {
		panic("barecat: embedded schema: " + err.Error())
	}
	return e
}()

// The parent columns as the schema defines them. The bulk load replaces
// them (see loadDDL), so they must be found verbatim.
const (
	filesParentDDL = `parent   TEXT GENERATED ALWAYS AS ( -- Parent directory is computed automatically
        rtrim(rtrim(path, replace(path, '/', '')), '/')
        ) VIRTUAL             NOT NULL REFERENCES dirs (path) ON DELETE RESTRICT,`
	dirsParentDDL = `parent         TEXT GENERATED ALWAYS AS (
        CASE
            WHEN path = '' THEN NULL
            ELSE rtrim(rtrim(path, replace(path, '/', '')), '/')
            END
        ) VIRTUAL REFERENCES dirs (path) ON DELETE RESTRICT,`
)

// loadDDL is the CREATE TABLE statement the Writer loads a table with:
// the schema's own, except that the generated parent column computes its
// value with Go functions (see sqlite.go) instead of the nested
// rtrim/replace, and, for files, without NOT NULL.
//
// Why: a virtual column is not stored in the table's records, so its
// definition can change without touching the data. SQLite evaluates it on
// every INSERT only to check NOT NULL, and again for every row when the
// index on it is built. SQLite's rtrim(X, Y) compares each trailing
// character of X with each character of Y, so the schema's expression is
// quadratic in the path's length: it took half of the time of a bulk
// load. The Go functions give the same value in linear time, and after
// the indexes are built the Writer puts the schema's exact text back (see
// Writer.finishIndex).
func loadDDL(e schemaEntry) string {
	expr := "coalesce(substr(path, 1, " + loadParentLen + "(path)), " + loadParent + "(path))"
	switch e.Name {
	case "files":
		return strings.Replace(e.SQL, filesParentDDL,
			"parent TEXT GENERATED ALWAYS AS ("+expr+") VIRTUAL,", 1)
	case "dirs":
		return strings.Replace(e.SQL, dirsParentDDL,
			"parent TEXT GENERATED ALWAYS AS (CASE WHEN path = '' THEN NULL ELSE "+expr+" END) VIRTUAL,", 1)
	}
	return e.SQL
}

func init() {
	for _, e := range schema03 {
		if e.Type == "table" && e.Name != "config" && loadDDL(e) == e.SQL {
			panic("barecat: embedded schema: parent column of " + e.Name + " not found")
		}
	}
}
