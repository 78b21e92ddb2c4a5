#!/usr/bin/env -S ./node22
// The test network of the end-to-end tests, adapted from the PDS harness:
// starts a small AT Protocol network on 127.0.0.1 and stays up until SIGINT/SIGTERM:
//   - one in-memory did:plc directory (@did-plc/server),
//   - N real @atproto/pds instances that share it (each with its own handle
//     domain: .p1.test, .p2.test, ...) and two accounts each,
//   - a relay-shaped fan-in: it follows every PDS's subscribeRepos from the
//     start of its history, re-sequences the frames with its own seq (like a
//     relay, the body's `seq` is the relay's), and serves
//       com.atproto.sync.subscribeRepos  (cursor, FutureCursor, OutdatedCursor)
//       com.atproto.sync.getRepo         -> 302 to the repo's own PDS (a relay holds no repos)
//       com.atproto.sync.getLatestCommit, getRepoStatus, getRecord -> 302 likewise
//       com.atproto.sync.listRepos       (every repo of every PDS, paged)
//       com.atproto.sync.listReposByCollection?collection=NSID  (repos seen holding that collection)
//     A real relay redirects to https://<pds host>; these PDSes speak http.
//   - with --test-controls, endpoints that play a misbehaving network:
//       POST /_test/inject           body = one raw frame (header + body CBOR); sent with the next relay seq
//       POST /_test/drop?did=D&n=N   the next N frames of repo D are dropped (a gap in its chain)
//       POST /_test/hold?on=1|0      hold every outgoing frame (queue), then release them in order
//
// Usage:  ./node22 start-network.mjs [--pdses 3] [--plc-port 2700] [--relay-port 2710]
//                                    [--pds-base-port 2701] [--out run/network.json]
//                                    [--pds-ports P1,P2,...] [--test-controls] [--rate-limits] [--log]
// Writes the output file (atomically) when everything is up: plcUrl, relay {url, firehoseUrl},
// pdses [{url, firehoseUrl, handleDomain, adminPassword,
//         accounts [{handle, did, password, accessJwt, refreshJwt}]}].
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import WebSocket, { WebSocketServer } from 'ws';
import { decodeFirst } from 'cborg';
import * as dagCbor from '@ipld/dag-cbor';

const argv = process.argv.slice(2);
const ADMIN_PASSWORD = 'admin-pass';  // every PDS's (Basic auth as "admin")
const flag = (name) => argv.includes(`--${name}`);
const opt = (name, dflt) => {
  const i = argv.indexOf(`--${name}`);
  return i >= 0 && argv[i + 1] ? argv[i + 1] : dflt;
};
const here = path.dirname(fileURLToPath(import.meta.url));
const N = Number(opt('pdses', 3));
const PLC_PORT = Number(opt('plc-port', 2700));
const PDS_BASE = Number(opt('pds-base-port', PLC_PORT + 1));
// --pds-ports: one port per PDS (tests pick free ones), instead of a range.
const PDS_PORTS = opt('pds-ports', '') ? opt('pds-ports', '').split(',').map(Number) : null;
const RELAY_PORT = Number(opt('relay-port', PLC_PORT + 10));
const OUT = path.resolve(opt('out', path.join(here, 'run', 'network.json')));
const TEST_CONTROLS = flag('test-controls');
const RATE_LIMITS = flag('rate-limits');
const LOG = flag('log');
const HOST = '127.0.0.1';
process.env.LOG_ENABLED = LOG ? 'true' : 'false';

// Loopback only: a bare-port listen() binds 127.0.0.1.
const origListen = net.Server.prototype.listen;
net.Server.prototype.listen = function (...args) {
  if (typeof args[0] === 'number' && (args.length === 1 || typeof args[1] === 'function')) args.splice(1, 0, HOST);
  return origListen.apply(this, args);
};

const [{ PDS, envToCfg, envToSecrets }, plc] = await Promise.all([import('@atproto/pds'), import('@did-plc/server')]);

// ---------------------------------------------------------------- PLC
const plcServer = plc.PlcServer.create({ db: plc.Database.mock(), port: PLC_PORT });
await plcServer.start();
const plcUrl = `http://${HOST}:${PLC_PORT}`;
const pdsPlcUrl = `http://localhost:${PLC_PORT}`; // the PDS's resolver refuses IP literals

// ---------------------------------------------------------------- PDSes
const NAMES = ['alice', 'bob', 'carol', 'dave', 'erin', 'frank', 'grace', 'heidi', 'ivan', 'judy'];
const pdses = [];
const dataDirs = [];
for (let i = 0; i < N; i++) {
  const port = PDS_PORTS ? PDS_PORTS[i] : PDS_BASE + i;
  const domain = `.p${i + 1}.test`;
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), `bulleted-net-pds${i + 1}-`));
  dataDirs.push(dataDir);
  const env = {
    devMode: true,
    port,
    hostname: 'localhost',
    dataDirectory: dataDir,
    blobstoreDiskLocation: path.join(dataDir, 'blobs'),
    didPlcUrl: pdsPlcUrl,
    serviceHandleDomains: [domain],
    inviteRequired: false,
    adminPassword: ADMIN_PASSWORD,
    jwtSecret: `jwt-secret-${i + 1}`,
    // a fixed secp256k1 key per PDS for its PLC operations
    plcRotationKeyK256PrivateKeyHex: '3f1d8a3c2b5e4f60718293a4b5c6d7e8f90112233445566778899aabbccddd' + (16 + i).toString(16),
    disableSsrfProtection: true,
    rateLimitsEnabled: RATE_LIMITS,
    crawlers: [],
  };
  const pds = await PDS.create(envToCfg(env), envToSecrets(env));
  pdses.push({ pds, port, domain, url: `http://${HOST}:${port}` });
}
// Handles never use DNS: name.pK.test resolves at PDS K's /.well-known/atproto-did.
for (const p of pdses) {
  p.pds.ctx.idResolver.handle.resolve = async (handle) => {
    const owner = pdses.find((q) => handle.endsWith(q.domain));
    if (!owner) return undefined;
    try {
      const res = await fetch(`http://${HOST}:${owner.port}/.well-known/atproto-did`, { headers: { host: handle } });
      return res.ok ? (await res.text()).trim() : undefined;
    } catch {
      return undefined;
    }
  };
  await p.pds.start();
}

const xrpc = async (base, method, body, token) => {
  const res = await fetch(`${base}/xrpc/${method}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: JSON.stringify(body),
  });
  const json = await res.json().catch(() => null);
  if (!res.ok) throw new Error(`${method} ${res.status} ${JSON.stringify(json)}`);
  return json;
};
for (let i = 0; i < N; i++) {
  const p = pdses[i];
  p.accounts = [];
  for (const name of NAMES.slice(2 * i, 2 * i + 2)) {
    const handle = `${name}${p.domain}`;
    const password = `${name}-pass`;
    const r = await xrpc(p.url, 'com.atproto.server.createAccount', { handle, email: `${name}@test.com`, password });
    p.accounts.push({ handle: r.handle, did: r.did, password, accessJwt: r.accessJwt, refreshJwt: r.refreshJwt });
  }
}

// ---------------------------------------------------------------- relay
const frames = []; // {seq, bytes}
let relaySeq = 0;
const hostOf = new Map(); // did -> pds index
const collectionsOf = new Map(); // did -> Set(collection)
const subscribers = new Set();
const dropFor = new Map(); // did -> frames left to drop
let holding = false;
const held = [];

const concat = (a, b) => {
  const out = new Uint8Array(a.length + b.length);
  out.set(a, 0);
  out.set(b, a.length);
  return out;
};
const frameBytes = (header, body) => concat(dagCbor.encode(header), dagCbor.encode(body));
const errorFrame = (error, message) => frameBytes({ op: -1 }, { error, message });

function emit(bytes) {
  for (const ws of subscribers) if (ws.readyState === WebSocket.OPEN) ws.send(bytes);
}
function publish(header, body) {
  body.seq = ++relaySeq;
  const bytes = frameBytes(header, body);
  frames.push({ seq: body.seq, bytes });
  if (holding) held.push(bytes);
  else emit(bytes);
}
function note(header, body, hostIdx) {
  const did = body.repo ?? body.did;
  if (!did) return;
  if (hostIdx !== undefined) hostOf.set(did, hostIdx);
  if (header.t === '#commit') {
    const set = collectionsOf.get(did) ?? new Set();
    for (const op of body.ops ?? []) set.add(String(op.path).split('/')[0]);
    collectionsOf.set(did, set);
  }
}
function fromUpstream(hostIdx, data) {
  const bytes = new Uint8Array(data);
  const [header, rest] = decodeFirst(bytes, dagCbor.decodeOptions);
  if (header.op !== 1) return;
  const [body] = decodeFirst(rest, dagCbor.decodeOptions);
  pdses[hostIdx].cursor = body.seq;
  if (header.t === '#info') return;
  const did = body.repo ?? body.did;
  note(header, body, hostIdx);
  const left = dropFor.get(did);
  if (left) {
    dropFor.set(did, left - 1);
    return;
  }
  publish(header, body);
}
function follow(hostIdx) {
  const p = pdses[hostIdx];
  const url = `ws://${HOST}:${p.port}/xrpc/com.atproto.sync.subscribeRepos?cursor=${p.cursor ?? 0}`;
  const ws = new WebSocket(url);
  p.upstream = ws;
  ws.on('message', (data) => fromUpstream(hostIdx, data));
  ws.on('close', () => { if (!stopping) setTimeout(() => follow(hostIdx), 200); });
  ws.on('error', () => {});
}

const pdsIndexOf = (did) => hostOf.get(did);
async function repoList() {
  const out = [];
  for (let i = 0; i < N; i++) {
    let cursor;
    do {
      const q = new URLSearchParams({ limit: '1000', ...(cursor ? { cursor } : {}) });
      const r = await (await fetch(`${pdses[i].url}/xrpc/com.atproto.sync.listRepos?${q}`)).json();
      for (const repo of r.repos ?? []) {
        hostOf.set(repo.did, i);
        out.push(repo);
      }
      cursor = r.cursor;
    } while (cursor);
  }
  return out.sort((a, b) => (a.did < b.did ? -1 : 1));
}
function page(items, params, key) {
  const limit = Math.min(Math.max(Number(params.get('limit') ?? 500) || 500, 1), 1000);
  const cursor = params.get('cursor');
  const rest = cursor ? items.filter((x) => x.did > cursor) : items;
  const pageItems = rest.slice(0, limit);
  const body = { [key]: pageItems };
  if (rest.length > limit) body.cursor = pageItems[pageItems.length - 1].did;
  return body;
}
const sendJson = (res, status, body) => {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
};
const readBody = (req) =>
  new Promise((resolve) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks)));
  });
const REDIRECTED = new Set(['getRepo', 'getLatestCommit', 'getRepoStatus', 'getRecord', 'getBlocks', 'getBlob']);

const server = http.createServer(async (req, res) => {
  const url = new URL(req.url, `http://${HOST}:${RELAY_PORT}`);
  const method = url.pathname.replace(/^\/xrpc\//, '');
  try {
    if (url.pathname === '/xrpc/_health') return sendJson(res, 200, { version: 'bulleted-test-relay' });
    if (method.startsWith('com.atproto.sync.') && REDIRECTED.has(method.slice(17))) {
      const did = url.searchParams.get('did');
      const idx = did ? pdsIndexOf(did) : undefined;
      if (idx === undefined) return sendJson(res, 404, { error: 'RepoNotFound', message: `no repo ${did}` });
      res.writeHead(302, { location: `${pdses[idx].url}${url.pathname}${url.search}` });
      return res.end();
    }
    if (method === 'com.atproto.sync.listRepos') return sendJson(res, 200, page(await repoList(), url.searchParams, 'repos'));
    if (method === 'com.atproto.sync.listReposByCollection') {
      const collection = url.searchParams.get('collection');
      if (!collection) return sendJson(res, 400, { error: 'InvalidRequest', message: 'collection required' });
      for (const repo of await repoList()) {
        if (collectionsOf.has(repo.did)) continue;
        const r = await (await fetch(`${pdses[hostOf.get(repo.did)].url}/xrpc/com.atproto.repo.describeRepo?repo=${repo.did}`)).json();
        collectionsOf.set(repo.did, new Set(r.collections ?? []));
      }
      const repos = [...collectionsOf.entries()].filter(([, s]) => s.has(collection)).map(([did]) => ({ did })).sort((a, b) => (a.did < b.did ? -1 : 1));
      return sendJson(res, 200, page(repos, url.searchParams, 'repos'));
    }
    if (TEST_CONTROLS && req.method === 'POST' && url.pathname === '/_test/inject') {
      const bytes = new Uint8Array(await readBody(req));
      const [header, rest] = decodeFirst(bytes, dagCbor.decodeOptions);
      const [body] = decodeFirst(rest, dagCbor.decodeOptions);
      note(header, body);
      publish(header, body);
      return sendJson(res, 200, { seq: relaySeq });
    }
    if (TEST_CONTROLS && req.method === 'POST' && url.pathname === '/_test/drop') {
      dropFor.set(url.searchParams.get('did'), Number(url.searchParams.get('n') ?? 1));
      return sendJson(res, 200, {});
    }
    if (TEST_CONTROLS && req.method === 'POST' && url.pathname === '/_test/hold') {
      holding = url.searchParams.get('on') === '1';
      if (!holding) while (held.length) emit(held.shift());
      return sendJson(res, 200, { held: held.length });
    }
    sendJson(res, 501, { error: 'MethodNotImplemented', message: `${url.pathname} is not served by this relay` });
  } catch (err) {
    sendJson(res, 500, { error: 'InternalServerError', message: String(err) });
  }
});
const wss = new WebSocketServer({ noServer: true });
server.on('upgrade', (req, socket, head) => {
  const url = new URL(req.url, `http://${HOST}:${RELAY_PORT}`);
  if (url.pathname !== '/xrpc/com.atproto.sync.subscribeRepos') return socket.destroy();
  wss.handleUpgrade(req, socket, head, (ws) => {
    const raw = url.searchParams.get('cursor');
    if (raw !== null) {
      const cursor = Number(raw);
      if (!Number.isInteger(cursor) || cursor < 0) {
        ws.send(errorFrame('InvalidRequest', 'cursor must be a non-negative integer'));
        return ws.close();
      }
      if (cursor > relaySeq) {
        ws.send(errorFrame('FutureCursor', 'Cursor in the future.'));
        return ws.close();
      }
      for (const f of frames) if (f.seq > cursor) ws.send(f.bytes);
    }
    subscribers.add(ws);
    ws.on('close', () => subscribers.delete(ws));
    ws.on('error', () => {});
  });
});
await new Promise((resolve) => server.listen(RELAY_PORT, HOST, resolve));
for (let i = 0; i < N; i++) follow(i);
await repoList();

// ---------------------------------------------------------------- output
const relayUrl = `http://${HOST}:${RELAY_PORT}`;
const info = {
  pid: process.pid,
  plcUrl,
  pdsPlcUrl,
  relay: { url: relayUrl, firehoseUrl: `ws://${HOST}:${RELAY_PORT}/xrpc/com.atproto.sync.subscribeRepos`, testControls: TEST_CONTROLS },
  pdses: pdses.map((p) => ({
    url: p.url,
    publicUrl: p.pds.ctx.cfg.service.publicUrl,
    firehoseUrl: `ws://${HOST}:${p.port}/xrpc/com.atproto.sync.subscribeRepos`,
    handleDomain: p.domain,
    adminPassword: ADMIN_PASSWORD,
    accounts: p.accounts,
  })),
  startedAt: new Date().toISOString(),
};
fs.mkdirSync(path.dirname(OUT), { recursive: true });
fs.writeFileSync(`${OUT}.tmp`, JSON.stringify(info, null, 2));
fs.renameSync(`${OUT}.tmp`, OUT);
console.log(JSON.stringify({ ready: true, out: OUT, relay: relayUrl, pdses: info.pdses.map((p) => p.url) }));

let stopping = false;
const stop = async (sig) => {
  if (stopping) return;
  stopping = true;
  const hard = setTimeout(() => process.exit(1), 8000);
  try {
    for (const ws of subscribers) ws.terminate();
    for (const p of pdses) p.upstream?.terminate();
    server.close();
    for (const p of pdses) await p.pds.destroy();
    await plcServer.destroy();
  } catch (err) {
    console.error('shutdown error', err);
  }
  try { fs.unlinkSync(OUT); } catch {}
  for (const d of dataDirs) fs.rmSync(d, { recursive: true, force: true });
  clearTimeout(hard);
  console.error(`stopped on ${sig}`);
  process.exit(0);
};
process.on('SIGINT', () => stop('SIGINT'));
process.on('SIGTERM', () => stop('SIGTERM'));
