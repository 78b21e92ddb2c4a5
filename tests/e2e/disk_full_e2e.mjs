// A full disk, for real: the app view runs under a file-size limit
// (RLIMIT_FSIZE through prlimit), so SQLite's writes fail the way they do on
// a full disk. During write requests and during firehose ingest: a clear
// error (503, or logged and counted), nothing corrupted, the process stays
// up, and everything resumes once the limit is lifted ("space returns").
// Usage: ./node22 ../disk_full_e2e.mjs APPVIEW_BINARY WORKDIR   (from tests/e2e/pds)
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import {
  Runner, Xrpc, assert, assertEqual, freePort, listRecords, sleep, startPds, stopProcess, testNetworkEnv, track,
  waitFor,
} from './lib.mjs';

const [binary, workdir] = process.argv.slice(2);
fs.mkdirSync(workdir, { recursive: true });
const runner = new Runner();
const limitBytes = 512 * 1024;

// `serve` under a file-size limit that can be lifted later (soft limit only).
// Its logs go through a pipe: a log file would hit the limit too.
function startLimited(args) {
  const child = track(spawn('prlimit', [`--fsize=${limitBytes}:unlimited`, '--', binary, 'serve', ...args],
    { stdio: ['ignore', 'pipe', 'pipe'], env: { ...testNetworkEnv(), BULLETED_PROCEDURE_RATE: '0' } }));
  child.log = '';
  for (const stream of [child.stdout, child.stderr]) stream.on('data', (d) => { child.log += d; });
  return child;
}
const lift = (child) => execFileSync('prlimit', ['--pid', String(child.pid), '--fsize=unlimited:unlimited']);
const integrity = (db) => JSON.parse(execFileSync(binary, ['check', '--db', db], { encoding: 'utf8' }));
const metric = async (port, name) => {
  const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(name + ' '));
  return line ? Number(line.split(' ').pop()) : 0;
};

await runner.test('write requests on a full disk: 503, nothing lost, writes resume when space returns', async () => {
  const db = path.join(workdir, 'local.db');
  const did = 'did:plc:diskfull';
  const token = execFileSync(binary, ['token', 'create', '--did', did, '--db', db], { encoding: 'utf8' }).trim();
  const port = await freePort();
  const server = startLimited(['--db', db, '--port', String(port)]);
  const base = `http://127.0.0.1:${port}`;
  try {
    await waitFor('the server', async () => (await fetch(`${base}/healthz`)).ok, 15000);
    const create = async (text) => {
      const res = await fetch(`${base}/xrpc/app.bulleted.createNode`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
        body: JSON.stringify({ repo: did, text, note: 'x'.repeat(2000) }),
      });
      return { status: res.status, json: await res.json() };
    };
    const acknowledged = [];
    let refused;
    for (let i = 0; i < 2000 && !refused; i++) {
      const r = await create(`node ${i}`);
      if (r.status === 200) acknowledged.push(r.json.rkey);
      else refused = r;
    }
    assert(refused, 'the disk filled up');
    assertEqual([refused.status, refused.json.error], [503, 'Unavailable'], `answer: ${JSON.stringify(refused.json)}`);
    assert(!refused.json.message.includes(workdir) && !/\.db\b|SELECT|INSERT|UPDATE/.test(refused.json.message),
      `no path or SQL in: ${refused.json.message}`);
    assertEqual((await fetch(`${base}/healthz`)).status, 200, 'still up');
    assertEqual((await create('still full')).status, 503, 'still refused while full');
    const page = await (await fetch(`${base}/xrpc/app.bulleted.getChildren?repo=${did}&limit=1000`)).json();
    assertEqual(page.nodes.length, acknowledged.length, 'reads work; every acknowledged write is there');
    lift(server);
    const after = await create('after space returned');
    assertEqual(after.status, 200, `writes resume: ${JSON.stringify(after.json)}`);
    const all = await (await fetch(`${base}/xrpc/app.bulleted.getChildren?repo=${did}&limit=1000`)).json();
    assertEqual(all.nodes.map((n) => n.rkey), [...acknowledged, after.json.rkey], 'nothing lost, nothing extra');
  } finally {
    await stopProcess(server);
  }
  const report = integrity(db);
  assertEqual(report.sqliteCheck ?? report.sqlite_check ?? report.quickCheck, 'ok', `integrity: ${JSON.stringify(report)}`);
});

await runner.test('ingest on a full disk: logged and counted, nothing skipped, caught up when space returns', async () => {
  const { child: pds, info } = await startPds(path.join(workdir, 'pds'));
  const xrpc = new Xrpc(info.pdsUrl);
  const [alice] = info.accounts;
  const db = path.join(workdir, 'ingest.db');
  const port = await freePort();
  const server = startLimited(['--db', db, '--port', String(port), '--firehose', info.firehoseUrl,
    '--plc', info.plcUrl]);
  try {
    await waitFor('a firehose connection', () => /firehose: connected to/.test(server.log), 30000);
    const now = new Date().toISOString();
    // alice's repo began before the app view followed the PDS: her first
    // write makes the app view fetch it whole (backfill) before going live.
    await xrpc.ok('com.atproto.repo.createRecord', { token: alice.accessJwt, body: { repo: alice.did,
      collection: 'app.bulleted.node', rkey: 'first', record: { $type: 'app.bulleted.node', text: 'first',
        sortKey: 'a0', createdAt: now } } });
    await waitFor('the backfill of alice', async () => {
      const res = await fetch(`http://127.0.0.1:${port}/xrpc/app.bulleted.getChildren?repo=${alice.did}&limit=10`);
      return res.ok && (await res.json()).nodes.length === 1;
    }, 30000);
    // Records large enough to outgrow the limit within a few commits.
    for (let batch = 0; batch < 8; batch++) {
      const writes = [];
      for (let i = 0; i < 50; i++) {
        writes.push({ $type: 'com.atproto.repo.applyWrites#create', collection: 'app.bulleted.node',
          rkey: `b${batch}n${i}`, value: { $type: 'app.bulleted.node', text: `n ${batch}.${i}`, note: 'y'.repeat(3000),
            sortKey: `a${i}`, createdAt: now } });
      }
      await xrpc.ok('com.atproto.repo.applyWrites', { token: alice.accessJwt, body: { repo: alice.did, writes } });
    }
    await waitFor('a failed index write', async () => (await metric(port, 'bulleted_firehose_apply_failures_total')) > 0, 30000);
    // Logged, whichever write met the full disk first: a batch's flush, one
    // ended inside an event (an account's status ends its batch) or a
    // resync's; the log reaches the test after the metric may have.
    await waitFor('the failed write logged', () =>
      /firehose: (resyncs: )?(cannot write the index|indexing failed)/.test(server.log), 10000);
    assertEqual((await fetch(`http://127.0.0.1:${port}/healthz`)).status, 200, 'still up');
    lift(server);
    // Pages of 1,000 that stop short at limits.maxAnswerBytes: followed to the end.
    const indexed = async () => {
      let count = 0;
      let cursor;
      do {
        const res = await fetch(`http://127.0.0.1:${port}/xrpc/app.bulleted.getChildren?repo=${alice.did}&limit=1000${cursor ? `&cursor=${cursor}` : ''}`);
        const page = await res.json();
        count += page.nodes.length;
        cursor = page.cursor;
      } while (cursor);
      return count;
    };
    assert(await waitFor('the index to catch up', async () => (await indexed()) === 401, 30000), 'every record indexed');
    const records = await listRecords(xrpc, alice.did);
    assertEqual(records.length, 401, 'the PDS holds 401');
    assert(/firehose: the index is writable again/.test(server.log), 'recovery logged');
  } finally {
    await stopProcess(server);
    await stopProcess(pds);
  }
  const report = integrity(db);
  assertEqual(report.sqliteCheck ?? report.sqlite_check ?? report.quickCheck, 'ok', `integrity: ${JSON.stringify(report)}`);
});

process.exit(runner.finish());
