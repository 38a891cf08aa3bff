package scdl

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"path"
	"unicode/utf8"

	"github.com/parquet-go/parquet-go"
)

// FeatureFile is one file of a feature index, relative to the archive.
type FeatureFile struct {
	Rel  string
	Data []byte
}

// featureRow is a row of the dataframe of a feature index written here:
// one string column, as AnnData's var index becomes in bionemo-scdl
// (feature_id, the loader's default column name).
type featureRow struct {
	FeatureID string `parquet:"feature_id"`
}

// OneBlockFeatureIndex returns the files of a feature index of one block:
// rows rows that share one dataframe whose column feature_id holds
// features (a gene's name, by its index). bionemo-scdl counts an archive's
// rows in its var_features index (the last entry of
// cumulative_sum_index.npy) and a row's genes by the length of the
// dataframe's first column: without such an index it opens an archive as
// empty. The files are those bionemo-scdl 0.1.3 writes for a block:
// cumulative_sum_index.npy ([-1, rows], int64), labels.json ([null]: no
// source file), version.npy (the package version) and dataframe_0.parquet.
func OneBlockFeatureIndex(name string, rows int, features []string) ([]FeatureFile, error) {
	if rows <= 0 || len(features) == 0 {
		return nil, fmt.Errorf("feature index %s: %d rows and %d features: both must be positive", name, rows, len(features))
	}
	df := make([]featureRow, len(features))
	for i, f := range features {
		df[i].FeatureID = f
	}
	var pq bytes.Buffer
	if err := parquet.Write(&pq, df); err != nil {
		return nil, fmt.Errorf("feature index %s: %w", name, err)
	}
	return []FeatureFile{
		{path.Join(name, CumSumFile), CumSumIndex([]int{rows})},
		{path.Join(name, "labels.json"), []byte("[null]")},
		{path.Join(name, "version.npy"), scalarStringNPY(PackageVersion)},
		{path.Join(name, "dataframe_0.parquet"), pq.Bytes()},
	}, nil
}

// scalarStringNPY is numpy's save of np.array(s): a 0-d array of dtype
// '<U<len>', the string in UTF-32LE.
func scalarStringNPY(s string) []byte {
	n := utf8.RuneCountInString(s)
	b := appendNPYHeaderShape(nil, fmt.Sprintf("<U%d", n), "")
	for _, r := range s {
		b = binary.LittleEndian.AppendUint32(b, uint32(r))
	}
	return b
}

// maxFreshGenes bounds the genes of a fresh var_features index, which
// names each of them: far above any organism's genes or any assay's
// features (millions of ATAC peaks), far below what a hostile gene index
// or n_genes would make this allocate.
const maxFreshGenes = 1 << 24
