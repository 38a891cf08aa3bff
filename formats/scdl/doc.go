// Package scdl reads and writes SCDL archives, the on-disk form of NVIDIA
// bionemo-scdl's SingleCellMemMapDataset: a directory holding a sparse
// cells x genes matrix in CSR form, as bionemo-scdl 0.1.3 writes it.
//
// An archive is a directory of:
//
//   - header.sch: a big-endian binary header (magic "SCDL", version 0.1.0,
//     endianness 1, backend 1) naming the three arrays DATA, ROWPTR and
//     COLPTR with their lengths and dtypes, then the feature indices;
//   - data.npy, row_ptr.npy, col_ptr.npy: the values, the n_rows+1 row
//     offsets and the gene index of each value, as raw little-endian arrays
//     with no NPY header despite their names, typed by the header;
//   - metadata.json, version.json;
//   - var_features/ and obs_features/: cumulative_sum_index.npy (a real NPY
//     file of int64), labels.json, version.npy and one dataframe_<k>.parquet
//     per block of rows.
//
// Row i is data[row_ptr[i]:row_ptr[i+1]], its genes the same slice of
// col_ptr. The var_features blocks give each row's number of genes (see
// Archive.Blocks). Only the header is big-endian.
//
// The package knows this format's bytes and nothing of any other format: it
// treats the Parquet files as opaque, except for the row count in their
// footer, which is a block's number of genes.
//
// It knows one format's bytes on disk: it imports no networking (remote),
// no other format's joins (fold, convert, partition, shardset), no command
// line, and no test helper.
package scdl
