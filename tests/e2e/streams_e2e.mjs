// Change streams (app.bulleted.streamChanges) over real HTTP against a
// running `bulleted-appview serve` (local mode): resumption by cursor and by
// Last-Event-ID across a disconnect (nothing lost, nothing twice, the same
// changes as getChanges), FutureCursor, commits of another process (a CLI
// import), the per-client and total limits, clients that never read (closed,
// counted), idle streams that hold no worker and little memory, health
// throughout, and shutdown telling every stream.
// Usage: ./node22 ../streams_e2e.mjs APPVIEW_BINARY WORKDIR   (from tests/e2e/pds)
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import {
  Runner, appviewClient, assert, assertEqual, freePort, localTokens, openEventStream, sleep, startNginx, stopProcess, track,
  waitFor,
} from './lib.mjs';

const [binary, workdir] = process.argv.slice(2);
// Memory is asserted on the Release build only (the sanitizers' shadow
// memory and quarantine dwarf what is measured).
const sanitized = process.env.BULLETED_E2E_SANITIZED === '1';
fs.mkdirSync(workdir, { recursive: true });
const dbPath = path.join(workdir, 'streams.db');
const alice = 'did:plc:alicestreamtest';
const bob = 'did:plc:bobstreamtest';
const [aliceToken, bobToken] = localTokens(binary, dbPath, [alice, bob]);
const runner = new Runner();
let port, server, logFile;

// limits: the stream settings of this run (a small buffer and stall, so
// that a client that never reads is closed soon).
async function startServer(limits, threads = 2, env = { BULLETED_QUERY_BYTES: '0' }) {
  port = await freePort();
  const config = path.join(workdir, `config-${port}.json`);
  fs.writeFileSync(config, JSON.stringify({ limits }));
  logFile = path.join(workdir, `appview-${port}.log`);
  const log = fs.openSync(logFile, 'a');
  server = track(spawn(binary, ['serve', '--config', config, '--db', dbPath, '--port', String(port),
    '--threads', String(threads)], { stdio: ['ignore', log, log],
    env: { ...process.env, BULLETED_PROCEDURE_RATE: '0', ...env } }));
  await waitFor('the server', async () => (await fetch(`http://127.0.0.1:${port}/healthz`)).ok, 15000);
}
const base = () => `http://127.0.0.1:${port}`;
const { query, call, ok, expectError } = appviewClient(base, aliceToken);
const streamUrl = (repo, cursor) => `${base()}/xrpc/app.bulleted.streamChanges?repo=${repo}` +
  (cursor === undefined ? '' : `&cursor=${cursor}`);
async function metric(name) {
  const text = await (await fetch(`${base()}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(`${name} `));
  return line ? Number(line.split(' ')[1]) : 0;
}
const rssKiB = () => Number(/VmRSS:\s+(\d+)/.exec(fs.readFileSync(`/proc/${server.pid}/status`, 'utf8'))[1]);
const create = async (text, repo = alice) =>
  (await ok(call('createNode', { repo, text }, { as: repo === bob ? bobToken : aliceToken }))).rkey;
// getChanges' pages from a cursor to the end, as {id, op, rkey, text}.
async function changesSince(repo, cursor) {
  const out = [];
  for (;;) {
    const page = await ok(query('getChanges', { repo, cursor, limit: 1000 }));
    if (page.changes.length === 0) return out;
    out.push(...page.changes.map((c) => `${c.op} ${c.rkey} ${c.node?.text ?? ''}`));
    cursor = page.cursor;
  }
}
// The CLI, run without blocking this process (its streams keep reading).
const run = (args) => new Promise((resolve, reject) => {
  const child = spawn(binary, args, { stdio: 'ignore' });
  child.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`${args[0]} exited ${code}`))));
});
// A stream has given its start (the first event). Not "exactly one event":
// the repo's heartbeat may come right after it, before the check looks.
const startGiven = (events) => events.length >= 1;
const asChanges = (events) => events.filter((e) => e.event === 'change')
  .map((e) => `${e.data.op} ${e.data.rkey} ${e.data.node?.text ?? ''}`);

try {
  // A query budget of 4 MiB a minute per address: streams are not charged
  // to it (one of them below carries 24 MB).
  await startServer({ streamBufferBytes: 65536, streamStallSeconds: 1 }, 2, { BULLETED_QUERY_BYTES: String(4 << 20) });

  await runner.test('a stream from now: its start, then every change in order with its cursor as the id', async () => {
    const stream = openEventStream(streamUrl(alice));
    await stream.until('the start', startGiven);
    assertEqual(stream.status, 200, 'status');
    assert(stream.headers['content-type'].startsWith('text/event-stream'), 'content type');
    assertEqual([stream.headers['cache-control'], stream.headers['x-accel-buffering'],
      stream.headers['access-control-allow-origin']], ['no-store', 'no', '*'], 'headers');
    assertEqual(stream.events[0].event, 'cursor', 'the first event says where it starts');
    const start = stream.events[0].id;
    const a = await create('one');
    const b = await create('two');
    await ok(call('updateNode', { repo: alice, rkey: a, text: 'one, edited' }));
    await ok(call('deleteNode', { repo: alice, rkey: b }));
    await stream.until('four changes', (events) => events.filter((e) => e.event === 'change').length === 4);
    const ids = stream.changes().map((e) => e.id);
    assert(ids.every((id, i) => id > (i === 0 ? start : ids[i - 1])), `ids strictly increase: ${ids}`);
    assertEqual(asChanges(stream.events), [`upsert ${a} one`, `upsert ${b} two`, `upsert ${a} one, edited`,
      `delete ${b} `], 'the changes');
    stream.close();
  });

  await runner.test('Last-Event-ID (over cursor) and cursor resume across a disconnect: nothing lost, nothing twice', async () => {
    const start = (await ok(query('getChanges', { repo: alice, latest: true }))).cursor;
    const first = openEventStream(streamUrl(alice, start));
    for (let i = 0; i < 3; i++) await create(`before ${i}`);
    await first.until('three', (events) => first.changes().length === 3);
    const seen = first.lastId();
    first.close();
    await first.ended;
    for (let i = 0; i < 4; i++) await create(`while away ${i}`);
    const want = await changesSince(alice, seen);
    assertEqual(want.length, 4, 'getChanges has the four made while away');
    // EventSource's reconnect: the URL it was opened with (an older cursor)
    // and the id it last saw, which wins.
    const again = openEventStream(streamUrl(alice, start), { 'last-event-id': String(seen) });
    await again.until('the four', () => again.changes().length >= 4);
    await create('after');
    await again.until('and the next', () => again.changes().length === 5);
    assertEqual(asChanges(again.events).slice(0, 4), want, 'exactly what came after, as getChanges has it');
    const byCursor = openEventStream(streamUrl(alice, seen));
    await byCursor.until('the five', () => byCursor.changes().length === 5);
    assertEqual(asChanges(byCursor.events), asChanges(again.events), 'cursor resumes the same way');
    again.close();
    byCursor.close();
  });

  await runner.test('a cursor from the future: an error event ends the stream; getChanges says 400 FutureCursor', async () => {
    const stream = openEventStream(streamUrl(alice, 1_000_000_000));
    assertEqual(await stream.ended, 'end', 'the answer ends');
    assertEqual(stream.events.map((e) => [e.event, e.data.error]), [['error', 'FutureCursor']], 'one error event');
    expectError(await query('getChanges', { repo: alice, cursor: 1_000_000_000 }), 400, 'FutureCursor');
    expectError(await query('streamChanges', { repo: alice, cursor: 'nope' }), 400, 'InvalidRequest');
  });

  await runner.test('an import through the API (the server\'s import runner) reaches open streams', async () => {
    const stream = openEventStream(streamUrl(bob));
    await stream.until('the start', startGiven);
    const items = Array.from({ length: 20 }, (_, i) => `- through the API ${i}`).join('\n');
    await ok(call('importOutline', { repo: bob, format: 'text', content: items }, { as: bobToken }));
    await stream.until('twenty imported',
      () => stream.changes().filter((e) => e.data.node?.text.startsWith('through the API')).length >= 20);
    stream.close();
  });

  await runner.test('an import by the CLI (another process on the file) reaches open streams', async () => {
    const stream = openEventStream(streamUrl(alice));
    await stream.until('the start', startGiven);
    const file = path.join(workdir, 'cli.opml');
    const items = Array.from({ length: 50 }, (_, i) => `<outline text="imported ${i}"/>`).join('');
    fs.writeFileSync(file, `<?xml version="1.0"?><opml version="2.0"><body>${items}</body></opml>`);
    await run(['import', file, '--repo', alice, '--db', dbPath]);
    await stream.until('fifty imported',
      () => stream.changes().filter((e) => e.data.node?.text.startsWith('imported')).length >= 50);
    const texts = stream.changes().map((e) => e.data.node.text);
    assertEqual(texts.filter((t) => t.startsWith('imported')).length, 50, 'each imported node once');
    stream.close();
  });

  await runner.test('past eight streams from one client, its oldest ends with TooManyStreams', async () => {
    const streams = [];
    for (let i = 0; i < 9; i++) {
      streams.push(openEventStream(streamUrl(alice)));
      await streams[i].until(`stream ${i}`, startGiven);
    }
    assertEqual(await streams[0].ended, 'end', 'the oldest ended');
    assertEqual(streams[0].events.at(-1).data.error, 'TooManyStreams', 'told why');
    await create('the eight still follow');
    for (const s of streams.slice(1)) await s.until('the change', () => s.changes().length === 1);
    await waitFor('counted', async () => (await metric('bulleted_streams_closed_total{reason="replaced"}')) >= 1);
    for (const s of streams) s.close();
  });

  await runner.test('clients that never read are closed and counted; readers get everything; memory stays bounded', async () => {
    const before = rssKiB();
    // From addresses of their own (the per-client limit is not what this
    // tests): each reads its stream's first event, then never reads again.
    const silent = await Promise.all(Array.from({ length: 8 }, (_, i) => new Promise((resolve) => {
      const socket = net.connect({ port, host: '127.0.0.1', localAddress: `127.0.0.${10 + i}` });
      socket.on('error', () => {});
      socket.write(`GET /xrpc/app.bulleted.streamChanges?repo=${alice} HTTP/1.1\r\nHost: x\r\n\r\n`);
      let head = '';
      const started = (chunk) => {
        head += chunk.toString('latin1');
        if (!head.includes('event: cursor')) return;
        socket.off('data', started);
        socket.pause();  // the kernel's buffers fill, then the server's
        resolve(socket);
      };
      socket.on('data', started);
    })));
    const reader = openEventStream(streamUrl(alice));
    await reader.until('the start', startGiven);
    // More than the kernel's socket buffers hold, as one import (8 KB texts).
    const file = path.join(workdir, 'big.opml');
    const text = 'x'.repeat(8000);
    fs.writeFileSync(file, `<?xml version="1.0"?><opml version="2.0"><body>${
      Array.from({ length: 3000 }, (_, i) => `<outline text="${i} ${text}"/>`).join('')}</body></opml>`);
    await run(['import', file, '--repo', alice, '--db', dbPath]);
    await waitFor('the silent streams closed as stalled',
      async () => (await metric('bulleted_streams_closed_total{reason="stalled"}')) >= 8, 120000, 200);
    // The import's 3000 nodes (under the root it makes), each once.
    const imported = () => new Set(reader.changes().filter((e) => / x+$/.test(e.data.node?.text ?? ''))
      .map((e) => e.data.rkey));
    await reader.until('the reader has all 3000', () => imported().size === 3000, 120000);
    const seen = new Map();
    const twice = [];
    for (const e of reader.changes()) {
      if (seen.has(e.data.rkey)) twice.push(`${e.data.rkey} at ${seen.get(e.data.rkey)} and ${e.id}`);
      seen.set(e.data.rkey, e.id);
    }
    assertEqual(twice.slice(0, 5).join('; '), '', 'nothing twice');
    assertEqual(reader.changes().length, 3001, 'nothing more');
    // The 24 MB of live changes the stream carried were paid from what was
    // left, never owed: a query is answered as soon as a little of the 4 MB a
    // minute has come back (owed, it would wait six minutes).
    await waitFor('a query answered (the live changes were never owed)',
      async () => (await query('getChanges', { repo: alice, latest: true })).status === 200, 10000, 250);
    const grown = rssKiB() - before;
    // 8 x 24 MB of events were refused, not queued.
    if (!sanitized) assert(grown < 96 * 1024, `RSS grew ${grown} KiB`);
    assertEqual((await fetch(`${base()}/healthz`)).status, 200, 'health');
    reader.close();
    for (const s of silent) s.destroy();
  });

  await runner.test('one client on four connections opening and dropping streams, and catching up from the start, does not stall others', async () => {
    // Another client, whose streams the churn's client cannot replace.
    const watcher = openEventStream(streamUrl(bob), {}, { localAddress: '127.0.0.50' });
    await watcher.until('the start', startGiven);
    const openBefore = await metric('bulleted_streams_open');
    let opened = 0;
    let paged = 0;
    const churn = async () => {
      for (let i = 0; i < 100; i++) {
        // From the very start of alice's changes (thousands), then gone.
        // What it reads counts against its query bytes (4 MiB here): once
        // they are spent, its streams catch up no further.
        // Its own address: the budget it spends is its own, not the next
        // test's (127.0.0.1).
        const s = openEventStream(streamUrl(alice, 0), {}, { localAddress: '127.0.0.51' });
        await s.until('a first page', () => s.changes().length > 0, 500).then(() => paged++, () => {});
        opened++;
        s.close();
      }
    };
    const attack = Promise.all([churn(), churn(), churn(), churn()]);
    for (let i = 0; i < 5; i++) {
      await create(`while attacked ${i}`, bob);
      assertEqual((await fetch(`${base()}/healthz`)).status, 200, 'health');
    }
    await watcher.until('every change of bob meanwhile', () => watcher.changes().length === 5);
    await attack;
    assertEqual(opened, 400, 'four hundred streams opened and dropped');
    assert(paged > 0 && paged < 400, `the client's query bytes bound what it read through streams (${paged} of 400 streams had a first page)`);
    // The dropped streams are found gone (at their next write) and forgotten.
    await waitFor('the dropped streams forgotten', async () => (await metric('bulleted_streams_open')) <= openBefore, 60000, 250);
    watcher.close();
  });

  await runner.test('one stream from the start reads no more than its client\'s query bytes, their refill and a page', async () => {
    // A client of its own (a full budget of 4 MiB, 70 KB a second back);
    // alice's changes are some 24 MB.
    const s = openEventStream(streamUrl(alice, 0), {}, { localAddress: '127.0.0.52' });
    await s.until('a first page', () => s.changes().length > 0);
    const started = performance.now();
    await sleep(5000);
    const seconds = (performance.now() - started) / 1000 + 1;
    const bytes = s.changes().reduce((sum, e) => sum + JSON.stringify(e.data).length, 0);
    s.close();
    const bound = (4 << 20) + seconds * ((4 << 20) / 60) + 256 * 1024;
    assert(bytes <= bound, `read ${bytes} bytes of changes in about ${seconds.toFixed(1)} s (at most ${Math.round(bound)})`);
    assert(s.changes().length < 3001, 'not the whole history');
  });

  await runner.test('shutdown ends every stream with ServerShutdown and a retry, then the server stops', async () => {
    const streams = [openEventStream(streamUrl(alice)), openEventStream(streamUrl(bob))];
    for (const s of streams) await s.until('open', startGiven);
    const exited = new Promise((resolve) => server.once('exit', (code) => resolve(code)));
    server.kill('SIGTERM');
    for (const s of streams) {
      assertEqual(await s.ended, 'end', 'ended by the server');
      const last = s.events.at(-1);
      assertEqual([last.event, last.data.name], ['info', 'ServerShutdown'], 'told');
      assert(last.retry >= 1000 && last.retry <= 5000, `retry ${last.retry}`);
    }
    assertEqual(await exited, 0, 'a clean exit');
  });

  await startServer({ streamsPerClient: 1000, maxStreams: 1000, connectionsPerAddress: 2000 }, 2);

  await runner.test('a thousand idle streams hold no worker and little memory; past maxStreams: 503 TooManyStreams', async () => {
    const before = rssKiB();
    const streams = [];
    try {
      for (let i = 0; i < 1000; i++) streams.push(openEventStream(streamUrl(i % 2 ? alice : bob)));
      await waitFor('a thousand open', async () => (await metric('bulleted_streams_open')) === 1000, 60000, 100);
      // Two workers, a thousand streams: requests are still answered.
      assertEqual((await query('getChanges', { repo: alice, latest: true })).status, 200, 'a query');
      assertEqual((await fetch(`${base()}/healthz`)).status, 200, 'health');
      const perStream = (rssKiB() - before) / 1000;
      if (!sanitized) assert(perStream <= 32, `${perStream.toFixed(1)} KiB of RSS per idle stream`);
      expectError(await query('streamChanges', { repo: alice }), 503, 'TooManyStreams');
      await create('to a thousand');
      for (const s of streams.filter((_, i) => i % 2)) await s.until('the change', () => s.changes().length === 1);
    } finally {
      for (const s of streams) s.close();
    }
    await waitFor('all closed', async () => (await metric('bulleted_streams_open')) === 0, 60000, 200);
  });
  await runner.test('through deploy/nginx.conf\'s location: events pass as they are written, and resume', async () => {
    const nginxPort = await freePort();
    const nginx = await startNginx(workdir, port, nginxPort);
    try {
      const url = `http://127.0.0.1:${nginxPort}/xrpc/app.bulleted.streamChanges?repo=${bob}`;
      const stream = openEventStream(url);
      await stream.until('the start', startGiven);
      await create('through the proxy', bob);
      await stream.until('the change, while the stream is open', () => stream.changes().length === 1);
      const seen = stream.lastId();
      stream.close();
      await create('while away from the proxy', bob);
      const again = openEventStream(url, { 'last-event-id': String(seen) });
      await again.until('resumed', () => again.changes().length === 1);
      assertEqual(again.changes()[0].data.node.text, 'while away from the proxy', 'exactly what came after');
      again.close();
    } finally {
      await stopProcess(nginx);
    }
  });
} finally {
  if (server) await stopProcess(server);
}
process.exit(runner.finish());
