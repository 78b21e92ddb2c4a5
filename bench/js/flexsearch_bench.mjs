// What a frontend would otherwise do in the browser: FlexSearch (pinned in
// bench/run_search_bench.sh) over the same outline search_bench wrote
// (its --export file: the queries' line, then one [id, text, note] a
// line). Prints the index's build time, its memory (heapUsed after a
// collection, before against after), the latency of the rows it can answer
// (a word, a common word, an AND, a two-letter prefix; the first 25 ids,
// in microseconds, after one warm-up run of each),
// and what a frontend pays before its first result without server search:
// the outline's JSON at BANDWIDTH_MBIT (default 50), parsed, then indexed.
// Usage: node --expose-gc bench/js/flexsearch_bench.mjs EXPORT_FILE [REPS]
import fs from 'node:fs';
import readline from 'node:readline';
import { createRequire } from 'node:module';

const require = createRequire(`${process.env.FLEXSEARCH_DIR}/package.json`);
const FlexSearch = require('flexsearch');
const [file, repsArg] = process.argv.slice(2);
const reps = Number(repsArg ?? 200);
const bandwidth = Number(process.env.BANDWIDTH_MBIT ?? 50);

const lines = readline.createInterface({ input: fs.createReadStream(file), crlfDelay: Infinity });
let queries = null;
const rows = [];
for await (const line of lines) {
  if (!queries) { queries = JSON.parse(line); continue; }
  rows.push(JSON.parse(line));
}
// The outline as a frontend would download it: NodeViews as getSubtree and
// getChildren answer them.
const views = rows.map(([id, text, note]) => ({
  uri: `at://did:plc:searchbenchmain0000000/app.bulleted.node/n${String(id).padStart(9, '0')}`,
  rkey: `n${String(id).padStart(9, '0')}`, cid: 'bafyreib' + 'x'.repeat(51), sortKey: 'a0', sortKeyValid: true,
  text, ...(note ? { note } : {}), completed: false, createdAt: '2026-11-30T12:00:00.000Z', childCount: 0,
  parent: 'n000000001' }));
const json = JSON.stringify({ nodes: views });
let t0 = performance.now();
const parsed = JSON.parse(json);
const parseMs = performance.now() - t0;
global.gc();
const heapBefore = process.memoryUsage().heapUsed;
t0 = performance.now();
const index = new FlexSearch.Index({ tokenize: 'forward', encoder: 'Normalize' });
for (const [id, text, note] of rows) index.add(id, note ? `${text}\n${note}` : text);
const buildMs = performance.now() - t0;
global.gc();
const heapAfter = process.memoryUsage().heapUsed;
console.log(`flexsearch: ${rows.length} bullets indexed in ${(buildMs / 1000).toFixed(1)} s; heapUsed grew ${((heapAfter - heapBefore) / 1e6).toFixed(0)} MB for the index alone (after the outline was parsed)`);
const rowsOf = {
  'rare word': queries['rare word'],
  'common word (~100k bullets)': queries['common word (~100k bullets)'],
  'two-word AND': queries['two-word AND'],
  'two-letter prefix': queries['two-letter prefix'],
};
// One warm-up run of every query first, as search_bench does.
for (const q of Object.values(rowsOf)) index.search(q, { limit: 25 });
for (const [name, q] of Object.entries(rowsOf)) {
  const us = [];
  let found = 0;
  for (let r = 0; r < reps; r++) {
    const s = performance.now();
    found = index.search(q, { limit: 25 }).length;
    us.push((performance.now() - s) * 1000);
  }
  us.sort((a, b) => a - b);
  const at = (p) => us[Math.min(us.length - 1, Math.floor(p * us.length))];
  console.log(`flexsearch: ${name.padEnd(30)} p50 ${at(0.5).toFixed(1)} us  p99 ${at(0.99).toFixed(1)} us  max ${us.at(-1).toFixed(1)} us  (${found} ids)`);
}
const transferMs = (json.length * 8) / (bandwidth * 1e6) * 1000;
console.log(`frontend without server search: ${(json.length / 1e6).toFixed(1)} MB of JSON at ${bandwidth} Mbit/s ${(transferMs / 1000).toFixed(1)} s + parse ${(parseMs / 1000).toFixed(2)} s + index ${(buildMs / 1000).toFixed(1)} s = ${((transferMs + parseMs + buildMs) / 1000).toFixed(1)} s before the first result`);
void parsed;
