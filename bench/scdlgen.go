package bench

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"math"

	"github.com/itarconv/itarconv/formats/scdl"
	"github.com/itarconv/itarconv/testing/testutil"
)

// SCDLGenes is the number of genes of a generated SCDL archive.
const SCDLGenes = 20000

// GenerateSCDL writes to dir (which must not exist) an SCDL archive of
// cells cells, each of 1 to 2*per float32 values over SCDLGenes genes, with
// the var_features index bionemo-scdl needs (cumulative_sum_index.npy and a
// Parquet footer giving the number of genes) and an obs_features label
// file. The bytes depend on cells and per alone. The writer streams: memory
// does not grow with cells.
func GenerateSCDL(dir string, cells, per int) error {
	files := []string{"var_features/cumulative_sum_index.npy", "var_features/dataframe_0.parquet"}
	w, err := scdl.Create(dir, scdl.WriterOptions{NGenes: []int{SCDLGenes},
		FeatureIndices: []scdl.FeatureIndexInfo{{Name: scdl.VarFeatures, Length: uint64(cells), DType: scdl.StringArray, Files: files}}})
	if err != nil {
		return err
	}
	defer w.Abort()
	seed := uint64(0x9e3779b97f4a7c15)
	next := func() uint64 { // xorshift64: fast, and the same on every platform
		seed ^= seed << 13
		seed ^= seed >> 7
		seed ^= seed << 17
		return seed
	}
	var values, genes []byte
	for i := range cells {
		k := 1 + int(next()%uint64(2*max(per, 1)))
		values, genes = values[:0], genes[:0]
		start := int(next() % uint64(SCDLGenes-k))
		for j := range k {
			values = binary.LittleEndian.AppendUint32(values, math.Float32bits(float32(1+(i+j)%50)))
			genes = binary.LittleEndian.AppendUint32(genes, uint32(start+j))
		}
		if err := w.AddRow(values, genes); err != nil {
			return err
		}
	}
	if err := w.AddFile(files[0], bytes.NewReader(scdl.CumSumIndex([]int{cells}))); err != nil {
		return err
	}
	if err := w.AddFile(files[1], bytes.NewReader(testutil.FakeParquet(SCDLGenes))); err != nil {
		return err
	}
	labels, _ := json.Marshal(map[string]any{"synthetic": true, "cells": cells})
	if err := w.AddFile("obs_features/labels.json", bytes.NewReader(labels)); err != nil {
		return err
	}
	return w.Close()
}
