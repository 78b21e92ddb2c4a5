// OAuth end to end (pds mode): the app view as a confidential client of the
// real PDS's authorization server. The app view sits behind nginx with TLS
// (a certificate the test makes) at https://appview.bulleted.internal:PORT,
// a name the PDS resolves to 127.0.0.1 (--loopback-names) and trusts through
// NODE_EXTRA_CA_CERTS, so the PDS fetches the client metadata as it would on
// the network. Headless Chromium signs in through the PDS's own sign-in and
// consent pages, lands on the web outliner, creates, moves and deletes
// bullets (records checked in the user's repo, with the app view's keys);
// an expired access token is refreshed transparently; a cookie from another
// origin is refused; signing out revokes the tokens at the PDS.
// Release build only (run from tests/CMakeLists.txt outside the sanitizers).
// Usage: ./node22 ../oauth_e2e.mjs APPVIEW_BINARY WORKDIR   (from tests/e2e/pds)
import { execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import {
  Runner, Xrpc, assert, assertEqual, freePort, harnessRequire, here, launchChromium, listRecords, makeCertificate,
  screenshotDir, startAppview, startNginx, startPds, stopProcess, waitFor,
} from './lib.mjs';

const { oauthClientMetadataSchema } = harnessRequire('@atproto/oauth-types');

const [binary, workdir] = process.argv.slice(2);
fs.mkdirSync(workdir, { recursive: true });
const shots = screenshotDir();
const runner = new Runner();
const NAME = 'appview.bulleted.internal';
const SESSION_KEY = 'oauth-e2e-session-key-0123456789abcdef';

const tls = makeCertificate(path.join(workdir, 'tls'), NAME);
const { child: pds, info } = await startPds(path.join(workdir, 'pds'), ['--loopback-names'],
  { ...process.env, NODE_EXTRA_CA_CERTS: tls.ca });
const pdsXrpc = new Xrpc(info.pdsUrl, path.join(workdir, 'pds-xrpc.jsonl'));
const alice = info.accounts[0];
const appPort = await freePort();
const webPort = await freePort();
const publicUrl = `https://${NAME}:${webPort}`;
const dbPath = path.join(workdir, 'oauth.db');
process.env.BULLETED_SESSION_KEY = SESSION_KEY;
process.env.BULLETED_FAULT_INJECTION = '1';
process.env.BULLETED_PROCEDURE_RATE = '0';
const appview = startAppview(binary, ['--mode', 'pds', '--plc', info.plcUrl, '--handle-resolver', info.pdsUrl,
  '--db', dbPath, '--port', String(appPort), '--public-url', publicUrl], path.join(workdir, 'appview-oauth.log'));
const direct = `http://127.0.0.1:${appPort}`;
await waitFor('the app view', async () => (await fetch(`${direct}/healthz`)).ok);
const nginx = await startNginx(workdir, appPort, webPort, tls);
// The test CA is the PDS's to trust; the browser only needs the name.
const browser = await launchChromium([`--host-resolver-rules=MAP ${NAME} 127.0.0.1`, '--ignore-certificate-errors']);
const page = await browser.newPage();
const problems = [];
page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
await page.setViewport({ width: 1280, height: 900 });

const api = async (method, params) => {
  const url = new URL(`/xrpc/app.bulleted.${method}`, direct);
  for (const [k, v] of Object.entries(params)) if (v !== undefined) url.searchParams.set(k, v);
  const res = await fetch(url);
  return { status: res.status, body: await res.json() };
};
const recordsByText = async () => new Map((await listRecords(pdsXrpc, alice.did)).map((r) => [r.value.text, r]));
const rkeyOf = (uri) => uri.split('/').pop();
const textHandle = (text) => page.evaluateHandle((t) => [...document.querySelectorAll('.text')].find((e) => e.textContent === t), text);
const focusedOn = (text) => waitFor(`the caret in "${text}"`, () => page.evaluate((t) =>
  document.activeElement?.classList.contains('text') && document.activeElement.textContent === t, text), 10000);
// The cookie the browser holds for the app view.
const sessionCookie = async () => (await page.cookies(publicUrl)).find((c) => c.name === '__Host-bulleted_session');

// The session's tokens and DPoP key as stored (sealed with the session key:
// AES-256-GCM, key SHA-256 of it, base64(nonce || ciphertext || tag)).
async function storedSession() {
  const { DatabaseSync } = await import('node:sqlite');
  const db = new DatabaseSync(dbPath, { readOnly: true });
  const row = db.prepare('SELECT access_sealed, refresh_sealed, oauth_sealed FROM sessions WHERE did = ?').get(alice.did);
  db.close();
  const open = (sealed) => {
    const raw = Buffer.from(sealed, 'base64');
    const decipher = crypto.createDecipheriv('aes-256-gcm', crypto.createHash('sha256').update(SESSION_KEY).digest(),
      raw.subarray(0, 12));
    decipher.setAuthTag(raw.subarray(raw.length - 16));
    return Buffer.concat([decipher.update(raw.subarray(12, raw.length - 16)), decipher.final()]).toString();
  };
  return { access: open(row.access_sealed), refresh: open(row.refresh_sealed), grant: JSON.parse(open(row.oauth_sealed)) };
}

// A call to the PDS with a DPoP-bound token, as the app view makes them.
async function pdsCallWith({ access, grant }) {
  const d = Buffer.from(grant.dpopKey, 'base64url');
  const ecdh = crypto.createECDH('prime256v1');
  ecdh.setPrivateKey(d);
  const point = ecdh.getPublicKey();
  const jwk = { kty: 'EC', crv: 'P-256', x: point.subarray(1, 33).toString('base64url'), y: point.subarray(33).toString('base64url') };
  const key = crypto.createPrivateKey({ key: { ...jwk, d: d.toString('base64url') }, format: 'jwk' });
  const url = `${info.publicUrl}/xrpc/com.atproto.server.getSession`;
  const proof = (nonce) => {
    const b64 = (o) => Buffer.from(JSON.stringify(o)).toString('base64url');
    const input = `${b64({ typ: 'dpop+jwt', alg: 'ES256', jwk })}.${b64({ jti: crypto.randomUUID(), htm: 'GET', htu: url,
      iat: Math.floor(Date.now() / 1000), ath: crypto.createHash('sha256').update(access).digest('base64url'),
      ...(nonce ? { nonce } : {}) })}`;
    return `${input}.${crypto.sign('sha256', Buffer.from(input), { key, dsaEncoding: 'ieee-p1363' }).toString('base64url')}`;
  };
  let res = await fetch(url, { headers: { authorization: `DPoP ${access}`, dpop: proof() } });
  if (res.status === 401 && res.headers.get('dpop-nonce')) {
    res = await fetch(url, { headers: { authorization: `DPoP ${access}`, dpop: proof(res.headers.get('dpop-nonce')) } });
  }
  return res.status;
}

const authFull = JSON.parse(fs.readFileSync(path.join(here, '..', '..', 'schema', 'lexicons', 'app', 'bulleted', 'authFull.json'), 'utf8'));
try {
  await runner.test('the client metadata passes @atproto/oauth-types and names the published key', async () => {
    const metadata = await (await fetch(`${direct}/oauth/client-metadata.json`)).json();
    const parsed = oauthClientMetadataSchema.parse(metadata);
    assertEqual([parsed.client_id, parsed.redirect_uris[0], parsed.jwks_uri, parsed.scope, parsed.token_endpoint_auth_method,
      parsed.token_endpoint_auth_signing_alg, parsed.dpop_bound_access_tokens],
    [`${publicUrl}/oauth/client-metadata.json`, `${publicUrl}/oauth/callback`, `${publicUrl}/oauth/jwks.json`,
      // The repo: scopes the published permission set app.bulleted.authFull stands for.
      ['atproto', ...authFull.defs.main.permissions[0].collection.map((c) => `repo:${c}`)].join(' '),
      'private_key_jwt', 'ES256', true],
    'the confidential client\'s metadata');
    const jwks = await (await fetch(`${direct}/oauth/jwks.json`)).json();
    assertEqual(jwks.keys.map((k) => [k.kty, k.crv, k.alg, 'd' in k]), [['EC', 'P-256', 'ES256', false]], 'one public key');
    crypto.createPublicKey({ key: jwks.keys[0], format: 'jwk' });  // a usable key
    const restarted = await (await fetch(`${direct}/oauth/jwks.json`)).json();
    assertEqual(restarted.keys[0].kid, jwks.keys[0].kid, 'the same key on every answer');
  });

  await runner.test('a bad return path, a missing handle and a forged callback are refused', async () => {
    const away = await fetch(`${direct}/oauth/login?handle=${alice.handle}&returnTo=//evil.example/`, { redirect: 'manual' });
    assertEqual(away.status, 400, 'returnTo off this site');
    assertEqual((await fetch(`${direct}/oauth/login`, { redirect: 'manual' })).status, 400, 'no handle');
    const forged = await fetch(`${direct}/oauth/callback?state=made-up&code=x&iss=${encodeURIComponent(info.publicUrl)}`,
      { redirect: 'manual' });
    assertEqual(forged.status, 401, 'an unknown state');
    assert(!forged.headers.get('set-cookie'), 'no cookie');
  });

  await runner.test('Chromium signs in through the PDS\'s own sign-in and consent pages', async () => {
    await page.goto(`${publicUrl}/`);
    await page.waitForSelector('#handle-input:not(.hidden)');
    await page.type('#handle-input', alice.handle);
    await page.click('#signin-button');
    await page.waitForSelector('input[autocomplete="current-password"]', { timeout: 20000 });
    assert(page.url().startsWith(`${info.publicUrl}/oauth/authorize`), `at the PDS: ${page.url()}`);
    await page.type('input[autocomplete="current-password"]', alice.password);
    await page.click('button[type="submit"]');
    const authorize = await page.waitForFunction(() => [...document.querySelectorAll('button[type="submit"]')]
      .find((b) => b.textContent.trim() === 'Authorize'), { timeout: 20000 });
    await page.screenshot({ path: path.join(shots, 'oauth-consent.png') });
    await authorize.asElement().click();
    await waitFor('back on the outliner', async () => page.url().startsWith(`${publicUrl}/#/${alice.did}`), 20000);
    await waitFor('signed in', async () => (await page.$eval('#signed-in-as', (e) => e.textContent)) === `@${alice.handle}`, 10000);
    const cookie = await sessionCookie();
    assert(cookie && cookie.httpOnly && cookie.secure && cookie.sameSite === 'Lax', `an HttpOnly Secure Lax cookie: ${JSON.stringify(cookie)}`);
    const session = await page.evaluate(async () => (await fetch('/xrpc/app.bulleted.getSession')).json());
    assertEqual([session.did, session.handle, session.via], [alice.did, alice.handle, 'oauth'], 'getSession');
    assert(!(await page.evaluate(() => document.cookie)).includes('bulleted_session'), 'the cookie is not readable by scripts');
  });

  let first;
  await runner.test('bullets made, moved and deleted in the page are records in the user\'s repo', async () => {
    await page.waitForSelector('#add-node:not(.hidden)');
    await page.click('#add-node');
    await waitFor('a new bullet with the caret', () => page.evaluate(() => document.activeElement?.classList.contains('text')), 10000);
    await page.keyboard.type('first');
    await page.keyboard.press('Enter');
    await page.keyboard.type('second');
    await waitFor('both in the repo', async () => {
      const records = await recordsByText();
      return records.has('first') && records.has('second');
    }, 15000);
    await focusedOn('second');
    await page.keyboard.press('Tab');
    await waitFor('second under first in the repo', async () => {
      const records = await recordsByText();
      return records.get('second')?.value.parent === records.get('first').uri;
    }, 15000);
    const records = await recordsByText();
    first = rkeyOf(records.get('first').uri);
    for (const text of ['first', 'second']) {
      const record = records.get(text);
      const shown = (await api('getNode', { repo: alice.did, rkey: rkeyOf(record.uri) })).body;
      assertEqual([record.value.sortKey, shown.cid], [shown.sortKey, record.cid], `${text}: the app view's key and record`);
    }
    await focusedOn('second');
    for (let i = 0; i < 'second'.length; i++) await page.keyboard.press('Backspace');
    await page.keyboard.press('Backspace');
    await waitFor('second deleted from the repo', async () => !(await recordsByText()).has('second'), 15000);
    await page.screenshot({ path: path.join(shots, 'oauth-signed-in-1280.png') });
  });

  await runner.test('an access token the PDS refuses is refreshed transparently, once', async () => {
    const cookie = await sessionCookie();
    const before = await storedSession();
    const res = await fetch(`${direct}/xrpc/app.bulleted.createNode`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', cookie: `__Host-bulleted_session=${cookie.value}`, origin: publicUrl,
        'x-bulleted-inject-expired': '1' },
      body: JSON.stringify({ repo: alice.did, text: 'after a refresh' }),
    });
    assertEqual(res.status, 200, `the write after an expiry: ${await res.clone().text()}`);
    assert((await recordsByText()).has('after a refresh'), 'written to the repo');
    const after = await storedSession();
    assert(after.access !== before.access && after.access !== 'spoiled-access-token', 'new tokens stored');
    assertEqual(await pdsCallWith(after), 200, 'the new access token works at the PDS');
    // The page goes on with the refreshed session.
    const el = await textHandle('first');
    await el.click();
    await page.keyboard.press('End');
    await page.keyboard.type(' edited');
    await waitFor('the edit in the repo', async () => (await recordsByText()).has('first edited'), 15000);
  });

  await runner.test('an import writes through the session with swapCommit, past a change made elsewhere', async () => {
    // Another client appends to the top level first: the index (no firehose
    // here) is behind, so the import's first commit cannot swap on it, and
    // the root the import planned last is no longer last.
    const top = (await api('getChildren', { repo: alice.did, limit: 100 })).body.nodes;
    const after = execFileSync(binary, ['keys', 'between', top.at(-1).sortKey, '-'], { encoding: 'utf8' }).trim();
    const elsewhere = await pdsXrpc.ok('com.atproto.repo.createRecord', { token: alice.accessJwt, body: {
      repo: alice.did, collection: 'app.bulleted.node',
      record: { $type: 'app.bulleted.node', text: 'written elsewhere', sortKey: after, createdAt: new Date().toISOString() } } });
    const cookie = await sessionCookie();
    const lines = Array.from({ length: 450 }, (_, i) => `- imported ${i}`).join('\n');
    const res = await fetch(`${direct}/xrpc/app.bulleted.importOutline`, {
      method: 'POST',
      // The stored access token is spoiled as well: the job refreshes it.
      headers: { 'content-type': 'application/json', cookie: `__Host-bulleted_session=${cookie.value}`, origin: publicUrl,
        'x-bulleted-inject-expired': '1' },
      body: JSON.stringify({ repo: alice.did, format: 'text', content: lines }),
    });
    const job = await res.json();
    assertEqual(res.status, 200, `importOutline: ${JSON.stringify(job)}`);
    await waitFor('the import done', async () => {
      const state = (await api('getImportJob', { id: job.jobId })).body;
      if (state.state === 'failed') throw new Error(`the import failed: ${state.errors}`);
      return state.state === 'done';
    }, 60000);
    const records = await listRecords(pdsXrpc, alice.did);
    const imported = records.filter((r) => /^imported \d+$/.test(r.value.text));
    assertEqual(imported.length, 450, 'every imported bullet once');
    assertEqual(new Set(imported.map((r) => r.value.text)).size, 450, 'no bullet twice');
    assert(records.some((r) => r.uri === elsewhere.json.uri), 'the other client\'s record is still there');
    const log = fs.readFileSync(path.join(workdir, 'appview-oauth.log'), 'utf8');
    assert(/the repo changed meanwhile; refreshing it/.test(log), 'the swap failed once and the job refreshed');
    const shown = (await api('getNode', { repo: alice.did, rkey: rkeyOf(elsewhere.json.uri) })).body;
    assertEqual(shown.text, 'written elsewhere', 'the refresh indexed the other client\'s record');
    // The root was placed again: last, after the other client's bullet.
    const now = (await api('getChildren', { repo: alice.did, limit: 100 })).body.nodes;
    assertEqual([now.at(-1).rkey, now.at(-2).rkey], [job.rootRkey, rkeyOf(elsewhere.json.uri)], 'the import\'s root last');
    assert(now.at(-1).sortKey > now.at(-2).sortKey, 'with a key after the other bullet\'s');
  });

  await runner.test('a cookie call from another origin, or from none, is refused', async () => {
    const cookie = await sessionCookie();
    for (const origin of ['https://evil.example', undefined]) {
      const res = await fetch(`${direct}/xrpc/app.bulleted.createNode`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', cookie: `__Host-bulleted_session=${cookie.value}`, ...(origin ? { origin } : {}) },
        body: JSON.stringify({ repo: alice.did, text: 'csrf' }),
      });
      const body = await res.json();
      assertEqual([res.status, body.error], [403, 'Forbidden'], `Origin ${origin}: ${body.message}`);
    }
    assert(!(await recordsByText()).has('csrf'), 'nothing written');
  });

  await runner.test('signing out revokes the tokens at the PDS and ends the session', async () => {
    const stored = await storedSession();
    assertEqual(await pdsCallWith(stored), 200, 'the access token works before');
    const cookie = await sessionCookie();
    await page.click('#signout-button');
    await page.waitForSelector('#handle-input:not(.hidden)');
    assertEqual(await pdsCallWith(stored), 401, 'the PDS refuses the revoked access token');
    const res = await fetch(`${direct}/xrpc/app.bulleted.getSession`, { headers: { cookie: `__Host-bulleted_session=${cookie.value}` } });
    assertEqual(res.status, 401, 'the old cookie names no session');
    assert(!(await sessionCookie()), 'the browser dropped the cookie');
    // The page opens the outline again, read-only, after showing the sign-in
    // box: wait for its first bullet, then look at it.
    await page.waitForSelector('#outline .text');
    assertEqual(await page.$eval('#outline .text', (e) => e.contentEditable), 'false', 'read-only again');
    assertEqual(problems, [], 'no page errors');
    // No secret of the session reached the log.
    const log = fs.readFileSync(path.join(workdir, 'appview-oauth.log'), 'utf8');
    for (const [what, secret] of [['access token', stored.access], ['refresh token', stored.refresh],
      ['DPoP key', stored.grant.dpopKey], ['cookie', cookie.value], ['password', alice.password]]) {
      assert(!log.includes(secret), `the ${what} is not in the log`);
    }
    assert(!/eyJ[\w-]{10,}\.eyJ[\w-]{10,}/.test(log), 'nothing shaped like a JWT in the log');
  });
} finally {
  await browser.close();
  await stopProcess(nginx);
  await stopProcess(appview);
  await stopProcess(pds);
}
process.exit(runner.finish());
