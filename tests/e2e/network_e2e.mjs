// End to end on a network shaped like the real one: one PLC directory, three
// real PDSes and a relay that re-sequences their streams and holds no repos
// (tests/e2e/pds/start-network.mjs). Outlines written straight to the PDSes
// before the app view starts are all served after a fresh start; live
// writes on every PDS follow; a gap heals by a resync of that repo alone;
// forged frames put on the stream never show; a replica started later ends
// identical.
// Usage: ./node22 ../network_e2e.mjs APPVIEW_BINARY WORKDIR   (from tests/e2e/pds)
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import {
  Runner, Xrpc, assert, assertEqual, freePort, listRecords, startAppview, startNetwork, stopProcess, waitFor,
} from './lib.mjs';

const require = createRequire(import.meta.url);
const Database = require('./pds/node_modules/better-sqlite3');
const WebSocket = require('./pds/node_modules/ws');
// The harness's own packages (ESM), from its node_modules.
const harness = createRequire(new URL('./pds/package.json', import.meta.url));
const load = (name) => import(pathToFileURL(harness.resolve(name)).href);
const dagCbor = await load('@ipld/dag-cbor');
const { decodeFirst } = await import(new URL('./pds/node_modules/cborg/cborg.js', import.meta.url).href);
const { CID, varint } = await load('multiformats');
const { sha256 } = await load('multiformats/hashes/sha2');
const { Secp256k1Keypair } = await load('@atproto/crypto');

const [binary, workdir] = process.argv.slice(2);
fs.mkdirSync(workdir, { recursive: true });
const runner = new Runner();
const { child: network, info } = await startNetwork(path.join(workdir, 'network'), 3);
const accounts = info.pdses.flatMap((p) => p.accounts.map((a) => ({ ...a, xrpc: new Xrpc(p.url),
  admin: `Basic ${Buffer.from(`admin:${p.adminPassword}`).toString('base64')}` })));
const relay = info.relay.url;
const [big, noisy, crossing, gappy, hidden, leaving] = accounts;
const deleted = new Set();  // accounts removed by the last test: their PDS has nothing

// Order keys in order: 'a' + one base-62 digit, then 'b' + two.
const DIGITS = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const key = (i) => (i < 62 ? `a${DIGITS[i]}` : `b${DIGITS[Math.floor(i / 62)]}${DIGITS[i % 62]}`);
const now = () => new Date().toISOString();
const node = (text, extra = {}) => ({ $type: 'app.bulleted.node', text, createdAt: now(), ...extra });
const uri = (did, rkey) => `at://${did}/app.bulleted.node/${rkey}`;
const rkeyOf = (u) => u.split('/').pop();

async function applyWrites(account, writes) {
  for (let i = 0; i < writes.length; i += 100) {
    await account.xrpc.ok('com.atproto.repo.applyWrites', { token: account.accessJwt,
      body: { repo: account.did, writes: writes.slice(i, i + 100) } });
  }
}
const create = (collection, rkey, value) => ({ $type: 'com.atproto.repo.applyWrites#create', collection, rkey, value });

// Before the app view exists: several hundred nodes in one repo (children
// under parents), noise of another collection, a parent in another repo.
const bigWrites = [];
for (let i = 0; i < 320; i++) {
  const parent = i < 20 ? undefined : uri(big.did, `n${String(i % 20).padStart(4, '0')}`);
  bigWrites.push(create('app.bulleted.node', `n${String(i).padStart(4, '0')}`,
    node(`node ${i}`, { sortKey: key((i * 37) % 300), ...(parent ? { parent } : {}) })));
}
await applyWrites(big, bigWrites);
await applyWrites(noisy, [
  ...[0, 1, 2, 3, 4].map((i) => create('app.example.noise', `x${i}`, { $type: 'app.example.noise', n: i })),
  ...[0, 1, 2].map((i) => create('app.bulleted.node', `m${i}`, node(`noisy ${i}`, { sortKey: key(i) }))),
]);
await applyWrites(crossing, [create('app.bulleted.node', 'cross', node('under someone else', {
  sortKey: 'a0', parent: uri(big.did, 'n0000') }))]);

const metric = async (port, name) => {
  const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
  const escaped = name.replace(/[{}"=]/g, (c) => `\\${c}`);
  return Number(text.match(new RegExp(`^${escaped} (\\d+)$`, 'm'))?.[1] ?? NaN);
};
const rows = (db, did) => {
  const conn = new Database(db, { readonly: true, fileMustExist: true });
  try {
    return conn.prepare('SELECT rkey, cid FROM nodes WHERE did = ? ORDER BY rkey').all(did);
  } finally {
    conn.close();
  }
};
const repoColumn = (column) => (db, did) => {
  const conn = new Database(db, { readonly: true, fileMustExist: true });
  try {
    return conn.prepare(`SELECT ${column} FROM repos WHERE did = ?`).get(did)?.[column];
  } finally {
    conn.close();
  }
};
const repoRev = repoColumn('rev');
const repoStatus = repoColumn('status');
async function pdsNodes(account) {
  if (deleted.has(account.did)) return [];
  return (await listRecords(account.xrpc, account.did)).map((r) => ({ rkey: rkeyOf(r.uri), cid: r.cid, value: r.value }))
    .sort((a, b) => (a.rkey < b.rkey ? -1 : 1));
}
async function children(port, repo, parent) {
  const out = [];
  let cursor;
  do {
    const q = new URLSearchParams({ repo, limit: '100', ...(parent ? { parent } : {}), ...(cursor ? { cursor } : {}) });
    const page = await (await fetch(`http://127.0.0.1:${port}/xrpc/app.bulleted.getChildren?${q}`)).json();
    out.push(...page.nodes);
    cursor = page.cursor;
  } while (cursor);
  return out;
}
const byKey = (a, b) => (a.sortKey < b.sortKey ? -1 : a.sortKey > b.sortKey ? 1 : a.rkey < b.rkey ? -1 : 1);

// The index of `db` holds exactly what every PDS holds.
async function converged(db, what) {
  let last = '';
  await waitFor(what, async () => {
    for (const account of accounts) {
      const want = (await pdsNodes(account)).map(({ rkey, cid }) => ({ rkey, cid }));
      const have = rows(db, account.did);
      if (JSON.stringify(want) !== JSON.stringify(have)) {
        last = `${account.handle}: ${have.length} rows, the PDS ${want.length}`;
        return false;
      }
    }
    return true;
  }, 60000, 250).catch((err) => { throw new Error(`${err.message}; ${last}`); });
}

async function startReplica(name, { ready = true } = {}) {
  const db = path.join(workdir, `${name}.db`);
  const port = await freePort();
  const log = path.join(workdir, `appview-${name}.log`);
  const child = startAppview(binary, ['--firehose', info.relay.firehoseUrl, '--plc', info.plcUrl, '--db', db,
    '--port', String(port)], log);
  if (ready) {
    await waitFor(`${name} to be ready`,
      async () => (await fetch(`http://127.0.0.1:${port}/readyz`).catch(() => null))?.status === 200, 90000, 250);
  }
  return { child, db, port, log };
}

let first;
try {
  await runner.test('everything written before the app view started is served after a fresh start', async () => {
    first = await startReplica('first');
    await converged(first.db, 'the backfill to equal every PDS');
    assert(/backfill: \d+ repos listed \(com\.atproto\.sync\.listReposByCollection\)/.test(fs.readFileSync(first.log, 'utf8')),
      'the relay listed the repos by collection');
    // Order per parent: (sortKey, rkey), as each PDS's records say.
    const records = await pdsNodes(big);
    const groups = new Map();
    for (const r of records) {
      const parent = r.value.parent ? rkeyOf(r.value.parent) : '';
      if (!groups.has(parent)) groups.set(parent, []);
      groups.get(parent).push({ rkey: r.rkey, sortKey: r.value.sortKey });
    }
    assert(groups.size > 10, `many groups (${groups.size})`);
    for (const [parent, list] of groups) {
      const actual = (await children(first.port, big.did, parent || undefined)).map((n) => n.rkey);
      assertEqual(actual, list.sort(byKey).map((n) => n.rkey), `order under ${parent || 'the top level'}`);
    }
    // A parent in another repo is not followed into that repo's outline.
    const under = (await children(first.port, big.did, 'n0000')).map((n) => n.rkey);
    assert(!under.includes('cross'), 'a bullet of another repo shows under n0000');
    assertEqual(await metric(first.port, 'bulleted_firehose_verification_failures_total{reason="signature"}'), 0,
      'no signature failures');
  });

  await runner.test('live creates, updates and deletes on every PDS follow', async () => {
    for (const account of accounts) {
      await applyWrites(account, [create('app.bulleted.node', 'live1', node(`live ${account.handle}`, { sortKey: 'a5' })),
        create('app.bulleted.node', 'live2', node('second', { sortKey: 'a6' }))]);
      await account.xrpc.ok('com.atproto.repo.putRecord', { token: account.accessJwt, body: { repo: account.did,
        collection: 'app.bulleted.node', rkey: 'live1', record: node('updated', { sortKey: 'a7' }) } });
      await account.xrpc.ok('com.atproto.repo.deleteRecord', { token: account.accessJwt, body: { repo: account.did,
        collection: 'app.bulleted.node', rkey: 'live2' } });
    }
    await converged(first.db, 'live writes on every PDS');
  });

  await runner.test('a dropped frame heals by a resync of that repo alone', async () => {
    const before = await metric(first.port, 'bulleted_firehose_resyncs_started_total');
    const done = await metric(first.port, 'bulleted_firehose_resyncs_done_total');
    await fetch(`${relay}/_test/drop?did=${encodeURIComponent(gappy.did)}&n=1`, { method: 'POST' });
    await applyWrites(gappy, [create('app.bulleted.node', 'lost', node('never on the stream'))]);
    await applyWrites(gappy, [create('app.bulleted.node', 'after', node('after the gap'))]);
    await converged(first.db, 'the gap to heal');
    await waitFor('the resync to finish', async () => (await metric(first.port, 'bulleted_firehose_resyncs_done_total')) > done, 30000);
    assertEqual(await metric(first.port, 'bulleted_firehose_resyncs_started_total'), before + 1, 'one repo resynced');
  });

  await runner.test('forged frames through the relay never show, and each is counted', async () => {
    // A real commit of `big` from the relay's stream, then variations of it.
    const seen = await new Promise((resolve, reject) => {
      const socket = new WebSocket(info.relay.firehoseUrl);
      const timer = setTimeout(() => reject(new Error('no commit seen')), 20000);
      socket.on('message', (data) => {
        const bytes = new Uint8Array(data);
        const [header, rest] = decodeFirst(bytes, dagCbor.decodeOptions);
        const [body] = decodeFirst(rest, dagCbor.decodeOptions);
        if (header.t === '#commit' && body.repo === big.did && body.ops.some((op) => op.action === 'create')) {
          clearTimeout(timer);
          socket.close();
          resolve({ header, body });
        }
      });
      socket.on('open', () => applyWrites(big, [create('app.bulleted.node', 'real', node('a real one', { sortKey: 'a1' }))]));
    });
    await converged(first.db, 'the real commit');
    const stateBefore = JSON.stringify(rows(first.db, big.did));
    const revBefore = repoRev(first.db, big.did);

    const readCar = (bytes) => {
      const [headerLength, n] = varint.decode(bytes);
      let at = n + headerLength;
      const blocks = [];
      while (at < bytes.length) {
        const [length, m] = varint.decode(bytes.subarray(at));
        at += m;
        const cid = CID.decodeFirst(bytes.subarray(at, at + length))[0];
        blocks.push({ cid, bytes: bytes.subarray(at + cid.bytes.length, at + length) });
        at += length;
      }
      return blocks;
    };
    const writeCar = (root, blocks) => {
      const header = dagCbor.encode({ roots: [root], version: 1 });
      const parts = [varint.encodeTo(header.length, new Uint8Array(varint.encodingLength(header.length))), header];
      for (const b of blocks) {
        const length = b.cid.bytes.length + b.bytes.length;
        parts.push(varint.encodeTo(length, new Uint8Array(varint.encodingLength(length))), b.cid.bytes, b.bytes);
      }
      return new Uint8Array(Buffer.concat(parts));
    };
    const cidOf = async (bytes) => CID.createV1(0x71, await sha256.digest(bytes));
    const blocks = readCar(seen.body.blocks);
    const commitBlock = blocks.find((b) => b.cid.equals(seen.body.commit));
    const commit = dagCbor.decode(commitBlock.bytes);
    // A rev after the real one: its time part one second later.
    const S32 = '234567abcdefghijklmnopqrstuvwxyz';
    let micros = 0n;
    for (const c of seen.body.rev.slice(0, 11)) micros = micros * 32n + BigInt(S32.indexOf(c));
    micros += 1_000_000n;
    let rev = seen.body.rev.slice(11);
    for (let i = 0; i < 11; i++) { rev = S32[Number(micros % 32n)] + rev; micros /= 32n; }
    const stranger = await Secp256k1Keypair.create();
    // The commit at the new rev, signed by `signer` (the stranger) or not at all.
    const forgeCommit = async (sign) => {
      const unsigned = { did: commit.did, rev, data: commit.data, prev: commit.prev ?? null, version: 3 };
      const sig = sign ? await stranger.sign(dagCbor.encode(unsigned)) : new Uint8Array(64);
      const bytes = dagCbor.encode({ ...unsigned, sig });
      return { cid: await cidOf(bytes), bytes };
    };
    const inject = (header, body) => fetch(`${relay}/_test/inject`, { method: 'POST',
      body: Buffer.concat([dagCbor.encode(header), dagCbor.encode(body)]) });
    const commitFrame = async ({ sign = true, damageRecord = false, prevData = seen.body.prevData } = {}) => {
      const forged = await forgeCommit(sign);
      const others = blocks.filter((b) => !b.cid.equals(seen.body.commit)).map((b) => ({ cid: b.cid, bytes: b.bytes }));
      if (damageRecord) {
        const record = others.find((b) => b.cid.equals(seen.body.ops.find((op) => op.action === 'create').cid));
        const copy = new Uint8Array(record.bytes);
        copy[copy.length - 1] ^= 1;
        record.bytes = copy;
      }
      return { ...seen.body, rev, since: seen.body.rev, commit: forged.cid, prevData,
        blocks: writeCar(forged.cid, [forged, ...others]) };
    };
    const cases = [
      ['a commit signed with a stranger\'s key', 'signature', () => commitFrame()],
      ['a record block that does not hash to its CID', 'block', () => commitFrame({ damageRecord: true })],
      ['ops that do not undo to prevData', 'inversion', () => commitFrame({ prevData: commit.data })],
    ];
    for (const [what, reason, make] of cases) {
      const name = `bulleted_firehose_verification_failures_total{reason="${reason}"}`;
      const before = await metric(first.port, name);
      await inject(seen.header, await make());
      await waitFor(`${what} to be counted`, async () => (await metric(first.port, name)) > before, 20000);
      assertEqual(JSON.stringify(rows(first.db, big.did)), stateBefore, `${what}: the index is unchanged`);
      assert(repoRev(first.db, big.did) <= revBefore || repoRev(first.db, big.did) !== rev, `${what}: its rev is not taken`);
    }
    {  // A #sync whose commit the stranger signed.
      const name = 'bulleted_firehose_verification_failures_total{reason="signature"}';
      const before = await metric(first.port, name);
      const forged = await forgeCommit(true);
      await inject({ op: 1, t: '#sync' }, { seq: 0, did: big.did, rev, time: now(), blocks: writeCar(forged.cid, [forged]) });
      await waitFor('the forged #sync to be counted', async () => (await metric(first.port, name)) > before, 20000);
    }
    // The refused commits ask for a resync from the PDS; the repo is still
    // exactly what its PDS holds, and nothing of the forgeries is there.
    await converged(first.db, 'the repo after the forgeries');
    assert(repoRev(first.db, big.did) !== rev, 'the forged rev is not the index\'s');
  });

  await runner.test('SIGKILL during live ingest: after a restart the index equals every PDS, nothing applied twice', async () => {
    // Writes on every PDS while the app view is killed and after: the restart
    // resumes at the committed cursor, so every op it applies is new to the
    // index (a re-applied one would be counted stale) and nothing is missed.
    let writing = true;
    let round = 0;
    const writer = (async () => {
      while (writing) {
        round++;
        await Promise.all(accounts.map((account) => applyWrites(account, [
          create('app.bulleted.node', `k${round}`, node(`during the kill ${round}`, { sortKey: key(round % 60) })),
          ...(round > 1 ? [{ $type: 'com.atproto.repo.applyWrites#update', collection: 'app.bulleted.node',
            rkey: `k${round - 1}`, value: node(`updated ${round - 1}`, { sortKey: key(round % 60) }) }] : []),
        ])));
      }
    })();
    try {
      await waitFor('some of the writes to be indexed', () => rows(first.db, big.did).some((r) => r.rkey === 'k3'), 30000);
      first.child.kill('SIGKILL');
      await stopProcess(first.child);
      await new Promise((resolve) => setTimeout(resolve, 500));  // writes go on meanwhile
      first = await startReplica('first');
      await waitFor('writes after the restart', () => round > 12, 60000);
    } finally {
      writing = false;
      await writer;
    }
    await converged(first.db, 'the index after the restart');
    assertEqual(await metric(first.port, 'bulleted_firehose_ops_stale_total'), 0, 'ops applied twice');
    assert(await metric(first.port, 'bulleted_firehose_ops_applied_total') > 0, 'the restart applied the writes it missed');
    assertEqual(await metric(first.port, 'bulleted_firehose_backfilling'), 0, 'a restart does not backfill again');
  });

  await runner.test('a replica started later, SIGKILLed during its backfill, ends identical to the first', async () => {
    // Killed once its backfill has begun, then started again on its index:
    // it goes on where it stopped.
    const killed = await startReplica('second', { ready: false });
    await waitFor('the backfill to begin', () => fs.existsSync(killed.log)
      && /backfill: (listing|\d+ repos listed)/.test(fs.readFileSync(killed.log, 'utf8')), 30000, 5);
    killed.child.kill('SIGKILL');
    await stopProcess(killed.child);
    const second = await startReplica('second');
    try {
      await converged(second.db, 'the second replica');
      for (const account of accounts) {
        assertEqual(rows(second.db, account.did), rows(first.db, account.did), `${account.handle} on both replicas`);
      }
    } finally {
      await stopProcess(second.child);
    }
  });

  await runner.test('#account events through the relay hide, restore and remove a repo', async () => {
    await applyWrites(hidden, [create('app.bulleted.node', 'h1', node('hidden soon', { sortKey: 'a0' }))]);
    await applyWrites(leaving, [create('app.bulleted.node', 'l1', node('leaving soon', { sortKey: 'a0' }))]);
    await converged(first.db, 'the two repos');
    const top = async (did) => (await children(first.port, did)).length;
    const shown = await top(hidden.did);
    assert(shown > 0, 'the repo shows');
    const status = (account, takedown) => account.xrpc.ok('com.atproto.admin.updateSubjectStatus', { token: account.admin,
      body: { subject: { $type: 'com.atproto.admin.defs#repoRef', did: account.did }, takedown } });
    await status(hidden, { applied: true, ref: 'e2e' });
    await waitFor('the takedown', () => repoStatus(first.db, hidden.did) === 'takendown', 30000);
    assertEqual(await top(hidden.did), 0, 'a taken-down repo is hidden');
    assertEqual(rows(first.db, hidden.did).length > 0, true, 'hidden, not deleted');
    await status(hidden, { applied: false });
    await waitFor('the reversal', () => repoStatus(first.db, hidden.did) === 'active', 30000);
    assertEqual(await top(hidden.did), shown, 'shown again');
    await leaving.xrpc.ok('com.atproto.server.deactivateAccount', { token: leaving.accessJwt, body: {} });
    await waitFor('the deactivation', () => repoStatus(first.db, leaving.did) === 'deactivated', 30000);
    assertEqual(await top(leaving.did), 0, 'a deactivated repo is hidden');
    await leaving.xrpc.ok('com.atproto.admin.deleteAccount', { token: leaving.admin, body: { did: leaving.did } });
    deleted.add(leaving.did);
    await waitFor('the deletion', () => repoStatus(first.db, leaving.did) === 'deleted'
      && rows(first.db, leaving.did).length === 0, 30000);
    await converged(first.db, 'every other repo, unchanged');
  });
} finally {
  if (first) await stopProcess(first.child);
  await stopProcess(network);
}
process.exit(runner.finish());
