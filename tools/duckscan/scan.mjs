// DuckDB's full scan of a Bhasha run directory: the side-by-side anchor of
// the papers'-scale benchmark (cli BenchmarkPapersGrid) and a
// comparison anyone can rerun:
//
//   make duckscan                       # npm ci here: @duckdb/node-api, pinned
//   node tools/duckscan/scan.mjs RUNDIR
//
// It reads every records file of RUNDIR (records*.jsonl*: today's
// records.jsonl and any compressed segment beside it, records-NNNNNN.jsonl.zst;
// DuckDB decompresses .zst and .gz by their extension) and prints one JSON
// line: the records, the distinct keys, the bytes of every response
// (strlen, UTF-8), the files matched and the seconds the query took.
// Peak memory is the process's (the benchmark reads it from rusage).
import { DuckDBInstance } from '@duckdb/node-api';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';

const dir = process.argv[2];
if (!dir) {
  console.error('usage: node scan.mjs RUNDIR');
  process.exit(2);
}
const files = readdirSync(dir).filter((f) => /^records.*\.jsonl(\.(zst|gz))?$/.test(f));
if (files.length === 0) {
  console.error(`${dir}: no records*.jsonl* files`);
  process.exit(1);
}
const glob = join(dir, 'records*.jsonl*').replaceAll("'", "''");
const t0 = process.hrtime.bigint();
const db = await DuckDBInstance.create(':memory:');
const c = await db.connect();
const r = await c.runAndReadAll(
  `select count(*), count(distinct key), sum(strlen(response)) from read_json('${glob}', format='newline_delimited', columns={key: 'VARCHAR', response: 'VARCHAR'}, maximum_object_size=67108864)`,
);
const [records, keys, responseBytes] = r.getRows()[0].map((x) => Number(x ?? 0));
const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
console.log(JSON.stringify({ records, keys, response_bytes: responseBytes, files: files.length, seconds }));
