package duckdb

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/itarconv/itarconv/formats/scdl"
)

// TestSCDLVarFeatures: the dataframe SCDL's var_features index writes is
// read by DuckDB as one VARCHAR column feature_id, a row per feature, in
// order, value for value.
func TestSCDLVarFeatures(t *testing.T) {
	features := []string{"GENE0", "ENSG00000141510", "", "naïve-ß", "a'quote"}
	files, err := scdl.OneBlockFeatureIndex(scdl.VarFeatures, 7, features)
	if err != nil {
		t.Fatal(err)
	}
	var path string
	for _, f := range files {
		if filepath.Ext(f.Rel) == ".parquet" {
			path = filepath.Join(t.TempDir(), filepath.Base(f.Rel))
			if err := os.WriteFile(path, f.Data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	if path == "" {
		t.Fatal("the feature index has no Parquet dataframe")
	}
	tb := Read(t, path)
	if len(tb.Columns) != 1 || tb.Columns[0].Name != "feature_id" || tb.Columns[0].Type != "VARCHAR" {
		t.Fatalf("columns %s, want feature_id VARCHAR", tb.Describe())
	}
	if len(tb.Rows) != len(features) {
		t.Fatalf("%d rows, want %d", len(tb.Rows), len(features))
	}
	for i, f := range features {
		v := tb.Rows[i][0]
		if v == nil || v.Str == nil || *v.Str != f {
			t.Errorf("row %d: %s, want %q", i, v, f)
		}
	}
}
