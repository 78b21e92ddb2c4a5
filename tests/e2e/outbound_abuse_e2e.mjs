// What one anonymous client with four connections could once do through
// the app view's outbound fetches, against stand-in servers on 127.0.0.1:
// a PLC directory that holds every request (a tarpit) or knows no DID, and
// a did:web host that serves a 200 MiB DID document, and a PDS that signs
// its user in and then holds every write. The app view (pds mode, OAuth
// and app-password sessions on, 4 workers) must keep answering everyone
// else while requests wait on those hosts (at most half its workers do, the rest are
// told 503 with Retry-After at once), read a DID no more than once for a
// flood naming it, and read no more of a document than its cap.
// Nothing here asserts on time: a request that waited behind a held host
// could only be answered once the test lets that host go, which it does at
// the end.
// Usage: ./node22 ../outbound_abuse_e2e.mjs APPVIEW_BINARY WORKDIR   (from tests/e2e/pds)
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { Runner, assert, assertEqual, freePort, startAppview, stopProcess, waitFor } from './lib.mjs';

const [binary, workdir] = process.argv.slice(2);
fs.mkdirSync(workdir, { recursive: true });
const runner = new Runner();
const SERVICE_DID = 'did:web:appview.bulleted.internal';

// ---- stand-in servers

// A PLC directory: documents of did:plc:slow* are held until release(), and
// so is a did:web document asked of it (/.well-known/did.json); the
// documents put in `documents` are served; every other DID is unknown
// (404). Counts what it was asked.
function startDirectory() {
  const held = [];
  const asked = new Map();
  const documents = new Map();
  let open = 0;
  let mostOpen = 0;
  const server = http.createServer((request, response) => {
    const did = decodeURIComponent(request.url.slice(1));
    asked.set(did, (asked.get(did) ?? 0) + 1);
    if (documents.has(did)) {
      response.writeHead(200, { 'content-type': 'application/json' });
      return response.end(JSON.stringify(documents.get(did)));
    }
    if (did.startsWith('did:plc:slow') || did === '.well-known/did.json') {
      open++;
      mostOpen = Math.max(mostOpen, open);
      held.push(response);
      response.on('close', () => { open--; });
      return;
    }
    response.writeHead(404, { 'content-type': 'application/json' });
    response.end(JSON.stringify({ message: `DID not registered: ${did}` }));
  });
  return {
    server, asked, held, documents,
    mostOpen: () => mostOpen,
    release() {
      for (const response of held.splice(0)) {
        response.writeHead(404, { 'content-type': 'application/json' });
        response.end('{"message":"gone"}');
      }
    },
  };
}

// A did:web host serving a 200 MiB DID document, chunked, as fast as its
// reader takes it; counts the bytes it managed to write.
function startHugeDocument() {
  const state = { written: 0, finished: false, requests: 0 };
  const piece = Buffer.alloc(1 << 20, 'x');
  const server = http.createServer((request, response) => {
    state.requests++;
    response.writeHead(200, { 'content-type': 'application/json' });
    response.write('{"id":"did:web:x","pad":"');
    let sent = 0;
    const pump = () => {
      while (sent < 200) {
        sent++;
        state.written += piece.length;
        if (!response.write(piece)) return response.once('drain', pump);
      }
      response.end('"}');
      state.finished = true;
    };
    response.on('close', () => { sent = 1e9; });
    pump();
  });
  return { server, state };
}

// A PDS that signs its user in with any password and then holds every
// other request until release() (and fails them at once after it).
function startHeldPds(did) {
  const held = [];
  let holding = true;
  let asked = 0;
  const fail = (response) => {
    response.writeHead(503, { 'content-type': 'application/json' });
    response.end('{"error":"Unavailable","message":"gone"}');
  };
  const server = http.createServer((request, response) => {
    request.resume();
    if (request.url.startsWith('/xrpc/com.atproto.server.createSession')) {
      response.writeHead(200, { 'content-type': 'application/json' });
      return response.end(JSON.stringify({ did, handle: 'held.test', accessJwt: 'held-access', refreshJwt: 'held-refresh' }));
    }
    asked++;
    if (holding) held.push(response); else fail(response);
  });
  return {
    server, held,
    asked: () => asked,
    release() {
      holding = false;
      for (const response of held.splice(0)) fail(response);
    },
  };
}

const listen = (server) => new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server.address().port)));

// ---- requests from chosen source addresses

function get(port, target, { from = '127.0.0.2', headers = {}, body } = {}) {
  return new Promise((resolve) => {
    const method = body === undefined ? 'GET' : 'POST';
    const sent = body === undefined ? undefined : JSON.stringify(body);
    if (sent !== undefined) {
      headers = { ...headers, 'content-type': 'application/json', 'content-length': Buffer.byteLength(sent) };
    }
    const request = http.request({ host: '127.0.0.1', port, path: target, method, localAddress: from, agent: false, headers,
      timeout: 120000 }, (response) => {
      const parts = [];
      response.on('data', (d) => parts.push(d));
      response.on('end', () => resolve({ status: response.statusCode, headers: response.headers, text: Buffer.concat(parts).toString() }));
    });
    request.on('timeout', () => { request.destroy(); resolve({ status: 0, text: 'timeout' }); });
    request.on('error', (e) => resolve({ status: 0, text: e.message }));
    request.end(sent);
  });
}

// A service-auth JWT that passes every claim check but is signed by a key
// nobody published: verifying it means reading the issuer's document.
const forger = crypto.generateKeyPairSync('ec', { namedCurve: 'secp256k1' }).privateKey;
function forgedJwt(iss, lxm) {
  const b64 = (x) => Buffer.from(x).toString('base64url');
  const now = Math.floor(Date.now() / 1000);
  const header = b64(JSON.stringify({ alg: 'ES256K', typ: 'JWT' }));
  const payload = b64(JSON.stringify({ iss, aud: SERVICE_DID, lxm, iat: now, exp: now + 60,
    jti: crypto.randomBytes(12).toString('hex') }));
  const signature = crypto.sign('sha256', Buffer.from(`${header}.${payload}`), { key: forger, dsaEncoding: 'ieee-p1363' });
  return `${header}.${payload}.${b64(signature)}`;
}

function residentMb(pid) {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+) kB/.exec(status)[1]) / 1024;
}

// ---- the app view

const directory = startDirectory();
const plcPort = await listen(directory.server);
const huge = startHugeDocument();
const hugePort = await listen(huge.server);
const HELD_DID = 'did:plc:heldpdsheldpdsheldpdshel';
const heldPds = startHeldPds(HELD_DID);
const heldPdsPort = await listen(heldPds.server);
directory.documents.set(HELD_DID, {
  id: HELD_DID, alsoKnownAs: ['at://held.test'],
  service: [{ id: '#atproto_pds', type: 'AtprotoPersonalDataServer', serviceEndpoint: `http://127.0.0.1:${heldPdsPort}` }],
});
process.env.BULLETED_ALLOW_PASSWORD_SESSIONS = '1';
const appPort = await freePort();
process.env.BULLETED_SESSION_KEY = 'outbound-abuse-e2e-session-key-0123456789';
process.env.BULLETED_SERVICE_DID = SERVICE_DID;
process.env.BULLETED_QUERY_BYTES = '0';
const app = startAppview(binary, ['--mode', 'pds', '--plc', `http://127.0.0.1:${plcPort}`,
  '--db', path.join(workdir, 'outbound.db'), '--port', String(appPort), '--threads', '4',
  '--public-url', `http://127.0.0.1:${appPort}`], path.join(workdir, 'appview-outbound.log'));
const base = `http://127.0.0.1:${appPort}`;
await waitFor('the app view', async () => (await fetch(`${base}/healthz`)).ok);
const getChildren = '/xrpc/app.bulleted.getChildren?repo=did:plc:anyoneanyoneanyoneanyone';

try {
  await runner.test('four connections waiting on a held directory cannot stall anyone else', async () => {
    // One client, four connections, each naming a DID whose document never comes.
    const waiting = [0, 1, 2, 3].map((i) => get(appPort, getChildren, { from: '127.0.0.9',
      headers: { authorization: `Bearer ${forgedJwt(`did:plc:slow${'s'.repeat(19)}${i}`, 'app.bulleted.getChildren')}` } }));
    await waitFor('a read held by the directory', () => directory.held.length >= 1, 30000);
    // Three of them found the client's one place taken: told to come back, at once.
    const settled = await Promise.all(waiting.map((p) => Promise.race([p, new Promise((r) => setTimeout(() => r(null), 15000))])));
    const refused = settled.filter((r) => r && r.status === 503);
    assertEqual(refused.length, 3, `503s before the directory answered: ${JSON.stringify(settled.map((r) => r && r.status))}`);
    for (const r of refused) {
      assert(Number(r.headers['retry-after']) >= 1, 'with Retry-After');
      assertEqual(JSON.parse(r.text).error, 'Unavailable', 'the error name');
    }
    // Other clients waiting on the same tarpit take at most the other place.
    const others = [10, 11, 12].map((i) => get(appPort, getChildren, { from: `127.0.0.${i}`,
      headers: { authorization: `Bearer ${forgedJwt(`did:plc:slow${'t'.repeat(19)}${i}`, 'app.bulleted.getChildren')}` } }));
    await waitFor('a second held read', () => directory.held.length >= 2, 30000);
    // Everyone else is served while the directory holds two workers.
    for (let i = 0; i < 10; i++) {
      const r = await get(appPort, getChildren, { from: '127.0.0.20' });
      assertEqual(r.status, 200, `an unrelated request: ${r.text.slice(0, 200)}`);
    }
    assert((await get(appPort, '/healthz', { from: '127.0.0.21' })).status === 200, 'health');
    assertEqual(directory.mostOpen(), 2, 'reads held at once: half of the four workers');
    directory.release();
    const late = await Promise.all([...waiting, ...others]);
    for (const r of late) assert([401, 503].includes(r.status), `a forged token: ${r.status} ${r.text.slice(0, 120)}`);
  });

  await runner.test('fifty forged tokens naming one unknown DID make one directory read', async () => {
    const did = 'did:plc:unknownunknownunknownu';
    const answers = [];
    for (let i = 0; i < 50; i++) {
      answers.push(await get(appPort, getChildren, { from: '127.0.0.30',
        headers: { authorization: `Bearer ${forgedJwt(did, 'app.bulleted.getChildren')}` } }));
    }
    for (const r of answers) assertEqual(r.status, 401, `a forged token: ${r.text.slice(0, 120)}`);
    assertEqual(directory.asked.get(did), 1, 'reads of the unknown DID');
  });

  await runner.test('sign-ins naming a held did:web host cannot stall anyone else', async () => {
    // A did:web whose host is the held directory: its document never comes.
    const tarpit = `did:web:127.0.0.1%3A${plcPort}`;
    const logins = [0, 1, 2, 3].map(() => get(appPort, `/oauth/login?handle=${encodeURIComponent(tarpit)}`, { from: '127.0.0.40' }));
    await waitFor('a sign-in held by the host', () => directory.held.length >= 1, 30000);
    // Checked while that sign-in still waits (its fetch gives up after 10 s).
    const answered = [];
    for (const p of logins) p.then((r) => answered.push(r));
    await waitFor('three sign-ins told to come back', () => answered.length >= 3, 8000, 50);
    const busy = answered.filter((r) => r.status === 503);
    assert(busy.length >= 3, `sign-ins told to come back: ${JSON.stringify(answered.map((r) => r.status))}`);
    assert(busy.every((r) => /busy with other sign-ins/.test(r.text)), 'a page saying so');
    const r = await get(appPort, getChildren, { from: '127.0.0.41' });
    assertEqual(r.status, 200, 'an unrelated request while a sign-in waits');
    assertEqual(directory.held.length, 1, 'one sign-in waits on the host');
    directory.release();
    const held = (await Promise.all(logins)).filter((x) => x.status !== 503);
    assertEqual(held.length, 1, 'the one that waited');
  });

  await runner.test('four writes waiting on a held PDS cannot stall anyone else', async () => {
    // Anyone can sign in at a PDS of their own: this one then holds every write.
    const signIn = await get(appPort, '/xrpc/app.bulleted.createSession', { from: '127.0.0.60',
      body: { identifier: HELD_DID, password: 'any' } });
    assertEqual(signIn.status, 200, `the sign-in: ${signIn.text.slice(0, 200)}`);
    const { token } = JSON.parse(signIn.text);
    const other = await get(appPort, '/xrpc/app.bulleted.createSession', { from: '127.0.0.63',
      body: { identifier: HELD_DID, password: 'any' } });
    assertEqual(other.status, 200, 'a second sign-in');
    const writes = [0, 1, 2, 3].map((i) => get(appPort, '/xrpc/app.bulleted.createNode', { from: '127.0.0.60',
      headers: { authorization: `Bearer ${token}` }, body: { repo: HELD_DID, text: `held ${i}` } }));
    await waitFor('a write held by the PDS', () => heldPds.held.length >= 1, 30000);
    // The client's two places are the gate's two (the second write waits for
    // the first's lock of the outline's top): its other writes are told to
    // come back, at once.
    const settled = [];
    for (const p of writes) p.then((r) => settled.push(r));
    await waitFor('two writes answered', () => settled.length >= 2, 15000);
    const refused = settled.filter((r) => r.status === 503);
    assertEqual(refused.length, 2, `503s before the PDS answered: ${JSON.stringify(settled.map((r) => r.status))}`);
    for (const r of refused) {
      assert(Number(r.headers['retry-after']) >= 1, 'with Retry-After');
      assertEqual(JSON.parse(r.text).error, 'Unavailable', 'the error name');
    }
    // Everyone else is served while the PDS holds two workers.
    for (let i = 0; i < 10; i++) {
      const r = await get(appPort, getChildren, { from: '127.0.0.61' });
      assertEqual(r.status, 200, `an unrelated request: ${r.text.slice(0, 200)}`);
    }
    assert((await get(appPort, '/healthz', { from: '127.0.0.62' })).status === 200, 'health');
    // A write from another address finds no place either.
    const blocked = await get(appPort, '/xrpc/app.bulleted.createNode', { from: '127.0.0.63',
      headers: { authorization: `Bearer ${JSON.parse(other.text).token}` }, body: { repo: HELD_DID, text: 'other' } });
    assertEqual(blocked.status, 503, `a write with every place taken: ${blocked.text.slice(0, 200)}`);
    assertEqual(heldPds.asked(), 1, 'requests that reached the PDS while it held');
    heldPds.release();
    const late = (await Promise.all(writes)).filter((r) => r.status !== 503);
    assertEqual(late.length, 2, 'the writes that waited');
    for (const r of late) assertEqual(r.status, 502, `a write the PDS failed: ${r.text.slice(0, 120)}`);
  });

  await runner.test('a 200 MiB DID document is read no further than the 64 KiB cap', async () => {
    const before = residentMb(app.pid);
    const did = `did:web:127.0.0.1%3A${hugePort}`;
    const r = await get(appPort, `/oauth/login?handle=${encodeURIComponent(did)}`, { from: '127.0.0.50' });
    assertEqual(r.status, 502, `the sign-in page: ${r.text.slice(0, 200)}`);
    await waitFor('the host to see its reader go', () => huge.state.requests === 1 && huge.server.listening, 10000);
    // The socket buffers of both ends hold some megabytes; 200 MiB were offered.
    assert(!huge.state.finished, 'the document was read to its end');
    assert(huge.state.written < 32 * 1024 * 1024, `bytes the host could write: ${huge.state.written}`);
    const rise = residentMb(app.pid) - before;
    if (process.env.BULLETED_E2E_SANITIZED !== '1') assert(rise < 64, `resident memory rose by ${rise.toFixed(1)} MB`);
    // And once more: remembered as failed, not fetched again.
    await get(appPort, `/oauth/login?handle=${encodeURIComponent(did)}`, { from: '127.0.0.51' });
    assertEqual(huge.state.requests, 1, 'requests to the host');
  });
} finally {
  directory.release();
  heldPds.release();
  heldPds.server.close();
  await stopProcess(app);
  directory.server.close();
  huge.server.closeAllConnections?.();
  huge.server.close();
}
process.exit(runner.finish());
