// Package duckdb runs DuckDB, a Parquet reader that is not ours, for tests:
// Read gives a Parquet file's rows, schema and key-value metadata as DuckDB
// reads them, and Exec runs SQL (a COPY writing a Parquet file of DuckDB's
// own). DuckDB comes from the npm package @duckdb/node-api, pinned in this
// directory's package.json and installed beside it:
//
//	npm ci --prefix testing/duckdb
//
// A test that needs it and does not find it fails, naming that command.
//
// It is for tests only: no product package imports it.
package duckdb
