// Service auth end to end: JWTs minted by the real PDS
// (com.atproto.server.getServiceAuth for the app view's DID and a method)
// call the app view as their account. Local mode writes only for the DIDs
// auth.localServiceAuth allows; pds mode writes through the caller's stored
// session. Wrong lxm, wrong aud, expired, replayed, another key's signature
// and alg none are refused with 401 and a WWW-Authenticate challenge.
// Usage: ./node22 ../service_auth_e2e.mjs APPVIEW_BINARY WORKDIR   (from tests/e2e/pds)
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import {
  Runner, Xrpc, assert, assertEqual, freePort, listRecords, sleep, startAppview, startPds, stopProcess, waitFor,
} from './lib.mjs';

const [binary, workdir] = process.argv.slice(2);
fs.mkdirSync(workdir, { recursive: true });
const runner = new Runner();
const { child: pds, info } = await startPds(workdir);
const pdsXrpc = new Xrpc(info.pdsUrl, path.join(workdir, 'xrpc.jsonl'));
const [alice, bob] = info.accounts;
const SERVICE_DID = 'did:web:appview.bulleted.internal';

async function serve(name, args, env = {}) {
  const port = await freePort();
  Object.assign(process.env, env);
  const child = startAppview(binary, ['--plc', info.plcUrl, '--db', path.join(workdir, `${name}.db`),
    '--port', String(port), '--public-url', 'https://appview.bulleted.internal', ...args],
  path.join(workdir, `appview-${name}.log`));
  for (const key of Object.keys(env)) delete process.env[key];
  const base = `http://127.0.0.1:${port}`;
  await waitFor(`the ${name} app view`, async () => (await fetch(`${base}/xrpc/_health`)).ok);
  return { child, base, xrpc: new Xrpc(base, path.join(workdir, `${name}.jsonl`)) };
}

// A token from the account's PDS for `lxm` (and `aud`, `exp` when given).
async function serviceToken(account, lxm, { aud = SERVICE_DID, exp } = {}) {
  const r = await pdsXrpc.ok('com.atproto.server.getServiceAuth',
    { params: { aud, lxm, exp }, token: account.accessJwt });
  return r.json.token;
}

const decode = (part) => JSON.parse(Buffer.from(part, 'base64url').toString());
const encode = (object) => Buffer.from(JSON.stringify(object)).toString('base64url');

// The refusal of a call with `token`: 401, the reason in the message and the challenge.
async function refused(target, nsid, token, reason, body) {
  const r = await target.xrpc.call(nsid, body === undefined
    ? { params: { repo: alice.did, rkey: '3aaaaaaaaaaaa' }, token }
    : { body, token });
  assertEqual(r.status, 401, `${nsid} with ${reason}: ${JSON.stringify(r.json)}`);
  assertEqual(r.json.error, 'AuthRequired', 'the error name');
  assert(r.json.message.includes(reason), `"${r.json.message}" says ${reason}`);
  assert(/^Bearer realm="bulleted", error="invalid_token"/.test(r.headers['www-authenticate'] ?? ''),
    `a challenge: ${r.headers['www-authenticate']}`);
}

const local = await serve('local', [], { BULLETED_LOCAL_SERVICE_AUTH: alice.did });
const node = (text) => ({ repo: alice.did, text });

await runner.test('the app view names its DID, and a PDS mints tokens for it', async () => {
  const doc = await (await fetch(`${local.base}/.well-known/did.json`)).json();
  assertEqual(doc.id, SERVICE_DID, 'the DID document');
  const token = await serviceToken(alice, 'app.bulleted.createNode');
  const [header, payload] = token.split('.').map((p, i) => (i < 2 ? decode(p) : p));
  assertEqual([header.alg, payload.iss, payload.aud, payload.lxm], ['ES256K', alice.did, SERVICE_DID,
    'app.bulleted.createNode'], 'the token is the PDS\'s, for this method');
});

await runner.test('local mode: an allowed DID writes its own repo with a PDS token', async () => {
  const created = await local.xrpc.call('app.bulleted.createNode',
    { body: node('written with service auth'), token: await serviceToken(alice, 'app.bulleted.createNode') });
  assertEqual(created.status, 200, `createNode: ${JSON.stringify(created.json)}`);
  const shown = await local.xrpc.ok('app.bulleted.getNode',
    { params: { repo: alice.did, rkey: created.json.rkey }, token: await serviceToken(alice, 'app.bulleted.getNode') });
  assertEqual(shown.json.text, 'written with service auth', 'a query with a token of its own');
  // Not another repo, and not a DID the operator did not allow.
  const other = await local.xrpc.call('app.bulleted.createNode',
    { body: { repo: bob.did, text: 'x' }, token: await serviceToken(alice, 'app.bulleted.createNode') });
  assertEqual(other.status, 403, 'alice may not write bob\'s repo');
  const notAllowed = await local.xrpc.call('app.bulleted.createNode',
    { body: { repo: bob.did, text: 'x' }, token: await serviceToken(bob, 'app.bulleted.createNode') });
  assertEqual([notAllowed.status, notAllowed.json.error], [403, 'Forbidden'], 'bob is not in auth.localServiceAuth');
  assert(notAllowed.json.message.includes('auth.localServiceAuth'), notAllowed.json.message);
});

await runner.test('wrong lxm, wrong aud, expired, replayed, forged and unsigned tokens are refused', async () => {
  await refused(local, 'app.bulleted.createNode', await serviceToken(alice, 'app.bulleted.deleteNode'),
    'lxm app.bulleted.deleteNode is not the method called', node('x'));
  await refused(local, 'app.bulleted.createNode',
    await serviceToken(alice, 'app.bulleted.createNode', { aud: 'did:web:elsewhere.bulleted.internal' }),
    'is not this app view', node('x'));
  await refused(local, 'app.bulleted.getNode', await serviceToken(alice, 'app.bulleted.getNode',
    { aud: 'did:web:elsewhere.bulleted.internal' }), 'is not this app view');
  // Replayed: the same token twice.
  const once = await serviceToken(alice, 'app.bulleted.createNode');
  const first = await local.xrpc.call('app.bulleted.createNode', { body: node('once'), token: once });
  assertEqual(first.status, 200, 'the first use');
  await refused(local, 'app.bulleted.createNode', once, 'jti replayed', node('twice'));
  // Another key: the PDS's claims, signed by a stranger.
  const [h, p] = (await serviceToken(alice, 'app.bulleted.createNode')).split('.');
  const { privateKey } = crypto.generateKeyPairSync('ec', { namedCurve: 'secp256k1' });
  const signature = crypto.sign('sha256', Buffer.from(`${h}.${p}`), { key: privateKey, dsaEncoding: 'ieee-p1363' });
  await refused(local, 'app.bulleted.createNode', `${h}.${p}.${signature.toString('base64url')}`,
    'does not verify with the #atproto key', node('x'));
  // alg none, over the PDS's own claims.
  const claims = decode((await serviceToken(alice, 'app.bulleted.createNode')).split('.')[1]);
  await refused(local, 'app.bulleted.createNode', `${encode({ alg: 'none', typ: 'JWT' })}.${encode(claims)}.`,
    'alg none is refused', node('x'));
  // Expired: the PDS refuses an exp in the past, so take a short one and outlive it.
  const soon = await serviceToken(alice, 'app.bulleted.createNode', { exp: Math.floor(Date.now() / 1000) + 1 });
  await sleep(7500);
  await refused(local, 'app.bulleted.createNode', soon, 'expired', node('x'));
  // Nothing refused was written.
  const nodes = await local.xrpc.ok('app.bulleted.getChildren', { params: { repo: alice.did } });
  assertEqual(nodes.json.nodes.map((n) => n.text).sort(), ['once', 'written with service auth'], 'alice\'s nodes');
  const bobs = await local.xrpc.ok('app.bulleted.getChildren', { params: { repo: bob.did } });
  assertEqual(bobs.json.nodes, [], 'bob\'s repo');
});

await runner.test('local mode with auth.localServiceAuth off refuses every service-auth write', async () => {
  const off = await serve('local-off', []);
  try {
    const r = await off.xrpc.call('app.bulleted.createNode',
      { body: node('x'), token: await serviceToken(alice, 'app.bulleted.createNode') });
    assertEqual([r.status, r.json.error], [403, 'Forbidden'], JSON.stringify(r.json));
    const q = await off.xrpc.call('app.bulleted.getChildren',
      { params: { repo: alice.did }, token: await serviceToken(alice, 'app.bulleted.getChildren') });
    assertEqual(q.status, 200, 'queries take a valid token in any mode');
  } finally {
    await stopProcess(off.child);
  }
});

await runner.test('pds mode: a service-auth caller writes through its stored session', async () => {
  const pdsMode = await serve('pds', ['--mode', 'pds', '--handle-resolver', info.pdsUrl],
    { BULLETED_SESSION_KEY: 'service-auth-e2e-session-key-0123456789', BULLETED_ALLOW_PASSWORD_SESSIONS: '1' });
  try {
    const before = await pdsMode.xrpc.call('app.bulleted.createNode',
      { body: node('no session yet'), token: await serviceToken(alice, 'app.bulleted.createNode') });
    assertEqual(before.status, 401, `without a session: ${JSON.stringify(before.json)}`);
    assert(before.json.message.includes('sign in'), before.json.message);
    await pdsMode.xrpc.ok('app.bulleted.createSession', { body: { identifier: alice.handle, password: alice.password } });
    const created = await pdsMode.xrpc.call('app.bulleted.createNode',
      { body: node('through the PDS'), token: await serviceToken(alice, 'app.bulleted.createNode') });
    assertEqual(created.status, 200, `createNode: ${JSON.stringify(created.json)}`);
    const records = await listRecords(pdsXrpc, alice.did);
    const record = records.find((r) => r.uri === created.json.uri);
    assert(record, 'the record is in alice\'s repo');
    assertEqual([record.value.text, record.value.sortKey], ['through the PDS', created.json.sortKey],
      'with the app view\'s key');
  } finally {
    await stopProcess(pdsMode.child);
  }
});

await stopProcess(local.child);
await stopProcess(pds);
process.exit(runner.finish());
