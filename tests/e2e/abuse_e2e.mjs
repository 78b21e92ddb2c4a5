// HTTP under abuse, directly against the app view and through a real nginx
// running the shipped limits (deploy/bulleted-limits.conf and
// deploy/bulleted-location.conf): 2,000 idle connections, 200 clients
// dribbling headers, 200 dribbling bodies, oversized headers and a flood of
// invalid requests. Meanwhile a normal client (its own address, 127.0.0.2)
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

try {
  await probes(appPort, 'directly', false);
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
