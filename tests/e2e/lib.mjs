// Shared pieces of the end-to-end tests: a real PDS (pds/start-pds.mjs) and
// bulleted-appview processes on free loopback ports, an XRPC client, polling,
// namespaces of their own with a stand-in DNS, and a tiny test runner that
// prints "N passed, M failed".
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

export const here = path.dirname(fileURLToPath(import.meta.url));
export { Xrpc } from './pds/lib/xrpc.mjs';

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// Packages of the PDS harness (tests/e2e/pds/node_modules), pinned there.
export const harnessRequire = createRequire(new URL('./pds/package.json', import.meta.url));

// Where browser tests put their screenshots (SCREENSHOT_DIR, default
// build/screenshots), made if needed.
export function screenshotDir() {
  const dir = process.env.SCREENSHOT_DIR ?? path.join(here, '..', '..', 'build', 'screenshots');
  fs.mkdirSync(dir, { recursive: true });
  return dir;
}

// Debian's chromium (CHROMIUM to override), headless, through puppeteer-core.
export function launchChromium(extraArgs = []) {
  return harnessRequire('puppeteer-core').launch({
    executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
    headless: true,
    args: ['--no-sandbox', '--disable-dev-shm-usage', '--disable-gpu', ...extraArgs],
  });
}

// Every process a test starts; whatever is still alive when the script exits
// (a failed assertion included) is killed, so no PDS or app view outlives it.
const children = new Set();
function track(child) {
  children.add(child);
  child.once('exit', () => children.delete(child));
  return child;
}
process.on('exit', () => {
  for (const child of children) {
    try { child.kill('SIGKILL'); } catch {}
  }
});

// A free loopback port for a process to listen on. It is taken below the
// kernel's range of ephemeral ports: a port from that range may be taken by
// any outgoing connection (the tests make thousands, in parallel) between
// this check and the child's listen(), which then fails. Below it, only
// another test's listener can take it, and a random pick makes that rare.
const ephemeralLow = (() => {
  try {
    return Number(fs.readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
  } catch {
    return 0;
  }
})();
const listenOn = (port) => new Promise((resolve, reject) => {
  const server = net.createServer();
  server.once('error', reject);
  server.listen(port, '127.0.0.1', () => {
    const taken = server.address().port;
    server.close(() => resolve(taken));
  });
});
export async function freePort() {
  const span = Math.min(12000, ephemeralLow - 1024);
  for (let i = 0; span > 1000 && i < 50; i++) {
    try {
      return await listenOn(ephemeralLow - 1 - Math.floor(Math.random() * span));
    } catch {}
  }
  return listenOn(0);
}

export async function waitFor(what, check, timeoutMs = 30000, everyMs = 100) {
  const deadline = Date.now() + timeoutMs;
  let last;
  while (Date.now() < deadline) {
    try {
      last = await check();
      if (last) return last;
    } catch (err) {
      last = err;
    }
    await sleep(everyMs);
  }
  throw new Error(`timed out waiting for ${what}${last instanceof Error ? `: ${last.message}` : ''}`);
}

// The last lines of a log, for an error that says why a child failed.
function tail(file, lines = 30) {
  try {
    return fs.readFileSync(file, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
  } catch {
    return '(no log)';
  }
}

// Spawns a harness (start-pds.mjs or start-network.mjs) from tests/e2e/pds
// into `workdir` (the file it writes, its log), with the arguments
// `argsFor(out)` gives (fresh ports each call), and
// resolves with { child, info } once it has written `out`. A harness that
// exits first (a port taken between the pick and its listen) is started
// again with fresh ports, up to three times; a failure says what its log
// ends with.
async function startHarness(what, workdir, [outName, logName], argsFor, timeoutMs, env = process.env) {
  fs.mkdirSync(workdir, { recursive: true });
  const out = path.join(workdir, outName);
  const logFile = path.join(workdir, logName);
  for (let attempt = 1; ; attempt++) {
    fs.rmSync(out, { force: true });
    const log = fs.openSync(logFile, 'a');
    const child = spawn(path.join(here, 'pds', 'node22'), await argsFor(out),
      { cwd: path.join(here, 'pds'), stdio: ['ignore', log, log], env });
    fs.closeSync(log);
    track(child);
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline && child.exitCode === null && child.signalCode === null) {
      if (fs.existsSync(out)) return { child, info: JSON.parse(fs.readFileSync(out, 'utf8')) };
      await sleep(100);
    }
    const exited = child.exitCode !== null || child.signalCode !== null;
    if (!exited) await stopProcess(child, 'SIGKILL');
    if (exited && attempt < 3) {
      console.error(`${what} exited (${child.exitCode ?? child.signalCode}) before it was ready; starting it again`);
      continue;
    }
    throw new Error(`${exited ? `${what} exited (${child.exitCode ?? child.signalCode})` : `timed out waiting for ${what}`}`
      + `; ${logFile} ends:\n${tail(logFile)}`);
  }
}

// Starts the PDS + PLC; resolves with accounts.json once it is written.
export async function startPds(workdir, extraArgs = [], env = process.env) {
  let pdsPort;
  const started = await startHarness('the PDS', workdir, ['accounts.json', 'pds.log'], async (out) => {
    pdsPort = await freePort();
    return ['start-pds.mjs', '--pds-port', String(pdsPort), '--plc-port', String(await freePort()),
      '--out', out, ...extraArgs];
  }, 120000, env);
  return { ...started, pdsPort };
}

// One PLC, `pdses` real PDSes (two accounts each) and the relay-shaped
// fan-in of tests/e2e/pds/start-network.mjs, with its test controls.
// Resolves with the network's description (plcUrl, relay, pdses).
export function startNetwork(workdir, pdses = 3) {
  return startHarness('the network', workdir, ['network.json', 'network.log'], async (out) => {
    const ports = [];
    for (let i = 0; i < pdses; i++) ports.push(await freePort());
    return ['start-network.mjs', '--pdses', String(pdses), '--plc-port', String(await freePort()),
      '--relay-port', String(await freePort()), '--pds-ports', ports.join(','), '--out', out, '--test-controls'];
  }, 180000);
}

export { track };

export function stopProcess(child, signal = 'SIGTERM') {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve({ code: child.exitCode, signal: child.signalCode });
    child.once('exit', (code, sig) => resolve({ code, signal: sig }));
    child.kill(signal);
  });
}

// A real nginx in front of an app view on appPort, with the shipped limits
// and location (deploy/), listening on 127.0.0.1 and 127.0.0.2 at port.
// Resolves once it answers.
export async function startNginx(workdir, appPort, port, tls = null) {
  const repoRoot = path.resolve(here, '..', '..');
  const prefix = path.join(workdir, `nginx-${port}`);
  fs.mkdirSync(path.join(prefix, 'logs'), { recursive: true });
  // As root (CI), the workers must be able to write the body buffers under
  // the prefix: run them as root too (elsewhere nginx ignores the line).
  fs.writeFileSync(path.join(prefix, 'nginx.conf'), `
${process.getuid?.() === 0 ? 'user root;' : ''}
worker_processes 1;
worker_rlimit_nofile 20000;
daemon off;
pid ${prefix}/nginx.pid;
error_log ${prefix}/logs/error.log warn;
events { worker_connections 10000; }
http {
  access_log off;
  client_body_temp_path ${prefix}/body;
  proxy_temp_path ${prefix}/proxy;
  fastcgi_temp_path ${prefix}/fastcgi;
  uwsgi_temp_path ${prefix}/uwsgi;
  scgi_temp_path ${prefix}/scgi;
  include ${repoRoot}/deploy/bulleted-limits.conf;
  upstream bulleted_appview { server 127.0.0.1:${appPort}; keepalive 64; }
  server {
    ${tls ? `listen 127.0.0.1:${port} ssl;
    server_name ${tls.name};
    ssl_certificate ${tls.cert};
    ssl_certificate_key ${tls.key};` : `listen 127.0.0.1:${port};
    listen 127.0.0.2:${port};`}
    include ${repoRoot}/deploy/bulleted-location.conf;
  }
}
`);
  const binary = fs.existsSync('/usr/sbin/nginx') ? '/usr/sbin/nginx' : 'nginx';
  const child = track(spawn(binary, ['-p', prefix, '-c', path.join(prefix, 'nginx.conf')], { stdio: 'inherit' }));
  await waitFor('nginx', async () => (tls ? await tlsReady(port, tls) : (await fetch(`http://127.0.0.1:${port}/healthz`)).ok), 15000);
  return child;
}

// Whether nginx answers /healthz over TLS with the test CA's certificate for tls.name.
async function tlsReady(port, tls) {
  const https = await import('node:https');
  return new Promise((resolve) => {
    const request = https.get({ host: '127.0.0.1', port, path: '/healthz', servername: tls.name, headers: { host: tls.name },
      ca: fs.readFileSync(tls.ca) }, (response) => { response.resume(); resolve(response.statusCode === 200); });
    request.on('error', () => resolve(false));
  });
}

// A test CA and a certificate it signed for `name` (openssl), in dir:
// { ca, cert, key, name } as file paths.
export function makeCertificate(dir, name) {
  fs.mkdirSync(dir, { recursive: true });
  const file = (f) => path.join(dir, f);
  const openssl = (...args) => execFileSync('openssl', args, { stdio: ['ignore', 'ignore', 'pipe'] });
  openssl('req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', file('ca.key'),
    '-out', file('ca.pem'), '-days', '2', '-subj', '/CN=Bulleted test CA');
  openssl('req', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', file('site.key'),
    '-out', file('site.csr'), '-subj', `/CN=${name}`);
  fs.writeFileSync(file('site.ext'), `subjectAltName=DNS:${name}\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n`);
  openssl('x509', '-req', '-in', file('site.csr'), '-CA', file('ca.pem'), '-CAkey', file('ca.key'), '-CAcreateserial',
    '-out', file('site.pem'), '-days', '2', '-extfile', file('site.ext'));
  return { ca: file('ca.pem'), cert: file('site.pem'), key: file('site.key'), name };
}

// Starts `bulleted-appview serve` with the given flags; stderr goes to logFile.
// A local-mode token for each DID, made by the CLI on the database at dbPath.
export function localTokens(binary, dbPath, dids) {
  return dids.map((did) => execFileSync(binary, ['token', 'create', '--did', did, '--db', dbPath], { encoding: 'utf8' }).trim());
}

// Test networks live on 127.0.0.1: the addresses their DID documents and
// redirects give are http and loopback, which only this setting allows.
export const testNetworkEnv = () => ({ ...process.env, BULLETED_ALLOW_PRIVATE_ADDRESSES: '1' });

export function startAppview(binary, args, logFile) {
  const log = fs.openSync(logFile, 'a');
  return track(spawn(binary, ['serve', ...args], { stdio: ['ignore', log, log], env: testNetworkEnv() }));
}

// Resolves once an app view's log says its firehose session is open (a
// consumer without a cursor starts at the live end: writes before that are
// not its to see).
export function waitForConnection(logFile) {
  return waitFor(`a firehose connection in ${logFile}`,
    () => fs.existsSync(logFile) && /firehose: connected to/.test(fs.readFileSync(logFile, 'utf8')), 30000);
}

// Every record of a repo's collection, through listRecords pages.
// Bulleted's published lexicons (vendored in tests/fixtures/published-lexicons)
// with app.bsky.richtext.facet, in the official package: what third-party
// clients validate records and answers against.
export function publishedLexicons() {
  const { Lexicons } = harnessRequire('@atproto/lexicon');
  const dir = path.join(here, '..', 'fixtures', 'published-lexicons');
  return new Lexicons(fs.readdirSync(dir).filter((f) => f.endsWith('.json'))
    .map((f) => JSON.parse(fs.readFileSync(path.join(dir, f), 'utf8'))));
}

// The project's own lexicons (schema/lexicons, every file), as a frontend
// loads them into the official package.
export function projectLexicons() {
  const { Lexicons } = harnessRequire('@atproto/lexicon');
  const docs = [];
  const walk = (dir) => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (entry.name.endsWith('.json')) docs.push(JSON.parse(fs.readFileSync(full, 'utf8')));
    }
  };
  walk(path.join(here, '..', '..', 'schema', 'lexicons'));
  return new Lexicons(docs);
}

export async function listRecords(xrpc, did, collection = 'app.bulleted.node') {
  const records = [];
  let cursor;
  do {
    const r = await xrpc.ok('com.atproto.repo.listRecords', { params: { repo: did, collection, limit: 100, cursor } });
    records.push(...r.json.records);
    cursor = r.json.records.length > 0 ? r.json.cursor : undefined;
  } while (cursor);
  return records;
}

export class Runner {
  constructor() { this.passed = 0; this.failed = 0; }
  async test(name, body) {
    const t = Date.now();
    try {
      await body();
      this.passed++;
      console.log(`ok   ${name} (${Date.now() - t} ms)`);
    } catch (err) {
      this.failed++;
      console.log(`FAIL ${name}: ${err.stack ?? err}`);
    }
  }
  finish() {
    console.log(`${this.passed} passed, ${this.failed} failed`);
    return this.failed === 0 && this.passed > 0 ? 0 : 1;
  }
}

export function assert(condition, message) {
  if (!condition) throw new Error(message);
}

export function assertEqual(actual, expected, message) {
  const a = String(JSON.stringify(actual));
  const e = String(JSON.stringify(expected));
  if (a !== e) throw new Error(`${message}\n  actual:   ${a.slice(0, 2000)}\n  expected: ${e.slice(0, 2000)}`);
}

// Generates a stream of `commits` #commit frames with bench/make_frames (built
// next to the app view) and returns them, frame i carrying seq i + 1.
// A PLC-shaped directory on 127.0.0.1 for the repos of a generated stream:
// GET /<did> answers the DID document with the repo's #atproto key from
// make_frames' key directory (FILE.keys.json). Returns { url, close() }.
export async function startDidDirectory(keysFile) {
  const keys = JSON.parse(fs.readFileSync(keysFile, 'utf8'));
  const http = await import('node:http');
  const server = http.createServer((request, response) => {
    const did = decodeURIComponent(request.url.slice(1));
    const key = keys[did];
    if (!key) {
      response.writeHead(404, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ message: 'DID not registered' }));
      return;
    }
    response.writeHead(200, { 'content-type': 'application/json' });
    response.end(JSON.stringify({
      '@context': ['https://www.w3.org/ns/did/v1', 'https://w3id.org/security/multikey/v1'],
      id: did,
      verificationMethod: [{ id: `${did}#atproto`, type: 'Multikey', controller: did,
        publicKeyMultibase: key.slice('did:key:'.length) }],
      service: [],
    }));
  });
  const port = await freePort();
  await new Promise((resolve) => server.listen(port, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${port}`, close: () => server.close() };
}

export function generatedFrames(binary, file, commits) {
  execFileSync(path.join(path.dirname(binary), 'bench', 'make_frames'), [file, String(commits)]);
  const bytes = fs.readFileSync(file);
  const frames = [];
  for (let at = 0; at < bytes.length;) {
    const n = bytes.readUInt32LE(at);
    frames.push(bytes.subarray(at + 4, at + 4 + n));
    at += 4 + n;
  }
  return frames;
}

// The app view's XRPC methods over HTTP. `base` is the server's URL, or a
// function giving it (for a server restarted on another port); procedures
// carry `defaultToken` unless a call names another (`as`; null for none).
export function appviewClient(base, defaultToken = null) {
  const url = () => (typeof base === 'function' ? base() : base);
  async function query(method, params = {}) {
    const target = new URL(`/xrpc/app.bulleted.${method}`, url());
    for (const [k, v] of Object.entries(params)) if (v !== undefined) target.searchParams.set(k, String(v));
    const res = await fetch(target);
    return { status: res.status, json: await res.json(), headers: res.headers };
  }
  async function call(method, body, { as = defaultToken, headers = {} } = {}) {
    const res = await fetch(`${url()}/xrpc/app.bulleted.${method}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(as ? { authorization: `Bearer ${as}` } : {}), ...headers },
      body: typeof body === 'string' ? body : JSON.stringify(body),
    });
    return { status: res.status, json: await res.json(), headers: res.headers };
  }
  // The JSON of a 200 answer; anything else throws.
  async function ok(promise) {
    const r = await promise;
    if (r.status !== 200) throw new Error(`expected 200, got ${r.status} ${JSON.stringify(r.json)}`);
    return r.json;
  }
  // An XRPC error: the status, the error name and a message.
  function expectError(r, status, name) {
    assertEqual(r.status, status, `status for ${name}: ${JSON.stringify(r.json)}`);
    assertEqual(r.json.error, name, 'error name');
    assert(typeof r.json.message === 'string' && r.json.message.length > 0, 'a message');
  }
  return { query, call, ok, expectError };
}

// A server-sent-event stream read over plain HTTP (as EventSource would,
// without its reconnects): `events` fills as they arrive ({ id, event, data,
// retry }, data parsed as JSON); `until(what, check)` waits on them; `ended`
// resolves when the server ends the answer; close() leaves. `localAddress`
// opens it from another loopback address (another client, for the limits).
export function openEventStream(url, headers = {}, { localAddress } = {}) {
  const events = [];
  let status = 0;
  let responseHeaders = {};
  let request;
  let endedAs = 'open';
  let body = '';  // the start of an answer that is not a stream, for a failure's message
  const ended = new Promise((settle) => {
    const resolve = (how) => { endedAs = how; settle(how); };
    request = http.get(url, { headers: { accept: 'text/event-stream', ...headers }, agent: false, localAddress }, (response) => {
      status = response.statusCode;
      responseHeaders = response.headers;
      response.setEncoding('utf8');
      let buffer = '';
      response.on('data', (chunk) => {
        if (status !== 200 && body.length < 500) body += chunk.slice(0, 500 - body.length);
        buffer += chunk;
        for (let end = buffer.indexOf('\n\n'); end >= 0; end = buffer.indexOf('\n\n')) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const event = {};
          for (const line of block.split('\n')) {
            const colon = line.indexOf(': ');
            if (line.startsWith(':') || colon < 0) continue;
            const [field, value] = [line.slice(0, colon), line.slice(colon + 2)];
            if (field === 'id') event.id = Number(value);
            if (field === 'event') event.event = value;
            if (field === 'data') event.data = JSON.parse(value);
            if (field === 'retry') event.retry = Number(value);
          }
          if (event.event) events.push(event);
        }
      });
      response.on('end', () => resolve('end'));
      response.on('error', () => resolve('error'));
      response.on('aborted', () => resolve('aborted'));
    });
    request.on('error', () => resolve('error'));
  });
  return {
    events,
    ended,
    get status() { return status; },
    get headers() { return responseHeaders; },
    changes: () => events.filter((e) => e.event === 'change'),
    lastId: () => [...events].reverse().find((e) => e.id !== undefined)?.id,
    until: async (what, check, timeoutMs = 30000) => {
      try {
        return await waitFor(what, () => check(events), timeoutMs, 20);
      } catch (err) {
        throw new Error(`${err.message} (answer ${status || 'not yet'}, ${events.length} events,` +
          ` the stream ${endedAs}${body ? `, body ${body}` : ''})`);
      }
    },
    close: () => request.destroy(),
  };
}

// Runs the calling script again (`script`, with `args`) in namespaces of its
// own (unshare: a user, network and mount namespace), unless it is already
// there, and exits with its status: nothing it does leaves loopback, and
// /etc/resolv.conf names a stand-in DNS on 127.0.0.1:53 (startNameServer)
// whose answers the system resolver waits a minute for; hosts and
// nsswitch.conf send every other name to it. Fails (does not skip) when
// the namespaces cannot be made.
export function reenterInNamespaces(script, args, workdir) {
  if (process.env.BULLETED_E2E_NAMESPACES === '1') return;
  const files = {
    'resolv.conf': 'nameserver 127.0.0.1\noptions timeout:60 attempts:1\n',
    hosts: '127.0.0.1 localhost\n::1 localhost\n',
    'nsswitch.conf': 'hosts: files dns\n',
  };
  fs.mkdirSync(workdir, { recursive: true });
  for (const [name, text] of Object.entries(files)) fs.writeFileSync(path.join(workdir, name), text);
  const mounts = Object.keys(files).map((name, i) => `mount --bind "$${i + 1}" /etc/${name}`).join(' && ');
  const inner = spawnSync('unshare', ['--user', '--map-root-user', '--net', '--mount', 'sh', '-c',
    `${mounts} && (ip link set lo up 2>/dev/null || true) && shift 3 && exec "$@"`, 'namespaces',
    ...Object.keys(files).map((name) => path.join(workdir, name)), process.execPath, script, ...args],
  { stdio: 'inherit', env: { ...process.env, BULLETED_E2E_NAMESPACES: '1' } });
  if (inner.status === null || inner.error) {
    console.error(`could not run in namespaces of its own (unshare): ${inner.error ?? inner.signal}`);
    process.exit(1);
  }
  process.exit(inner.status);
}

// The stand-in DNS on 127.0.0.1:53 (inside reenterInNamespaces): answers A
// questions for *.fast.test with 127.0.0.1 (AAAA: none), never answers
// *.slow.test, and says every other name does not exist. Counts the
// questions by name.
export async function startNameServer() {
  const dgram = await import('node:dgram');
  const asked = new Map();
  const socket = dgram.createSocket('udp4');
  socket.on('message', (message, from) => {
    if (message.length < 17) return;
    let at = 12;
    const labels = [];
    while (at < message.length && message[at] !== 0 && labels.length < 64) {
      labels.push(message.subarray(at + 1, at + 1 + message[at]).toString('latin1'));
      at += message[at] + 1;
    }
    if (at + 5 > message.length) return;
    const type = message.readUInt16BE(at + 1);
    const name = labels.join('.').toLowerCase();
    asked.set(name, (asked.get(name) ?? 0) + 1);
    if (name.endsWith('.slow.test')) return;
    const known = name.endsWith('.fast.test');
    const answers = known && type === 1 ? 1 : 0;
    const header = Buffer.alloc(12);
    header.writeUInt16BE(message.readUInt16BE(0), 0);
    header.writeUInt16BE(0x8180 | (known ? 0 : 3), 2);  // an answer, recursion; NXDOMAIN if unknown
    header.writeUInt16BE(1, 4);
    header.writeUInt16BE(answers, 6);
    const parts = [header, message.subarray(12, at + 5)];
    if (answers) {
      const record = Buffer.alloc(16);
      record.writeUInt16BE(0xc00c, 0);  // the question's name
      record.writeUInt16BE(1, 2);
      record.writeUInt16BE(1, 4);
      record.writeUInt32BE(0, 6);
      record.writeUInt16BE(4, 10);
      record.set([127, 0, 0, 1], 12);
      parts.push(record);
    }
    socket.send(Buffer.concat(parts), from.port, from.address);
  });
  await new Promise((resolve, reject) => {
    socket.once('error', reject);
    socket.bind(53, '127.0.0.1', resolve);
  });
  return { asked, close: () => socket.close() };
}
