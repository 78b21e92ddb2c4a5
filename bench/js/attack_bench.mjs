// What other users' requests cost while one anonymous client attacks
// (docs/BENCHMARKS.md, "Beside each attack"): the app view serves a
// 60,600-bullet outline (pds mode, 4 workers, in namespaces of its own with
// the end-to-end tests' stand-in DNS, which never answers *.slow.test);
// two users, each from an
// address of its own, ask getNode and a normal search (a rare word) one
// after the other for SECONDS each, first alone, then beside each attack,
// in one run. Each attacker has an address of its own (or four). Prints
// one line a case: p50 / p99 / slowest of each user's requests in ms, how
// many were answered and how many not with 200, and what the attack did.
// The users' requests are paced (200 a second each), so what is measured
// is their latency, not how many the host can answer.
// Usage: node attack_bench.mjs --binary B --workdir W [--seconds S] [--only REGEX]
import { execFileSync, spawn } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import { reenterInNamespaces, startNameServer } from '../../tests/e2e/lib.mjs';

const args = Object.fromEntries(process.argv.slice(2).reduce((pairs, a, i, all) =>
  (a.startsWith('--') ? [...pairs, [a.slice(2), all[i + 1]]] : pairs), []));
const binary = path.resolve(args.binary);
const workdir = path.resolve(args.workdir);
const seconds = Number(args.seconds ?? 8);
const only = new RegExp(args.only ?? '.');
fs.mkdirSync(workdir, { recursive: true });
reenterInNamespaces(process.argv[1], process.argv.slice(2), workdir);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// ---- the outline: 600 bullets of 100 children, a rare word in 6 of them
const db = path.join(workdir, 'attack.db');
const did = 'did:plc:attackbench';
const lines = [];
for (let p = 0; p < 600; p++) {
  lines.push(`- parent ${p} with a line of ordinary length`);
  for (let c = 0; c < 100; c++) {
    lines.push(`  - child ${c} of ${p}, with a little more text${c === 50 && p % 100 === 0 ? ' and a zebra' : ''}`);
  }
}
fs.writeFileSync(path.join(workdir, 'outline.txt'), lines.join('\n') + '\n');
execFileSync(binary, ['import', path.join(workdir, 'outline.txt'), '--repo', did, '--db', db], { stdio: 'ignore' });
const port = 20000 + Math.floor(Math.random() * 20000);
const log = fs.openSync(path.join(workdir, 'appview.log'), 'a');
const names = await startNameServer();
const SERVICE_DID = 'did:web:appview.bulleted.internal';
const app = spawn(binary, ['serve', '--mode', 'pds', '--plc', 'http://plc.fast.test:9', '--db', db, '--port', String(port),
  '--threads', '4', '--public-url', `http://127.0.0.1:${port}`], { stdio: ['ignore', log, log],
  env: { ...process.env, BULLETED_SERVICE_DID: SERVICE_DID, BULLETED_SESSION_KEY: 'attack-bench-session-key-0123456789abcdef' } });
process.on('exit', () => app.kill('SIGKILL'));

function send(target, { from, agent, headers = {} } = {}) {
  return new Promise((resolve) => {
    const request = http.get({ host: '127.0.0.1', port, path: target, localAddress: from, agent: agent ?? false, headers,
      timeout: 60000 }, (response) => {
      const parts = [];
      response.on('data', (d) => parts.push(d));
      response.on('end', () => resolve({ status: response.statusCode, text: Buffer.concat(parts).toString() }));
      response.on('error', () => resolve({ status: 0, text: '' }));
    });
    request.on('timeout', () => { request.destroy(); resolve({ status: 0, text: 'timeout' }); });
    request.on('error', (e) => resolve({ status: 0, text: e.message }));
  });
}
for (let i = 0; i < 200; i++) {
  if ((await send('/healthz')).status === 200) break;
  await sleep(100);
}
const top = JSON.parse((await send(`/xrpc/app.bulleted.getChildren?repo=${did}&limit=1`)).text);
const rkey = top.nodes[0].rkey;
const getNode = `/xrpc/app.bulleted.getNode?repo=${did}&rkey=${rkey}`;
const search = `/xrpc/app.bulleted.searchNodes?repo=${did}&q=zebra`;
const metric = async (name) => {
  const text = (await send('/metrics')).text;
  const line = text.split('\n').find((l) => l.startsWith(`${name} `));
  return line === undefined ? NaN : Number(line.slice(name.length + 1));
};

// ---- the two users: one request every 5 ms (or at once when the last
// took longer), each case from addresses of their own, so that their own
// query bytes last the case
async function user(target, from, until) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const ms = [];
  let failed = 0;
  let next = performance.now();
  while (performance.now() < until) {
    const wait = next - performance.now();
    if (wait > 0) await sleep(wait);
    next += 5;
    const started = performance.now();
    const r = await send(target, { from, agent });
    ms.push(performance.now() - started);
    if (r.status !== 200) failed++;
  }
  agent.destroy();
  return { ms: ms.sort((a, b) => a - b), failed };
}
const at = (sorted, q) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
const shown = ({ ms, failed }) =>
  `${at(ms, 0.5).toFixed(2)} / ${at(ms, 0.99).toFixed(2)} / ${ms[ms.length - 1].toFixed(2)} (${ms.length}${failed ? `, ${failed} not 200` : ''})`;

// ---- the attacks: each starts, and returns what stops it (and says what it did)

// A raw connection from `from` that sends `head` and then reads nothing.
function unread(from, head) {
  const socket = net.connect({ host: '127.0.0.1', port, localAddress: from });
  socket.on('error', () => {});
  socket.on('connect', () => { socket.write(head); socket.pause(); });
  return socket;
}

const attacks = {
  // Rounds of 8 streams at cursor 0 that never read (each replaces the one
  // before: TooManyStreams), 3 rounds a second.
  'replaced streams that never read (8 a round, 3 rounds a second)': () => {
    const sockets = [];
    const timer = setInterval(() => {
      for (let i = 0; i < 8; i++) {
        sockets.push(unread('127.0.1.1', `GET /xrpc/app.bulleted.streamChanges?repo=${did}&cursor=0 HTTP/1.1\r\nHost: x\r\nAccept: text/event-stream\r\n\r\n`));
      }
    }, 333);
    return async () => {
      clearInterval(timer);
      const open = await metric('bulleted_http_connections');
      sockets.forEach((s) => s.destroy());
      return `${sockets.length} opened, ${open} connections open at the end`;
    };
  },
  // 32 streams from 4 addresses reading the repo's changes from cursor 0,
  // opened again when they end.
  'catch-up from cursor 0 (32 streams, 4 addresses)': () => {
    let running = true;
    let bytes = 0;
    const requests = new Set();
    const open = (from) => {
      if (!running) return;
      const request = http.get({ host: '127.0.0.1', port, localAddress: from, agent: false,
        path: `/xrpc/app.bulleted.streamChanges?repo=${did}&cursor=0`, headers: { accept: 'text/event-stream' } }, (response) => {
        response.on('data', (d) => { bytes += d.length; });
        response.on('end', () => { requests.delete(request); setTimeout(() => open(from), 50); });
        response.on('error', () => {});
      });
      request.on('error', () => { requests.delete(request); setTimeout(() => open(from), 50); });
      requests.add(request);
    };
    for (let a = 1; a <= 4; a++) for (let i = 0; i < 8; i++) open(`127.0.2.${a}`);
    return async () => {
      running = false;
      requests.forEach((r) => r.destroy());
      return `${(bytes / 1048576).toFixed(1)} MB read`;
    };
  },
  // Six connections asking one-letter prefixes, alone and beside a word.
  'broad searches (6 connections, one address)': () => {
    let running = true;
    const statuses = {};
    const loops = [...Array(6).keys()].map(async (i) => {
      const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
      const qs = ['c', 'p', 'child c', 'l'];
      for (let n = 0; running; n++) {
        const sort = ['relevance', 'outline', 'recent'][n % 3];
        const r = await send(`/xrpc/app.bulleted.searchNodes?repo=${did}&q=${encodeURIComponent(qs[(n + i) % qs.length])}&sort=${sort}&limit=100`,
          { from: '127.0.3.1', agent });
        statuses[r.status] = (statuses[r.status] ?? 0) + 1;
        if (r.status === 429) await sleep(10);
      }
      agent.destroy();
    });
    return async () => {
      running = false;
      await Promise.all(loops);
      return `answers by status ${JSON.stringify(statuses)}`;
    };
  },
  // 1,000 idle connections and 200 unfinished heads of 60 KiB.
  'descriptors: 1,000 idle connections and 200 unfinished 60 KiB heads (one address)': () => {
    const sockets = [];
    for (let i = 0; i < 1000; i++) sockets.push(unread('127.0.4.1', ''));
    const head = `GET /healthz HTTP/1.1\r\nHost: x\r\nX-Pad: ${'a'.repeat(60 * 1024)}\r\n`;
    for (let i = 0; i < 200; i++) sockets.push(unread('127.0.4.1', head));
    return async () => {
      const open = await metric('bulleted_http_connections');
      sockets.forEach((s) => s.destroy());
      return `${open} connections open`;
    };
  },
  // Service-auth tokens whose issuer is a did:web on a host no name server
  // answers: each makes a name lookup its request gives up on.
  'slow name lookups (12 addresses, 4 connections each)': () => {
    let running = true;
    const statuses = {};
    const forger = crypto.generateKeyPairSync('ec', { namedCurve: 'secp256k1' }).privateKey;
    const b64 = (x) => Buffer.from(x).toString('base64url');
    const forged = () => {
      const now = Math.floor(Date.now() / 1000);
      const signed = `${b64(JSON.stringify({ alg: 'ES256K', typ: 'JWT' }))}.${b64(JSON.stringify({
        iss: `did:web:${crypto.randomBytes(6).toString('hex')}.slow.test`, aud: SERVICE_DID,
        lxm: 'app.bulleted.getChildren', iat: now, exp: now + 60, jti: crypto.randomBytes(12).toString('hex') }))}`;
      return `${signed}.${b64(crypto.sign('sha256', Buffer.from(signed), { key: forger, dsaEncoding: 'ieee-p1363' }))}`;
    };
    const loops = [];
    for (let a = 1; a <= 12; a++) {
      for (let c = 0; c < 4; c++) {
        loops.push((async () => {
          while (running) {
            const r = await send(`/xrpc/app.bulleted.getChildren?repo=${did}`, { from: `127.0.6.${a}`,
              headers: { authorization: `Bearer ${forged()}` } });
            statuses[r.status] = (statuses[r.status] ?? 0) + 1;
            await sleep(50);
          }
        })());
      }
    }
    return async () => {
      const lookups = await metric('bulleted_name_lookups_running{share="requests"}');
      running = false;
      await Promise.all(loops);
      return `answers by status ${JSON.stringify(statuses)}; ${lookups} of the requests' name lookups waiting`;
    };
  },
  // Six senders of heads of 10,800 repeated header lines, one after another.
  'heads of 10,800 repeated header lines (6 senders)': () => {
    let running = true;
    let sent = 0;
    const head = `GET /healthz HTTP/1.1\r\nHost: x\r\n${'X-A: b\r\n'.repeat(10800)}\r\n`;
    const loops = [...Array(6).keys()].map(async () => {
      while (running) {
        await new Promise((resolve) => {
          const socket = net.connect({ host: '127.0.0.1', port, localAddress: '127.0.5.1' }, () => socket.end(head));
          socket.on('data', () => {});
          socket.on('close', resolve);
          socket.on('error', () => {});
        });
        sent++;
      }
    });
    return async () => {
      running = false;
      await Promise.all(loops);
      return `${sent} heads sent`;
    };
  },
};

// ---- one run: alone, then beside each attack
const cases = [['alone', null], ...Object.entries(attacks).filter(([name]) => only.test(name)), ['alone, again', null]];
console.log(`${lines.length} bullets; ${seconds} s a case; p50 / p99 / slowest ms (requests answered)`);
console.log('| case | getNode | searchNodes, a rare word | the attack |');
console.log('|---|---|---|---|');
for (const [n, [name, start]] of cases.entries()) {
  const stop = start ? start() : null;
  if (stop) await sleep(1000);
  const until = performance.now() + seconds * 1000;
  const [nodes, searches] = await Promise.all([user(getNode, `127.0.0.${2 + 2 * n}`, until),
    user(search, `127.0.0.${3 + 2 * n}`, until)]);
  const did_ = stop ? await stop() : '';
  console.log(`| ${name} | ${shown(nodes)} | ${shown(searches)} | ${did_} |`);
  await sleep(3000);  // what the attack left (closing connections) settles
}
app.kill('SIGTERM');
await new Promise((r) => app.on('exit', r));
names.close();
process.exit(0);
