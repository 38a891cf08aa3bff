package duckdb

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
)

// InstallCommand installs DuckDB where the tests look for it.
const InstallCommand = "npm ci --prefix testing/duckdb"

// dir is this package's directory, where package.json and node_modules
// are.
func dir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Dir(file)
}

// Need fails t unless node and the pinned DuckDB are installed.
func Need(t testing.TB) {
	t.Helper()
	if _, err := exec.LookPath("node"); err != nil {
		t.Fatalf("DuckDB: node is not installed (DuckDB runs in it; then %s)", InstallCommand)
	}
	if _, err := os.Stat(filepath.Join(dir(), "node_modules", "@duckdb", "node-api", "package.json")); err != nil {
		t.Fatalf("DuckDB is not installed: run %s", InstallCommand)
	}
}

func run(t testing.TB, args ...string) []byte {
	t.Helper()
	Need(t)
	cmd := exec.Command("node", append([]string{filepath.Join(dir(), "duckdb.mjs")}, args...)...)
	cmd.Dir = dir()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("DuckDB %s: %v: %s", args[0], err, bytes.TrimSpace(stderr.Bytes()))
	}
	return out
}

// Exec runs SQL in DuckDB (an in-memory database).
func Exec(t testing.TB, sql string) {
	t.Helper()
	run(t, "sql", sql)
}

// Table is Parquet files as DuckDB reads them: their rows one after the
// other.
type Table struct {
	Columns []Column
	Rows    [][]*Value
	// Metadata is each file's key-value metadata, by its path as given.
	Metadata map[string]map[string]string
}

// Column is a column's name and DuckDB type ("VARCHAR", "BLOB",
// "STRUCT(\"bytes\" BLOB, path VARCHAR)", ...).
type Column struct {
	Name string `json:"name"`
	Type string `json:"type"`
}

// Value is one value, tagged with its kind; nil is NULL.
type Value struct {
	Int    *string           `json:"int,omitempty"`
	Num    *float64          `json:"num,omitempty"`
	Bool   *bool             `json:"bool,omitempty"`
	Str    *string           `json:"str,omitempty"`
	Blob   *string           `json:"blob,omitempty"` // base64
	Struct map[string]*Value `json:"struct,omitempty"`
	List   []*Value          `json:"list,omitempty"`
	Other  *string           `json:"other,omitempty"`
}

// Bytes is a BLOB's or a VARCHAR's bytes.
func (v *Value) Bytes() ([]byte, bool) {
	switch {
	case v == nil:
		return nil, false
	case v.Blob != nil:
		b, err := base64.StdEncoding.DecodeString(*v.Blob)
		return b, err == nil
	case v.Str != nil:
		return []byte(*v.Str), true
	}
	return nil, false
}

// String prints a value for a message.
func (v *Value) String() string {
	b, _ := json.Marshal(v)
	return string(b)
}

// Read reads Parquet files with DuckDB, in one table (their schemas must
// agree).
func Read(t testing.TB, paths ...string) *Table {
	t.Helper()
	args := []string{"read"}
	abs := map[string]string{}
	for _, p := range paths {
		a, err := filepath.Abs(p)
		if err != nil {
			t.Fatal(err)
		}
		abs[a] = p
		args = append(args, a)
	}
	out := run(t, args...)
	var raw struct {
		Columns  []Column                     `json:"columns"`
		Rows     [][]*Value                   `json:"rows"`
		Metadata map[string]map[string]string `json:"metadata"`
	}
	if err := json.Unmarshal(out, &raw); err != nil {
		t.Fatalf("DuckDB read %v: %v", paths, err)
	}
	tb := &Table{Columns: raw.Columns, Rows: raw.Rows, Metadata: map[string]map[string]string{}}
	for f, kv := range raw.Metadata {
		if p, ok := abs[f]; ok {
			f = p
		}
		tb.Metadata[f] = kv
	}
	return tb
}

// Col is the index of the named column, -1 for none.
func (tb *Table) Col(name string) int {
	for i, c := range tb.Columns {
		if c.Name == name {
			return i
		}
	}
	return -1
}

// Describe prints the table's columns, for a message.
func (tb *Table) Describe() string {
	return fmt.Sprint(tb.Columns)
}
