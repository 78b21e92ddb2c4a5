// End to end, with a real PDS: bulleted-appview follows its firehose while
// nodes are created, updated, moved, deleted and batch-written, is killed
// with SIGKILL mid-stream and restarted, and sees account takedowns,
// deactivations and deletions. After each step the index must equal the
// PDS's listRecords.
// Usage: ./node22 ../firehose_e2e.mjs APPVIEW_BINARY WORKDIR   (from tests/e2e/pds)
import fs from 'node:fs';
import path from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { createRequire } from 'node:module';
import {
  Runner, Xrpc, assert, assertEqual, freePort, listRecords, openEventStream, projectLexicons, publishedLexicons, sleep, startAppview,
  startPds, stopProcess, testNetworkEnv, waitFor, waitForConnection,
} from './lib.mjs';

const require = createRequire(import.meta.url);
const Database = require('./pds/node_modules/better-sqlite3');

const [binary, workdir] = process.argv.slice(2);
fs.mkdirSync(workdir, { recursive: true });
const dbPath = path.join(workdir, 'index.db');
const runner = new Runner();
const { child: pds, info } = await startPds(workdir);
const xrpc = new Xrpc(info.pdsUrl, path.join(workdir, 'xrpc.jsonl'));
const [alice, bob] = info.accounts;
const uri = (did, rkey) => `at://${did}/app.bulleted.node/${rkey}`;
const now = () => new Date().toISOString();
let logNumber = 0;
let appview;
let currentLog;

let indexerPort;
async function startIndexer() {
  currentLog = path.join(workdir, `appview-${++logNumber}.log`);
  indexerPort = await freePort();
  appview = startAppview(binary, ['--firehose', info.firehoseUrl, '--plc', info.plcUrl, '--db', dbPath,
    '--port', String(indexerPort),
    '--log-level', 'info'], currentLog);
  await waitForConnection(currentLog);
}

function indexed(did) {
  const db = new Database(dbPath, { readonly: true, fileMustExist: true });
  try {
    return db.prepare('SELECT rkey, cid FROM nodes WHERE did = ? AND mirror_of IS NULL ORDER BY rkey').all(did);
  } finally {
    db.close();
  }
}

// What a frontend sees: the top level of a repo through the app view's API.
async function visibleTopLevel(did) {
  const res = await fetch(`http://127.0.0.1:${indexerPort}/xrpc/app.bulleted.getChildren?repo=${did}&limit=1000`);
  return (await res.json()).nodes.length;
}

function repoStatus(did) {
  const db = new Database(dbPath, { readonly: true, fileMustExist: true });
  try {
    return db.prepare('SELECT status FROM repos WHERE did = ?').get(did)?.status;
  } finally {
    db.close();
  }
}

async function pdsState(did) {
  const records = await listRecords(xrpc, did);
  return records.map((r) => ({ rkey: r.uri.split('/').pop(), cid: r.cid })).sort((a, b) => (a.rkey < b.rkey ? -1 : 1));
}

async function converged(accounts = [alice, bob]) {
  let want;
  await waitFor('the index to equal listRecords', async () => {
    for (const account of accounts) {
      want = await pdsState(account.did);
      if (JSON.stringify(indexed(account.did)) !== JSON.stringify(want)) return false;
    }
    return true;
  }, 30000, 200).catch((err) => {
    throw new Error(`${err.message}; last listRecords had ${want?.length} records`);
  });
}

const node = (text, extra = {}) => ({ $type: 'app.bulleted.node', text, createdAt: now(), ...extra });
const create = (account, rkey, record) => xrpc.ok('com.atproto.repo.createRecord', {
  body: { repo: account.did, collection: 'app.bulleted.node', rkey, record }, token: account.accessJwt });
const put = (account, rkey, record) => xrpc.ok('com.atproto.repo.putRecord', {
  body: { repo: account.did, collection: 'app.bulleted.node', rkey, record }, token: account.accessJwt });
const remove = (account, rkey) => xrpc.ok('com.atproto.repo.deleteRecord', {
  body: { repo: account.did, collection: 'app.bulleted.node', rkey }, token: account.accessJwt });
const admin = `Basic ${Buffer.from(`admin:${info.adminPassword}`).toString('base64')}`;

try {
  await startIndexer();

  // A change stream of the app view on `did`, from now.
  const follow = async (did) => {
    const stream = openEventStream(`http://127.0.0.1:${indexerPort}/xrpc/app.bulleted.streamChanges?repo=${did}`);
    await stream.until('the stream open', (events) => events.length > 0);
    return stream;
  };
  // What a stream's changes fold to: rkey -> cid, as the index has them.
  const folded = (stream) => {
    const state = new Map();
    for (const e of stream.changes()) {
      if (e.data.op === 'delete') state.delete(e.data.rkey);
      else state.set(e.data.rkey, e.data.node.cid);
    }
    return [...state].map(([rkey, cid]) => ({ rkey, cid })).sort((a, b) => (a.rkey < b.rkey ? -1 : 1));
  };

  await runner.test('follows creates, updates, moves, deletes and batches (and its change streams tell them)', async () => {
    // The start's backfill first (readiness waits for it): a resync that
    // read the repo after these writes would index only their outcome, and
    // a record created and deleted meanwhile would never have been the
    // index's to tell.
    await waitFor('the backfill', async () =>
      (await fetch(`http://127.0.0.1:${indexerPort}/readyz`).catch(() => null))?.status === 200, 60000, 100);
    const aliceStream = await follow(alice.did);
    await create(alice, 'root', node('Root', { sortKey: 'a0' }));
    await create(alice, 'child1', node('Child 1', { sortKey: 'a0', parent: uri(alice.did, 'root') }));
    await create(alice, 'child2', node('Child 2', { sortKey: 'a1', parent: uri(alice.did, 'root') }));
    await create(alice, 'other', node('Other', { sortKey: 'a1' }));
    await put(alice, 'child1', node('Child 1, edited', { sortKey: 'a0', parent: uri(alice.did, 'root') }));
    // Move child2 under "other".
    await put(alice, 'child2', node('Child 2', { sortKey: 'a0', parent: uri(alice.did, 'other') }));
    await remove(alice, 'child1');
    // Hostile but valid records: a parent in bob's repo, a malformed sortKey.
    await create(bob, 'bobroot', node('Bob', { sortKey: 'a0' }));
    await create(alice, 'intruder', node('Intruder', { sortKey: 'a2', parent: uri(bob.did, 'bobroot') }));
    await create(alice, 'badkey', node('Bad key', { sortKey: 'a00' }));
    // A batch of 120 writes in one commit.
    const writes = [];
    for (let i = 0; i < 100; i++) {
      writes.push({ $type: 'com.atproto.repo.applyWrites#create', collection: 'app.bulleted.node',
        rkey: `batch${String(i).padStart(3, '0')}`, value: node(`Batch ${i}`, { sortKey: `a${i % 10}`, parent: uri(alice.did, 'root') }) });
    }
    for (let i = 0; i < 10; i++) {
      writes.push({ $type: 'com.atproto.repo.applyWrites#update', collection: 'app.bulleted.node',
        rkey: 'other', value: node(`Other v${i}`, { sortKey: 'a1' }) });
    }
    writes.splice(105);  // one update of "other" is enough per commit
    await xrpc.ok('com.atproto.repo.applyWrites', { body: { repo: alice.did, writes }, token: alice.accessJwt });
    await xrpc.ok('com.atproto.repo.applyWrites', {
      body: { repo: alice.did, writes: [
        { $type: 'com.atproto.repo.applyWrites#delete', collection: 'app.bulleted.node', rkey: 'batch000' },
        { $type: 'com.atproto.repo.applyWrites#delete', collection: 'app.bulleted.node', rkey: 'batch001' },
      ] }, token: alice.accessJwt });
    await converged();
    const db = new Database(dbPath, { readonly: true });
    const intruder = db.prepare('SELECT grp FROM nodes WHERE did = ? AND rkey = ?').get(alice.did, 'intruder');
    const bad = db.prepare('SELECT sort_key, sort_key_raw FROM nodes WHERE did = ? AND rkey = ?').get(alice.did, 'badkey');
    db.close();
    assertEqual(intruder.grp, `at://${alice.did}#unattached`, 'a parent in another repo files nothing there');
    assertEqual(bad, { sort_key: '~', sort_key_raw: 'a00' }, 'a malformed sortKey is kept and sorts last');
    // The stream, opened before the first write, folds to the index.
    await aliceStream.until('the stream to fold to the index',
      () => JSON.stringify(folded(aliceStream)) === JSON.stringify(indexed(alice.did)));
    const ids = aliceStream.changes().map((e) => e.id);
    assert(ids.every((id, i) => i === 0 || id > ids[i - 1]), 'ids strictly increase');
    assert(aliceStream.changes().some((e) => e.data.op === 'delete' && e.data.rkey === 'child1'), 'the delete told');
    aliceStream.close();
  });

  await runner.test('records in the published shape, as a third-party client writes them, are served whole', async () => {
    // Browser-minted sort keys (a20, a00 and a200 are not canonical),
    // completedAt, layout and display (one of a later version), and
    // app.bsky.richtext.facet's features beside one of a type nobody here
    // knows.
    const text = '@ann see https://bulleted.app #plans';
    const facets = [
      { index: { byteStart: 0, byteEnd: 4 }, features: [{ $type: 'app.bsky.richtext.facet#mention', did: bob.did }] },
      { index: { byteStart: 9, byteEnd: 29 }, features: [{ $type: 'app.bsky.richtext.facet#link', uri: 'https://bulleted.app' }] },
      { index: { byteStart: 30, byteEnd: 36 }, features: [{ $type: 'app.bsky.richtext.facet#tag', tag: 'plans' },
        { $type: 'com.example.outliner#glow', level: 2 }] },
    ];
    const completedAt = now();
    const writes = [
      ['pubroot', { text: 'Plans', layout: 'h1', display: 'collapsed', sortKey: 'a20' }],
      ['pubtodo', { text, facets, layout: 'todo', completedAt, sortKey: 'a00', parent: uri(alice.did, 'pubroot') }],
      ['pubcard', { text: 'A card', layout: 'kanbanCard', sortKey: 'a200', parent: uri(alice.did, 'pubroot') }],
      ['pubnext', { text: 'Next', layout: 'todo', sortKey: 'a1', parent: uri(alice.did, 'pubroot') }],
    ].map(([rkey, record]) => ({ $type: 'com.atproto.repo.applyWrites#create', collection: 'app.bulleted.node', rkey,
      value: { $type: 'app.bulleted.node', createdAt: now(), ...record } }));
    await xrpc.ok('com.atproto.repo.applyWrites', { body: { repo: alice.did, writes }, token: alice.accessJwt });
    const base = `http://127.0.0.1:${indexerPort}/xrpc/app.bulleted`;
    const get = async (rkey) => (await fetch(`${base}.getNode?repo=${alice.did}&rkey=${rkey}`)).json();
    await waitFor('the published records indexed', async () => (await get('pubnext')).rkey === 'pubnext', 30000, 100);
    const root = await get('pubroot');
    assertEqual([root.layout, root.display, root.completed, root.sortKeyValid], ['h1', 'collapsed', false, false], 'the root');
    const todo = await get('pubtodo');
    assertEqual([todo.layout, todo.completed, todo.completedAt], ['todo', true, completedAt], 'the todo');
    assert(isDeepStrictEqual(todo.facets, facets), `its facets, the unknown feature as it came: ${JSON.stringify(todo.facets)}`);
    assertEqual((await get('pubcard')).layout, 'kanbanCard', 'a layout of a later version, as written');
    // Valid keys first, then the malformed ones by record key.
    const page = await (await fetch(`${base}.getChildren?repo=${alice.did}&parent=pubroot`)).json();
    assertEqual(page.nodes.map((n) => n.rkey), ['pubnext', 'pubcard', 'pubtodo'], 'the children in order');
    assertEqual(page.nodes[2].completedAt, completedAt, 'a page serves completedAt too');
    // A search finds the todo by its tag's word; is:completed too.
    const found = await (await fetch(`${base}.searchNodes?repo=${alice.did}&q=${encodeURIComponent('plans is:completed')}`)).json();
    assertEqual(found.results.map((r) => r.node.rkey), ['pubtodo'], 'searched');
  });

  await runner.test('notes as records of their own: before their node, beside it, edited, deleted; a note naming another node is refused', async () => {
    const base = `http://127.0.0.1:${indexerPort}/xrpc/app.bulleted`;
    const get = async (rkey) => (await fetch(`${base}.getNode?repo=${alice.did}&rkey=${rkey}`)).json();
    const note = (rkey, text, subject = uri(alice.did, rkey)) => ({ $type: 'app.bulleted.note', subject, text, createdAt: now() });
    const write = (action, collection, rkey, value) => ({
      $type: `com.atproto.repo.applyWrites#${action}`, collection, rkey, ...(value ? { value } : {}) });
    const apply = (writes) => xrpc.ok('com.atproto.repo.applyWrites', { body: { repo: alice.did, writes }, token: alice.accessJwt });
    const rejected = async () => {
      const text = await (await fetch(`http://127.0.0.1:${indexerPort}/metrics`)).text();
      return Number(/^bulleted_firehose_records_rejected_total (\d+)/m.exec(text)?.[1] ?? 0);
    };
    const rejectedBefore = await rejected();
    // A note first, its node a commit later; a node and its note in one.
    await apply([write('create', 'app.bulleted.note', 'noteearly', note('noteearly', 'came first'))]);
    await apply([write('create', 'app.bulleted.node', 'noteearly', node('Early', { sortKey: 'b0' }))]);
    await apply([write('create', 'app.bulleted.node', 'notepair', node('Pair', { sortKey: 'b1' })),
      write('create', 'app.bulleted.note', 'notepair', note('notepair', 'beside it'))]);
    // A note at one node's key naming another: invalid, never attached.
    await apply([write('create', 'app.bulleted.node', 'notewrong', node('Wrong', { sortKey: 'b2' })),
      write('create', 'app.bulleted.note', 'notewrong', note('notewrong', 'misfiled', uri(alice.did, 'notepair')))]);
    await waitFor('the notes indexed', async () => (await get('notewrong')).rkey === 'notewrong', 30000, 100);
    assertEqual((await get('noteearly')).note, 'came first', 'a note before its node');
    assertEqual((await get('notepair')).note, 'beside it', 'a note beside its node');
    assertEqual((await get('notewrong')).note, undefined, 'a note naming another node');
    assert(await rejected() > rejectedBefore, 'the misfiled note was counted');
    const found = await (await fetch(`${base}.searchNodes?repo=${alice.did}&q=beside`)).json();
    assertEqual(found.results.map((r) => r.node.rkey), ['notepair'], 'a note is searched');
    // Edited, then deleted: the node follows.
    await apply([write('update', 'app.bulleted.note', 'notepair', note('notepair', 'edited beside'))]);
    await waitFor('the edit', async () => (await get('notepair')).note === 'edited beside', 30000, 100);
    await apply([write('delete', 'app.bulleted.note', 'notepair')]);
    await waitFor('the delete', async () => (await get('notepair')).note === undefined, 30000, 100);
    // getOutline serves them, valid against the published lexicon.
    const outline = await (await fetch(`${base}.getOutline?did=${alice.did}&node=noteearly`)).json();
    publishedLexicons().assertValidXrpcOutput('app.bulleted.getOutline', outline);
    const early = outline.root;
    assertEqual([early.note, early.did, early.uri], ['came first', alice.did, uri(alice.did, 'noteearly')], 'its row');
    // Outline records: the whole forest's (self), a subtree's, and one whose
    // root is in another repo (refused, counted).
    const outlineUri = (rkey) => `at://${alice.did}/app.bulleted.outline/${rkey}`;
    await apply([
      write('create', 'app.bulleted.outline', 'self', { $type: 'app.bulleted.outline', title: 'Alice\'s notes', createdAt: now() }),
      write('create', 'app.bulleted.outline', 'plans', { $type: 'app.bulleted.outline', title: 'Plans', description: 'What comes next',
        root: uri(alice.did, 'pubroot'), createdAt: now() }),
      write('create', 'app.bulleted.outline', 'elsewhere', { $type: 'app.bulleted.outline', title: 'Not here',
        root: uri(bob.did, 'pubroot'), createdAt: now() }),
    ]);
    const titled = async (params) => (await fetch(`${base}.getOutline?did=${alice.did}${params}`)).json();
    await waitFor('the outline records', async () => (await titled('')).outline?.title === 'Alice\'s notes', 30000, 100);
    const whole = await titled('');
    publishedLexicons().assertValidXrpcOutput('app.bulleted.getOutline', whole);
    assertEqual(whole.outline.uri, outlineUri('self'), 'the forest\'s');
    const plans = await titled('&node=pubroot');
    assertEqual([plans.outline.uri, plans.outline.title, plans.outline.description],
      [outlineUri('plans'), 'Plans', 'What comes next'], 'written at the level asked for');
    const inherited = await titled('&node=pubtodo');
    assertEqual(inherited.outline.uri, outlineUri('plans'), 'inherited from the nearest ancestor: its uri says so');
    assertEqual((await titled('&node=noteearly')).outline.uri, outlineUri('self'), 'outside it, the forest\'s');
    assert(await rejected() > rejectedBefore + 1, 'the record rooted in another repo was counted');
    // Mirrors, comments and comment policies are kept for what serves them
    // (contributors, comments, mirrors across repos); a mirror of something
    // that is not a node is refused.
    const rejectedNow = await rejected();
    await apply([
      write('create', 'app.bulleted.mirror', 'mirrorbob', { $type: 'app.bulleted.mirror', original: uri(bob.did, 'b1'),
        sortKey: 'a3', parent: uri(alice.did, 'pubroot'), createdAt: now() }),
      write('create', 'app.bulleted.mirror', 'mirrorbad', { $type: 'app.bulleted.mirror',
        original: `at://${bob.did}/app.bsky.feed.post/3k2a`, sortKey: 'b4', createdAt: now() }),
      write('create', 'app.bulleted.comment', 'commentone', { $type: 'app.bulleted.comment', subject: uri(alice.did, 'pubroot'),
        text: 'Nice plans', createdAt: now() }),
      write('create', 'app.bulleted.commentPolicy', 'self', { $type: 'app.bulleted.commentPolicy', allow: [], createdAt: now() }),
    ]);
    const kept = () => {
      const db = new Database(dbPath, { readonly: true, fileMustExist: true });
      try {
        return db.prepare('SELECT collection, rkey FROM kept_records WHERE did = ? ORDER BY collection, rkey').all(alice.did)
          .map((r) => `${r.collection}/${r.rkey}`);
      } finally {
        db.close();
      }
    };
    const expected = ['app.bulleted.comment/commentone', 'app.bulleted.commentPolicy/self', 'app.bulleted.mirror/mirrorbob'];
    await waitFor('the kept records', async () => JSON.stringify(kept()) === JSON.stringify(expected), 30000, 100);
    assert(await rejected() > rejectedNow, 'the mirror of a post was counted');
    // The mirror is a row of pubroot's sibling group, in its key's place,
    // standing for its original (not expanded), in every read.
    const children = await (await fetch(`${base}.getChildren?repo=${alice.did}&parent=pubroot`)).json();
    projectLexicons().assertValidXrpcOutput('app.bulleted.getChildren', children);
    const row = children.nodes.find((n) => n.rkey === 'mirrorbob');
    assertEqual([row?.uri, row?.mirror, row?.childCount, row?.text],
      [`at://${alice.did}/app.bulleted.mirror/mirrorbob`, { original: uri(bob.did, 'b1') }, 0, ''], 'the mirror in getChildren');
    assertEqual(children.nodes.slice(0, 2).map((n) => n.rkey), ['pubnext', 'mirrorbob'],
      'after a1, before the malformed keys');
    const zoomed = await titled('&node=pubroot');
    publishedLexicons().assertValidXrpcOutput('app.bulleted.getOutline', zoomed);
    const outlineRow = zoomed.nodes.find((n) => n.rkey === 'mirrorbob');
    assertEqual([outlineRow?.mirror, outlineRow?.did, outlineRow?.display],
      [{ original: uri(bob.did, 'b1') }, alice.did, undefined], 'the mirror in getOutline');
    assertEqual(zoomed.root.childCount, children.nodes.length, 'counted among the children');
    await apply([write('delete', 'app.bulleted.mirror', 'mirrorbob')]);
    await waitFor('the mirror deleted', async () => !(await (await fetch(`${base}.getChildren?repo=${alice.did}&parent=pubroot`))
      .json()).nodes.some((n) => n.rkey === 'mirrorbob'), 30000, 100);
    await apply([write('delete', 'app.bulleted.comment', 'commentone')]);
    await waitFor('a deleted comment', async () => !kept().includes('app.bulleted.comment/commentone'), 30000, 100);
  });

  await runner.test('search follows the PDS: new words found, old ones not, deleted gone, a moved subtree under its new root only', async () => {
    const search = async (q, root) => {
      const url = new URL(`http://127.0.0.1:${indexerPort}/xrpc/app.bulleted.searchNodes`);
      url.searchParams.set('repo', alice.did);
      url.searchParams.set('q', q);
      if (root) url.searchParams.set('root', root);
      const res = await fetch(url);
      const body = await res.json();
      assertEqual(res.status, 200, `search ${q}: ${JSON.stringify(body)}`);
      return body.results.map((r) => r.node.rkey).sort();
    };
    await create(alice, 'sfolder', node('Search folder', { sortKey: 'a3' }));
    await create(alice, 'sother', node('Other folder', { sortKey: 'a4' }));
    await create(alice, 'stree', node('Zebra subtree top', { sortKey: 'a0', parent: uri(alice.did, 'sfolder') }));
    await create(alice, 'sleaf', node('zebra leaf in 東京', { sortKey: 'a0', parent: uri(alice.did, 'stree') }));
    await create(alice, 'sedit', node('giraffe first words', { sortKey: 'a1', parent: uri(alice.did, 'sfolder') }));
    await create(alice, 'sgone', node('zebra to delete', { sortKey: 'a2', parent: uri(alice.did, 'sfolder') }));
    await converged([alice]);
    assertEqual(await search('zebra'), ['sgone', 'sleaf', 'stree'], 'the written records found');
    assertEqual(await search('東京'), ['sleaf'], 'a CJK run found');
    assertEqual(await search('zebra', 'sfolder'), ['sgone', 'sleaf', 'stree'], 'under their root');
    await put(alice, 'sedit', node('okapi second words', { sortKey: 'a1', parent: uri(alice.did, 'sfolder') }));
    await remove(alice, 'sgone');
    // The subtree moves: its top goes under "Other folder".
    await put(alice, 'stree', node('Zebra subtree top', { sortKey: 'a0', parent: uri(alice.did, 'sother') }));
    await converged([alice]);
    assertEqual(await search('giraffe'), [], 'the old words are gone');
    assertEqual(await search('okapi'), ['sedit'], 'the new words are found');
    assertEqual(await search('zebra'), ['sleaf', 'stree'], 'the deleted record is gone');
    assertEqual(await search('zebra', 'sfolder'), [], 'nothing under the old root');
    assertEqual(await search('zebra', 'sother'), ['sleaf', 'stree'], 'the subtree under its new root');
  });

  await runner.test('a SIGKILLed consumer resumes without gaps or double applies', async () => {
    let writing = true;
    let n = 0;
    const writer = (async () => {
      while (writing) {
        const account = n % 3 === 0 ? bob : alice;
        const rkey = `live${String(n).padStart(4, '0')}`;
        await create(account, rkey, node(`Live ${n}`, { sortKey: 'a5' }));
        if (n % 4 === 1) await put(account, rkey, node(`Live ${n} edited`, { sortKey: 'a6' }));
        if (n % 5 === 2) await remove(account, rkey);
        n++;
      }
    })();
    await sleep(1500);
    const killed = await stopProcess(appview, 'SIGKILL');
    assertEqual(killed.signal, 'SIGKILL', 'the consumer died by SIGKILL');
    await sleep(1500);
    await startIndexer();
    await sleep(1000);
    writing = false;
    await writer;
    assert(n > 20, `the writer made ${n} writes`);
    await converged();
    const stopped = await stopProcess(appview, 'SIGTERM');
    assertEqual(stopped.code, 0, 'serve exits 0 on SIGTERM');
    const log = fs.readFileSync(currentLog, 'utf8');
    const stats = [...log.matchAll(/firehose: stats (.*)/g)].pop();
    assert(stats, 'the restarted consumer logged its stats');
    const fields = Object.fromEntries(stats[1].split(' ').map((kv) => kv.split('=')));
    assertEqual(fields.ops_stale, '0', `no op applied twice (stats: ${stats[1]})`);
    assertEqual(fields.duplicates, '0', `no event delivered twice (stats: ${stats[1]})`);
    assert(Number(fields.ops_applied) > 0, 'the restarted consumer applied the missed ops');
    await startIndexer();
  });

  await runner.test('a broken chain is repaired from getRepo', async () => {
    await stopProcess(appview, 'SIGTERM');
    // Make the index miss a commit: an older repo rev and a lost row.
    const db = new Database(dbPath);
    const lost = db.prepare("SELECT rkey FROM nodes WHERE did = ? AND rkey LIKE 'batch%' LIMIT 1").get(alice.did).rkey;
    db.prepare('DELETE FROM nodes WHERE did = ? AND rkey = ?').run(alice.did, lost);
    db.prepare("UPDATE repos SET rev = '2222222222222' WHERE did = ?").run(alice.did);
    db.close();
    await startIndexer();
    await create(alice, 'aftergap', node('After the gap', { sortKey: 'a7' }));
    await converged();
    const log = fs.readFileSync(currentLog, 'utf8');
    assert(/needs a resync/.test(log) && /resynced did:/.test(log), 'the consumer resynced the repo');
  });

  await runner.test('a cursor from the future restarts live and resyncs', async () => {
    await stopProcess(appview, 'SIGTERM');
    const db = new Database(dbPath);
    db.prepare('UPDATE cursors SET seq = 999999999').run();
    db.close();
    await startIndexer();
    await waitFor('FutureCursor in the log', () => /FutureCursor/.test(fs.readFileSync(currentLog, 'utf8')));
    await create(alice, 'afterfuture', node('After the future cursor', { sortKey: 'a8' }));
    await converged();
  });

  await runner.test('backfill DID indexes a whole repo into a fresh database', async () => {
    const fresh = path.join(workdir, 'backfill.db');
    const { execFileSync } = await import('node:child_process');
    const out = execFileSync(binary, ['backfill', alice.did, '--pds', info.pdsUrl, '--plc', info.plcUrl,
      '--db', fresh], { encoding: 'utf8' });
    assert(/backfilled/.test(out), `backfill reported: ${out}`);
    const db = new Database(fresh, { readonly: true });
    const rows = db.prepare('SELECT rkey, cid FROM nodes WHERE did = ? AND mirror_of IS NULL ORDER BY rkey').all(alice.did);
    db.close();
    assertEqual(rows, await pdsState(alice.did), 'backfilled rows equal listRecords');
    // --all lists the source's repos (a PDS: listRepos) and does each.
    const everything = path.join(workdir, 'backfill-all.db');
    const all = execFileSync(binary, ['backfill', '--all', '--pds', info.pdsUrl, '--plc', info.plcUrl,
      '--db', everything], { encoding: 'utf8', env: testNetworkEnv() });
    assert(/listed \d+ repos/.test(all) && / 0 failed/.test(all), `backfill --all reported: ${all}`);
    const allDb = new Database(everything, { readonly: true });
    try {
      for (const account of [alice, bob]) {
        assertEqual(allDb.prepare('SELECT rkey, cid FROM nodes WHERE did = ? AND mirror_of IS NULL ORDER BY rkey').all(account.did),
          await pdsState(account.did), `backfill --all: ${account.handle} equals listRecords`);
      }
    } finally {
      allDb.close();
    }
  });

  await runner.test('a replica started later backfills everything that existed before it', async () => {
    // A second app view with an empty index, next to the running one: it
    // lists the source's repos, fetches each whole (verified), and is ready
    // only once that is done; then it equals the PDS and the first replica.
    const replicaDb = path.join(workdir, 'replica.db');
    const replicaPort = await freePort();
    const log = path.join(workdir, 'appview-replica.log');
    const replica = startAppview(binary, ['--firehose', info.firehoseUrl, '--plc', info.plcUrl,
      '--db', replicaDb, '--port', String(replicaPort)], log);
    try {
      await waitFor('the replica to be ready', async () => {
        const res = await fetch(`http://127.0.0.1:${replicaPort}/readyz`).catch(() => null);
        return res?.status === 200;
      }, 60000, 200);
      const metrics = await (await fetch(`http://127.0.0.1:${replicaPort}/metrics`)).text();
      const value = (name) => Number(metrics.match(new RegExp(`^${name} (\\d+)$`, 'm'))?.[1] ?? -1);
      assert(value('bulleted_firehose_backfill_repos_listed_total') >= 2, 'both repos listed');
      assertEqual(value('bulleted_firehose_backfilling'), 0, 'backfill done when ready');
      assert(/backfill: done/.test(fs.readFileSync(log, 'utf8')), 'the end of the backfill is logged');
      const db = new Database(replicaDb, { readonly: true });
      try {
        for (const account of [alice, bob]) {
          const rows = db.prepare('SELECT rkey, cid FROM nodes WHERE did = ? AND mirror_of IS NULL ORDER BY rkey').all(account.did);
          assertEqual(rows, await pdsState(account.did), `the replica's ${account.handle} equals listRecords`);
          assertEqual(rows, indexed(account.did), `the replica's ${account.handle} equals the first replica's`);
        }
      } finally {
        db.close();
      }
    } finally {
      await stopProcess(replica);
    }
  });

  await runner.test('takedown and deactivation hide a repo, reactivation restores it (streams told each status)', async () => {
    const streams = { alice: await follow(alice.did), bob: await follow(bob.did) };
    const told = (stream) => stream.events.filter((e) => e.event === 'info' && e.data.name === 'RepoStatus')
      .map((e) => e.data.status);
    const before = indexed(bob.did).length;
    assert(before > 0, 'bob has nodes');
    const shown = await visibleTopLevel(bob.did);
    assert(shown > 0, 'bob has top-level nodes on the API');
    await xrpc.ok('com.atproto.admin.updateSubjectStatus', { token: admin, body: {
      subject: { $type: 'com.atproto.admin.defs#repoRef', did: bob.did }, takedown: { applied: true, ref: 'e2e' } } });
    await waitFor('bob taken down', () => repoStatus(bob.did) === 'takendown');
    assertEqual(await visibleTopLevel(bob.did), 0, 'hidden from the API');
    assertEqual(indexed(bob.did).length, before, 'hidden, not deleted');
    await xrpc.ok('com.atproto.admin.updateSubjectStatus', { token: admin, body: {
      subject: { $type: 'com.atproto.admin.defs#repoRef', did: bob.did }, takedown: { applied: false } } });
    await waitFor('bob restored', () => repoStatus(bob.did) === 'active');
    assertEqual(await visibleTopLevel(bob.did), shown, 'shown again after the reversal');
    await xrpc.ok('com.atproto.server.deactivateAccount', { token: alice.accessJwt, body: {} });
    await waitFor('alice deactivated', () => repoStatus(alice.did) === 'deactivated');
    assertEqual(await visibleTopLevel(alice.did), 0, 'a deactivated repo is hidden');
    await xrpc.ok('com.atproto.server.activateAccount', { token: alice.accessJwt, method: 'POST' });
    await waitFor('alice active', () => repoStatus(alice.did) === 'active');
    await converged();
    await streams.bob.until('bob\'s statuses', () => told(streams.bob).length === 2);
    assertEqual(told(streams.bob), ['takendown', 'active'], 'bob\'s stream');
    await streams.alice.until('alice\'s statuses', () => told(streams.alice).length === 2);
    assertEqual(told(streams.alice), ['deactivated', 'active'], 'alice\'s stream');
    streams.alice.close();
    streams.bob.close();
  });

  await runner.test('deleting an account removes its nodes', async () => {
    await xrpc.ok('com.atproto.admin.deleteAccount', { token: admin, body: { did: bob.did } });
    await waitFor('bob deleted', () => repoStatus(bob.did) === 'deleted' && indexed(bob.did).length === 0);
    await converged([alice]);
  });
  await runner.test('an outdated cursor resyncs every known repo', async () => {
    // A second PDS that keeps one second of history.
    const second = await startPds(path.join(workdir, 'second'), ['--backfill-limit-ms', '1000']);
    const other = new Xrpc(second.info.pdsUrl);
    const carol = second.info.accounts[0];
    const secondDb = path.join(workdir, 'second.db');
    const follow = async () => {
      const log = path.join(workdir, 'second', `appview-${Date.now()}.log`);
      const child = startAppview(binary, ['--firehose', second.info.firehoseUrl, '--plc', second.info.plcUrl,
        '--db', secondDb,
        '--port', String(await freePort())], log);
      await waitForConnection(log);
      return child;
    };
    const put2 = (rkey, text) => other.ok('com.atproto.repo.putRecord', { token: carol.accessJwt,
      body: { repo: carol.did, collection: 'app.bulleted.node', rkey, record: node(text, { sortKey: 'a0' }) } });
    const countIn = () => {
      const db = new Database(secondDb, { readonly: true, fileMustExist: true });
      try { return db.prepare('SELECT COUNT(*) AS n FROM nodes WHERE did = ?').get(carol.did).n; } finally { db.close(); }
    };
    const cursorIn = () => {
      const db = new Database(secondDb, { readonly: true, fileMustExist: true });
      // The firehose's own cursor: the table also holds the mark of a
      // finished backfill.
      try {
        return db.prepare("SELECT seq FROM cursors WHERE source = 'firehose'").get()?.seq ?? -1;
      } finally { db.close(); }
    };
    let indexer = await follow();
    await put2('one', 'One');
    // The record and the cursor past its event: the start-up backfill may
    // index the record from getRepo before the event's cursor is committed,
    // and a consumer stopped then would restart with no cursor at all.
    await waitFor('the first record and its cursor', () => countIn() === 1 && cursorIn() >= 0);
    await stopProcess(indexer, 'SIGTERM');
    await put2('two', 'Two');
    await sleep(2500);  // the event for "two" leaves the replay window
    await put2('three', 'Three');
    indexer = await follow();
    await waitFor('all three records', () => countIn() === 3, 30000);
    // The records alone do not show the path taken (a commit that does not
    // follow the indexed rev resyncs the repo as well): wait for the frame.
    const logs = () => fs.readdirSync(path.join(workdir, 'second')).filter((f) => f.startsWith('appview-'))
      .map((f) => fs.readFileSync(path.join(workdir, 'second', f), 'utf8')).join('');
    await waitFor('the consumer saw OutdatedCursor', () => /#info OutdatedCursor/.test(logs()), 30000);
    await stopProcess(indexer, 'SIGTERM');
    await stopProcess(second.child, 'SIGTERM');
    assertEqual(countIn(), 3, 'all three records after the resync');
  });
} finally {
  if (appview) await stopProcess(appview, 'SIGTERM');
  await stopProcess(pds, 'SIGTERM');
  await xrpc.close();
}
process.exit(runner.finish());
