// HTTP under abuse, directly against the app view and through a real nginx
// running the shipped limits (deploy/bulleted-limits.conf and
// deploy/bulleted-location.conf): 2,000 idle connections, 200 clients
// dribbling headers, 200 dribbling bodies, oversized headers and a flood of
// invalid requests; and directly, the front's own limits (one address's
// connections, unfinished large heads, Host, heads of thousands of lines).
// Meanwhile a normal client (its own address, 127.0.0.2)
// must keep getting answers within a bounded time. Through nginx the slow
// clients are also cut off by its timeouts and per-address connection limit,
// and oversized headers are refused before they reach the app view (which
// refuses heads over 64 KiB itself: see docs/SECURITY.md).
// Usage: ./node22 ../abuse_e2e.mjs APPVIEW_BINARY WORKDIR   (from tests/e2e/pds)
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import { Runner, assert, assertEqual, freePort, here, sleep, startNginx, stopProcess, track, waitFor } from './lib.mjs';

const [binary, workdir] = process.argv.slice(2);
fs.mkdirSync(workdir, { recursive: true });
const runner = new Runner();
const bound = 5000;  // ms a normal request may take while the server is under abuse

// ---- the app view, with one node to read
const db = path.join(workdir, 'abuse.db');
const did = 'did:plc:abuse';
const token = execFileSync(binary, ['token', 'create', '--did', did, '--db', db], { encoding: 'utf8' }).trim();
const appPort = await freePort();
const appLog = fs.openSync(path.join(workdir, 'appview-abuse.log'), 'a');
const app = track(spawn(binary, ['serve', '--db', db, '--port', String(appPort), '--threads', '4'],
  { stdio: ['ignore', appLog, appLog] }));
await waitFor('the app view', async () => (await fetch(`http://127.0.0.1:${appPort}/healthz`)).ok, 15000);
const created = await (await fetch(`http://127.0.0.1:${appPort}/xrpc/app.bulleted.createNode`, {
  method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
  body: JSON.stringify({ repo: did, text: 'still here' }) })).json();

// ---- nginx in front of it, with the shipped limits
const nginxPort = await freePort();
const nginx = await startNginx(workdir, appPort, nginxPort);

// ---- the normal client: from 127.0.0.2, so per-address limits on the
// abusers (127.0.0.1) do not apply to it
function normalRequest(port) {
  return new Promise((resolve) => {
    const started = Date.now();
    const req = http.get({ host: '127.0.0.1', port, localAddress: '127.0.0.2', agent: false,
      path: `/xrpc/app.bulleted.getNode?repo=${did}&rkey=${created.rkey}`, timeout: bound }, (res) => {
      let body = '';
      res.on('data', (d) => { body += d; });
      res.on('end', () => resolve({ status: res.statusCode, ms: Date.now() - started, body }));
    });
    req.on('timeout', () => { req.destroy(); resolve({ status: 0, ms: Date.now() - started }); });
    req.on('error', (e) => resolve({ status: 0, ms: Date.now() - started, error: e.message }));
  });
}
async function servedWhileAbused(port, what) {
  for (let i = 0; i < 5; i++) {
    const r = await normalRequest(port);
    assert(r.status === 200 && r.ms < bound, `${what}: a normal request got ${r.status} in ${r.ms} ms ${r.error ?? ''}`);
    assert(JSON.parse(r.body).text === 'still here', 'the right answer');
    await sleep(100);
  }
}

// ---- the abusers (from 127.0.0.1)
function openSockets(port, count, onConnect) {
  const sockets = [];
  return new Promise((resolve) => {
    let pending = count;
    for (let i = 0; i < count; i++) {
      const socket = net.connect({ host: '127.0.0.1', port });
      socket.closedByServer = false;
      socket.refused = false;
      socket.on('connect', () => { onConnect?.(socket, i); if (--pending === 0) resolve(sockets); });
      socket.on('error', () => { if (--pending === 0) resolve(sockets); });
      socket.on('close', () => { socket.closedByServer = true; });
      socket.on('data', (d) => { if (/^HTTP\/1\.[01] (429|503)/.test(d.toString('latin1'))) socket.refused = true; });
      sockets.push(socket);
    }
  });
}
const closeAll = (sockets) => sockets.forEach((s) => s.destroy());
function dribble(sockets, start, every, piece) {
  sockets.forEach((s) => { if (!s.destroyed) s.write(start); });
  const timer = setInterval(() => sockets.forEach((s) => { if (!s.destroyed && !s.closedByServer) s.write(piece); }), every);
  return () => clearInterval(timer);
}
async function invalidFlood(port, count) {
  const garbage = ['BLAH\r\n\r\n', 'GET /\x00\x01 HTTP/1.1\r\n\r\n', 'POST /xrpc/app.bulleted.createNode HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 5\r\n\r\n{{{{{',
    'GET /xrpc/app.bulleted.getNode?repo=%%%&rkey=%ZZ HTTP/1.1\r\nHost: x\r\n\r\n', 'DELETE /xrpc/x HTTP/1.1\r\nHost: x\r\n\r\n'];
  let done = 0;
  await new Promise((resolve) => {
    let open = 0;
    const next = () => {
      while (open < 100 && done + open < count) {
        open++;
        const socket = net.connect({ host: '127.0.0.1', port }, () => socket.end(garbage[(done + open) % garbage.length]));
        socket.setTimeout(5000, () => socket.destroy());
        socket.on('data', () => {});
        socket.on('close', () => { open--; done++; if (done === count) resolve(); else next(); });
        socket.on('error', () => {});
      }
    };
    next();
  });
  return done;
}

async function probes(port, label, viaNginx) {
  await runner.test(`${label}: 2,000 idle connections do not stop normal requests`, async () => {
    const idle = await openSockets(port, 2000);
    try {
      await servedWhileAbused(port, 'idle connections');
    } finally {
      closeAll(idle);
    }
  });

  await runner.test(`${label}: 200 clients dribbling headers and 200 dribbling bodies`, async () => {
    const headers = await openSockets(port, 200);
    const bodies = await openSockets(port, 200);
    const stops = [
      dribble(headers, `GET /xrpc/app.bulleted.getNode?repo=${did}&rkey=${created.rkey} HTTP/1.1\r\nHost: x\r\n`, 1000, 'X-Slow: 1\r\n'),
      dribble(bodies, `POST /xrpc/app.bulleted.createNode HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nAuthorization: Bearer ${token}\r\nContent-Length: 100000\r\n\r\n`, 1000, ' '),
    ];
    try {
      await servedWhileAbused(port, 'slow clients');
      if (viaNginx) {
        // nginx cuts the header senders off after 10 s (client_header_timeout)
        // and admits at most 100 connections from one address
        // (limit_conn): the rest of the body senders are refused. Bodies are
        // buffered by nginx, so the admitted ones never reach the app view.
        await waitFor('nginx to close the slow header senders', () => headers.filter((s) => s.closedByServer).length >= 190, 20000, 500);
        await waitFor('nginx to refuse body senders over the limit', () => bodies.filter((s) => s.refused || s.closedByServer).length >= 90, 20000, 500);
      }
      await servedWhileAbused(port, 'slow clients, later');
    } finally {
      stops.forEach((stop) => stop());
      closeAll(headers);
      closeAll(bodies);
    }
  });

  await runner.test(`${label}: oversized headers and a flood of invalid requests`, async () => {
    const big = await new Promise((resolve) => {
      const socket = net.connect({ host: '127.0.0.1', port }, () => {
        socket.write(`GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(256 * 1024)}\r\n\r\n`);
      });
      let answer = '';
      socket.setTimeout(viaNginx ? 10000 : 2000, () => { socket.destroy(); resolve(answer); });
      socket.on('data', (d) => { answer += d; });
      socket.on('close', () => resolve(answer));
      socket.on('error', () => resolve(answer));
    });
    if (viaNginx) assert(/^HTTP\/1\.1 (400|414|431|494)/.test(big), `nginx refuses it: ${big.slice(0, 40)}`);
    else assert(/^HTTP\/1\.1 431/.test(big), `the app view refuses it: ${big.slice(0, 40)}`);
    const flooded = invalidFlood(port, 3000);
    await servedWhileAbused(port, 'a flood of invalid requests');
    assertEqual(await flooded, 3000, 'every invalid request was answered or closed');
    await servedWhileAbused(port, 'after the flood');
  });
}

// ---- the front's own limits, asked of the app view directly (issue 57's
// shapes): each from addresses of their own, so the counters they move
// are theirs.
function rawExchange(port, text, from, waitMs = 3000) {
  return new Promise((resolve) => {
    let answer = '';
    const socket = net.connect({ host: '127.0.0.1', port, localAddress: from }, () => socket.write(text));
    socket.setTimeout(waitMs, () => { socket.destroy(); resolve(answer); });
    socket.on('data', (d) => { answer += d.toString('latin1'); });
    socket.on('close', () => resolve(answer));
    socket.on('error', () => resolve(answer));
  });
}
async function metric(port, name) {
  const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(`${name} `));
  return line === undefined ? NaN : Number(line.slice(name.length + 1));
}
function socketsFrom(port, count, from, onConnect) {
  return Promise.all(Array.from({ length: count }, () => new Promise((resolve) => {
    const socket = net.connect({ host: '127.0.0.1', port, localAddress: from });
    socket.answer = '';
    socket.on('connect', () => { onConnect?.(socket); resolve(socket); });
    socket.on('data', (d) => { socket.answer += d.toString('latin1'); });
    socket.on('error', () => resolve(socket));
  })));
}
function residentMb() {
  return Number(/VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${app.pid}/status`, 'utf8'))[1]) / 1024;
}

async function frontLimits(port) {
  await runner.test('directly: one address opening 1,000 connections keeps 256, the rest reset unread; others served', async () => {
    const refusedBefore = await metric(port, 'bulleted_http_refused_total{reason="address"}');
    const sockets = await socketsFrom(port, 1000, '127.0.0.90');
    try {
      await waitFor('the connections past the cap refused', async () =>
        (await metric(port, 'bulleted_http_refused_total{reason="address"}')) - refusedBefore >= 700, 20000, 200);
      const open = await metric(port, 'bulleted_http_connections');
      assert(open <= 256 + 16, `connections open: ${open}`);
      await servedWhileAbused(port, 'an address at its connection cap');
      assertEqual((await fetch(`http://127.0.0.1:${port}/healthz`)).status, 200, 'health');
    } finally {
      closeAll(sockets);
    }
  });

  await runner.test('directly: 450 unfinished 60 KiB heads share the large heads\' budget; past it 503; others served', async () => {
    const refusedBefore = await metric(port, 'bulleted_http_refused_total{reason="large_head"}');
    const before = residentMb();
    const head = `GET /healthz HTTP/1.1\r\nHost: x\r\nX-Pad: ${'a'.repeat(60 * 1024)}\r\n`;
    const sockets = (await Promise.all([100, 101, 102].map((n) =>
      socketsFrom(port, 150, `127.0.0.${n}`, (socket) => socket.write(head))))).flat();
    try {
      await waitFor('heads past the budget refused', async () =>
        (await metric(port, 'bulleted_http_refused_total{reason="large_head"}')) > refusedBefore, 20000, 200);
      await waitFor('a refusal read', () => sockets.some((s) => /^HTTP\/1\.1 503/.test(s.answer)), 10000, 100);
      await servedWhileAbused(port, 'unfinished large heads');
      const rise = residentMb() - before;
      if (process.env.BULLETED_E2E_SANITIZED !== '1') assert(rise < 48, `resident memory rose by ${rise.toFixed(1)} MB`);
    } finally {
      closeAll(sockets);
    }
  });

  await runner.test('directly: a head without Host or with two is 400; one empty line before a request is ignored', async () => {
    const none = await rawExchange(port, 'GET /healthz HTTP/1.1\r\n\r\n', '127.0.0.110');
    assert(/^HTTP\/1\.1 400/.test(none), `no Host: ${none.slice(0, 40)}`);
    const two = await rawExchange(port, 'GET /healthz HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n', '127.0.0.110');
    assert(/^HTTP\/1\.1 400/.test(two), `two Hosts: ${two.slice(0, 40)}`);
    const leading = await rawExchange(port, '\r\nGET /healthz HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n', '127.0.0.110');
    assert(/^HTTP\/1\.1 200/.test(leading), `a leading empty line: ${leading.slice(0, 40)}`);
  });

  await runner.test('directly: six senders of heads of 10,800 repeated lines are each refused 431; others served', async () => {
    const head = `GET /healthz HTTP/1.1\r\nHost: x\r\n${'X-A: b\r\n'.repeat(10800)}\r\n`;
    let running = true;
    const answers = [];
    const senders = Array.from({ length: 6 }, async () => {
      while (running) answers.push(await rawExchange(port, head, '127.0.0.111', 5000));
    });
    try {
      await sleep(500);
      await servedWhileAbused(port, 'heads of 10,800 lines');
    } finally {
      running = false;
      await Promise.all(senders);
    }
    const refused = answers.filter((a) => /^HTTP\/1\.1 431/.test(a)).length;
    // A refusal may be lost to the reset that ends a connection whose head was not read to its end.
    assert(refused > 0 && answers.every((a) => a === '' || /^HTTP\/1\.1 431/.test(a)),
      `answers: ${refused} of ${answers.length} were 431; others ${JSON.stringify(answers.filter((a) => !/^HTTP\/1\.1 431/.test(a)).slice(0, 3).map((a) => a.slice(0, 40)))}`);
  });
}

try {
  await probes(appPort, 'directly', false);
  await frontLimits(appPort);
  await probes(nginxPort, 'through nginx', true);
  await runner.test('through nginx: CORS preflights and headers pass as the app view sends them', async () => {
    const preflight = await fetch(`http://127.0.0.1:${nginxPort}/xrpc/app.bulleted.createNode`, { method: 'OPTIONS',
      headers: { Origin: 'https://outliner.example', 'Access-Control-Request-Method': 'POST',
        'Access-Control-Request-Headers': 'authorization, content-type' } });
    assertEqual(preflight.status, 204, 'the preflight');
    assertEqual(preflight.headers.get('access-control-allow-origin'), '*', 'allow-origin');
    assertEqual(preflight.headers.get('access-control-allow-headers'), 'authorization, content-type', 'allow-headers');
    assertEqual(preflight.headers.get('access-control-max-age'), '86400', 'max-age');
    const answer = await fetch(`http://127.0.0.1:${nginxPort}/xrpc/_health`, { headers: { Origin: 'https://outliner.example' } });
    assertEqual(answer.headers.get('access-control-allow-origin'), '*', 'allow-origin on an answer');
    assert((answer.headers.get('access-control-expose-headers') ?? '').includes('Retry-After'), 'exposed headers');
  });
  await runner.test('the app view stayed up throughout', async () => {
    assertEqual(app.exitCode, null, 'still running');
    assertEqual((await fetch(`http://127.0.0.1:${appPort}/healthz`)).status, 200, 'healthy');
  });
} finally {
  await stopProcess(nginx, 'SIGQUIT');
  await stopProcess(app);
}
process.exit(runner.finish());
