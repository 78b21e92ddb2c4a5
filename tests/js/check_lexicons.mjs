// Loads every lexicon document under the given folder with the official
// @atproto/lexicon package and fails if any is rejected; then checks that the
// package agrees with the record model on a few records.
// Usage: node check_lexicons.mjs <lexicon folder>
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { Lexicons, parseLexiconDoc } from '@atproto/lexicon';

function jsonFiles(dir) {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return jsonFiles(path);
    return name.endsWith('.json') ? [path] : [];
  });
}

const root = process.argv[2];
const files = jsonFiles(root);
let failures = 0;
const lex = new Lexicons();
for (const file of files) {
  try {
    lex.add(parseLexiconDoc(JSON.parse(readFileSync(file, 'utf8'))));
    console.log(`ok ${file}`);
  } catch (err) {
    failures++;
    console.log(`REJECTED ${file}: ${err.message}`);
  }
}

// Every reference in every document must name a definition that exists.
function refs(value, out = []) {
  if (Array.isArray(value)) value.forEach((v) => refs(v, out));
  else if (value && typeof value === 'object') {
    if (typeof value.ref === 'string') out.push(value.ref);
    if (Array.isArray(value.refs)) out.push(...value.refs);
    Object.values(value).forEach((v) => refs(v, out));
  }
  return out;
}
for (const file of files) {
  const doc = JSON.parse(readFileSync(file, 'utf8'));
  for (const ref of refs(doc.defs)) {
    const uri = ref.startsWith('#') ? `${doc.id}${ref}` : ref;
    try {
      lex.getDefOrThrow(uri);
    } catch (err) {
      failures++;
      console.log(`UNRESOLVED ${uri} in ${doc.id}: ${err.message}`);
    }
  }
}

// The check itself must be able to fail: a broken document is rejected.
try {
  parseLexiconDoc({ lexicon: 1, id: 'app.bulleted.broken', defs: { main: { type: 'recordz' } } });
  failures++;
  console.log('MISMATCH a broken lexicon document was accepted');
} catch {
  console.log('ok a broken lexicon document is rejected');
}

const good = {
  $type: 'app.bulleted.node', text: 'hello', sortKey: 'a0',
  parent: 'at://did:plc:abc/app.bulleted.node/3jzfcijpj2z2a',
  completedAt: '2026-11-30T12:00:00.000Z', createdAt: '2026-11-30T12:00:00.000Z',
  facets: [{ index: { byteStart: 0, byteEnd: 5 }, features: [{ $type: 'app.bulleted.format#bold' }] }],
};
const expectations = [
  ['a well-formed record', good, true],
  ['text over 2000 graphemes', { ...good, text: 'x'.repeat(2001) }, false],
  ['a parent that is not an AT-URI', { ...good, parent: 'not a uri' }, false],
  ['a bad createdAt', { ...good, createdAt: 'yesterday' }, false],
  ['no text', { ...good, text: undefined }, false],
];
for (const [what, record, valid] of expectations) {
  let accepted = true;
  try {
    lex.assertValidRecord('app.bulleted.node', record);
  } catch {
    accepted = false;
  }
  if (accepted !== valid) {
    failures++;
    console.log(`MISMATCH ${what}: the package ${accepted ? 'accepted' : 'rejected'} it`);
  } else {
    console.log(`ok ${what}: ${accepted ? 'accepted' : 'rejected'}`);
  }
}

if (files.length < 17) {
  failures++;
  console.log(`expected at least 17 lexicon documents, found ${files.length}`);
}
console.log(`${files.length + expectations.length - failures} passed, ${failures} failed`);
process.exit(failures === 0 ? 0 : 1);
