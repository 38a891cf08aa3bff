package scdl

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/itarconv/itarconv/testing/testutil"
)

// TestOneBlockFeatureIndex: the files are those bionemo-scdl writes for a
// block (version.npy byte for byte as in its archives), the dataframe a
// Parquet file with one row per feature.
func TestOneBlockFeatureIndex(t *testing.T) {
	files, err := OneBlockFeatureIndex(VarFeatures, 50, []string{"0", "1", "2", "ACTB"})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][]byte{}
	for _, f := range files {
		got[f.Rel] = f.Data
	}
	conf := filepath.Join(testutil.Conformance(t, "scdl"), "basic_50x30_f32", "scdl", "var_features")
	for _, name := range []string{"version.npy", "cumulative_sum_index.npy"} {
		want, err := os.ReadFile(filepath.Join(conf, name))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got["var_features/"+name], want) {
			t.Errorf("%s differs from bionemo's:\n%q\n%q", name, got["var_features/"+name], want)
		}
	}
	pq := got["var_features/dataframe_0.parquet"]
	rows, err := parquet.Read[featureRow](bytes.NewReader(pq), int64(len(pq)))
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 4 || rows[3].FeatureID != "ACTB" {
		t.Errorf("dataframe rows %v", rows)
	}
	// The footer reader of this package (which bionemo's archives are read
	// with) sees the same number of rows.
	p := filepath.Join(t.TempDir(), "d.parquet")
	os.WriteFile(p, pq, 0o644)
	if n, err := parquetRows(p); err != nil || n != 4 {
		t.Errorf("parquetRows = %d, %v", n, err)
	}
	if string(got["var_features/labels.json"]) != "[null]" {
		t.Errorf("labels.json %q", got["var_features/labels.json"])
	}
	if _, err := OneBlockFeatureIndex(VarFeatures, 0, []string{"a"}); err == nil {
		t.Error("0 rows accepted")
	}
}
