// Mixed-load soak: readers, writers and firehose ingest at once against one
// `bulleted-appview serve` (local mode) for a given time. Reports throughput
// and latency percentiles per kind of request, ingest progress, and the
// server's memory (RSS) over time, so growth shows.
// Usage: ./node22 ../soak.mjs APPVIEW_BINARY WORKDIR SECONDS   (scripts/soak.sh runs it)
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { freePort, generatedFrames, sleep, startDidDirectory, stopProcess, track, waitFor } from './lib.mjs';

const require = createRequire(import.meta.url);
const { WebSocketServer } = require('./pds/node_modules/ws');

const [binary, workdir, secondsArg] = process.argv.slice(2);
const seconds = Number(secondsArg ?? 600);
fs.mkdirSync(workdir, { recursive: true });
const db = path.join(workdir, 'soak.db');
const did = 'did:plc:soak';
const token = execFileSync(binary, ['token', 'create', '--did', did, '--db', db], { encoding: 'utf8' }).trim();

// Ingest: a relay pacing generated commits at 20 a second for the whole run.
const framesFile = path.join(workdir, 'frames.bin');
const commits = Math.max(1000, seconds * 20);
const frames = generatedFrames(binary, framesFile, commits);
// The commits are signed; their repos' keys are served as DID documents.
const directory = await startDidDirectory(`${framesFile}.keys.json`);
const relayPort = await freePort();
const relay = new WebSocketServer({ host: '127.0.0.1', port: relayPort });
relay.on('connection', (socket, request) => {
  let next = Number(new URL(request.url, 'http://x').searchParams.get('cursor') ?? 0);
  const timer = setInterval(() => {
    if (socket.readyState !== 1 || next >= frames.length) return;
    socket.send(frames[next++], { binary: true });
  }, 50);
  socket.on('close', () => clearInterval(timer));
});

const port = await freePort();
const log = fs.openSync(path.join(workdir, 'serve.log'), 'a');
const server = track(spawn(binary, ['serve', '--db', db, '--port', String(port), '--threads', '4',
  '--firehose', `ws://127.0.0.1:${relayPort}`, '--plc', directory.url, '--log-level', 'warn'],
  // Per-client limits off: every request here comes from one address, and
  // the soak measures serving, not refusing.
  { stdio: ['ignore', log, log], env: { ...process.env, BULLETED_PROCEDURE_RATE: '0', BULLETED_QUERY_BYTES: '0' } }));
const base = `http://127.0.0.1:${port}`;
await waitFor('the server', async () => (await fetch(`${base}/healthz`)).ok, 15000);

// Resident memory in MiB: all of it, the process's own (heap, stacks:
// RssAnon), and pages of mapped files (the index, read through SQLite's
// mmap, and its WAL index: RssFile + RssShmem), which the kernel can drop.
const rss = () => {
  const status = fs.readFileSync(`/proc/${server.pid}/status`, 'utf8');
  const mib = (field) => Math.round(Number(new RegExp(`${field}:\\s+(\\d+)`).exec(status)[1]) / 102.4) / 10;
  return { rss: mib('VmRSS'), anon: mib('RssAnon'), file: mib('RssFile') + mib('RssShmem') };
};
const latencies = {};
const errors = {};
const refused = {};
async function timed(kind, request) {
  const started = performance.now();
  try {
    const res = await request();
    await res.arrayBuffer();
    if (res.status >= 500) errors[kind] = (errors[kind] ?? 0) + 1;
    if (res.status === 429) refused[kind] = (refused[kind] ?? 0) + 1;
  } catch {
    errors[kind] = (errors[kind] ?? 0) + 1;
  }
  (latencies[kind] ??= []).push(performance.now() - started);
}
const post = (method, body) => fetch(`${base}/xrpc/app.bulleted.${method}`, {
  method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
  body: JSON.stringify({ repo: did, ...body }) });

// A few parents to write under; writers append, insert and move.
const parents = [];
for (let i = 0; i < 10; i++) parents.push((await (await post('createNode', { text: `parent ${i}` })).json()).rkey);
const children = [];
const deadline = Date.now() + seconds * 1000;
const pick = (list) => list[Math.floor(Math.random() * list.length)];

async function writer() {
  while (Date.now() < deadline) {
    const roll = Math.random();
    if (roll < 0.6 || children.length < 20) {
      await timed('createNode', async () => {
        const res = await post('createNode', { parentRkey: pick(parents), text: 'soak', position: Math.random() < 0.5 ? 'last' : 0 });
        if (res.status === 200) { const json = await res.clone().json(); children.push(json.rkey); }
        return res;
      });
    } else if (roll < 0.85) {
      await timed('moveNode', () => post('moveNode', { rkey: pick(children), parentRkey: pick(parents), position: 'first' }));
    } else {
      await timed('updateNode', () => post('updateNode', { rkey: pick(children), text: `edited ${Date.now()}` }));
    }
  }
}
async function reader() {
  while (Date.now() < deadline) {
    if (Math.random() < 0.5) {
      await timed('getChildren', () => fetch(`${base}/xrpc/app.bulleted.getChildren?repo=${did}&parent=${pick(parents)}&limit=100`));
    } else if (children.length > 0) {
      await timed('getNode', () => fetch(`${base}/xrpc/app.bulleted.getNode?repo=${did}&rkey=${pick(children)}`));
    } else {
      await sleep(10);
    }
  }
}

const memory = [];
const sampler = setInterval(() => memory.push({ t: Math.round((Date.now() - (deadline - seconds * 1000)) / 1000), ...rss() }), 10000);
memory.push({ t: 0, ...rss() });
const started = Date.now();
await Promise.all([writer(), writer(), reader(), reader(), reader(), reader()]);
clearInterval(sampler);
memory.push({ t: Math.round((Date.now() - started) / 1000), ...rss() });
const metrics = await (await fetch(`${base}/metrics`)).text();
const lastSeq = Number(/^bulleted_firehose_last_seq (\S+)$/m.exec(metrics)?.[1] ?? -1);
const opsApplied = Number(/^bulleted_firehose_ops_applied_total (\S+)$/m.exec(metrics)?.[1] ?? 0);
await stopProcess(server);
relay.close();
directory.close();

const elapsed = (Date.now() - started) / 1000;
const percentile = (values, p) => values.sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor(values.length * p))];
const report = { seconds: Math.round(elapsed), requests: {}, ingest: { commitsSent: Math.min(commits, lastSeq), lastSeq, opsApplied }, memory };
for (const [kind, values] of Object.entries(latencies)) {
  report.requests[kind] = {
    count: values.length, perSecond: Math.round(values.length / elapsed),
    p50ms: +percentile(values, 0.5).toFixed(2), p99ms: +percentile(values, 0.99).toFixed(2),
    maxMs: +values.reduce((a, b) => Math.max(a, b), 0).toFixed(2), errors5xx: errors[kind] ?? 0,
    refused429: refused[kind] ?? 0,
  };
}
const warm = memory.find((m) => m.t >= Math.min(120, seconds / 5)) ?? memory[0];
report.memoryGrowthAfterWarmupMiB = {
  rss: +(memory.at(-1).rss - warm.rss).toFixed(1),
  anon: +(memory.at(-1).anon - warm.anon).toFixed(1),
  anonPeakAfterWarmup: Math.max(...memory.filter((m) => m.t >= warm.t).map((m) => m.anon)),
};
console.log(JSON.stringify(report, null, 1));
const failed = Object.values(errors).concat(Object.values(refused)).some((n) => n > 0);
if (opsApplied === 0) console.error('no ingested op was applied: every commit was refused or skipped');
process.exit(failed || opsApplied === 0 ? 1 : 0);
