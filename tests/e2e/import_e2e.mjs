// Imports through the API of a running `bulleted-appview serve` (local
// mode): a 20,000-node outline whose server is SIGKILLed mid-job and
// restarted (the job finishes, the tree is exact), hostile documents refused
// with nothing written, export, and the CLI following a server-side job.
// Usage: ./node22 ../import_e2e.mjs APPVIEW_BINARY WORKDIR   (from tests/e2e/pds)
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { Runner, assert, assertEqual, freePort, sleep, stopProcess, track, waitFor } from './lib.mjs';

const require = createRequire(import.meta.url);
const Database = require('./pds/node_modules/better-sqlite3');

const [binary, workdir] = process.argv.slice(2);
fs.mkdirSync(workdir, { recursive: true });
const dbPath = path.join(workdir, 'import.db');
const did = 'did:plc:importe2e';
const token = execFileSync(binary, ['token', 'create', '--did', did, '--db', dbPath], { encoding: 'utf8' }).trim();
const runner = new Runner();
let port;
let server;

async function startServer() {
  port = await freePort();
  const log = fs.openSync(path.join(workdir, `appview-${Date.now()}.log`), 'a');
  server = track(spawn(binary, ['serve', '--db', dbPath, '--port', String(port)], { stdio: ['ignore', log, log] }));
  await waitFor('the server', async () => (await fetch(`http://127.0.0.1:${port}/healthz`)).ok, 15000);
}
const base = () => `http://127.0.0.1:${port}`;
async function importOutline(body) {
  const res = await fetch(`${base()}/xrpc/app.bulleted.importOutline`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    body: JSON.stringify({ repo: did, ...body }),
  });
  return { status: res.status, json: await res.json() };
}
const job = async (id) => (await fetch(`${base()}/xrpc/app.bulleted.getImportJob?id=${id}`)).json();
const exported = async (params) => {
  const url = new URL('/xrpc/app.bulleted.exportOutline', base());
  for (const [k, v] of Object.entries({ repo: did, ...params })) url.searchParams.set(k, v);
  const res = await fetch(url);
  return { status: res.status, type: res.headers.get('content-type'), text: await res.text() };
};
function count(sql, ...args) {
  const db = new Database(dbPath, { readonly: true, fileMustExist: true });
  try {
    return db.prepare(sql).get(...args).n;
  } finally {
    db.close();
  }
}

// A generated outline: `n` nodes, a few levels deep, as OPML and as the plain
// text the app view must export for it (under the job's root).
function generate(n) {
  const lines = [];
  const xml = ['<?xml version="1.0"?>', '<opml version="2.0"><head><ownerEmail>me@example.com</ownerEmail></head><body>'];
  let i = 0;
  const emit = (depth) => {
    const children = depth === 0 ? 50 : depth < 3 ? 7 : 0;
    for (let c = 0; c < children && i < n; c++) {
      const text = `node ${i++}`;
      lines.push(`${'  '.repeat(depth + 1)}- ${text}`);
      if (depth < 2 || (depth === 2 && i % 2 === 0)) {
        xml.push(`<outline text="${text}">`);
        emit(depth + 1);
        xml.push('</outline>');
      } else {
        xml.push(`<outline text="${text}"/>`);
      }
    }
  };
  while (i < n) emit(0);
  xml.push('</body></opml>');
  return { opml: xml.join('\n'), lines };
}

try {
  await startServer();

  await runner.test('a 20,000-node import survives SIGKILL of the server and finishes exact', async () => {
    const { opml, lines } = generate(20000);
    let id;
    let killedAt;
    for (let attempt = 0; attempt < 3 && killedAt === undefined; attempt++) {
      const started = await importOutline({ format: 'opml', content: opml });
      assertEqual(started.status, 200, `importOutline: ${JSON.stringify(started.json)}`);
      id = started.json.jobId;
      // Kill in the middle: after at least one batch, before the last.
      for (;;) {
        const state = await job(id);
        if (state.state === 'done') break;
        if (state.done > 0) {
          server.kill('SIGKILL');
          await stopProcess(server);
          killedAt = state.done;
          break;
        }
      }
    }
    assert(killedAt !== undefined, 'the job was caught mid-way');
    await startServer();
    const resumed = await job(id);
    assert(resumed.done >= killedAt && ['running', 'done'].includes(resumed.state), `resumed from ${JSON.stringify(resumed)}`);
    const finished = await waitFor('the job', async () => { const j = await job(id); return j.state === 'done' && j; }, 60000);
    assertEqual([finished.done, finished.total], [20001, 20001], 'every row written once');
    // Done: its plan is dropped with it, and every node it planned is in the
    // index once (the root's subtree, exported below, is the whole outline).
    assertEqual(count('SELECT count(*) AS n FROM import_plan WHERE job_id = ?', id), 0, 'the done job keeps no plan');
    const root = finished.rootRkey;
    const text = await exported({ root, format: 'text' });
    const got = text.text.trimEnd().split('\n');
    assert(/^- Imported from WorkFlowy — \d{4}-\d{2}-\d{2}$/.test(got[0]), `root: ${got[0]}`);
    assertEqual(got.length - 1, lines.length, 'node count');
    assertEqual(got.slice(1).join('\n'), lines.join('\n'), 'the exact tree, in order');
  });

  await runner.test('hostile documents are refused with a clear error; nothing is written; the server stays up', async () => {
    const nodes = count('SELECT count(*) AS n FROM nodes');
    const jobs = count('SELECT count(*) AS n FROM import_jobs');
    const laughs = '<?xml version="1.0"?><!DOCTYPE l [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">'
      + '<!ENTITY c "&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;">]><opml><body><outline text="&c;"/></body></opml>';
    const cases = [
      [laughs, 400, /DTD/],
      ['<?xml version="1.0"?><!DOCTYPE o [<!ENTITY x SYSTEM "file:///etc/passwd">]><opml><body><outline text="&x;"/></body></opml>', 400, /DTD/],
      [`<opml><body>${'<outline text="x">'.repeat(10000)}${'</outline>'.repeat(10000)}</body></opml>`, 413, /1000 levels/],
      ['<opml><body><outline text="x"><outline text="y"', 400, /malformed XML at line 1, column \d+/],
    ];
    for (const [content, status, message] of cases) {
      const r = await importOutline({ format: 'opml', content });
      assertEqual(r.status, status, `status: ${JSON.stringify(r.json)}`);
      assert(message.test(r.json.message), `message: ${r.json.message}`);
    }
    const unknown = await importOutline({ format: 'docx', content: 'x' });
    assertEqual([unknown.status, unknown.json.error], [400, 'InvalidRequest'], 'unknown format');
    assertEqual(count('SELECT count(*) AS n FROM nodes'), nodes, 'no node written');
    assertEqual(count('SELECT count(*) AS n FROM import_jobs'), jobs, 'no job created');
    assertEqual((await fetch(`${base()}/healthz`)).status, 200, 'still up');
    assertEqual((await fetch(`${base()}/xrpc/app.bulleted.getImportJob?id=imp_nope`)).status, 404, 'unknown job');
  });

  await runner.test('the CLI imports through the server with progress, and export gives the outline back', async () => {
    const file = path.join(workdir, 'small.txt');
    fs.writeFileSync(file, '- one\n  - [COMPLETE] two\n    a note\n- three\n');
    const out = execFileSync(binary, ['import', file, '--repo', did, '--server', base(), '--token', token],
      { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
    assert(/imported 4 nodes/.test(out), out);
    const jobId = /job (imp_\S+)/.exec(out)[1];
    const root = (await job(jobId)).rootRkey;
    const text = await exported({ root, format: 'text' });
    assertEqual(text.type, 'text/plain; charset=utf-8', 'content type');
    assertEqual(text.text.split('\n').slice(1).join('\n'), '  - one\n    - [COMPLETE] two\n      a note\n  - three\n', 'text export');
    const opml = await exported({ root, format: 'opml' });
    assert(opml.type.startsWith('text/x-opml'), 'OPML content type');
    assert(opml.text.includes('<outline text="two" _note="a note" _complete="true" />'), opml.text);
    const bad = await exported({ root, format: 'pdf' });
    assertEqual(bad.status, 400, 'unknown export format');
  });
} finally {
  if (server) await stopProcess(server);
}
process.exit(runner.finish());
