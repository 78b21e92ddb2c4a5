// The XRPC API over real HTTP against a running `bulleted-appview serve`
// (local mode): every method with its errors, paging, placement (stale
// neighbours by fault injection, equal keys, concurrency), moves, deletes,
// operators' endpoints and SIGTERM during writes.
// Usage: ./node22 ../api_e2e.mjs APPVIEW_BINARY WORKDIR   (from tests/e2e/pds)
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { createRequire } from 'node:module';
import {
  Runner, appviewClient, assert, assertEqual, freePort, localTokens, publishedLexicons, sleep, stopProcess, track,
  waitFor,
} from './lib.mjs';

const require = createRequire(import.meta.url);
const Database = require('./pds/node_modules/better-sqlite3');

const [binary, workdir] = process.argv.slice(2);
fs.mkdirSync(workdir, { recursive: true });
const dbPath = path.join(workdir, 'api.db');
const alice = 'did:plc:aliceapitest';
const bob = 'did:plc:bobapitest';
const [aliceToken, bobToken] = localTokens(binary, dbPath, [alice, bob]);
const runner = new Runner();
let port;
let server;
let logFile;

async function startServer(extraEnv = {}) {
  port = await freePort();
  logFile = path.join(workdir, `serve-${Date.now()}.log`);
  const log = fs.openSync(logFile, 'a');
  server = track(spawn(binary, ['serve', '--db', dbPath, '--port', String(port), '--threads', '4'],
    // Per-client limits off unless a test sets them: the tests write and
    // read in bulk, all from one address.
    { stdio: ['ignore', log, log], env: { ...process.env, BULLETED_FAULT_INJECTION: '1', BULLETED_PROCEDURE_RATE: '0',
      BULLETED_QUERY_BYTES: '0', ...extraEnv } }));
  await waitFor('the server', async () => (await fetch(`http://127.0.0.1:${port}/healthz`)).ok, 15000);
}
const base = () => `http://127.0.0.1:${port}`;

const { query, call, ok, expectError } = appviewClient(base, aliceToken);
async function allChildren(repo, parent, { limit = 100, reverse = false } = {}) {
  const out = [];
  let cursor;
  do {
    const page = await ok(query('getChildren', { repo, parent, limit, cursor, reverse }));
    out.push(...page.nodes);
    cursor = page.cursor;
  } while (cursor);
  return out;
}
const byKey = (a, b) => (a.sortKey + '\u0000' + a.rkey < b.sortKey + '\u0000' + b.rkey ? -1 : 1);
function assertTotalOrder(nodes) {
  const seen = new Set();
  for (let i = 0; i < nodes.length; i++) {
    const id = `${nodes[i].sortKey}|${nodes[i].rkey}`;
    assert(!seen.has(id), `duplicate (sortKey, rkey) ${id}`);
    seen.add(id);
    if (i > 0 && nodes[i - 1].sortKeyValid && nodes[i].sortKeyValid) {
      const a = [nodes[i - 1].sortKey, nodes[i - 1].rkey];
      const b = [nodes[i].sortKey, nodes[i].rkey];
      assert(a[0] < b[0] || (a[0] === b[0] && a[1] < b[1]), `out of order at ${i}: ${a} then ${b}`);
    }
  }
}

try {
  await startServer();

  await runner.test('createNode, getNode and the NodeView', async () => {
    const created = await ok(call('createNode', { repo: alice, text: 'Hello', note: 'a note', sortKey: 'zzzz', bogus: 1 }));
    assert(created.rkey && created.uri.endsWith(created.rkey) && created.cid.startsWith('bafyrei'), 'uri, rkey, cid');
    assertEqual(created.sortKey, 'a0', 'a client sortKey has no effect');
    const node = await ok(query('getNode', { repo: alice, rkey: created.rkey }));
    assertEqual([node.text, node.note, node.parent, node.sortKey, node.sortKeyValid, node.completed, node.childCount],
      ['Hello', 'a note', undefined, 'a0', true, false, 0], 'NodeView fields');
    assert(!('parent' in node), 'a top-level node has no parent field (never null)');
    assert(!('completedAt' in node) && !('layout' in node) && !('display' in node), 'absent, never null');
    // The published record's fields through the project's own methods.
    const todo = await ok(call('createNode', { repo: alice, text: 'Buy milk', layout: 'todo', display: 'collapsed' }));
    await ok(call('updateNode', { repo: alice, rkey: todo.rkey, completed: true, display: '' }));
    const done = await ok(query('getNode', { repo: alice, rkey: todo.rkey }));
    assertEqual([done.layout, done.display, done.completed], ['todo', undefined, true], 'layout kept, display removed, completed');
    assert(!Number.isNaN(Date.parse(done.completedAt)), `completedAt: ${done.completedAt}`);
    expectError(await call('createNode', { repo: alice, text: 'x', layout: 'x'.repeat(257) }), 400, 'InvalidRequest');
    const longest = await ok(call('createNode', { repo: alice, text: 'x', layout: 'x'.repeat(256), display: 'é'.repeat(128) }));
    assertEqual((await ok(query('getNode', { repo: alice, rkey: longest.rkey }))).layout.length, 256, 'a layout just under the limit');
  });

  await runner.test('every error is JSON with error and message, with the right status', async () => {
    expectError(await query('getNode', { repo: alice }), 400, 'InvalidRequest');
    expectError(await query('getNode', { repo: 'not-a-did', rkey: 'x' }), 400, 'InvalidRequest');
    expectError(await query('getNode', { repo: alice, rkey: 'nope' }), 404, 'NotFound');
    expectError(await query('getChildren', { repo: alice, limit: 'abc' }), 400, 'InvalidRequest');
    expectError(await query('getChildren', { repo: alice, limit: 5000 }), 400, 'InvalidRequest');
    expectError(await query('getChildren', { repo: alice, cursor: '%%%' }), 400, 'InvalidRequest');
    expectError(await query('getChildren', { repo: alice, parent: 'nope' }), 404, 'NotFound');
    expectError(await query('getWindow', { repo: alice, anchor: 'nope' }), 404, 'NotFound');
    expectError(await query('getPosition', { repo: alice, rkey: 'nope' }), 404, 'NotFound');
    expectError(await query('getAncestors', { repo: alice, rkey: 'nope' }), 404, 'NotFound');
    expectError(await query('getSubtree', { repo: alice, root: 'nope' }), 404, 'NotFound');
    expectError(await query('getSubtree', { repo: alice, depth: 99 }), 400, 'InvalidRequest');
    expectError(await query('getChanges', { repo: alice, cursor: 'abc' }), 400, 'InvalidRequest');
    expectError(await call('createNode', { repo: alice, text: 'x' }, { as: null }), 401, 'AuthRequired');
    expectError(await call('createNode', { repo: alice, text: 'x' }, { as: 'bt_wrong' }), 401, 'AuthRequired');
    expectError(await call('createNode', { repo: alice, text: 'x' }, { as: bobToken }), 403, 'Forbidden');
    expectError(await call('createNode', '{not json'), 400, 'InvalidRequest');
    expectError(await call('createNode', '[1,2]'), 400, 'InvalidRequest');
    expectError(await call('createNode', { repo: alice }), 400, 'InvalidRequest');
    expectError(await call('createNode', { repo: alice, text: 5 }), 400, 'InvalidRequest');
    expectError(await call('createNode', { repo: alice, text: 'x'.repeat(10001) }), 400, 'InvalidRequest');
    expectError(await call('createNode', { repo: alice, text: 'x', position: 'middle' }), 400, 'InvalidRequest');
    expectError(await call('createNode', { repo: alice, text: 'x', parentRkey: 'nope' }), 404, 'NotFound');
    expectError(await call('createNode', { repo: alice, text: 'x', afterRkey: 'nope' }), 400, 'InvalidNeighbour');
    expectError(await call('moveNode', { repo: alice, rkey: 'nope' }), 404, 'NotFound');
    expectError(await call('updateNode', { repo: alice, rkey: 'nope', text: 'y' }), 404, 'NotFound');
    expectError(await call('deleteNode', { repo: alice, rkey: 'nope' }), 404, 'NotFound');
    // Wrong content type, wrong HTTP method, unknown method, unknown path.
    const plain = await fetch(`${base()}/xrpc/app.bulleted.createNode`, {
      method: 'POST', headers: { 'content-type': 'text/plain', authorization: `Bearer ${aliceToken}` }, body: '{}' });
    expectError({ status: plain.status, json: await plain.json() }, 400, 'InvalidRequest');
    const get = await fetch(`${base()}/xrpc/app.bulleted.createNode`);
    expectError({ status: get.status, json: await get.json() }, 405, 'InvalidRequest');
    const post = await fetch(`${base()}/xrpc/app.bulleted.getNode`, { method: 'POST' });
    expectError({ status: post.status, json: await post.json() }, 405, 'InvalidRequest');
    const unknown = await fetch(`${base()}/xrpc/app.bulleted.getTree`);
    expectError({ status: unknown.status, json: await unknown.json() }, 501, 'MethodNotImplemented');
    const elsewhere = await fetch(`${base()}/no-such-page.html`);
    expectError({ status: elsewhere.status, json: await elsewhere.json() }, 404, 'NotFound');
    // The web outliner's page is at / (and /index.html), HTML with its policy.
    for (const page of ['/', '/index.html']) {
      const res = await fetch(`${base()}${page}`);
      assertEqual([res.status, res.headers.get('content-type')], [200, 'text/html; charset=utf-8'], `${page} is the page`);
      assert((await res.text()).includes('<script type="module" src="/app.js">'), `${page}: the page's module`);
      assert(/script-src 'self'/.test(res.headers.get('content-security-policy')), `${page}: no inline script`);
    }
    // A body over the limit is refused from its Content-Length without being
    // buffered: the client streams 3 MB and gets 413 (usually before it is
    // done, after which the server closes the connection).
    const big = await new Promise((resolve, reject) => {
      const req = http.request({ host: '127.0.0.1', port, path: '/xrpc/app.bulleted.createNode', method: 'POST',
        headers: { 'content-type': 'application/json', 'content-length': 3 * 1024 * 1024,
          authorization: `Bearer ${aliceToken}` } });
      const timer = setTimeout(() => reject(new Error('no answer before the body was sent')), 5000);
      req.on('response', (res) => {
        let text = '';
        res.on('data', (d) => { text += d; });
        res.on('end', () => { clearTimeout(timer); resolve({ status: res.statusCode, json: JSON.parse(text) }); });
      });
      req.on('error', () => {});  // the server closes the connection after answering
      const chunk = Buffer.alloc(64 * 1024, 'x');
      let sent = 0;
      const pump = () => {
        while (sent < 3 * 1024 * 1024) {
          sent += chunk.length;
          if (!req.write(chunk)) return req.once('drain', pump);
        }
        req.end();
      };
      pump();
    });
    expectError(big, 413, 'PayloadTooLarge');
  });

  let parent;
  await runner.test('paging a 3,000-child group returns each child once, in order', async () => {
    parent = (await ok(call('createNode', { repo: alice, text: 'Big parent' }))).rkey;
    const made = [];
    for (let i = 0; i < 3000; i += 30) {
      // 30 at a time in parallel: mixed appends, prepends and middle inserts.
      const batch = [];
      for (let k = 0; k < 30; k++) {
        const position = (i + k) % 3 === 0 ? 'first' : (i + k) % 3 === 1 ? 'last' : String(Math.floor((i + k) / 2));
        batch.push(ok(call('createNode', { repo: alice, parentRkey: parent, text: `child ${i + k}`, position })));
      }
      made.push(...(await Promise.all(batch)).map((r) => r.rkey));
    }
    const forward = await allChildren(alice, parent);
    assertEqual(forward.length, 3000, 'every child');
    assertEqual(new Set(forward.map((n) => n.rkey)).size, 3000, 'each child once');
    assertTotalOrder(forward);
    assertEqual(forward.map((n) => n.rkey), [...forward].sort(byKey).map((n) => n.rkey), '(sortKey, rkey) order');
    const backward = await allChildren(alice, parent, { limit: 250, reverse: true });
    assertEqual(backward.map((n) => n.rkey), forward.map((n) => n.rkey).reverse(), 'reverse pages mirror');
    assertEqual((await ok(query('getNode', { repo: alice, rkey: parent }))).childCount, 3000, 'childCount');
    // Window and position around child 1500.
    const anchor = forward[1500].rkey;
    const win = await ok(query('getWindow', { repo: alice, anchor, before: 3, after: 2 }));
    assertEqual(win.nodes.map((n) => n.rkey), forward.slice(1497, 1503).map((n) => n.rkey), 'window');
    assert(win.hasBefore && win.hasAfter, 'more on both sides');
    assertEqual(await ok(query('getPosition', { repo: alice, rkey: anchor })), { index: 1500, siblingCount: 3000 }, 'position');
  });

  await runner.test('getSubtree respects depth and the byte budget', async () => {
    // Streamed answers are counted when they end.
    const served = async () => Number((await (await fetch(`${base()}/metrics`)).text())
      .match(/^bulleted_http_requests_total\{method="app.bulleted.getSubtree",status="200"\} (\d+)/m)?.[1] ?? 0);
    const before = await served();
    const small = await ok(query('getSubtree', { repo: alice, root: parent, budgetBytes: 20000 }));
    assertEqual(small.node.rkey, parent, 'root');
    assert(small.children.length > 10 && small.children.length < 3000, `a budgeted subset (${small.children.length})`);
    assert(small.more, 'more is set when the budget cut');
    assert(JSON.stringify(small).length < 20000 * 2, 'the answer stays near the budget');
    const top = await ok(query('getSubtree', { repo: alice, depth: 1 }));
    assert(top.node === undefined && top.children.length >= 2, 'top level without a root');
    const big = top.children.find((c) => c.node.rkey === parent);
    assert(big.more && big.children.length === 0, 'depth 1 stops at the top level');
    assertEqual(await served(), before + 2, 'both answers counted in the metrics');
  });

  await runner.test('getOutline as published: bounds clamped, one limit across levels, NotFound alike', async () => {
    const published = publishedLexicons();
    const outline = async (params) => {
      const answer = await ok(query('getOutline', params));
      published.assertValidXrpcOutput('app.bulleted.getOutline', answer);
      return answer;
    };
    // Out of range is the nearest bound, never an error.
    const wide = await outline({ did: alice, node: parent, depth: 99, limit: 100000 });
    assertEqual([wide.root.rkey, wide.nodes.length, wide.stop, wide.truncated], [parent, 100, 'limit', true],
      'depth 5 and limit 100');
    const first = await ok(query('getChildren', { repo: alice, parent, limit: 100 }));
    assertEqual(wide.nodes.map((n) => n.rkey), first.nodes.map((n) => n.rkey), 'siblings in their order');
    assert(wide.nodes.every((n) => n.parent === `at://${alice}/app.bulleted.node/${parent}` && n.did === alice),
      'a zoomed answer\'s rows all carry their parent');
    const low = await outline({ did: alice, depth: -3, limit: 0 });
    assertEqual([low.nodes.length, low.stop, low.root], [1, 'limit', undefined], 'depth 1 and limit 1');
    const huge = await outline({ did: alice, depth: '99999999999999999999999', limit: '-99999999999999999999999' });
    assertEqual(huge.nodes.length, 1, 'however far out of range');
    expectError(await query('getOutline', { did: alice, depth: 'deep' }), 400, 'InvalidRequest');
    expectError(await query('getOutline', { did: 'alice.test' }), 400, 'InvalidRequest');
    // An unknown DID, an unknown bullet and one that cannot be a record key:
    // the same answer.
    const answers = [];
    for (const params of [{ did: 'did:plc:nobodyknowsthisone' }, { did: alice, node: 'nosuchnode' },
      { did: alice, node: '../..' }]) {
      const r = await query('getOutline', params);
      expectError(r, 404, 'NotFound');
      answers.push(r.json.error);
    }
    // Public: no credentials asked, CORS like every XRPC route.
    const res = await fetch(`${base()}/xrpc/app.bulleted.getOutline?did=${alice}`, { headers: { Origin: 'https://client.example' } });
    assertEqual(res.status, 200, 'anonymous');
    assert(res.headers.get('access-control-allow-origin'), 'CORS');
  });

  await runner.test('stale neighbours: one stale read retries, two are a 409', async () => {
    const metric = async () => Number((await (await fetch(`${base()}/metrics`)).text()).match(/^bulleted_placement_retries_total (\d+)/m)[1]);
    const before = await metric();
    await ok(call('createNode', { repo: alice, text: 'retried once' }, { headers: { 'x-bulleted-inject-stale': '1' } }));
    assertEqual(await metric(), before + 1, 'one retry counted');
    const conflict = await call('createNode', { repo: alice, text: 'stale twice' }, { headers: { 'x-bulleted-inject-stale': '2' } });
    expectError(conflict, 409, 'StaleNeighbours');
    // The client refetches and tries again: it succeeds.
    await ok(call('createNode', { repo: alice, text: 'after refetch' }));
  });

  await runner.test('inserting between two siblings with equal keys keeps every other position', async () => {
    const group = (await ok(call('createNode', { repo: alice, text: 'Equal keys' }))).rkey;
    const kids = [];
    for (let i = 0; i < 5; i++) kids.push((await ok(call('createNode', { repo: alice, parentRkey: group, text: `k${i}` }))).rkey);
    // Give k1, k2 and k3 the same key, as two offline writers would.
    const db = new Database(dbPath);
    const shared = db.prepare('SELECT sort_key FROM nodes WHERE did = ? AND rkey = ?').get(alice, kids[1]).sort_key;
    for (const rkey of [kids[2], kids[3]]) {
      const row = db.prepare('SELECT record FROM nodes WHERE did = ? AND rkey = ?').get(alice, rkey);
      const record = JSON.parse(row.record);
      record.sortKey = shared;
      db.prepare('UPDATE nodes SET sort_key = ?, sort_key_raw = ?, record = ? WHERE did = ? AND rkey = ?')
        .run(shared, shared, JSON.stringify(record), alice, rkey);
    }
    db.close();
    const before = (await allChildren(alice, group)).map((n) => n.rkey);
    const [, a, b] = [null, before[1], before[2]];
    const made = await ok(call('createNode', { repo: alice, parentRkey: group, afterRkey: a, beforeRkey: b, text: 'between equals' }));
    const after = await allChildren(alice, group);
    assertTotalOrder(after);
    const expected = [...before.slice(0, 2), made.rkey, ...before.slice(2)];
    assertEqual(after.map((n) => n.rkey), expected, 'the new node sits between the equals; nothing else moved');
  });

  await runner.test('moves keep the subtree; a cycle-making move is refused and changes nothing', async () => {
    const a = (await ok(call('createNode', { repo: alice, text: 'A' }))).rkey;
    const b = (await ok(call('createNode', { repo: alice, parentRkey: a, text: 'B' }))).rkey;
    const c = (await ok(call('createNode', { repo: alice, parentRkey: b, text: 'C' }))).rkey;
    const d = (await ok(call('createNode', { repo: alice, text: 'D' }))).rkey;
    const snapshot = JSON.stringify(await ok(query('getSubtree', { repo: alice, root: a })));
    expectError(await call('moveNode', { repo: alice, rkey: a, parentRkey: c }), 400, 'WouldCycle');
    expectError(await call('moveNode', { repo: alice, rkey: a, parentRkey: a }), 400, 'WouldCycle');
    assertEqual(JSON.stringify(await ok(query('getSubtree', { repo: alice, root: a }))), snapshot, 'unchanged');
    await ok(call('moveNode', { repo: alice, rkey: b, parentRkey: d, position: 'first' }));
    const moved = await ok(query('getSubtree', { repo: alice, root: d }));
    assertEqual(moved.children.map((x) => x.node.rkey), [b], 'B under D');
    assertEqual(moved.children[0].children.map((x) => x.node.rkey), [c], 'C came along');
    assertEqual((await ok(query('getAncestors', { repo: alice, rkey: c }))).ancestors.map((n) => n.rkey), [d, b], 'ancestors root first');
    await ok(call('updateNode', { repo: alice, rkey: c, text: 'C2', completed: true }));
    const c2 = await ok(query('getNode', { repo: alice, rkey: c }));
    assertEqual([c2.text, c2.completed, c2.parent], ['C2', true, b], 'update keeps the place');
    assertEqual(await ok(call('deleteNode', { repo: alice, rkey: d })), { deleted: 3 }, 'the subtree goes');
    expectError(await query('getNode', { repo: alice, rkey: c }), 404, 'NotFound');
  });

  await runner.test('getAncestors and getSubtree survive a parent cycle', async () => {
    const x = (await ok(call('createNode', { repo: alice, text: 'X' }))).rkey;
    const y = (await ok(call('createNode', { repo: alice, parentRkey: x, text: 'Y' }))).rkey;
    const db = new Database(dbPath);
    db.prepare('UPDATE nodes SET grp = ? WHERE did = ? AND rkey = ?').run(`at://${alice}/app.bulleted.node/${y}`, alice, x);
    db.close();
    const chain = await ok(query('getAncestors', { repo: alice, rkey: x }));
    assertEqual(chain.ancestors.map((n) => n.rkey), [y], 'the cycle is walked once');
    const tree = await ok(query('getSubtree', { repo: alice, root: x, depth: 64 }));
    assertEqual(tree.children.map((c) => c.node.rkey), [y], 'each node once');
  });

  await runner.test('getChanges pages through upserts and deletes', async () => {
    const changes = [];
    let cursor;
    for (;;) {
      const page = await ok(query('getChanges', { repo: alice, cursor, limit: 500 }));
      changes.push(...page.changes);
      if (page.changes.length === 0) break;
      cursor = page.cursor;
    }
    assert(changes.some((c) => c.op === 'delete'), 'deletes are in the feed');
    assert(changes.filter((c) => c.op === 'upsert').every((c) => c.node && c.node.rkey === c.rkey), 'upserts carry the node');
    const idle = await ok(query('getChanges', { repo: alice, cursor }));
    assertEqual([idle.changes.length, idle.cursor], [0, cursor], 'the cursor stays put');
  });

  await runner.test('32 inserters and 8 movers at once: 200 or 409, one total order for every reader', async () => {
    const group = (await ok(call('createNode', { repo: alice, text: 'Contended' }))).rkey;
    const seed = [];
    for (let i = 0; i < 10; i++) seed.push((await ok(call('createNode', { repo: alice, parentRkey: group, text: `s${i}` }))).rkey);
    const statuses = new Map();
    const count = (s) => statuses.set(s, (statuses.get(s) ?? 0) + 1);
    const deadline = Date.now() + 4000;
    let refetchedAfter409 = 0;
    const inserter = async () => {
      while (Date.now() < deadline) {
        const kids = (await ok(query('getChildren', { repo: alice, parent: group, limit: 3 }))).nodes;
        const r = await call('createNode', { repo: alice, parentRkey: group, afterRkey: kids[0].rkey, beforeRkey: kids[1]?.rkey, text: 'ins' });
        count(r.status);
        if (r.status === 409) {
          // Refetch and re-apply; under this much contention the fresh view
          // can go stale again (a new conflict), so keep going, boundedly.
          let done = false;
          for (let attempt = 0; attempt < 20 && !done; attempt++) {
            const fresh = (await ok(query('getChildren', { repo: alice, parent: group, limit: 2 }))).nodes;
            const again = await call('createNode', { repo: alice, parentRkey: group, afterRkey: fresh[0].rkey,
              beforeRkey: fresh[1]?.rkey, text: 'retry' });
            count(again.status);
            done = again.status === 200;
          }
          assert(done, 'a client that refetches after a 409 gets its insert in');
          refetchedAfter409++;
        }
      }
    };
    const mover = async () => {
      while (Date.now() < deadline) {
        const kids = (await ok(query('getChildren', { repo: alice, parent: group, limit: 50 }))).nodes;
        const pick = kids[Math.floor(Math.random() * kids.length)];
        const r = await call('moveNode', { repo: alice, rkey: pick.rkey, parentRkey: group, position: Math.random() < 0.5 ? 'first' : 'last' });
        count(r.status);
      }
    };
    await Promise.all([...Array(32)].map(inserter).concat([...Array(8)].map(mover)));
    for (const status of statuses.keys()) assert(status === 200 || status === 409, `unexpected status ${status}`);
    assert((statuses.get(200) ?? 0) > 50, `work got done: ${JSON.stringify([...statuses])}`);
    const reads = await Promise.all([...Array(4)].map(() => allChildren(alice, group, { limit: 97 })));
    for (const read of reads) {
      assertTotalOrder(read);
      assertEqual(read.map((n) => n.rkey), reads[0].map((n) => n.rkey), 'every read sees the same order');
    }
    console.log(`     statuses ${JSON.stringify([...statuses])}, ${reads[0].length} siblings, ${refetchedAfter409} refetches after 409`);
  });

  await runner.test('operators: health, readiness, metrics', async () => {
    assertEqual(await (await fetch(`${base()}/xrpc/_health`)).json(), { signIn: 'token', version: '0.1.0' }, '_health');
    assertEqual((await fetch(`${base()}/healthz`)).status, 200, 'healthz');
    assertEqual(await (await fetch(`${base()}/readyz`)).json(), { ready: true }, 'readyz');
    const metrics = await (await fetch(`${base()}/metrics`)).text();
    assert(/bulleted_http_requests_total\{method="app.bulleted.createNode",status="200"\} \d+/.test(metrics), 'requests by method and status');
    assert(/bulleted_http_request_seconds_bucket\{method="app.bulleted.getChildren",le="0.005"\} \d+/.test(metrics), 'latency histograms');
    assert(/bulleted_index_nodes \d+/.test(metrics), 'index size');
    for (const [kind, outcome] of [['passive', 'whole'], ['passive', 'partial'], ['restart', 'done'], ['restart', 'gave_up']]) {
      assert(new RegExp(`^bulleted_index_wal_checkpoints_total\\{kind="${kind}",outcome="${outcome}"\\} \\d+$`, 'm').test(metrics), `WAL checkpoints, ${kind} ${outcome}`);
    }
    for (const lane of ['requests', 'operators']) {
      const count = metrics.match(new RegExp(`^bulleted_http_queue_seconds_count\\{lane="${lane}"\\} (\\d+)`, 'm'));
      assert(count && Number(count[1]) > 0, `time waited for a worker, ${lane} lane`);
    }
  });

  await runner.test('SIGTERM during a burst of writes loses no acknowledged write', async () => {
    const acknowledged = [];
    let stop = false;
    const writer = async () => {
      while (!stop) {
        try {
          const r = await call('createNode', { repo: bob, text: 'burst' }, { as: bobToken });
          if (r.status === 200) acknowledged.push(r.json.rkey);
        } catch {
          return;  // the server went away
        }
      }
    };
    const writers = [...Array(16)].map(writer);
    await sleep(700);
    const exited = await stopProcess(server, 'SIGTERM');
    stop = true;
    await Promise.all(writers);
    assertEqual(exited.code, 0, 'serve exits 0');
    assert(acknowledged.length > 20, `writes were acknowledged (${acknowledged.length})`);
    await startServer();
    const present = new Set((await allChildren(bob, undefined, { limit: 1000 })).map((n) => n.rkey));
    const lost = acknowledged.filter((rkey) => !present.has(rkey));
    assertEqual(lost, [], 'every acknowledged write is there');
  });

  await runner.test('per-client limits on procedures: 429 with Retry-After, other clients and queries unaffected', async () => {
    await stopProcess(server, 'SIGTERM');
    await startServer({ BULLETED_PROCEDURE_RATE: '5' });
    for (let i = 0; i < 5; i++) await ok(call('createNode', { repo: alice, text: `limited ${i}` }));
    const limited = await call('createNode', { repo: alice, text: 'one too many' });
    expectError(limited, 429, 'RateLimitExceeded');
    const wait = Number(limited.headers.get('retry-after'));
    assert(wait >= 1 && wait <= 12, `Retry-After: ${limited.headers.get('retry-after')}`);
    // Another client (token) has its own budget; reads are not limited.
    await ok(call('createNode', { repo: bob, text: 'bob is fine' }, { as: bobToken }));
    assertEqual((await query('getChildren', { repo: alice, limit: 1 })).status, 200, 'queries pass');
    // Unauthenticated floods count against the address, and are refused too.
    let anonymous;
    for (let i = 0; i < 6; i++) anonymous = await call('createNode', { repo: alice, text: 'x' }, { as: null });
    expectError(anonymous, 429, 'RateLimitExceeded');
    // The budget refills (5 a minute: one every 12 s).
    await sleep(wait * 1000 + 200);
    await ok(call('createNode', { repo: alice, text: 'after waiting' }));
    await stopProcess(server, 'SIGTERM');
    await startServer();
  });

  await runner.test('per-client budget on query answers: 429 with Retry-After once spent, health unaffected', async () => {
    await stopProcess(server, 'SIGTERM');
    await startServer({ BULLETED_QUERY_BYTES: String(64 * 1024) });
    let refused;
    let served = 0;
    for (let i = 0; i < 200 && !refused; i++) {
      const r = await query('getChildren', { repo: alice, limit: 100 });
      if (r.status === 200) served++;
      else refused = r;
    }
    assert(refused, `64 KiB a minute ran out within 200 pages (${served} served)`);
    expectError(refused, 429, 'RateLimitExceeded');
    assert(served > 0, 'the budget served pages before it ran out');
    const wait = Number(refused.headers.get('retry-after'));
    assert(wait >= 1 && wait <= 60, `Retry-After: ${refused.headers.get('retry-after')}`);
    assertEqual((await fetch(`${base()}/healthz`)).status, 200, 'health is not a query');
    await stopProcess(server, 'SIGTERM');
    await startServer();
  });

  await runner.test('readiness fails while the configured firehose is unreachable', async () => {
    await stopProcess(server, 'SIGTERM');
    const deadPort = await freePort();
    port = await freePort();
    const log = fs.openSync(path.join(workdir, 'unready.log'), 'a');
    server = track(spawn(binary, ['serve', '--db', dbPath, '--port', String(port), '--firehose', `ws://127.0.0.1:${deadPort}`],
      { stdio: ['ignore', log, log] }));
    await waitFor('the server', async () => (await fetch(`${base()}/healthz`)).ok, 15000);
    const ready = await fetch(`${base()}/readyz`);
    assertEqual(ready.status, 503, 'not ready');
    const body = await ready.json();
    assert(body.error === 'Unavailable' && /firehose/.test(body.message), `names the firehose: ${JSON.stringify(body)}`);
  });
} finally {
  if (server) await stopProcess(server, 'SIGTERM');
}
process.exit(runner.finish());
