// DuckDB queries over a Bhasha run directory, their rows as JSON: what
// the tests read Bhasha's files with (TestDuckDBReadsRunDirectory runs
// docs/run-directory.md's queries) and a way anyone can run them:
//
//   make duckscan                                   # npm ci here, once
//   node tools/duckscan/query.mjs RUNDIR "SELECT count(*) FROM read_parquet('RUN/scored.parquet')" [SQL ...]
//
// Every "RUN/" in a query stands for RUNDIR/ (quotes in RUNDIR are
// doubled, as SQL's strings need). It runs each query in turn, in one
// DuckDB, and prints one line for each, a JSON object:
// {"columns": [names], "rows": [[values]]}; an integer is a number (a
// string past 2^53), a NaN or infinite double the string "NaN",
// "Infinity" or "-Infinity", a NULL null. A failed query prints DuckDB's
// error and the query on stderr and exits 1.
import { DuckDBInstance } from '@duckdb/node-api';

const [dir, ...sqls] = process.argv.slice(2);
if (!dir || sqls.length === 0) {
  console.error('usage: node query.mjs RUNDIR SQL [SQL ...]');
  process.exit(2);
}
const json = (k, v) => {
  if (typeof v === 'bigint') return Number.isSafeInteger(Number(v)) ? Number(v) : v.toString();
  if (typeof v === 'number' && !Number.isFinite(v)) return String(v);
  return v;
};
const db = await DuckDBInstance.create(':memory:');
const c = await db.connect();
for (const sql of sqls) {
  const query = sql.replaceAll('RUN/', dir.replaceAll("'", "''") + '/');
  try {
    const r = await c.runAndReadAll(query);
    console.log(JSON.stringify({ columns: r.columnNames(), rows: r.getRowsJS() }, json));
  } catch (err) {
    console.error(`${err.message}\n${query}`);
    process.exit(1);
  }
}
