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

// parentExpr is how the schema computes the generated column parent of
// both tables (for dirs, of every row but the root); the Writer gives
// the indexes over it sqlParent, the same value computed in Go.
const parentExpr = `rtrim(rtrim(path, replace(path, '/', '')), '/')`
