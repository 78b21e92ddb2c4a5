// Change streams under load (docs/BENCHMARKS.md, "Live changes"): N
// streams over loopback from source addresses spread across 127.0.0.0/8,
// on repos with 1, 10 and up to 1,000 subscribers, while changes are
// committed at RATE a second (createNode, a third to each kind of repo):
// delivery latency from the writer receiving its answer to each stream
// receiving the event, server CPU per delivered event (/proc), RSS per idle
// stream, health meanwhile; then, with the streams closed, the same N
// clients polling getChanges every 2 s under the same writes: requests a
// second, server CPU and the latency a user sees. With --stall K, K of the
// largest repo's streams stop reading for a while (RSS and closes).
// --spread repos (the default) gives every written repo the same share of
// the writes (71 repos: the largest gets 1/71); --spread kinds gives each
// kind of repo a third (the largest alone a third: a fan-out stress).
// Usage: node stream_load.mjs --binary B --workdir D [--streams N] [--seconds S] [--rate R] [--stall K]
//        [--poll 0|1] [--spread repos|kinds]
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';

const args = Object.fromEntries(process.argv.slice(2).reduce((pairs, a, i, all) =>
  (a.startsWith('--') ? [...pairs, [a.slice(2), all[i + 1]]] : pairs), []));
const binary = args.binary;
const workdir = args.workdir;
const N = Number(args.streams ?? 1000);
const seconds = Number(args.seconds ?? 30);
const rate = Number(args.rate ?? 200);
const stall = Number(args.stall ?? 0);
const poll = (args.poll ?? '1') === '1';
const spread = args.spread ?? 'repos';
fs.mkdirSync(workdir, { recursive: true });
const dbPath = path.join(workdir, 'streams.db');
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const now = () => performance.now();

// The repos and their subscribers: one with min(1000, N/2), a quarter of N
// in repos of ten, the rest in repos of one.
const big = Math.min(1000, Math.floor(N / 2));
const tens = Math.floor(N / 4 / 10);
const ones = N - big - tens * 10;
const did = (kind, i) => `did:plc:bench${kind}${String(i).padStart(8, '0')}`.slice(0, 32);
const subscriptions = [];  // [repo, kind]
for (let i = 0; i < big; i++) subscriptions.push([did('big', 0), 'big']);
for (let r = 0; r < tens; r++) for (let i = 0; i < 10; i++) subscriptions.push([did('ten', r), 'ten']);
for (let r = 0; r < ones; r++) subscriptions.push([did('one', r), 'one']);
const written = { big: [did('big', 0)], ten: Array.from({ length: Math.min(tens, 20) }, (_, r) => did('ten', r)),
  one: Array.from({ length: Math.min(ones, 50) }, (_, r) => did('one', r)) };
const subscribersOf = { big, ten: 10, one: 1 };

// ---- the server
const tokens = new Map();
for (const repo of [...written.big, ...written.ten, ...written.one]) {
  tokens.set(repo, execFileSync(binary, ['token', 'create', '--did', repo, '--db', dbPath], { encoding: 'utf8' }).trim());
}
const port = 20000 + Math.floor(Math.random() * 20000);
const config = path.join(workdir, 'config.json');
fs.writeFileSync(config, JSON.stringify({ limits: { maxStreams: N + 64 } }));
const log = fs.openSync(path.join(workdir, 'appview.log'), 'a');
const server = spawn(binary, ['serve', '--config', config, '--db', dbPath, '--port', String(port)],
  { stdio: ['ignore', log, log], env: { ...process.env, BULLETED_PROCEDURE_RATE: '0', BULLETED_QUERY_BYTES: '0' } });
const base = `http://127.0.0.1:${port}`;
for (let i = 0; i < 150; i++) {
  if (await fetch(`${base}/healthz`).then((r) => r.ok, () => false)) break;
  await sleep(100);
}
const ticks = 100;  // USER_HZ
const cpu = () => {
  const fields = fs.readFileSync(`/proc/${server.pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(fields[11]) + Number(fields[12])) / ticks;
};
const rssKiB = () => Number(/VmRSS:\s+(\d+)/.exec(fs.readFileSync(`/proc/${server.pid}/status`, 'utf8'))[1]);
async function metric(name) {
  const text = await (await fetch(`${base}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(`${name} `));
  return line ? Number(line.split(' ')[1]) : 0;
}
const address = (i) => `127.${20 + (i >> 16)}.${(i >> 8) & 255}.${(i & 255) || 1}`;

// ---- latency: writes' answers and events' arrivals, in 0.1 ms bins
class Latency {
  constructor() { this.bins = new Uint32Array(600001); this.count = 0; this.max = 0; }
  add(ms) {
    const v = Math.max(0, ms);
    this.bins[Math.min(600000, Math.round(v * 10))]++;
    this.count++;
    this.max = Math.max(this.max, v);
  }
  at(q) {
    let seen = 0;
    const want = q * this.count;
    for (let i = 0; i < this.bins.length; i++) {
      seen += this.bins[i];
      if (seen >= want) return i / 10;
    }
    return this.max;
  }
  summary() {
    return { deliveries: this.count, p50_ms: this.at(0.5), p99_ms: this.at(0.99), max_ms: Math.round(this.max * 10) / 10 };
  }
}
let latency = { big: new Latency(), ten: new Latency(), one: new Latency() };
const answered = new Map();  // rkey -> {at, kind}
const early = new Map();     // rkey -> arrival times before the writer had its answer
function arrived(rkey, kind) {
  const t = now();
  const sent = answered.get(rkey);
  if (sent) latency[sent.kind].add(t - sent.at);
  else if (early.has(rkey)) early.get(rkey).push(t);
  else early.set(rkey, [t]);
}

// ---- writes at `rate` a second, a third to each kind of repo
const writer = new http.Agent({ keepAlive: true, maxSockets: 32 });
function write(kind, repo, n, pad = '') {
  const body = JSON.stringify({ repo, text: `load ${n}${pad}` });
  const request = http.request(`${base}/xrpc/app.bulleted.createNode`, { method: 'POST', agent: writer,
    headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body),
      authorization: `Bearer ${tokens.get(repo)}` } }, (response) => {
    let text = '';
    response.setEncoding('utf8');
    response.on('data', (c) => { text += c; });
    response.on('end', () => {
      const t = now();
      if (response.statusCode !== 200) { errors.writes++; return; }
      const { rkey } = JSON.parse(text);
      answered.set(rkey, { at: t, kind });
      for (const a of early.get(rkey) ?? []) latency[kind].add(a - t);
      early.delete(rkey);
    });
  });
  request.on('error', () => { errors.writes++; });
  request.end(body);
}
const errors = { writes: 0, streams: 0, polls: 0 };
const targets = [...written.big.map((r) => ['big', r]), ...written.ten.map((r) => ['ten', r]),
  ...written.one.map((r) => ['one', r])];
// `only`: every write to the largest repo, each text padded to `pad` bytes.
async function writeFor(ms, { only = null, pad = 0 } = {}) {
  const padding = pad > 0 ? ` ${'x'.repeat(pad)}` : '';
  const kinds = ['big', 'ten', 'one'];
  const started = now();
  let n = 0;
  while (now() - started < ms) {
    const due = Math.floor(((now() - started) / 1000) * rate);
    while (n < due) {
      if (only) {
        write(only, written[only][0], n, padding);
      } else if (spread === 'kinds') {
        const kind = kinds[n % 3];
        const list = written[kind];
        if (list.length > 0) write(kind, list[Math.floor(n / 3) % list.length], n);
      } else {
        const [kind, repo] = targets[n % targets.length];
        write(kind, repo, n);
      }
      n++;
    }
    await sleep(5);
  }
  await sleep(2000);  // the last answers and events
  return n;
}

// ---- N streams
const streams = [];
function openStream(i, [repo, kind]) {
  return new Promise((resolve) => {
    const request = http.get(`${base}/xrpc/app.bulleted.streamChanges?repo=${repo}`,
      { agent: false, localAddress: address(i), headers: { accept: 'text/event-stream' } }, (response) => {
        response.setEncoding('utf8');
        let buffer = '';
        let started = false;
        const s = { response, kind, paused: false };
        streams.push(s);
        response.on('data', (chunk) => {
          buffer += chunk;
          const end = buffer.lastIndexOf('\n\n');
          if (end < 0) return;
          const complete = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          if (!started) { started = true; resolve(); }
          for (const m of complete.matchAll(/event: change\ndata: \{"op":"(?:upsert|delete)","rkey":"([^"]+)"/g)) arrived(m[1], kind);
        });
        response.on('error', () => { errors.streams++; });
        response.on('end', () => { if (!started) resolve(); });
      });
    request.on('error', () => { errors.streams++; resolve(); });
  });
}
async function health() {
  const times = [];
  for (let i = 0; i < 20; i++) {
    const t = now();
    await fetch(`${base}/healthz`);
    times.push(now() - t);
    await sleep(50);
  }
  return Math.round(Math.max(...times) * 10) / 10;
}

const result = { streams: N, subscribers: { big, ten: tens * 10, one: ones }, rate, seconds, spread };
await sleep(1000);
const rssBefore = rssKiB();
const openStarted = now();
for (let i = 0; i < subscriptions.length; i += 500) {
  await Promise.all(subscriptions.slice(i, i + 500).map((sub, j) => openStream(i + j, sub)));
}
result.open_seconds = Math.round((now() - openStarted) / 100) / 10;
result.open = await metric('bulleted_streams_open');
await sleep(5000);
result.rss_idle_kib_per_stream = Math.round(((rssKiB() - rssBefore) / N) * 10) / 10;
result.rss_before_mib = Math.round(rssBefore / 1024);
result.health_max_ms_idle = await health();

// Streams under writes.
let cpu0 = cpu();
let client0 = process.cpuUsage();
let events0 = await metric('bulleted_stream_events_total');
const healthDuring = health();
const writes = await writeFor(seconds * 1000);
let cpu1 = cpu();
let events1 = await metric('bulleted_stream_events_total');
// The server's own view: from a commit's notice to the event written.
const deliveryText = await (await fetch(`${base}/metrics`)).text();
const buckets = [...deliveryText.matchAll(/bulleted_stream_delivery_seconds_bucket\{le="([^"]+)"\} (\d+)/g)]
  .map((m) => [m[1], Number(m[2])]);
result.stream = {
  writes, events: events1 - events0, errors: { ...errors },
  cpu_seconds: Math.round((cpu1 - cpu0) * 100) / 100,
  load_program_cpu_seconds: Math.round(((process.cpuUsage(client0).user + process.cpuUsage(client0).system) / 1e6) * 100) / 100,
  cpu_us_per_event: Math.round(((cpu1 - cpu0) / Math.max(1, events1 - events0)) * 1e6 * 10) / 10,
  health_max_ms: await healthDuring,
  latency: { big: latency.big.summary(), ten: latency.ten.summary(), one: latency.one.summary() },
  rss_mib: Math.round(rssKiB() / 1024),
  // Share of events written within each bound after their commit's notice.
  server_notice_to_write: Object.fromEntries(buckets.filter(([le]) => ['0.01', '0.05', '0.1', '0.25'].includes(le))
    .map(([le, n]) => [`<=${le}s`, Math.round((n / Math.max(1, buckets.at(-1)[1])) * 10000) / 10000])),
};

if (stall > 0) {
  // K of the largest repo's streams stop reading while it gets every write,
  // 4 KB each (past the kernel's socket buffers within seconds), for longer
  // than limits.streamStallSeconds.
  const quiet = streams.filter((s) => s.kind === 'big').slice(0, stall);
  for (const s of quiet) { s.response.pause(); s.response.socket.pause(); }
  const rss0 = rssKiB();
  latency = { big: new Latency(), ten: new Latency(), one: new Latency() };
  await writeFor(45000, { only: 'big', pad: 4000 });
  result.stall = {
    stopped_reading: quiet.length, rss_before_mib: Math.round(rss0 / 1024), rss_after_mib: Math.round(rssKiB() / 1024),
    closed_stalled: await metric('bulleted_streams_closed_total{reason="stalled"}'),
    readers_latency_big: latency.big.summary(),
  };
}
for (const s of streams) s.response.destroy();

if (poll) {
  // The same N clients polling getChanges every 2 s, under the same writes.
  latency = { big: new Latency(), ten: new Latency(), one: new Latency() };
  answered.clear();
  early.clear();
  let requests = 0;
  const pollers = [];
  let stop = false;
  async function pollLoop(i, [repo, kind]) {
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1, localAddress: address(i) });
    const get = (query) => new Promise((resolve) => {
      http.get(`${base}/xrpc/app.bulleted.getChanges?${query}`, { agent }, (response) => {
        let text = '';
        response.setEncoding('utf8');
        response.on('data', (c) => { text += c; });
        response.on('end', () => resolve(response.statusCode === 200 ? JSON.parse(text) : null));
      }).on('error', () => resolve(null));
    });
    await sleep(Math.random() * 2000);
    let cursor = (await get(`repo=${repo}&latest=true`))?.cursor;
    while (!stop) {
      const t = now();
      const page = await get(`repo=${repo}&limit=100${cursor ? `&cursor=${cursor}` : ''}`);
      requests++;
      if (page) {
        for (const c of page.changes) arrived(c.rkey, kind);
        cursor = page.cursor;
      } else {
        errors.polls++;
      }
      await sleep(Math.max(0, 2000 - (now() - t)));
    }
    agent.destroy();
  }
  for (let i = 0; i < subscriptions.length; i++) pollers.push(pollLoop(i, subscriptions[i]));
  await sleep(4000);  // every poller has started
  cpu0 = cpu();
  const requests0 = requests;
  const t0 = now();
  const pollHealth = health();
  const pollWrites = await writeFor(seconds * 1000);
  cpu1 = cpu();
  const elapsed = (now() - t0) / 1000;
  result.poll = {
    writes: pollWrites, requests_per_second: Math.round((requests - requests0) / elapsed),
    cpu_seconds: Math.round((cpu1 - cpu0) * 100) / 100, cpu_share: Math.round(((cpu1 - cpu0) / elapsed) * 100) / 100,
    health_max_ms: await pollHealth, errors: errors.polls,
    latency: { big: latency.big.summary(), ten: latency.ten.summary(), one: latency.one.summary() },
  };
  stop = true;
  await Promise.all(pollers);
}

server.kill('SIGTERM');
console.log(JSON.stringify(result, null, 2));
process.exit(0);
