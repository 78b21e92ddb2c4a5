// What an anonymous client could once do to the app view's memory and CPU,
// directly and through a real nginx with the shipped limits: a 52 MB body
// of nested brackets to importOutline (without and with a token), eight
// exports of a 60,000-node outline at once, four hostile 1.2 MB imports
// at once, and one client's hostile searches over four connections. Meanwhile /healthz is probed; its latencies and the app view's
// peak RSS (VmHWM, reset before each case) are printed as "figures:" lines,
// which docs/RELIABILITY.md records. Asserted: the structure (refusals
// before the body, exports streamed or refused with 429, health always
// answered), and peak RSS bounds on a Release build (sanitizer builds keep
// freed memory, so there the figures are only printed).
// Usage: ./node22 ../resource_abuse_e2e.mjs APPVIEW_BINARY WORKDIR   (from tests/e2e/pds)
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import { Runner, assert, assertEqual, freePort, sleep, startNginx, stopProcess, track, waitFor } from './lib.mjs';

const [binary, workdir] = process.argv.slice(2);
fs.mkdirSync(workdir, { recursive: true });
const runner = new Runner();
const sanitized = process.env.BULLETED_E2E_SANITIZED === '1';
const MB = 1024 * 1024;

// ---- an index with a large outline: 600 bullets of 100 children each
const db = path.join(workdir, 'resources.db');
const did = 'did:plc:resources';
const outlineFile = path.join(workdir, 'large.txt');
const lines = [];
for (let p = 0; p < 600; p++) {
  lines.push(`- parent ${p} with a line of ordinary length`);
  for (let c = 0; c < 100; c++) lines.push(`  - child ${c} of ${p}, with a little more text`);
}
fs.writeFileSync(outlineFile, lines.join('\n') + '\n');
execFileSync(binary, ['import', outlineFile, '--repo', did, '--db', db], { stdio: 'ignore' });
const token = execFileSync(binary, ['token', 'create', '--did', did, '--db', db], { encoding: 'utf8' }).trim();
// The hostile imports go to a repo of their own, so the exported one stays as it is.
const importer = 'did:plc:importer';
const importerToken = execFileSync(binary, ['token', 'create', '--did', importer, '--db', db], { encoding: 'utf8' }).trim();

const appPort = await freePort();
const appLog = fs.openSync(path.join(workdir, 'appview-resources.log'), 'a');
// nginx reaches the app view from 127.0.0.1; direct clients use 127.0.0.2 and up.
const app = track(spawn(binary, ['serve', '--db', db, '--port', String(appPort), '--threads', '4'],
  { stdio: ['ignore', appLog, appLog], env: { ...process.env, BULLETED_TRUSTED_PROXIES: '127.0.0.1' } }));
await waitFor('the app view', async () => (await fetch(`http://127.0.0.1:${appPort}/healthz`)).ok, 15000);
const nginxPort = await freePort();
const nginx = await startNginx(workdir, appPort, nginxPort);

function peakRssMb() {
  const status = fs.readFileSync(`/proc/${app.pid}/status`, 'utf8');
  return Number(/VmHWM:\s+(\d+) kB/.exec(status)[1]) / 1024;
}
function residentMb() {
  const status = fs.readFileSync(`/proc/${app.pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+) kB/.exec(status)[1]) / 1024;
}
// Resets the peak to what is resident now.
function resetPeak() { fs.writeFileSync(`/proc/${app.pid}/clear_refs`, '5'); }

// One request with a streamed body; resolves with the status and body text.
function send(port, { method = 'POST', path: target, headers = {}, body = null, from = '127.0.0.2', timeout = 120000 }) {
  return new Promise((resolve) => {
    const req = http.request({ host: '127.0.0.1', port, path: target, method, localAddress: from, agent: false,
      headers: body ? { ...headers, 'content-length': body.length } : headers, timeout });
    req.on('response', (res) => {
      const parts = [];
      res.on('data', (d) => parts.push(d));
      res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, text: Buffer.concat(parts).toString('utf8') }));
      res.on('error', () => resolve({ status: res.statusCode, headers: res.headers, text: Buffer.concat(parts).toString('utf8'), cut: true }));
    });
    req.on('timeout', () => { req.destroy(); resolve({ status: 0, text: 'timeout' }); });
    req.on('error', (e) => resolve({ status: 0, text: e.message }));
    if (!body) return req.end();
    let at = 0;
    const pump = () => {
      while (at < body.length) {
        const piece = body.subarray(at, at + 256 * 1024);
        at += piece.length;
        if (!req.write(piece)) return req.once('drain', pump);
      }
      req.end();
    };
    pump();
  });
}

// /healthz every 200 ms from its own address until stopped (under the rate
// deploy/ gives public operator paths).
function probeHealth(port) {
  const latencies = [];
  const statuses = [];
  let running = true;
  const done = (async () => {
    while (running) {
      const started = performance.now();
      const r = await send(port, { method: 'GET', path: '/healthz', from: '127.0.0.20', timeout: 60000 });
      latencies.push(performance.now() - started);
      statuses.push(r.status);
      await sleep(200);
    }
  })();
  return async () => {
    running = false;
    await done;
    latencies.sort((a, b) => a - b);
    const at = (q) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))];
    return { probes: latencies.length, statuses, p50: at(0.5), p99: at(0.99), max: latencies[latencies.length - 1] };
  };
}

const round = (x) => Math.round(x * 10) / 10;
function figures(name, values) {
  console.log(`figures: ${name} ${JSON.stringify(values, (k, v) => (typeof v === 'number' ? round(v) : v))}`);
}

// {"x": followed by 26 M '[' and 26 M ']': 52 MB, under maxImportBytes.
const brackets = Buffer.alloc(52_000_006, '[');
brackets.write('{"x":', 0);
brackets.fill(']', 5 + 26_000_000, 5 + 52_000_000);
brackets.write('}', 52_000_005);
const json = { 'content-type': 'application/json' };

const hostileImports = (() => {
  const notes = '- one bullet\n' + '  a note line\n'.repeat(92_000);
  const stray = '<opml><body><outline text="' + '&lt;b&gt;'.repeat(30_000) + 'x' + '&lt;/i&gt;'.repeat(100_000) + '"/></body></opml>';
  const lts = '<opml><body><outline text="' + '&lt;'.repeat(300_000) + '"/></body></opml>';
  const amps = '<opml><body><outline text="' + '&amp;amp'.repeat(130_000) + '"/></body></opml>';
  return [['text', notes], ['opml', stray], ['opml', lts], ['opml', amps]].map(([format, content]) =>
    Buffer.from(JSON.stringify({ repo: importer, format, content })));
})();

async function probes(port, label) {
  await runner.test(`${label}: a 52 MB body of brackets without a token is refused unread`, async () => {
    resetPeak();
    const before = residentMb();
    const r = await send(port, { path: '/xrpc/app.bulleted.importOutline', headers: json, body: brackets });
    const peak = peakRssMb();
    figures(`${label} unauthenticated-52MB`, { status: r.status, residentBeforeMb: before, peakMb: peak, riseMb: peak - before });
    assertEqual(r.status, 401, `refused for its missing token: ${r.text.slice(0, 200)}`);
    assertEqual(JSON.parse(r.text).error, 'AuthRequired', 'the error');
    assert(peak - before < 16, `peak RSS rose by ${round(peak - before)} MB for a body that was never read`);
  });

  await runner.test(`${label}: the same body with a token costs at most a small multiple of itself`, async () => {
    resetPeak();
    const before = residentMb();
    const r = await send(port, { path: '/xrpc/app.bulleted.importOutline', headers: { ...json, authorization: `Bearer ${token}` }, body: brackets });
    const peak = peakRssMb();
    figures(`${label} authenticated-52MB`, { status: r.status, residentBeforeMb: before, peakMb: peak, riseMb: peak - before });
    assertEqual(r.status, 400, `refused for its nesting: ${r.text.slice(0, 200)}`);
    assert(/nested deeper/.test(JSON.parse(r.text).message), 'the message names the depth limit');
    if (!sanitized) assert(peak - before < 3 * 52, `peak RSS rose by ${round(peak - before)} MB for a 52 MB body`);
  });

  await runner.test(`${label}: eight exports at once are streamed or refused, and health never waits`, async () => {
    resetPeak();
    const stop = probeHealth(port);
    await sleep(200);
    const exports = await Promise.all([...Array(8).keys()].map((i) => send(port, {
      method: 'GET', path: `/xrpc/app.bulleted.exportOutline?repo=${did}&format=opml`, from: `127.0.0.${2 + i}` })));
    const health = await stop();
    const statuses = exports.map((r) => r.status);
    figures(`${label} eight-exports`, { statuses, exportBytes: Math.max(...exports.map((r) => r.text.length)), peakMb: peakRssMb(), health: { ...health, statuses: undefined } });
    assert(health.statuses.every((s) => s === 200), `health answered ${JSON.stringify(health.statuses)}`);
    const complete = exports.filter((r) => r.status === 200);
    assert(complete.length >= 1, 'at least one export ran');
    for (const r of complete) {
      assert(r.text.endsWith('</opml>\n') && !r.cut, 'a whole document');
      assertEqual((r.text.match(/<outline /g) ?? []).length, 60_601, 'every node exported (and the import root)');
    }
    for (const r of exports.filter((x) => x.status !== 200)) {
      assertEqual(r.status, 429, `an export beyond the limit: ${r.text.slice(0, 200)}`);
      assert(Number(r.headers['retry-after']) > 0, 'with Retry-After');
    }
    // One client, eight exports: never more than one of its own at a time.
    const same = await Promise.all([...Array(8).keys()].map(() => send(port, {
      method: 'GET', path: `/xrpc/app.bulleted.exportOutline?repo=${did}&format=text`, from: '127.0.0.30' })));
    assert(same.every((r) => r.status === 200 || r.status === 429), `one client's exports: ${same.map((r) => r.status)}`);
    figures(`${label} one-client-eight-exports`, { statuses: same.map((r) => r.status) });
  });

  await runner.test(`${label}: four hostile 1.2 MB imports at once are parsed in linear time`, async () => {
    const stop = probeHealth(port);
    await sleep(200);
    const started = performance.now();
    const answers = await Promise.all(hostileImports.map((body) => send(port, {
      path: '/xrpc/app.bulleted.importOutline', headers: { ...json, authorization: `Bearer ${importerToken}` }, body })));
    const elapsed = performance.now() - started;
    const health = await stop();
    figures(`${label} four-hostile-imports`, { statuses: answers.map((r) => r.status), bodyBytes: hostileImports.map((b) => b.length), elapsedMs: elapsed, health: { ...health, statuses: undefined } });
    for (const r of answers) {
      assert(r.status === 200 || r.status === 400, `an import answer: ${r.status} ${r.text.slice(0, 200)}`);
      assert(typeof JSON.parse(r.text) === 'object', 'JSON');
    }
    assert(health.statuses.every((s) => s === 200), `health answered ${JSON.stringify(health.statuses)}`);
  });
}

// What one anonymous client can ask of search: a one-letter prefix, a word
// of 60,000 bullets, 15 ORs, a 512-byte phrase, each in every sort, four at
// a time from one address, while another address reads nodes and health is
// probed. Every answer is 200 (a page, maybe short, with a cursor) or 429
// with Retry-After; nothing else answers; memory stays near where it was.
async function hostileSearches(port) {
  await runner.test('one client\'s hostile searches over four connections: bounded pages or 429, others answered', async () => {
    const words = ['child', 'of', 'with', 'a', 'little', 'more', 'text', 'parent', 'line', 'ordinary', 'length', 'c', 'p', 'w', 'l'];
    const phrase = `"${'child of '.repeat(64)}`.slice(0, 511) + '"';
    const queries = ['c', 'child', words.join(' OR '), phrase, 'child -of', 'is:completed', 'created:52w child'];
    const asks = [];
    for (const q of queries) for (const sort of ['relevance', 'outline', 'recent']) asks.push({ q, sort });
    resetPeak();
    const before = residentMb();
    const stop = probeHealth(port);
    let reading = true;
    const reads = [];
    const reader = (async () => {
      while (reading) {
        const started = performance.now();
        const r = await send(port, { method: 'GET', path: `/xrpc/app.bulleted.getChildren?repo=${did}&limit=10`, from: '127.0.0.40' });
        reads.push({ status: r.status, ms: performance.now() - started });
      }
    })();
    const answers = [];
    for (let at = 0; at < asks.length; at += 4) {
      answers.push(...await Promise.all(asks.slice(at, at + 4).map(({ q, sort }) => send(port, {
        method: 'GET', path: `/xrpc/app.bulleted.searchNodes?repo=${did}&q=${encodeURIComponent(q)}&sort=${sort}&limit=100`,
        from: '127.0.0.41' }).then((r) => ({ ...r, q, sort })))));
    }
    reading = false;
    await reader;
    const health = await stop();
    const peak = peakRssMb();
    const readMs = reads.map((r) => r.ms).sort((a, b) => a - b);
    figures('hostile-searches', { statuses: answers.map((r) => r.status), readP99Ms: readMs[Math.floor(0.99 * readMs.length)],
      reads: reads.length, peakMb: peak, riseMb: peak - before, health: { ...health, statuses: undefined } });
    for (const r of answers) {
      assert(r.status === 200 || r.status === 429, `${r.sort} ${r.q.slice(0, 40)}: ${r.status} ${r.text.slice(0, 200)}`);
      if (r.status === 429) {
        assert(Number(r.headers['retry-after']) > 0, 'a refusal says when to retry');
        continue;
      }
      const page = JSON.parse(r.text);
      assert(page.results.length <= 100, 'at most the limit');
      assert(!page.cursor || page.cursor.length <= 512, 'a cursor of at most 512 bytes');
    }
    // Four at a time, with one searches' worker (a quarter of four): one
    // runs and the rest wait for it, so at least one of each four is
    // answered; getChildren meanwhile runs on the request workers.
    for (let at = 0; at < answers.length; at += 4) {
      assert(answers.slice(at, at + 4).some((r) => r.status === 200), `one of each four answered: ${answers.map((r) => r.status)}`);
    }
    assert(reads.every((r) => r.status === 200), `other reads answered: ${[...new Set(reads.map((r) => r.status))]}`);
    assert(health.statuses.every((s) => s === 200), `health answered ${JSON.stringify(health.statuses)}`);
    // Reading many rows fills the workers' page caches (4 connections of at
    // most 32 MiB each): a search holds nothing beyond them but its page.
    if (!sanitized) assert(peak - before < 4 * 32 + 32, `peak RSS rose by ${round(peak - before)} MB`);
    // A broad search pages on: every page moves, and the pages end.
    let cursor;
    let pages = 0;
    const seen = new Set();
    do {
      const r = await send(port, { method: 'GET', from: '127.0.0.42',
        path: `/xrpc/app.bulleted.searchNodes?repo=${did}&q=child&sort=outline&limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}` });
      if (r.status === 429) { await sleep(1000); continue; }
      assertEqual(r.status, 200, r.text.slice(0, 200));
      const page = JSON.parse(r.text);
      for (const n of page.results) {
        assert(!seen.has(n.node.rkey), 'no repeats');
        seen.add(n.node.rkey);
      }
      cursor = page.cursor;
      pages++;
    } while (cursor && seen.size < 1000);
    assert(seen.size >= 1000, `pages went on (${seen.size} results in ${pages} pages)`);
  });
}

// getOutline is public and its bounds are clamped, never refused: one
// client asking for the most it allows, zoomed anywhere, over four
// connections, gets bounded answers or 429; another address's reads and
// health are answered meanwhile.
async function outlineFlood(port) {
  await runner.test('one client\'s getOutline at its bounds over four connections: bounded answers or 429, others answered', async () => {
    const top = JSON.parse((await send(port, { method: 'GET', from: '127.0.0.43',
      path: `/xrpc/app.bulleted.getChildren?repo=${did}&limit=20` })).text).nodes.map((n) => n.rkey);
    const asks = [];
    for (let i = 0; i < 48; i++) {
      const node = i % 3 === 0 ? '' : `&node=${top[i % top.length]}`;
      asks.push(`/xrpc/app.bulleted.getOutline?did=${did}${node}&depth=${[99, 5, -1][i % 3]}&limit=${[100000, 100, 0][i % 3]}`);
    }
    const stop = probeHealth(port);
    let reading = true;
    const reads = [];
    const reader = (async () => {
      while (reading) {
        const r = await send(port, { method: 'GET', path: `/xrpc/app.bulleted.getNode?repo=${did}&rkey=${top[0]}`, from: '127.0.0.44' });
        reads.push(r.status);
      }
    })();
    const answers = [];
    for (let at = 0; at < asks.length; at += 4) {
      answers.push(...await Promise.all(asks.slice(at, at + 4).map((p) => send(port, { method: 'GET', path: p, from: '127.0.0.45' }))));
    }
    reading = false;
    await reader;
    const health = await stop();
    let served = 0;
    for (const r of answers) {
      assert(r.status === 200 || r.status === 429, `getOutline: ${r.status} ${r.text.slice(0, 200)}`);
      if (r.status === 429) {
        assert(Number(r.headers['retry-after']) > 0, 'a refusal says when to retry');
        continue;
      }
      served++;
      const answer = JSON.parse(r.text);
      assert(answer.nodes.length <= 100, `at most 100 rows (${answer.nodes.length})`);
      assert(r.text.length <= 1024 * 1024 + 64 * 1024, `within the answer bound (${r.text.length} bytes)`);
      assertEqual(answer.truncated, answer.stop !== 'complete', 'truncated says whether stop is complete');
    }
    assert(served > 0, 'some were answered');
    assert(reads.every((s) => s === 200), `other reads answered: ${[...new Set(reads)]}`);
    assert(health.statuses.every((s) => s === 200), `health answered ${JSON.stringify(health.statuses)}`);
  });
}

// A search's cursor is bound to its q, sort and root by a digest anyone
// can compute (64-bit FNV-1a, search_run.cpp). Forged cursors of every
// kind with any numbers, for a search and a zoomed one, are pages of their
// own search (a zoomed one's results under its root) or 400; never a 5xx.
function searchDigest(q, sort, root) {
  const prime = 1099511628211n;
  const mask = (1n << 64n) - 1n;
  let h = 1469598103934665603n;
  for (const part of [q, sort, root ?? '']) {
    for (const b of Buffer.from(part, 'utf8')) h = ((h ^ BigInt(b)) * prime) & mask;
    h = ((h ^ 0xFFn) * prime) & mask;
  }
  return h;
}

async function forgedCursors(port) {
  await runner.test('forged search cursors of every kind: a page of their own search or 400', async () => {
    const search = async (q, sort, root, cursor) => {
      const path = `/xrpc/app.bulleted.searchNodes?repo=${did}&q=${encodeURIComponent(q)}&sort=${sort}` +
        `&limit=20${root ? `&root=${root}` : ''}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
      for (;;) {
        const r = await send(port, { method: 'GET', path, from: '127.0.0.43' });
        if (r.status !== 429) return r;
        await sleep(1000);
      }
    };
    // The second of the import's parents: the first rows (1, 3) are outside it.
    const children = async (parent) => JSON.parse((await send(port, { method: 'GET', from: '127.0.0.43',
      path: `/xrpc/app.bulleted.getChildren?repo=${did}&limit=2${parent ? `&parent=${parent}` : ''}` })).text).nodes;
    const top = (await children((await children(null))[0].rkey))[1].rkey;
    // The digest is the server's: a real cursor carries it.
    const real = JSON.parse((await search('child', 'recent', null, null)).text).cursor;
    assert(real, 'a broad search has a cursor');
    const plain = Buffer.from(real, 'base64url').toString();
    assertEqual(plain.split('.').pop(), String(searchDigest('child', 'recent', null)), `digest of ${plain}`);
    const statuses = {};
    for (const root of [null, top]) {
      for (const sort of ['relevance', 'outline', 'recent']) {
        const digest = searchDigest('child', sort, root);
        for (const kind of 'cwtosv') {
          for (const a of ['0', '1', '3', '4611686018427387904']) {
            for (const b of ['0', '3', '9223372036854775807']) {
              const cursor = Buffer.from(`${kind}.${a}.${b}.${b}.${digest}`).toString('base64url');
              const r = await search('child', sort, root, cursor);
              statuses[r.status] = (statuses[r.status] ?? 0) + 1;
              assert(r.status === 200 || r.status === 400, `${kind}.${a}.${b} ${sort} ${root}: ${r.status} ${r.text.slice(0, 200)}`);
              if (r.status === 400) {
                assertEqual(JSON.parse(r.text).error, 'InvalidRequest', r.text);
                continue;
              }
              for (const hit of JSON.parse(r.text).results) {
                assert(/child/i.test(hit.node.text), `a match: ${hit.node.text.slice(0, 60)}`);
                if (root) assert(hit.ancestors.some((x) => x.rkey === root), `${kind}.${a}.${b} ${sort}: under the root`);
              }
            }
          }
        }
      }
    }
    figures('forged-cursors', { statuses });
    assert(statuses[200] > 0 && statuses[400] > 0, `both pages and refusals: ${JSON.stringify(statuses)}`);
  });
}

// Issue 57's shapes against change streams and search, each from
// addresses of their own: streams replaced while their client reads
// nothing, one address's catch-up from the start, and one address's broad
// searches beside another's.
async function streamsAndSearches(port) {
  const metric = async (name) => {
    const text = (await send(port, { method: 'GET', path: '/metrics', from: '127.0.0.1' })).text;
    const line = text.split('\n').find((l) => l.startsWith(`${name} `));
    return line === undefined ? NaN : Number(line.slice(name.length + 1));
  };
  const streamHead = `GET /xrpc/app.bulleted.streamChanges?repo=${did}&cursor=0 HTTP/1.1\r\nHost: x\r\nAccept: text/event-stream\r\n\r\n`;

  await runner.test('rounds of replaced streams whose client reads nothing are all closed; memory stays near', async () => {
    const openBefore = await metric('bulleted_http_connections');
    const before = residentMb();
    const sockets = [];
    for (let r = 0; r < 10; r++) {
      for (let i = 0; i < 8; i++) {
        const socket = net.connect({ host: '127.0.0.1', port, localAddress: '127.0.0.60' }, () => {
          socket.write(streamHead);
          socket.pause();  // reads nothing, ever
        });
        socket.on('error', () => {});
        sockets.push(socket);
      }
      await sleep(300);
    }
    try {
      // The replaced ones are cut off at once or within the read timeout;
      // the last eight, never read, are closed as stalled.
      await waitFor('the unread streams closed', async () =>
        (await metric('bulleted_http_connections')) <= openBefore + 2, 120000, 500);
      const rise = residentMb() - before;
      figures('replaced-unread-streams', { opened: sockets.length, riseMb: rise });
      if (!sanitized) assert(rise < 64, `resident memory rose by ${round(rise)} MB`);
    } finally {
      sockets.forEach((s) => s.destroy());
    }
  });

  await runner.test('eight streams from the start read no more than their address\'s query bytes, their refill and a page each', async () => {
    let bytes = 0;
    const requests = [];
    for (let i = 0; i < 8; i++) {
      requests.push(http.get({ host: '127.0.0.1', port, localAddress: '127.0.0.61', agent: false,
        path: `/xrpc/app.bulleted.streamChanges?repo=${did}&cursor=0`, headers: { accept: 'text/event-stream' } }, (response) => {
        response.on('data', (d) => { bytes += d.length; });
        response.on('error', () => {});
      }).on('error', () => {}));
    }
    const started = performance.now();
    await sleep(10000);
    const seconds = (performance.now() - started) / 1000 + 2;
    requests.forEach((r) => r.destroy());
    // limits.queryBytesPerMinute's default: 64 MiB a minute. The outline's
    // history is some 20 MB: eight streams of it are more than that.
    const bound = 64 * MB + seconds * (64 * MB / 60) + 8 * 256 * 1024;
    figures('streams-from-the-start', { bytes, bound });
    assert(bytes <= bound, `read ${bytes} bytes in about ${round(seconds)} s (at most ${Math.round(bound)})`);
  });

  await runner.test('one address\'s broad searches on six connections leave search to another address', async () => {
    let running = true;
    const statuses = {};
    const attackers = Array.from({ length: 6 }, async (_, i) => {
      for (let n = 0; running; n++) {
        const q = ['c', 'p', 'child c', 'l', 'w'][(n + i) % 5];
        const sort = ['relevance', 'outline', 'recent'][n % 3];
        const r = await send(port, { method: 'GET', from: '127.0.0.62',
          path: `/xrpc/app.bulleted.searchNodes?repo=${did}&q=${encodeURIComponent(q)}&sort=${sort}&limit=100` });
        statuses[r.status] = (statuses[r.status] ?? 0) + 1;
        if (r.status === 429) await sleep(20);
      }
    });
    const answers = [];
    try {
      await sleep(500);
      for (let i = 0; i < 20; i++) {
        answers.push(await send(port, { method: 'GET', from: '127.0.0.63',
          path: `/xrpc/app.bulleted.searchNodes?repo=${did}&q=${encodeURIComponent('"parent 599"')}` }));
      }
    } finally {
      running = false;
      await Promise.all(attackers);
    }
    figures('broad-searches-beside-another', { attacker: statuses, other: answers.map((r) => r.status) });
    assert(statuses[200] > 0 && statuses[429] > 0, `the attacker was answered and refused: ${JSON.stringify(statuses)}`);
    for (const r of answers) {
      assertEqual(r.status, 200, `another address's search: ${r.text.slice(0, 200)}`);
      assertEqual(JSON.parse(r.text).results.map((x) => x.node.text), ['parent 599 with a line of ordinary length'], 'its one match');
    }
  });
}

try {
  await streamsAndSearches(appPort);
  await hostileSearches(appPort);
  await forgedCursors(appPort);
  await outlineFlood(appPort);
  await probes(appPort, 'directly');
  await probes(nginxPort, 'through nginx');
  await runner.test('the app view stayed up throughout', async () => {
    assertEqual(app.exitCode, null, 'still running');
    assertEqual((await fetch(`http://127.0.0.1:${appPort}/healthz`)).status, 200, 'healthy');
  });
} finally {
  await stopProcess(nginx, 'SIGQUIT');
  await stopProcess(app);
}
process.exit(runner.finish());
