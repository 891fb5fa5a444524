// Writes the two Hugging Face-shaped parquet fixtures with an independent
// writer (Apache Arrow JS + parquet-wasm, i.e. arrow-rs: the same list
// encoding as pyarrow), from real rows of the shared datasets.
//   npm install parquet-wasm@0.8.0 apache-arrow@21.2.0
//   node make_fixtures.mjs <shared/datasets> <out dir>
// The fixtures are committed; tests do not need node.
import * as arrow from "apache-arrow";
import * as pq from "parquet-wasm/esm";
import { readFileSync, writeFileSync } from "node:fs";
import { initSync } from "parquet-wasm/esm";
import { createRequire } from "node:module";

const require = createRequire(import.meta.url);
initSync({ module: readFileSync(require.resolve("parquet-wasm/esm/parquet_wasm_bg.wasm")) });
const [shared, out] = process.argv.slice(2);

// TriviaQA's official normalisation (evaluation/triviaqa_evaluation.py).
const punct = new Set([..."!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~", "\u2018", "\u2019", "\u00b4", "`"]);
function norm(s) {
  s = s.replaceAll("_", " ").toLowerCase();
  s = [...s].map((c) => (punct.has(c) ? " " : c)).join("");
  s = s.replace(/\b(a|an|the)\b/g, " ");
  return s.split(/\s+/).filter(Boolean).join(" ");
}

function write(table, path) {
  const wasmTable = pq.Table.fromIPCStream(arrow.tableToIPC(table, "stream"));
  writeFileSync(path, pq.writeParquet(wasmTable));
}

// TriviaQA rc.nocontext-style rows: the official sample (tc_33) and the
// first lines of llm-foundry's triviaqa_small.jsonl (ids as in its order).
const sample = JSON.parse(readFileSync(`${shared}/triviaqa/original-sample/triviaqa_sample.json`, "utf8")).Data[0];
const small = readFileSync(`${shared}/triviaqa/llm-foundry/triviaqa_small.jsonl`, "utf8").trim().split("\n").slice(0, 4).map((l) => JSON.parse(l));
const rows = [
  { q: sample.Question, id: sample.QuestionId, src: sample.QuestionSource, a: sample.Answer.Aliases, v: sample.Answer.Value, na: sample.Answer.NormalizedAliases, t: sample.Answer.Type },
  ...small.filter((r) => !r.context.includes("Lloyd Webber")).map((r, i) => ({
    q: r.context.replace(/^Question: /, "").replace(/\nAnswer:$/, ""), id: `llmf_small_${i + 1}`, src: "llm-foundry triviaqa_small.jsonl",
    a: r.aliases, v: r.answer, na: [...new Set(r.aliases.map(norm))], t: "WikipediaEntity",
  })),
];
const answerType = new arrow.Struct([
  new arrow.Field("aliases", new arrow.List(new arrow.Field("item", new arrow.Utf8(), true)), true),
  new arrow.Field("normalized_aliases", new arrow.List(new arrow.Field("item", new arrow.Utf8(), true)), true),
  new arrow.Field("matched_wiki_entity_name", new arrow.Utf8(), true),
  new arrow.Field("normalized_matched_wiki_entity_name", new arrow.Utf8(), true),
  new arrow.Field("normalized_value", new arrow.Utf8(), true),
  new arrow.Field("type", new arrow.Utf8(), true),
  new arrow.Field("value", new arrow.Utf8(), true),
]);
const tqa = new arrow.Table({
  question: arrow.vectorFromArray(rows.map((r) => r.q), new arrow.Utf8()),
  question_id: arrow.vectorFromArray(rows.map((r) => r.id), new arrow.Utf8()),
  question_source: arrow.vectorFromArray(rows.map((r) => r.src), new arrow.Utf8()),
  answer: arrow.vectorFromArray(rows.map((r) => ({
    aliases: r.a, normalized_aliases: r.na, matched_wiki_entity_name: r.v, normalized_matched_wiki_entity_name: norm(r.v),
    normalized_value: norm(r.v), type: r.t, value: r.v,
  })), answerType),
});
write(tqa, `${out}/triviaqa-validation-sample.parquet`);

// TruthfulQA multiple_choice rows: the first 5 records of data/v0/mc_task.json
// (the order Hugging Face's truthful_qa follows), dict order kept.
const mc = JSON.parse(readFileSync(`${shared}/truthfulqa/data/v0/mc_task.json`, "utf8")).slice(0, 5);
// List children named "element" here (pyarrow >= 13) and "item" above
// (older writers), so that both namings are exercised.
const targets = new arrow.Struct([
  new arrow.Field("choices", new arrow.List(new arrow.Field("element", new arrow.Utf8(), true)), true),
  new arrow.Field("labels", new arrow.List(new arrow.Field("element", new arrow.Int32(), true)), true),
]);
const asTargets = (d) => ({ choices: Object.keys(d), labels: Object.values(d) });
const tq = new arrow.Table({
  question: arrow.vectorFromArray(mc.map((r) => r.question), new arrow.Utf8()),
  mc1_targets: arrow.vectorFromArray(mc.map((r) => asTargets(r.mc1_targets)), targets),
  mc2_targets: arrow.vectorFromArray(mc.map((r) => asTargets(r.mc2_targets)), targets),
});
write(tq, `${out}/truthfulqa-mc-validation-sample.parquet`);
console.log(`wrote ${rows.length} TriviaQA and ${mc.length} TruthfulQA rows to ${out}`);
