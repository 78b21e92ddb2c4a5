// Names that anonymous requests give the app view, looked up on a name
// server of the test's own. The whole test runs in namespaces of its own
// (unshare: a user, network and mount namespace): nothing leaves loopback,
// /etc/resolv.conf names a stand-in DNS on 127.0.0.1:53 that answers
// *.fast.test with 127.0.0.1 and never answers *.slow.test (the system
// resolver then waits a minute), and the PLC directory is
// http://plc.fast.test:PORT, a name the app view must look up too.
//
// Twelve addresses, four connections each, keep sending service-auth tokens
// whose issuer is did:web:<new name>.slow.test: each makes a name lookup
// that waits until its request gives up and is left behind. They fill the
// requests' share of the name lookups (half of 64) and no more; the
// operator's PLC directory is still looked up, so a valid token of a DID
// never seen before is verified, and everyone else is served.
// Usage: ./node22 ../dns_abuse_e2e.mjs APPVIEW_BINARY WORKDIR   (from tests/e2e/pds)
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import {
  Runner, assert, assertEqual, freePort, harnessRequire, reenterInNamespaces, startAppview, startNameServer, stopProcess,
  waitFor,
} from './lib.mjs';

const [binary, workdir] = process.argv.slice(2);
fs.mkdirSync(workdir, { recursive: true });

reenterInNamespaces(process.argv[1], [binary, workdir], workdir);

const runner = new Runner();
const SERVICE_DID = 'did:web:appview.bulleted.internal';

// ---- the stand-in PLC directory, with the keys of the DIDs it knows

const { Secp256k1Keypair } = harnessRequire('@atproto/crypto');
const keys = new Map();
async function knownDid(did) {
  const keypair = await Secp256k1Keypair.create({ exportable: true });
  keys.set(did, keypair);
  return did;
}
function startDirectory() {
  const server = http.createServer((request, response) => {
    const did = decodeURIComponent(request.url.slice(1));
    const keypair = keys.get(did);
    if (!keypair) {
      response.writeHead(404, { 'content-type': 'application/json' });
      return response.end(JSON.stringify({ message: `DID not registered: ${did}` }));
    }
    response.writeHead(200, { 'content-type': 'application/json' });
    response.end(JSON.stringify({
      '@context': ['https://www.w3.org/ns/did/v1', 'https://w3id.org/security/multikey/v1'],
      id: did,
      verificationMethod: [{ id: `${did}#atproto`, type: 'Multikey', controller: did,
        publicKeyMultibase: keypair.did().slice('did:key:'.length) }],
      service: [],
    }));
  });
  return server;
}

const b64 = (x) => Buffer.from(x).toString('base64url');
function claims(iss, lxm) {
  const now = Math.floor(Date.now() / 1000);
  return { iss, aud: SERVICE_DID, lxm, iat: now, exp: now + 60, jti: crypto.randomBytes(12).toString('hex') };
}
async function validJwt(did, lxm) {
  const signed = `${b64(JSON.stringify({ alg: 'ES256K', typ: 'JWT' }))}.${b64(JSON.stringify(claims(did, lxm)))}`;
  return `${signed}.${b64(await keys.get(did).sign(Buffer.from(signed)))}`;
}
// Signed by nobody's key: verifying it means reading the issuer's document.
const forger = crypto.generateKeyPairSync('ec', { namedCurve: 'secp256k1' }).privateKey;
function forgedJwt(iss, lxm) {
  const signed = `${b64(JSON.stringify({ alg: 'ES256K', typ: 'JWT' }))}.${b64(JSON.stringify(claims(iss, lxm)))}`;
  return `${signed}.${b64(crypto.sign('sha256', Buffer.from(signed), { key: forger, dsaEncoding: 'ieee-p1363' }))}`;
}

function get(port, target, { from = '127.0.0.2', headers = {} } = {}) {
  return new Promise((resolve) => {
    const request = http.request({ host: '127.0.0.1', port, path: target, localAddress: from, agent: false, headers,
      timeout: 120000 }, (response) => {
      const parts = [];
      response.on('data', (d) => parts.push(d));
      response.on('end', () => resolve({ status: response.statusCode, text: Buffer.concat(parts).toString() }));
    });
    request.on('timeout', () => { request.destroy(); resolve({ status: 0, text: 'timeout' }); });
    request.on('error', (e) => resolve({ status: 0, text: e.message }));
    request.end();
  });
}

function metric(text, name) {
  const line = text.split('\n').find((l) => l.startsWith(`${name} `));
  return line === undefined ? NaN : Number(line.slice(name.length + 1));
}

// ---- the app view

const names = await startNameServer();
const directory = startDirectory();
const plcPort = await freePort();
await new Promise((resolve) => directory.listen(plcPort, '127.0.0.1', resolve));
const appPort = await freePort();
process.env.BULLETED_SESSION_KEY = 'dns-abuse-e2e-session-key-0123456789abcdef';
process.env.BULLETED_SERVICE_DID = SERVICE_DID;
process.env.BULLETED_QUERY_BYTES = '0';
// 32 workers: 16 places for fetches to the network's hosts, enough for every
// attacker to wait on one at once.
const app = startAppview(binary, ['--mode', 'pds', '--plc', `http://plc.fast.test:${plcPort}`,
  '--db', path.join(workdir, 'dns.db'), '--port', String(appPort), '--threads', '32',
  '--public-url', `http://127.0.0.1:${appPort}`], path.join(workdir, 'appview-dns.log'));
await waitFor('the app view', async () => (await get(appPort, '/healthz')).status === 200);
const getChildren = '/xrpc/app.bulleted.getChildren?repo=did:plc:anyoneanyoneanyoneanyone';
const metrics = async () => (await get(appPort, '/metrics', { from: '127.0.0.1' })).text;
let attacking = true;
const attacks = [];
const unexpected = [];  // attackers' answers other than 401 and 503

try {
  await runner.test('the stand-in name server answers the app view', async () => {
    const did = await knownDid('did:plc:goodaaaaaaaaaaaaaaaaaaaa');
    const r = await get(appPort, getChildren, { headers: { authorization: `Bearer ${await validJwt(did, 'app.bulleted.getChildren')}` } });
    assertEqual(r.status, 200, `a valid token: ${r.text.slice(0, 200)}`);
    assert(names.asked.get('plc.fast.test') >= 1, 'the PLC directory\'s name was asked of the stand-in');
    const slow = await get(appPort, getChildren, { from: '127.0.0.3',
      headers: { authorization: `Bearer ${forgedJwt('did:web:probe.slow.test', 'app.bulleted.getChildren')}` } });
    assertEqual(slow.status, 401, `a token whose issuer's host never resolves: ${slow.text.slice(0, 200)}`);
    assert(names.asked.get('probe.slow.test') >= 1, 'the did:web host was asked of the stand-in');
    assert(!/name lookups|timed out|plc\.fast/.test(slow.text), `what a stranger is told: ${slow.text}`);
  });

  await runner.test('twelve addresses naming slow hosts fill the requests\' share of name lookups, and no more', async () => {
    let sent = 0;
    for (let a = 0; a < 12; a++) {
      for (let c = 0; c < 4; c++) {
        attacks.push((async () => {
          while (attacking) {
            const host = `${crypto.randomBytes(6).toString('hex')}.slow.test`;
            sent++;
            const r = await get(appPort, getChildren, { from: `127.0.1.${a + 1}`,
              headers: { authorization: `Bearer ${forgedJwt(`did:web:${host}`, 'app.bulleted.getChildren')}` } });
            if (![401, 503].includes(r.status)) unexpected.push(`${r.status} ${r.text.slice(0, 120)}`);
            await new Promise((resolve) => setTimeout(resolve, 50));
          }
        })());
      }
    }
    await waitFor('the requests\' share full and lookups refused', async () => {
      const text = await metrics();
      return metric(text, 'bulleted_name_lookups_running{share="requests"}') === 32 &&
        metric(text, 'bulleted_name_lookups_refused_total') > 0;
    }, 60000, 500);
    const text = await metrics();
    assertEqual(metric(text, 'bulleted_name_lookups_running{share="requests"}'), 32, 'the requests\' lookups');
    assert(sent > 48, `attacking requests sent: ${sent}`);
  });

  await runner.test('while it is full, the operator\'s directory is looked up and everyone else is served', async () => {
    for (const [i, did] of ['did:plc:goodbbbbbbbbbbbbbbbbbbbb', 'did:plc:goodcccccccccccccccccccc'].entries()) {
      await knownDid(did);
      // Not cached: the directory's name and the DID's document are looked up now.
      const r = await get(appPort, getChildren, { from: `127.0.0.${70 + i}`,
        headers: { authorization: `Bearer ${await validJwt(did, 'app.bulleted.getChildren')}` } });
      assertEqual(r.status, 200, `a valid token of a DID not seen before: ${r.text.slice(0, 200)}`);
    }
    const text = await metrics();
    assertEqual(metric(text, 'bulleted_name_lookups_running{share="requests"}'), 32, 'still full');
    for (let i = 0; i < 10; i++) {
      const r = await get(appPort, getChildren, { from: '127.0.0.80' });
      assertEqual(r.status, 200, `an unrelated request: ${r.text.slice(0, 200)}`);
    }
    assertEqual((await get(appPort, '/healthz', { from: '127.0.0.81' })).status, 200, 'health');
    // What strangers are told names neither the operator's hosts nor the
    // state of the name lookups (the detail is in the log).
    for (const [i, target] of [`/oauth/login?handle=${encodeURIComponent('someone.slow.test')}`,
      `/oauth/login?handle=${encodeURIComponent('did:web:someone.slow.test')}`,
      `/xrpc/com.atproto.identity.resolveHandle?handle=someone.slow.test`,
      `/xrpc/com.atproto.identity.resolveHandle?handle=someone.fast.test`].entries()) {
      const r = await get(appPort, target, { from: `127.0.0.${90 + i}` });
      assert(r.status >= 400, `${target}: ${r.status}`);
      assert(!/name lookups|timed out|plc\.fast|name server/i.test(r.text), `${target} told a stranger: ${r.text.slice(0, 300)}`);
    }
    assertEqual(unexpected, [], 'what the attackers were told');
  });
} finally {
  attacking = false;
  await Promise.allSettled(attacks);
  await stopProcess(app);
  directory.close();
  names.close();
}
process.exit(runner.finish());
