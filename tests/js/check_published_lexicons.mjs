// Bulleted's published lexicons (tests/fixtures/published-lexicons, with
// where they come from) against the app view's own (schema/lexicons):
//  1. the vendored copies are the ones their provenance names (SHA256SUMS);
//  2. every published document the app view has adopted is, under
//     schema/lexicons, the same document (the record's $type aside); every
//     one not adopted yet is listed below with why, and still differs (so a
//     pending entry cannot outlive its adoption unnoticed);
//  3. records in the published shapes, as third-party clients write them,
//     are accepted by @atproto/lexicon with the app view's lexicons, and
//     records that break them are refused.
// Usage: node check_published_lexicons.mjs <schema/lexicons> <published folder>
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { Lexicons, parseLexiconDoc } from '@atproto/lexicon';

const [schemaRoot, publishedRoot] = process.argv.slice(2);
let failures = 0;
let passed = 0;
const check = (ok, message) => {
  if (ok) passed++;
  else failures++;
  console.log(`${ok ? 'ok' : 'FAIL'} ${message}`);
};

// Published documents the app view does not serve yet, and why.
const pending = new Map([
  ['app.bulleted.admin.deny', 'moderation comes after the published records (DESIGN.md section 14)'],
  ['app.bulleted.admin.undeny', 'moderation comes after the published records (DESIGN.md section 14)'],
  ['app.bulleted.admin.listDenied', 'moderation comes after the published records (DESIGN.md section 14)'],
]);

// 1. The vendored copies.
const sums = readFileSync(join(publishedRoot, 'SHA256SUMS'), 'utf8').trim().split('\n')
  .map((line) => line.split(/\s+/)).map(([sum, file]) => [file, sum]);
const vendored = readdirSync(publishedRoot).filter((f) => f.endsWith('.json')).sort();
check(isDeepStrictEqual(sums.map(([file]) => file).sort(), vendored), `SHA256SUMS names every vendored file (${vendored.length})`);
for (const [file, sum] of sums) {
  const actual = createHash('sha256').update(readFileSync(join(publishedRoot, file))).digest('hex');
  check(actual === sum, `${file} is the copy its provenance names`);
}

// 2. Adopted or pending.
function jsonFiles(dir) {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return jsonFiles(path);
    return name.endsWith('.json') ? [path] : [];
  });
}
const ours = new Map(jsonFiles(schemaRoot).map((file) => {
  const doc = JSON.parse(readFileSync(file, 'utf8'));
  return [doc.id, doc];
}));
const withoutType = ({ $type, ...doc }) => doc;
const published = vendored.map((file) => JSON.parse(readFileSync(join(publishedRoot, file), 'utf8')));
for (const doc of published) {
  const mine = ours.get(doc.id);
  const same = mine !== undefined && isDeepStrictEqual(withoutType(mine), withoutType(doc));
  if (pending.has(doc.id)) {
    check(!same, `${doc.id} is pending: ${pending.get(doc.id)}`);
  } else {
    check(same, `${doc.id} is the published document`);
  }
}
for (const id of pending.keys()) check(published.some((d) => d.id === id), `pending ${id} is a published document`);

// 3. Records in the published shapes, with the app view's lexicons.
const lex = new Lexicons();
for (const doc of ours.values()) lex.add(parseLexiconDoc(doc));
const did = 'did:plc:ewvi7nxzyoun6zhxrhs64oiz';
const node = `at://${did}/app.bulleted.node/3l2uvlmh4ac2c`;
const at = '2026-08-01T10:00:00.000Z';
const facets = [
  { index: { byteStart: 0, byteEnd: 4 }, features: [{ $type: 'app.bsky.richtext.facet#mention', did }] },
  { index: { byteStart: 5, byteEnd: 9 }, features: [{ $type: 'app.bsky.richtext.facet#link', uri: 'https://bulleted.app/' }] },
  { index: { byteStart: 10, byteEnd: 14 }, features: [{ $type: 'app.bsky.richtext.facet#tag', tag: 'work' }] },
];
const vectors = [
  ['app.bulleted.note', 'a note of its node, with facets', { $type: 'app.bulleted.note', subject: node, text: '@ann link #work', facets, createdAt: at }, true],
  ['app.bulleted.note', 'a note without its subject', { $type: 'app.bulleted.note', text: 'x', createdAt: at }, false],
  ['app.bulleted.note', 'a note whose subject is no AT-URI', { $type: 'app.bulleted.note', subject: 'nope', text: 'x', createdAt: at }, false],
  ['app.bulleted.outline', 'the whole forest\'s outline record', { $type: 'app.bulleted.outline', title: 'Plans', description: 'All of them', createdAt: at }, true],
  ['app.bulleted.outline', 'a subtree\'s, with contributors', { $type: 'app.bulleted.outline', root: node, title: 'Shared', contributors: [{ did }], createdAt: at }, true],
  ['app.bulleted.outline', 'a title past 200 graphemes', { $type: 'app.bulleted.outline', title: 'x'.repeat(201), createdAt: at }, false],
  ['app.bulleted.mirror', 'a mirror of a bullet in another repo', { $type: 'app.bulleted.mirror', original: `at://did:plc:other/app.bulleted.node/3l2uvlmh4ac2d`, parent: node, sortKey: 'a20', createdAt: at }, true],
  ['app.bulleted.mirror', 'a mirror without its original', { $type: 'app.bulleted.mirror', sortKey: 'a0', createdAt: at }, false],
  ['app.bulleted.comment', 'a comment on a bullet', { $type: 'app.bulleted.comment', subject: node, text: 'Nice', createdAt: at }, true],
  ['app.bulleted.commentPolicy', 'a policy', { $type: 'app.bulleted.commentPolicy', allow: [], createdAt: at }, true],
];
for (const [nsid, what, record, valid] of vectors) {
  let accepted = true;
  let why = '';
  try {
    lex.assertValidRecord(nsid, record);
  } catch (err) {
    accepted = false;
    why = err.message;
  }
  check(accepted === valid, `${nsid}, ${what}: ${accepted ? 'accepted' : `refused (${why})`}`);
}

console.log(`${passed} passed, ${failures} failed`);
process.exit(failures === 0 ? 0 : 1);
