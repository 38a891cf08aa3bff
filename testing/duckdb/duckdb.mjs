// Reads Parquet files with DuckDB, or runs SQL, for itarconv's tests (see
// duckdb.go). Usage:
//
//   node duckdb.mjs read FILE...  prints {"columns": [{"name", "type"}], "rows": [[value...]],
//                                 "metadata": {file: {key: value}}} as JSON: the files'
//                                 rows one after the other, in order
//   node duckdb.mjs sql SQL     runs SQL (a COPY that writes a file)
//
// Values print tagged, so that Go tells their types apart: {"int": "12"},
// {"num": 1.5}, {"bool": true}, {"str": "..."}, {"blob": base64},
// {"struct": {field: value}}, {"list": [value...]}, null.
import { DuckDBInstance, DuckDBBlobValue, DuckDBStructValue, DuckDBListValue } from '@duckdb/node-api';

function tag(v) {
  if (v === null || v === undefined) return null;
  if (typeof v === 'bigint') return { int: v.toString() };
  if (typeof v === 'number') return Number.isInteger(v) ? { int: String(v) } : { num: v };
  if (typeof v === 'boolean') return { bool: v };
  if (typeof v === 'string') return { str: v };
  if (v instanceof DuckDBBlobValue) return { blob: Buffer.from(v.bytes).toString('base64') };
  if (v instanceof DuckDBStructValue) {
    const out = {};
    for (const [k, x] of Object.entries(v.entries)) out[k] = tag(x);
    return { struct: out };
  }
  if (v instanceof DuckDBListValue) return { list: v.items.map(tag) };
  return { other: String(v) };
}

const quote = (s) => "'" + s.replaceAll("'", "''") + "'";

const [mode, arg, ...more] = process.argv.slice(2);
const db = await DuckDBInstance.create(':memory:');
const conn = await db.connect();
if (mode === 'sql') {
  await conn.run(arg);
} else if (mode === 'read') {
  const files = '[' + [arg, ...more].map(quote).join(', ') + ']';
  const r = await conn.runAndReadAll(`SELECT * FROM read_parquet(${files})`);
  const names = r.columnNames();
  const types = r.columnTypes();
  const columns = names.map((n, i) => ({ name: n, type: types[i].toString() }));
  const rows = r.getRows().map((row) => row.map(tag));
  const kv = await conn.runAndReadAll(`SELECT file_name, decode(key) AS k, decode(value) AS v FROM parquet_kv_metadata(${files})`);
  const metadata = {};
  for (const [f, k, v] of kv.getRows()) (metadata[f] ??= {})[k] = v;
  process.stdout.write(JSON.stringify({ columns, rows, metadata }));
} else {
  console.error('usage: node duckdb.mjs read FILE | sql SQL');
  process.exit(2);
}
