// Ingest crash test: a relay replays a large generated stream (15,000 #commit
// frames, about 150,000 ops, from bench/make_frames) over a real websocket.
// One app view indexes it without interruption; another is SIGKILLed at 20
// random moments and restarted each time. The two indexes must be identical,
// row for row (change sequence numbers included, so no op was applied twice).
// Usage: ./node22 ../ingest_crash_e2e.mjs APPVIEW_BINARY WORKDIR   (from tests/e2e/pds)
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { Runner, assert, assertEqual, freePort, generatedFrames, sleep, startDidDirectory, stopProcess, track,
  waitFor } from './lib.mjs';

const require = createRequire(import.meta.url);
const Database = require('./pds/node_modules/better-sqlite3');
const { WebSocketServer } = require('./pds/node_modules/ws');

const [binary, workdir] = process.argv.slice(2);
fs.mkdirSync(workdir, { recursive: true });
const runner = new Runner();
const commits = 15000;

// The stream: length-prefixed frames; frame i carries seq i + 1.
const streamFile = path.join(workdir, 'frames.bin');
const frames = generatedFrames(binary, streamFile, commits);
assertEqual(frames.length, commits, 'frames generated');
// Every commit is verified against its repo's key: the directory serves them.
const directory = await startDidDirectory(`${streamFile}.keys.json`);

// A relay that honours ?cursor= (exclusive) and then stays open.
const relayPort = await freePort();
const relay = new WebSocketServer({ host: '127.0.0.1', port: relayPort });
relay.on('connection', (socket, request) => {
  const cursor = Number(new URL(request.url, 'http://x').searchParams.get('cursor') ?? 0);
  let next = Math.max(0, cursor);
  const pump = () => {
    // Respect the socket's buffer, as a relay under backpressure does.
    while (next < frames.length && socket.readyState === 1 && socket.bufferedAmount < 4 << 20) {
      socket.send(frames[next++], { binary: true });
    }
    if (next < frames.length && socket.readyState === 1) setTimeout(pump, 5);
  };
  pump();
});
const relayUrl = `ws://127.0.0.1:${relayPort}`;

function startIndexer(db) {
  return freePort().then((port) => {
    const log = fs.openSync(path.join(workdir, `appview-${path.basename(db)}.log`), 'a');
    const child = track(spawn(binary, ['serve', '--db', db, '--port', String(port), '--firehose', relayUrl,
      '--plc', directory.url],
      { stdio: ['ignore', log, log] }));
    child.port = port;
    return child;
  });
}
function cursor(db) {
  if (!fs.existsSync(db)) return 0;
  const conn = new Database(db, { readonly: true, fileMustExist: true });
  try {
    return conn.prepare("SELECT seq FROM cursors WHERE source = 'firehose'").get()?.seq ?? 0;
  } catch {
    return 0;  // not created yet
  } finally {
    conn.close();
  }
}
function dump(db) {
  const conn = new Database(db, { readonly: true, fileMustExist: true });
  try {
    const tables = {};
    for (const table of ['nodes', 'tombstones', 'repos', 'cursors', 'counters', 'search_codes', 'search_tags']) {
      tables[table] = conn.prepare(`SELECT * FROM ${table} ORDER BY 1, 2`).all();
    }
    // When the index took each node differs between two runs by nature.
    for (const row of tables.nodes) delete row.indexed_at;
    return tables;
  } finally {
    conn.close();
  }
}
const finished = (db) => waitFor(`${db} to reach seq ${commits}`, () => cursor(db) === commits, 120000, 200);

try {
  await runner.test('20 SIGKILLs during a replay leave the index identical to an uninterrupted run', async () => {
    const calm = path.join(workdir, 'calm.db');
    const calmServer = await startIndexer(calm);
    await finished(calm);
    // Every commit was verified (signature and MST proof) before it applied.
    const metrics = await (await fetch(`http://127.0.0.1:${calmServer.port}/metrics`)).text();
    const counter = (name) => Number(metrics.match(new RegExp(`^${name} (\\d+)$`, 'm'))?.[1] ?? -1);
    assertEqual(counter('bulleted_firehose_commits_verified_total'), commits, 'commits verified');
    const failed = [...metrics.matchAll(/^bulleted_firehose_verification_failures_total\{[^}]*\} (\d+)$/gm)]
      .reduce((sum, m) => sum + Number(m[1]), 0);
    assertEqual(failed, 0, 'verification failures');
    await stopProcess(calmServer);

    const crashy = path.join(workdir, 'crashy.db');
    const seen = [];
    for (let kill = 0; kill < 20; kill++) {
      const before = cursor(crashy);
      const server = await startIndexer(crashy);
      // A random moment while frames are flowing: once this run has
      // committed something, plus up to 30 ms (however fast the build is).
      await waitFor('progress', () => cursor(crashy) > before, 120000, 10);
      await sleep(Math.floor(Math.random() * 30));
      server.kill('SIGKILL');
      await stopProcess(server);
      seen.push(cursor(crashy));
    }
    console.log(`cursor at each kill: ${seen.join(' ')}`);
    assert(seen.at(-1) < commits, `every kill landed mid-stream: ${seen.join(' ')}`);
    assert(new Set(seen).size > 5, `the cursor moved between kills: ${seen.join(' ')}`);
    const last = await startIndexer(crashy);
    await finished(crashy);
    await stopProcess(last);
    const a = dump(calm);
    const b = dump(crashy);
    assert(a.nodes.length > 1000, `a large index (${a.nodes.length} nodes)`);
    for (const table of Object.keys(a)) {
      assertEqual(b[table].length, a[table].length, `${table} rows`);
      assertEqual(JSON.stringify(b[table]) === JSON.stringify(a[table]), true, `${table} identical`);
    }
    // The search index was written in the same transactions: `check`
    // rebuilds it aside and finds it as the rows say.
    const checked = spawnSync(binary, ['check', '--db', crashy], { encoding: 'utf8' });
    const report = JSON.parse(checked.stdout);
    assertEqual(report.searchIndex, 'ok', 'the search index after the SIGKILLs');
  });
} finally {
  relay.close();
  directory.close();
}
process.exit(runner.finish());
