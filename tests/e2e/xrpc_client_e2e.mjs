// Every method through the official client: @atproto/xrpc's XrpcClient
// loaded with the repo's own lexicons (schema/lexicons), against a running
// app view in local mode. The client checks every answer against the
// method's lexicon (XRPCInvalidResponseError otherwise); every error must
// carry a name the method declares or a standard XRPC one. Paging, errors,
// exportOutline's documents, resolveHandle (the PDS harness as handle
// resolver) and CORS (preflights, headers, a configured origin list).
// Usage: ./node22 ../xrpc_client_e2e.mjs APPVIEW_BINARY WORKDIR   (from tests/e2e/pds)
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import {
  Runner, assert, assertEqual, freePort, projectLexicons, startPds, stopProcess, track, waitFor,
} from './lib.mjs';

const harness = createRequire(new URL('./pds/package.json', import.meta.url));
const load = (name) => import(pathToFileURL(harness.resolve(name)).href);
const { XrpcClient, XRPCError, XRPCInvalidResponseError } = await load('@atproto/xrpc');

const [binary, workdir] = process.argv.slice(2);
fs.mkdirSync(workdir, { recursive: true });
const runner = new Runner();

// The project's lexicons, as a frontend would load them.
const lexicons = projectLexicons();
const declared = (nsid) => new Set((lexicons.getDef(nsid)?.errors ?? []).map((e) => e.name));
// The error names XRPC itself defines, valid for any method.
const STANDARD = new Set(['InvalidRequest', 'AuthenticationRequired', 'Forbidden', 'ExpiredToken', 'InvalidToken',
  'MethodNotImplemented', 'PayloadTooLarge', 'RateLimitExceeded', 'InternalServerError', 'UpstreamFailure',
  'NotEnoughResources', 'UpstreamTimeout']);

const { child: pds, info } = await startPds(path.join(workdir, 'pds'));
const account = info.accounts[0];
const dbPath = path.join(workdir, 'client.db');
const alice = 'did:plc:aliceclienttest';
const bob = 'did:plc:bobclienttest';
const token = (did) => execFileSync(binary, ['token', 'create', '--did', did, '--db', dbPath], { encoding: 'utf8' }).trim();
const aliceToken = token(alice);
const bobToken = token(bob);

async function serve(extraEnv = {}, extraArgs = [], db = dbPath) {
  const port = await freePort();
  const log = fs.openSync(path.join(workdir, `serve-${port}.log`), 'a');
  const child = track(spawn(binary, ['serve', '--db', db, '--port', String(port), '--handle-resolver', info.pdsUrl,
    ...extraArgs],
    { stdio: ['ignore', log, log], env: { ...process.env, BULLETED_PROCEDURE_RATE: '0', ...extraEnv } }));
  await waitFor('the server', async () => (await fetch(`http://127.0.0.1:${port}/healthz`).catch(() => null))?.ok, 15000);
  return { child, port, base: `http://127.0.0.1:${port}` };
}

const server = await serve();
const client = new XrpcClient({ service: server.base }, lexicons);
const auth = (t = aliceToken) => ({ headers: { authorization: `Bearer ${t}` } });
const calls = new Map();  // nsid -> answers validated
const q = async (nsid, params) => {
  const res = await client.call(`app.bulleted.${nsid}`, params);
  calls.set(nsid, (calls.get(nsid) ?? 0) + 1);
  return res.data;
};
const p = async (nsid, body, t) => {
  const res = await client.call(`app.bulleted.${nsid}`, undefined, body, auth(t));
  calls.set(nsid, (calls.get(nsid) ?? 0) + 1);
  return res.data;
};
// A call that must fail with `name`, which the method must declare (or XRPC).
async function fails(name, nsid, fn) {
  const full = nsid.includes('.') ? nsid : `app.bulleted.${nsid}`;
  try {
    await fn();
  } catch (err) {
    assert(!(err instanceof XRPCInvalidResponseError), `${full}: an invalid answer: ${err.message}`);
    assert(err instanceof XRPCError, `${full}: ${err}`);
    assertEqual(err.error, name, `${full}: the error name (${err.message})`);
    assert(declared(full).has(err.error) || STANDARD.has(err.error),
      `${full} answers ${err.error}, which its lexicon does not declare`);
    return err;
  }
  throw new Error(`${full} should have failed with ${name}`);
}

try {
  await runner.test('every method answers what its lexicon allows, in the official client', async () => {
    const top = [];
    for (let i = 0; i < 5; i++) top.push(await p('createNode', { repo: alice, text: `top ${i}` }));
    const first = top[0].rkey;
    const child = await p('createNode', { repo: alice, parentRkey: first, text: 'child', note: 'a note' });
    const grandchild = await p('createNode', { repo: alice, parentRkey: child.rkey, text: 'grandchild **bold**' });
    const between = await p('createNode', { repo: alice, afterRkey: top[1].rkey, text: 'between 1 and 2' });

    // The published getOutline: pre-order, one limit across levels, the
    // zoomed bullet as root, the note beside its row.
    const outlined = await q('getOutline', { did: alice, depth: 5, limit: 100 });
    assertEqual([outlined.did, outlined.stop, outlined.truncated], [alice, 'complete', false], 'the whole outline');
    const at = (rkey) => outlined.nodes.findIndex((n) => n.rkey === rkey);
    assert(at(first) < at(child.rkey) && at(child.rkey) < at(grandchild.rkey) &&
      at(grandchild.rkey) < at(top[1].rkey), 'pre-order');
    assertEqual(outlined.nodes[at(child.rkey)].note, 'a note', 'the note of the row');
    const zoomed = await q('getOutline', { did: alice, node: first, depth: 1, limit: 1 });
    assertEqual([zoomed.root.rkey, zoomed.nodes.map((n) => n.rkey), zoomed.stop, zoomed.truncated],
      [first, [child.rkey], 'depth', true], 'zoomed, cut by depth');
    assertEqual(zoomed.nodes[0].childCount, 1, 'a row counts the children it leaves out');
    const cut = await q('getOutline', { did: alice, limit: 2 });
    assertEqual([cut.nodes.length, cut.stop, cut.truncated], [2, 'limit', true], 'cut by the limit');

    const shown = await q('getNode', { repo: alice, rkey: first });
    assert(!('parent' in shown), 'a top-level node has no parent field');
    assertEqual((await q('getNode', { repo: alice, rkey: child.rkey })).parent, first, 'a child names its parent');

    // Pages of two until there is no cursor; the same backwards.
    const paged = async (reverse) => {
      const out = [];
      let cursor;
      do {
        const page = await q('getChildren', { repo: alice, limit: 2, cursor, reverse });
        out.push(...page.nodes.map((n) => n.rkey));
        cursor = page.cursor;
      } while (cursor);
      return out;
    };
    const forward = await paged(false);
    assertEqual(forward, [first, top[1].rkey, between.rkey, ...top.slice(2).map((n) => n.rkey)], 'pages in order');
    assertEqual(await paged(true), [...forward].reverse(), 'pages backwards');
    const window = await q('getWindow', { repo: alice, anchor: between.rkey, before: 1, after: 1 });
    assertEqual(window.nodes.map((n) => n.rkey), [top[1].rkey, between.rkey, top[2].rkey], 'the window');
    const subtree = await q('getSubtree', { repo: alice, root: first, depth: 5 });
    assertEqual(subtree.node.rkey, first, 'the subtree root');
    assertEqual(subtree.children[0].children[0].node.rkey, grandchild.rkey, 'the subtree grandchild');
    const whole = await q('getSubtree', { repo: alice, depth: 1 });
    assert(!('node' in whole) && whole.children.length === 6, 'the top of the outline');
    const ancestors = await q('getAncestors', { repo: alice, rkey: grandchild.rkey });
    assertEqual(ancestors.ancestors.map((n) => n.rkey), [first, child.rkey], 'ancestors, root first');
    assertEqual(await q('getPosition', { repo: alice, rkey: between.rkey }), { index: 2, siblingCount: 6 }, 'position');
    await p('updateNode', { repo: alice, rkey: top[2].rkey, text: 'top 2 #Plan with Café', note: 'café note' });
    const found = await q('searchNodes', { repo: alice, q: 'cafe #plan', sort: 'outline', limit: 5 });
    assertEqual(found.results.map((r) => r.node.rkey), [top[2].rkey], 'searchNodes');
    assertEqual(found.results[0].highlights.map((h) => h.field), ['text', 'text', 'note'], 'the highlights');
    const scoped = await q('searchNodes', { repo: alice, q: 'grandchild', root: child.rkey });
    assertEqual(scoped.results[0].ancestors.map((a) => a.rkey), [first, child.rkey], 'a result\'s ancestors');
    assertEqual((await q('getTags', { repo: alice, prefix: '#p' })).tags, [{ tag: '#plan', count: 1 }], 'getTags');

    await p('updateNode', { repo: alice, rkey: child.rkey, text: 'child, edited', completed: true });
    await p('moveNode', { repo: alice, rkey: grandchild.rkey, parentRkey: top[4].rkey });
    const deleted = await p('deleteNode', { repo: alice, rkey: top[3].rkey });
    assertEqual(deleted.deleted, 1, 'one node deleted');

    // Changes in pages of three, from the start.
    const changes = [];
    let cursor;
    for (;;) {
      const page = await q('getChanges', { repo: alice, limit: 3, cursor });
      changes.push(...page.changes);
      if (page.changes.length === 0) break;
      cursor = page.cursor;
    }
    assert(changes.some((c) => c.op === 'delete' && c.rkey === top[3].rkey && !('node' in c)), 'a delete has no node');
    assert(changes.some((c) => c.op === 'upsert' && c.node.rkey === child.rkey && c.node.completed), 'the update');

    const opml = await q('exportOutline', { repo: alice, format: 'opml' });
    const text = typeof opml === 'string' ? opml : new TextDecoder().decode(opml);
    assert(text.includes('<opml') && text.includes('child, edited'), 'the OPML document');
    // One export per client at a time (limits.maxConcurrentExports): the
    // first one's slot is freed just after its last byte, so a client asking
    // again at once may be told to wait, as the 429 says.
    const plain = await waitFor('the second export', () => q('exportOutline', { repo: alice, root: first, format: 'text' })
      .catch((err) => { if (/still running/.test(err.message)) return null; throw err; }), 10000, 200);
    const plainText = typeof plain === 'string' ? plain : new TextDecoder().decode(plain);
    assert(plainText.includes('child, edited') && !plainText.includes('top 2'), 'the subtree as text');

    const job = await p('importOutline', { repo: alice, format: 'text', content: '- imported\n  - under it\n- second\n' });
    let state;
    await waitFor('the import', async () => {
      state = await q('getImportJob', { id: job.jobId });
      return state.state === 'done';
    }, 30000);
    assertEqual([state.done, state.total], [4, 4], 'the import\'s root and the three nodes under it');
    assertEqual((await q('getChildren', { repo: alice, parent: job.rootRkey })).nodes.length, 2, 'under the import root');
  });

  await runner.test('errors carry names their lexicons declare', async () => {
    const some = (await q('getChildren', { repo: alice })).nodes;
    await fails('NotFound', 'getNode', () => q('getNode', { repo: alice, rkey: 'nosuchnode' }));
    await fails('NotFound', 'getAncestors', () => q('getAncestors', { repo: alice, rkey: 'nosuchnode' }));
    await fails('NotFound', 'getWindow', () => q('getWindow', { repo: alice, anchor: 'nosuchnode' }));
    await fails('NotFound', 'getPosition', () => q('getPosition', { repo: alice, rkey: 'nosuchnode' }));
    await fails('NotFound', 'getImportJob', () => q('getImportJob', { id: 'nosuchjob' }));
    // getOutline: an unknown DID and an unknown bullet are the same answer.
    await fails('NotFound', 'getOutline', () => q('getOutline', { did: 'did:plc:nobodyhereatall' }));
    await fails('NotFound', 'getOutline', () => q('getOutline', { did: alice, node: 'nosuchnode' }));
    await fails('FutureCursor', 'getChanges', () => q('getChanges', { repo: alice, cursor: '999999999' }));
    await fails('NotFound', 'exportOutline', () => q('exportOutline', { repo: alice, root: 'nosuchnode', format: 'text' }));
    await fails('InvalidRequest', 'getChildren', () => q('getChildren', { repo: 'not a did' }));
    await fails('InvalidRequest', 'searchNodes', () => q('searchNodes', { repo: alice, q: '-only' }));
    await fails('NotFound', 'searchNodes', () => q('searchNodes', { repo: alice, q: 'x', root: 'nosuchnode' }));
    await fails('InvalidNeighbour', 'createNode', () => p('createNode', { repo: alice, afterRkey: 'nosuchnode', text: 'x' }));
    await fails('WouldCycle', 'moveNode', async () => {
      const parent = some[0].rkey;
      const under = await p('createNode', { repo: alice, parentRkey: parent, text: 'under' });
      await p('moveNode', { repo: alice, rkey: parent, parentRkey: under.rkey });
    });
    await fails('NotFound', 'updateNode', () => p('updateNode', { repo: alice, rkey: 'nosuchnode', text: 'x' }));
    await fails('NotFound', 'deleteNode', () => p('deleteNode', { repo: alice, rkey: 'nosuchnode' }));
    await fails('AuthRequired', 'createNode', () => client.call('app.bulleted.createNode', undefined, { repo: alice, text: 'x' }));
    await fails('AuthRequired', 'updateNode', () => p('updateNode', { repo: alice, rkey: some[0].rkey, text: 'x' }, 'not-a-token'));
    await fails('Forbidden', 'deleteNode', () => p('deleteNode', { repo: alice, rkey: some[0].rkey }, bobToken));
    // Who is calling: a local token's DID; nobody without one.
    const me = await client.call('app.bulleted.getSession', {}, undefined, auth());
    calls.set('getSession', 1);
    assertEqual([me.data.did, me.data.via], [alice, 'token'], 'getSession with a local token');
    await fails('AuthRequired', 'getSession', () => client.call('app.bulleted.getSession', {}));
    await fails('InvalidRequest', 'importOutline', () => p('importOutline', { repo: alice, format: 'opml', content: '<opml><body><outline' }));
    // Sessions are pds mode's: local mode says so in a standard way.
    await fails('MethodNotImplemented', 'createSession', () => p('createSession', { identifier: 'a', password: 'b' }));
  });

  await runner.test('com.atproto.identity.resolveHandle answers through the identity room', async () => {
    const res = await client.call('com.atproto.identity.resolveHandle', { handle: account.handle });
    assertEqual(res.data.did, account.did, 'the handle resolves to its DID');
    await fails('HandleNotFound', 'com.atproto.identity.resolveHandle',
      () => client.call('com.atproto.identity.resolveHandle', { handle: 'nobody.test' }));
    await fails('InvalidRequest', 'com.atproto.identity.resolveHandle',
      () => client.call('com.atproto.identity.resolveHandle', { handle: 'not a handle' }));
  });

  await runner.test('CORS: preflights answered 204, every XRPC answer readable from any origin', async () => {
    const preflight = await fetch(`${server.base}/xrpc/app.bulleted.createNode`, { method: 'OPTIONS', headers: {
      Origin: 'https://outliner.example', 'Access-Control-Request-Method': 'POST',
      'Access-Control-Request-Headers': 'authorization, content-type, atproto-proxy' } });
    assertEqual(preflight.status, 204, 'the preflight status');
    assertEqual(preflight.headers.get('access-control-allow-origin'), '*', 'any origin');
    assert(/POST/.test(preflight.headers.get('access-control-allow-methods')), 'POST allowed');
    assertEqual(preflight.headers.get('access-control-allow-headers'), 'authorization, content-type, atproto-proxy',
      'the requested headers');
    assertEqual(preflight.headers.get('access-control-max-age'), '86400', 'a day');
    assertEqual(preflight.headers.get('access-control-allow-credentials'), null, 'never with credentials');
    for (const url of [`${server.base}/xrpc/app.bulleted.getChildren?repo=${alice}`, `${server.base}/xrpc/_health`,
      `${server.base}/xrpc/app.bulleted.getNode?repo=${alice}&rkey=nosuchnode`]) {
      const res = await fetch(url, { headers: { Origin: 'https://outliner.example' } });
      assertEqual(res.headers.get('access-control-allow-origin'), '*', `${url}: allow-origin`);
      const exposed = res.headers.get('access-control-expose-headers') ?? '';
      for (const name of ['RateLimit-Remaining', 'Retry-After', 'Atproto-Repo-Rev', 'WWW-Authenticate']) {
        assert(exposed.includes(name), `${url}: ${name} exposed`);
      }
    }
    // A change stream's answer too, and its refusals.
    const abort = new AbortController();
    const stream = await fetch(`${server.base}/xrpc/app.bulleted.streamChanges?repo=${alice}`,
      { headers: { Origin: 'https://outliner.example' }, signal: abort.signal });
    assertEqual([stream.status, stream.headers.get('access-control-allow-origin')], [200, '*'], 'a stream is readable');
    assert(stream.headers.get('content-type').startsWith('text/event-stream'), 'an event stream');
    abort.abort();
    await fails('InvalidRequest', 'streamChanges', () => q('streamChanges', { repo: alice, cursor: 'nope' }));
    // A refusal decided before the body is read carries them too.
    const refused = await fetch(`${server.base}/xrpc/app.bulleted.createNode`, { method: 'POST',
      headers: { Origin: 'https://outliner.example', 'content-type': 'application/json' }, body: '{}' });
    assertEqual(refused.status, 401, 'no token');
    assertEqual(refused.headers.get('access-control-allow-origin'), '*', 'the 401 is readable');
    // Without service.publicUrl there is no DID document.
    assertEqual((await fetch(`${server.base}/.well-known/did.json`)).status, 404, 'no DID document');
  });

  await runner.test('CORS with a configured origin list answers those origins alone', async () => {
    const listed = await serve({ BULLETED_CORS_ORIGINS: 'https://outliner.example, https://other.example',
      BULLETED_PUBLIC_URL: 'https://appview.example' });
    try {
      const ask = (origin) => fetch(`${listed.base}/xrpc/app.bulleted.getChildren?repo=${alice}`, { headers: { Origin: origin } });
      const allowed = await ask('https://outliner.example');
      assertEqual(allowed.headers.get('access-control-allow-origin'), 'https://outliner.example', 'a listed origin');
      assert(/Origin/.test(allowed.headers.get('vary') ?? ''), 'Vary: Origin');
      assertEqual((await ask('https://evil.example')).headers.get('access-control-allow-origin'), null, 'another origin');
      const preflight = await fetch(`${listed.base}/xrpc/app.bulleted.createNode`, { method: 'OPTIONS',
        headers: { Origin: 'https://evil.example', 'Access-Control-Request-Method': 'POST' } });
      assertEqual(preflight.status, 204, 'still answered');
      assertEqual(preflight.headers.get('access-control-allow-methods'), null, 'but allows nothing');
      // With a public URL, the app view's DID document names its service.
      const doc = await (await fetch(`${listed.base}/.well-known/did.json`)).json();
      assertEqual(doc.id, 'did:web:appview.example', 'the derived did:web');
      assertEqual(doc.service.map((s) => [s.id, s.type, s.serviceEndpoint]),
        [['#bulleted_appview', 'BulletedAppView', 'https://appview.example']], 'the service entry');
    } finally {
      await stopProcess(listed.child);
    }
  });

  await runner.test('pds mode: sessions and a write through the PDS, in the official client', async () => {
    // The PDS its DID documents name is an http address on 127.0.0.1: the
    // test network's, which only this setting lets the app view reach.
    const pdsMode = await serve({ BULLETED_SESSION_KEY: 'client-e2e-session-key-0123456789abcdef',
      BULLETED_ALLOW_PASSWORD_SESSIONS: '1', BULLETED_ALLOW_PRIVATE_ADDRESSES: '1' },
      ['--mode', 'pds', '--plc', info.plcUrl], path.join(workdir, 'pds-mode.db'));
    try {
      const other = new XrpcClient({ service: pdsMode.base }, lexicons);
      const signed = await other.call('app.bulleted.createSession', undefined,
        { identifier: account.handle, password: account.password });
      calls.set('createSession', 1);
      assertEqual(signed.data.did, account.did, 'signed in as the account');
      const as = { headers: { authorization: `Bearer ${signed.data.token}` } };
      const me = await other.call('app.bulleted.getSession', {}, undefined, as);
      assertEqual([me.data.did, me.data.handle, me.data.via], [account.did, account.handle, 'session'],
        'getSession with an app-password session');
      const created = await other.call('app.bulleted.createNode', undefined, { repo: account.did, text: 'through the PDS' }, as);
      const shown = await other.call('app.bulleted.getNode', { repo: account.did, rkey: created.data.rkey });
      assert(!('parent' in shown.data) && shown.data.text === 'through the PDS', 'the write, read back');
      await fails('AuthRequired', 'createSession', () => other.call('app.bulleted.createSession', undefined,
        { identifier: account.handle, password: 'wrong' }));
      await fails('NotFound', 'createSession', () => other.call('app.bulleted.createSession', undefined,
        { identifier: 'nobody.test', password: 'x' }));
      await other.call('app.bulleted.deleteSession', undefined, {}, as);
      calls.set('deleteSession', 1);
      await fails('AuthRequired', 'deleteSession', () => other.call('app.bulleted.deleteSession', undefined, {}, as));
    } finally {
      await stopProcess(pdsMode.child);
    }
  });

  await runner.test('every method of the lexicons was called through the client', async () => {
    // streamChanges answers an event stream, which this client reads to
    // its end: browsers follow it with EventSource (tests/e2e/streams_e2e.mjs).
    const methods = [...lexicons.docs.values()].filter((d) => d.id.startsWith('app.bulleted.') && ['query', 'procedure'].includes(d.defs.main?.type))
      .map((d) => d.id.slice('app.bulleted.'.length)).filter((m) => m !== 'streamChanges');
    const missing = methods.filter((m) => !calls.has(m));
    assertEqual(missing, [], 'methods never answered successfully');
  });
} finally {
  await stopProcess(server.child);
  await stopProcess(pds);
}
process.exit(runner.finish());
