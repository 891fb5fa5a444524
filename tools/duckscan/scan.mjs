// DuckDB's full scan of a Bhasha run directory: the side-by-side anchor of
// the papers'-scale benchmark (cli BenchmarkPapersGrid) and a
// comparison anyone can rerun:
//
//   make duckscan                       # npm ci here: @duckdb/node-api, pinned
//   node tools/duckscan/scan.mjs RUNDIR
//
// It reads every record of RUNDIR: the sealed segments,
// records-NNNNNN.parquet (read_parquet), and the live records.jsonl
// when there is one (read_json), and prints one JSON line: the records,
// the distinct keys, the bytes of every response (strlen, UTF-8), the
// files matched and the seconds the query took. Peak memory is the
// process's (the benchmark reads it from rusage).
import { DuckDBInstance } from '@duckdb/node-api';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';

const dir = process.argv[2];
if (!dir) {
  console.error('usage: node scan.mjs RUNDIR');
  process.exit(2);
}
const names = readdirSync(dir);
const segments = names.filter((f) => /^records-\d{6,}\.parquet$/.test(f));
const live = names.includes('records.jsonl');
if (segments.length === 0 && !live) {
  console.error(`${dir}: no records-*.parquet or records.jsonl`);
  process.exit(1);
}
const quote = (p) => `'${p.replaceAll("'", "''")}'`;
const parts = [];
if (segments.length > 0) {
  parts.push(`select key, response from read_parquet(${quote(join(dir, 'records-*.parquet'))})`);
}
if (live) {
  parts.push(
    `select key, response from read_json(${quote(join(dir, 'records.jsonl'))}, format='newline_delimited', columns={key: 'VARCHAR', response: 'VARCHAR'}, maximum_object_size=67108864)`,
  );
}
const t0 = process.hrtime.bigint();
const db = await DuckDBInstance.create(':memory:');
const c = await db.connect();
const r = await c.runAndReadAll(
  `select count(*), count(distinct key), sum(strlen(response)) from (${parts.join(' union all ')})`,
);
const [records, keys, responseBytes] = r.getRows()[0].map((x) => Number(x ?? 0));
const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
console.log(JSON.stringify({ records, keys, response_bytes: responseBytes, files: segments.length + (live ? 1 : 0), seconds }));
