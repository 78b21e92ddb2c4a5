// End to end in pds mode, with a real PDS: sessions through the app view,
// an outline built, moved, edited and pruned through the API with its
// records written to alice's PDS, then compared with the PDS's own
// listRecords. Also: sessions cannot cross repos, records written straight to
// the PDS by other clients, swap failures, expired tokens, the PDS's rate
// limit and the PDS going away.
// Usage: ./node22 ../pds_e2e.mjs APPVIEW_BINARY WORKDIR   (from tests/e2e/pds)
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import {
  Runner, Xrpc, appviewClient, assert, assertEqual, freePort, harnessRequire, here, listRecords, openEventStream, publishedLexicons, sleep,
  startAppview, startPds, stopProcess, waitFor, waitForConnection,
} from './lib.mjs';

const { Lexicons } = harnessRequire('@atproto/lexicon');

const [binary, workdir] = process.argv.slice(2);
fs.mkdirSync(workdir, { recursive: true });
const runner = new Runner();
// Rate limits on: the createSession limit (30 per 5 minutes) is probed last.
const { child: pds, info } = await startPds(workdir, ['--rate-limits']);
const xrpc = new Xrpc(info.pdsUrl, path.join(workdir, 'xrpc.jsonl'));
const [alice, bob] = info.accounts;
const sessionKey = 'e2e-session-key-0123456789abcdef-0123';
const logFile = path.join(workdir, 'appview-1.log');
const port = await freePort();
process.env.BULLETED_SESSION_KEY = sessionKey;  // startAppview passes the environment on
process.env.BULLETED_FAULT_INJECTION = '1';
process.env.BULLETED_ALLOW_PASSWORD_SESSIONS = '1'; // the app-password path this test drives
process.env.BULLETED_PROCEDURE_RATE = '0'; // the test writes in bulk
const appview = startAppview(binary, ['--mode', 'pds', '--firehose', info.firehoseUrl, '--plc', info.plcUrl,
  '--handle-resolver', info.pdsUrl, '--db', path.join(workdir, 'index.db'), '--port', String(port),
  '--log-level', 'debug'], logFile);
const base = `http://127.0.0.1:${port}`;

const { query, call, ok, expectError } = appviewClient(base);
async function children(repo, parent) {
  const out = [];
  let cursor;
  do {
    const page = await ok(query('getChildren', { repo, parent, limit: 100, cursor }));
    out.push(...page.nodes);
    cursor = page.cursor;
  } while (cursor);
  return out;
}
// Every node the app view shows for a repo, walking down from the top level.
async function shownTree(repo) {
  const all = [];
  const walk = async (parent) => {
    for (const node of await children(repo, parent)) {
      all.push(node);
      await walk(node.rkey);
    }
  };
  await walk(undefined);
  return all;
}
const rkeyOf = (uri) => uri.split('/').pop();
const byKey = (a, b) => (a.sortKey < b.sortKey ? -1 : a.sortKey > b.sortKey ? 1 : a.rkey < b.rkey ? -1 : 1);
const metric = async (pattern) => {
  const text = await (await fetch(`${base}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(pattern));
  return line ? Number(line.split(' ').pop()) : 0;
};

let aliceToken;
let bobToken;
const keysMinted = new Map(); // rkey -> the sortKey the app view answered last
let writesMade = 0; // app-view writes, one PDS commit each

try {
  await waitFor('the app view', async () => (await fetch(`${base}/healthz`)).ok, 15000);
  await waitForConnection(logFile);

  await runner.test('createSession signs in through the PDS (handle or DID) and refuses a wrong password', async () => {
    const a = await ok(call('createSession', { identifier: alice.handle, password: alice.password }));
    assertEqual([a.did, a.handle], [alice.did, alice.handle], 'alice by handle');
    assert(/^bt_/.test(a.token) && !a.token.includes('.'), 'an app-view token, not a PDS JWT');
    aliceToken = a.token;
    const b = await ok(call('createSession', { identifier: bob.did, password: bob.password }));
    assertEqual(b.did, bob.did, 'bob by DID');
    bobToken = b.token;
    expectError(await call('createSession', { identifier: alice.handle, password: 'wrong' }), 401, 'AuthRequired');
    expectError(await call('createSession', { identifier: 'nobody.test', password: 'x' }), 404, 'NotFound');
    expectError(await call('createSession', { identifier: alice.handle }), 400, 'InvalidRequest');
    expectError(await call('createNode', { repo: alice.did, text: 'x' }), 401, 'AuthRequired');
    expectError(await call('createNode', { repo: alice.did, text: 'x' }, { as: 'bt_nope' }), 401, 'AuthRequired');
  });

  const create = async (body) => {
    const r = await call('createNode', { repo: alice.did, ...body }, { as: aliceToken });
    writesMade++;
    if (r.status !== 200) throw new Error(`createNode ${JSON.stringify(body)} -> ${r.status} ${JSON.stringify(r.json)}`);
    keysMinted.set(r.json.rkey, r.json.sortKey);
    return r;
  };
  const move = async (body) => {
    const r = await ok(call('moveNode', { repo: alice.did, ...body }, { as: aliceToken }));
    writesMade++;
    keysMinted.set(r.rkey, r.sortKey);
    return r;
  };
  const top = [];
  const under = {};

  await runner.test('an outline built with every kind of intent reads back at once, in order (and its stream tells each write)', async () => {
    const stream = openEventStream(`${base}/xrpc/app.bulleted.streamChanges?repo=${alice.did}`);
    await stream.until('the stream open', (events) => events.length > 0);
    // Top level: appends, a prepend, an index, after, before, after+before.
    for (const text of ['one', 'two', 'three']) top.push((await create({ text })).json.rkey);
    const first = await create({ text: 'zero', position: 'first' });
    top.unshift(first.json.rkey);
    // Read-your-write: the node is there before any firehose echo, and the
    // answer carries the repo rev the PDS committed.
    const node = await ok(query('getNode', { repo: alice.did, rkey: first.json.rkey }));
    assertEqual(node.text, 'zero', 'read your write');
    const latest = await xrpc.ok('com.atproto.sync.getLatestCommit', { params: { did: alice.did } });
    assertEqual(first.headers.get('atproto-repo-rev') <= latest.json.rev, true, 'Atproto-Repo-Rev is a PDS rev');
    assert(first.headers.get('atproto-repo-rev'), 'Atproto-Repo-Rev header');
    const atTwo = await create({ text: 'one-and-a-half', position: 2 });
    top.splice(2, 0, atTwo.json.rkey);
    const after = await create({ text: 'after three', afterRkey: top[4] });
    top.splice(5, 0, after.json.rkey);
    const before = await create({ text: 'before zero', beforeRkey: top[0] });
    top.unshift(before.json.rkey);
    const between = await create({ text: 'between', afterRkey: top[1], beforeRkey: top[2] });
    top.splice(2, 0, between.json.rkey);
    // Children and grandchildren.
    for (const parent of top.slice(0, 4)) {
      under[parent] = [];
      for (let i = 0; i < 5; i++) {
        const child = await create({ text: `child ${i}`, parentRkey: parent, note: i === 2 ? 'with a note' : undefined });
        under[parent].push(child.json.rkey);
      }
      const last = under[parent].at(-1);
      for (let i = 0; i < 3; i++) {
        await create({ text: `grandchild ${i}`, parentRkey: last, position: i === 1 ? 'first' : 'last' });
      }
    }
    assertEqual((await children(alice.did)).map((n) => n.rkey), top, 'top level order');
    assertEqual((await children(alice.did, top[0])).map((n) => n.rkey), under[top[0]], 'children order');
    // Every write made through the PDS reached the stream, in order.
    const made = [...top, ...Object.values(under).flat()];
    await stream.until('every write on the stream', () => made.every((rkey) => stream.changes().some((e) => e.data.rkey === rkey)));
    const ids = stream.changes().map((e) => e.id);
    assert(ids.every((id, i) => i === 0 || id > ids[i - 1]), 'ids strictly increase');
    stream.close();
  });

  await runner.test('moves, updates and a subtree delete go to the PDS', async () => {
    // Move a subtree (a child with grandchildren) to another parent, first.
    const moved = under[top[0]].at(-1);
    await move({ rkey: moved, parentRkey: top[1], position: 'first' });
    under[top[1]].unshift(moved);
    under[top[0]].pop();
    // Reorder within a parent: the last child before the first.
    const last = under[top[2]].pop();
    await move({ rkey: last, parentRkey: top[2], beforeRkey: under[top[2]][0] });
    under[top[2]].unshift(last);
    // A child to the top level, after a named node.
    const promoted = under[top[3]].shift();
    await move({ rkey: promoted, afterRkey: top[0] });
    top.splice(1, 0, promoted);
    await ok(call('updateNode', { repo: alice.did, rkey: top[0], text: 'renamed', note: 'noted', completed: true },
      { as: aliceToken }));
    const deleted = await ok(call('deleteNode', { repo: alice.did, rkey: top[4] }, { as: aliceToken }));
    writesMade += 2;
    assert(deleted.deleted >= 6, `the subtree went (${deleted.deleted})`);
    top.splice(4, 1);
    const renamed = await ok(query('getNode', { repo: alice.did, rkey: top[0] }));
    assertEqual([renamed.text, renamed.note, renamed.completed], ['renamed', 'noted', true], 'update read back');
    assertEqual((await children(alice.did)).map((n) => n.rkey), top, 'top level after the moves');
    assertEqual((await children(alice.did, top[2])).map((n) => n.rkey)[0], moved, 'the moved subtree is first');
  });

  await runner.test("the PDS holds exactly the app view's outline, every key minted by the app view", async () => {
    const records = await listRecords(xrpc, alice.did);
    const shown = await shownTree(alice.did);
    assertEqual(records.map((r) => rkeyOf(r.uri)).sort(), shown.map((n) => n.rkey).sort(), 'same nodes');
    assert(records.length >= 30, `a few dozen nodes (${records.length})`);
    const cids = new Map(shown.map((n) => [n.rkey, n.cid]));
    for (const r of records) {
      const rkey = rkeyOf(r.uri);
      assertEqual(cids.get(rkey), r.cid, `CID of ${rkey}`);
      assertEqual(r.value.sortKey, keysMinted.get(rkey), `sortKey of ${rkey} is the one the app view answered`);
    }
    // Canonical keys (the app view's own validator, exit status 1 on any invalid).
    execFileSync(binary, ['keys', 'validate', ...records.map((r) => r.value.sortKey)]);
    // Each record valid against the published lexicon (vendored in
    // tests/fixtures/published-lexicons), in the official package;
    // completion written as completedAt, never as the old boolean.
    const published = new Lexicons(['app.bulleted.node', 'app.bulleted.note', 'app.bsky.richtext.facet'].map((id) =>
      JSON.parse(fs.readFileSync(path.join(here, '..', 'fixtures', 'published-lexicons', `${id}.json`), 'utf8'))));
    for (const r of records) {
      try {
        published.assertValidRecord('app.bulleted.node', r.value);
      } catch (err) {
        throw new Error(`${r.uri} breaks the published lexicon: ${err.message}`);
      }
      assert(!('completed' in r.value), `${r.uri} says completed`);
      assert(!('note' in r.value), `${r.uri} keeps a note inside the node`);
    }
    // Every note is a record of its own at its node's key, naming it, and
    // nothing else: the notes the app view shows are exactly these.
    const notes = await listRecords(xrpc, alice.did, 'app.bulleted.note');
    for (const n of notes) {
      try {
        published.assertValidRecord('app.bulleted.note', n.value);
      } catch (err) {
        throw new Error(`${n.uri} breaks the published lexicon: ${err.message}`);
      }
      assertEqual(n.value.subject, `at://${alice.did}/app.bulleted.node/${rkeyOf(n.uri)}`, 'a note names its node');
    }
    const shownNotes = shown.filter((x) => x.note !== undefined).map((x) => [x.rkey, x.note]).sort();
    assertEqual(notes.map((n) => [rkeyOf(n.uri), n.value.text]).sort(), shownNotes, 'the notes are note records');
    assert(notes.length >= 2, `the notes written (${notes.length})`);
    assert(records.some((r) => typeof r.value.completedAt === 'string'), 'a completed bullet says completedAt');
    // getChildren order = (sortKey, rkey) order of the PDS records, per parent.
    const groups = new Map();
    for (const r of records) {
      const parent = r.value.parent ? rkeyOf(r.value.parent) : '';
      if (!groups.has(parent)) groups.set(parent, []);
      groups.get(parent).push({ rkey: rkeyOf(r.uri), sortKey: r.value.sortKey });
    }
    for (const [parent, list] of groups) {
      const expected = list.sort(byKey).map((n) => n.rkey);
      const actual = (await children(alice.did, parent || undefined)).map((n) => n.rkey);
      assertEqual(actual, expected, `order under ${parent || 'the top level'}`);
    }
  });

  await runner.test('the firehose echoes of our own commits change nothing', async () => {
    // Each of our writes was applied from the PDS's answer; its echo (which
    // may even arrive before the answer) must leave the index as it is.
    const snapshot = async () => (await shownTree(alice.did)).map((x) => [x.rkey, x.cid, x.sortKey, x.text, x.parent]);
    const before = await snapshot();
    const commits = async () => (await metric('bulleted_firehose_events_total{type="commit",outcome="skipped"}'))
      + (await metric('bulleted_firehose_events_total{type="commit",outcome="applied"}'));
    // An echo that outran the PDS's answer finds the repo unknown and waits for
    // its backfill (getRepo), so allow for a fetch or two.
    await waitFor('every echo', async () => (await commits()) >= writesMade, 60000);
    assertEqual(await snapshot(), before, 'the echoes changed nothing');
    assert((await metric('bulleted_firehose_events_total{type="commit",outcome="skipped"}')) > 0, 'echoes are skipped');
  });

  await runner.test("bob's session cannot write alice's repo; nothing is written anywhere", async () => {
    const aliceBefore = await listRecords(xrpc, alice.did);
    const bobBefore = await listRecords(xrpc, bob.did);
    expectError(await call('createNode', { repo: alice.did, text: 'intruder' }, { as: bobToken }), 403, 'Forbidden');
    expectError(await call('updateNode', { repo: alice.did, rkey: top[0], text: 'x' }, { as: bobToken }), 403, 'Forbidden');
    expectError(await call('deleteNode', { repo: alice.did, rkey: top[0] }, { as: bobToken }), 403, 'Forbidden');
    expectError(await call('moveNode', { repo: alice.did, rkey: top[0], position: 'last' }, { as: bobToken }), 403, 'Forbidden');
    assertEqual(await listRecords(xrpc, alice.did), aliceBefore, "alice's repo unchanged");
    assertEqual(await listRecords(xrpc, bob.did), bobBefore, "bob's repo unchanged");
    assertEqual((await ok(query('getNode', { repo: alice.did, rkey: top[0] }))).text, 'renamed', 'index unchanged');
  });

  await runner.test('records written straight to the PDS are indexed; a cross-repo parent is not followed', async () => {
    const parentUri = `at://${alice.did}/app.bulleted.node/${top[1]}`;
    const now = new Date().toISOString();
    await xrpc.ok('com.atproto.repo.putRecord', { token: alice.accessJwt, body: { repo: alice.did,
      collection: 'app.bulleted.node', rkey: 'direct1',
      record: { $type: 'app.bulleted.node', text: 'written directly', parent: parentUri, sortKey: 'zz', createdAt: now } } });
    await xrpc.ok('com.atproto.repo.putRecord', { token: bob.accessJwt, body: { repo: bob.did,
      collection: 'app.bulleted.node', rkey: 'sneaky',
      record: { $type: 'app.bulleted.node', text: "in bob's repo", parent: parentUri, sortKey: 'a0', createdAt: now } } });
    await waitFor('the direct write', async () => (await children(alice.did, top[1])).some((n) => n.rkey === 'direct1'), 20000);
    await waitFor("bob's record", async () => (await query('getNode', { repo: bob.did, rkey: 'sneaky' })).status === 200, 20000);
    const under1 = await children(alice.did, top[1]);
    assert(!under1.some((n) => n.rkey === 'sneaky'), "bob's record is not under alice's node");
    // The index learned of the direct write from the firehose; an app-view
    // write right after it still goes through (its swap names the new head).
    const after = await create({ text: 'after the direct write', parentRkey: top[1], afterRkey: 'direct1' });
    assertEqual((await children(alice.did, top[1])).map((n) => n.rkey).slice(-2), ['direct1', after.json.rkey], 'placed after it');
  });

  await runner.test('a write racing a direct write: one refresh and retry, not an overwrite', async () => {
    // Written straight to the PDS and, before the firehose can deliver it,
    // an app-view write: its swap fails, the index is refreshed from getRepo,
    // and the retry places the node knowing about the direct write.
    const now = new Date().toISOString();
    await xrpc.ok('com.atproto.repo.putRecord', { token: alice.accessJwt, body: { repo: alice.did,
      collection: 'app.bulleted.node', rkey: 'racer',
      record: { $type: 'app.bulleted.node', text: 'racer', sortKey: 'zzz', createdAt: now } } });
    const r = await create({ text: 'last after the racer' });
    const shownTop = (await children(alice.did)).map((n) => n.rkey);
    assertEqual(shownTop.slice(-2), ['racer', r.json.rkey], 'the retry saw the racer');
    assert((await listRecords(xrpc, alice.did)).some((x) => rkeyOf(x.uri) === 'racer'), 'the racer is still on the PDS');
  });

  await runner.test('PDS InvalidSwap: refresh and retry once, then 409 with nothing written', async () => {
    const once = await call('createNode', { repo: alice.did, text: 'after one swap failure' },
      { as: aliceToken, headers: { 'x-bulleted-inject-swap': '1' } });
    assertEqual(once.status, 200, `one failure is retried: ${JSON.stringify(once.json)}`);
    keysMinted.set(once.json.rkey, once.json.sortKey);
    const before = await listRecords(xrpc, alice.did);
    const twice = await call('createNode', { repo: alice.did, text: 'never written' },
      { as: aliceToken, headers: { 'x-bulleted-inject-swap': '2' } });
    expectError(twice, 409, 'StaleNeighbours');
    assertEqual((await listRecords(xrpc, alice.did)).length, before.length, 'nothing written to the PDS');
    assert(!(await shownTree(alice.did)).some((n) => n.text === 'never written'), 'nothing in the index');
  });

  await runner.test('an expired access token is refreshed; a failed refresh is 401 and ends the session', async () => {
    const refreshed = await call('createNode', { repo: alice.did, text: 'after a refresh' },
      { as: aliceToken, headers: { 'x-bulleted-inject-expired': 'access' } });
    assertEqual(refreshed.status, 200, `refreshed: ${JSON.stringify(refreshed.json)}`);
    // And the refreshed session keeps working.
    await create({ text: 'with the new token' });
    const s = await ok(call('createSession', { identifier: alice.handle, password: alice.password }));
    const dead = await call('createNode', { repo: alice.did, text: 'x' },
      { as: s.token, headers: { 'x-bulleted-inject-expired': 'refresh' } });
    expectError(dead, 401, 'AuthRequired');
    assert(/sign in again/.test(dead.json.message), 'tells the client to sign in again');
    expectError(await call('createNode', { repo: alice.did, text: 'x' }, { as: s.token }), 401, 'AuthRequired');
  });

  await runner.test('a subtree of more than 200 nodes is deleted in commits of at most 200 writes', async () => {
    const root = (await create({ text: 'big subtree' })).json.rkey;
    let parent = root;
    for (let i = 0; i < 210; i++) {
      // A few levels deep, most of them wide.
      const child = (await create({ text: `bulk ${i}`, parentRkey: parent })).json.rkey;
      if (i % 70 === 69) parent = child;
    }
    const commits = async () => (await metric('bulleted_firehose_events_total{type="commit",outcome="skipped"}'))
      + (await metric('bulleted_firehose_events_total{type="commit",outcome="applied"}'));
    // The firehose count once nothing more arrives (the PDS's sequencer polls
    // at least every second).
    const settled = async () => {
      let last = await commits();
      for (;;) {
        await sleep(1500);
        const now = await commits();
        if (now === last) return now;
        last = now;
      }
    };
    const before = await settled();
    const deleted = await ok(call('deleteNode', { repo: alice.did, rkey: root }, { as: aliceToken }));
    assertEqual(deleted.deleted, 211, 'the whole subtree');
    assertEqual((await settled()) - before, 2, 'two commits: 200 writes, then 11');
    const records = await listRecords(xrpc, alice.did);
    assert(!records.some((r) => r.value.text === 'big subtree' || /^bulk /.test(r.value.text)), 'gone from the PDS');
    assert(!(await shownTree(alice.did)).some((n) => /^bulk /.test(n.text)), 'gone from the index');
  });

  await runner.test('an imported bullet past the published limits is written valid and exported whole', async () => {
    const long = Array.from({ length: 2500 }, (_, i) => `word${i % 10}`).join(' ');
    const started = await call('importOutline', { repo: alice.did, format: 'text', content: `- ${long}\n- short after it\n` },
      { as: aliceToken });
    assertEqual(started.status, 200, `importOutline: ${JSON.stringify(started.json)}`);
    const job = await waitFor('the import done', async () => {
      const j = (await query('getImportJob', { id: started.json.jobId })).json;
      return j.state === 'done' && j;
    }, 60000);
    assert(job.errors.some((e) => e.includes('text is longer than 10000 bytes') && e.includes('textRest')),
      `the report names it: ${JSON.stringify(job.errors)}`);
    const [first] = await children(alice.did, started.json.rootRkey);
    assertEqual(first.text, long, 'the index serves it whole');
    const written = (await listRecords(xrpc, alice.did)).find((r) => rkeyOf(r.uri) === first.rkey);
    publishedLexicons().assertValidRecord('app.bulleted.node', written.value);
    assertEqual(written.value.text + written.value.textRest, long, 'the record: the first part, and the rest beside it');
    const exported = await (await fetch(`${base}/xrpc/app.bulleted.exportOutline?repo=${alice.did}` +
      `&root=${started.json.rootRkey}&format=text`)).text();
    assert(exported.includes(`- ${long}\n`), 'export gives it back whole');
  });

  await runner.test('deleteSession ends a session', async () => {
    const s = await ok(call('createSession', { identifier: bob.handle, password: bob.password }));
    await ok(call('deleteSession', {}, { as: s.token }));
    expectError(await call('createNode', { repo: bob.did, text: 'x' }, { as: s.token }), 401, 'AuthRequired');
    expectError(await call('deleteSession', {}, { as: s.token }), 401, 'AuthRequired');
  });

  await runner.test('the app view never logs a token or password', async () => {
    const log = fs.readFileSync(logFile, 'utf8');
    for (const secret of [aliceToken, bobToken, alice.password, bob.password, sessionKey, 'spoiled-access-token']) {
      assert(!log.includes(secret), `a secret in the log: ${secret.slice(0, 6)}...`);
    }
    assert(!/eyJ[A-Za-z0-9_-]{10,}/.test(log), 'no JWT in the log');
  });

  await runner.test("the PDS's 429 is a 429 with its Retry-After", async () => {
    // createSession is limited to 30 per 5 minutes per identifier and IP.
    let last;
    for (let i = 0; i < 40; i++) {
      last = await call('createSession', { identifier: bob.handle, password: 'wrong-on-purpose' });
      if (last.status === 429) break;
    }
    expectError(last, 429, 'RateLimitExceeded');
    assert(Number(last.headers.get('retry-after')) > 0, `Retry-After: ${last.headers.get('retry-after')}`);
  });

  await runner.test('an import past the hourly write budget waits for the Retry-After instead of failing', async () => {
    // The PDS charges 3 points a create, 5,000 an hour: 2,000 nodes do not fit.
    const lines = [];
    for (let i = 0; i < 2000; i++) lines.push(`${i % 20 === 0 ? '' : '  '}- imported ${i}`);
    const before = (await listRecords(xrpc, alice.did)).length;
    const started = await call('importOutline', { repo: alice.did, format: 'text', content: lines.join('\n') },
      { as: aliceToken });
    assertEqual(started.status, 200, `importOutline: ${JSON.stringify(started.json)}`);
    const id = started.json.jobId;
    const state = async () => (await query('getImportJob', { id })).json;
    const waiting = await waitFor('the job to wait', async () => { const j = await state(); return j.state === 'waiting' && j; }, 60000);
    assert(waiting.done > 0 && waiting.done < waiting.total, `part written: ${JSON.stringify(waiting)}`);
    assertEqual(waiting.total, 2001, 'total');
    const resumeIn = (Date.parse(waiting.resumeAt) - Date.now()) / 1000;
    assert(resumeIn > 60 && resumeIn <= 3600, `resumeAt from Retry-After: ${waiting.resumeAt}`);
    assertEqual(waiting.errors, [], 'a rate limit is not an error');
    // What it wrote is on the PDS and in the index; it does not retry early.
    await sleep(3000);
    const later = await state();
    assertEqual([later.state, later.done, later.resumeAt], ['waiting', waiting.done, waiting.resumeAt], 'still waiting');
    assertEqual((await listRecords(xrpc, alice.did)).length - before, waiting.done, 'the written part is on the PDS');
    assertEqual((await children(alice.did, started.json.rootRkey)).length > 0, true, 'and in the index');
  });

  await runner.test('the PDS down is 502 UpstreamFailure, and the app view stays up', async () => {
    await stopProcess(pds, 'SIGKILL');
    expectError(await call('createNode', { repo: alice.did, text: 'nowhere' }, { as: aliceToken }), 502, 'UpstreamFailure');
    assert(!(await shownTree(alice.did)).some((n) => n.text === 'nowhere'), 'nothing in the index');
    assertEqual((await fetch(`${base}/healthz`)).status, 200, 'still alive');
  });
} finally {
  await stopProcess(appview);
  await stopProcess(pds);
  await xrpc.close();
}
process.exit(runner.finish());
