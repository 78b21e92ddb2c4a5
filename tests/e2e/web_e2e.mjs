// The reference web outliner (appview/web/, served at /) in a real browser:
// Debian's chromium driven by puppeteer-core, against a running app view in
// local mode with the PDS harness as handle resolver. Every step's result is
// checked through the API (order and parents), not only in the page.
// Screenshots at 1280 and 320 px go to SCREENSHOT_DIR (default
// build/screenshots), not into the repo.
// Usage: ./node22 ../web_e2e.mjs APPVIEW_BINARY WORKDIR   (from tests/e2e/pds)
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import {
  Runner, assert, assertEqual, freePort, launchChromium, screenshotDir, startPds, stopProcess, track, waitFor,
} from './lib.mjs';

const [binary, workdir] = process.argv.slice(2);
fs.mkdirSync(workdir, { recursive: true });
const shots = screenshotDir();
const runner = new Runner();

const { child: pds, info } = await startPds(path.join(workdir, 'pds'));
const { did, handle } = info.accounts[0];
const dbPath = path.join(workdir, 'web.db');
const token = execFileSync(binary, ['token', 'create', '--did', did, '--db', dbPath], { encoding: 'utf8' }).trim();
const port = await freePort();
const base = `http://127.0.0.1:${port}`;
const log = fs.openSync(path.join(workdir, 'appview-web.log'), 'a');
let server;
async function startServer() {
  server = track(spawn(binary, ['serve', '--db', dbPath, '--port', String(port), '--handle-resolver', info.pdsUrl],
    { stdio: ['ignore', log, log], env: { ...process.env, BULLETED_PROCEDURE_RATE: '0' } }));
  await waitFor('the server', async () => (await fetch(`${base}/healthz`).catch(() => null))?.ok, 15000);
}
await startServer();

// The API, as the checks read it.
const api = async (method, params) => {
  const url = new URL(`/xrpc/app.bulleted.${method}`, base);
  for (const [k, v] of Object.entries(params)) if (v !== undefined) url.searchParams.set(k, v);
  const res = await fetch(url);
  return { status: res.status, body: await res.json() };
};
const post = async (method, body) => {
  const res = await fetch(`${base}/xrpc/app.bulleted.${method}`, { method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` }, body: JSON.stringify({ repo: did, ...body }) });
  if (!res.ok) throw new Error(`${method}: ${res.status} ${await res.text()}`);
  return res.json();
};
const children = async (parent) => (await api('getChildren', { repo: did, parent, limit: '100' })).body.nodes;
const textsUnder = async (parent) => (await children(parent)).map((n) => n.text);
const nodeByText = async (text, parent) => (await children(parent)).find((n) => n.text === text);

// An outline to start from: three top-level bullets, two under the first,
// and an import holding formatting and hostile markup.
const one = await post('createNode', { text: 'one' });
const two = await post('createNode', { text: 'two' });
await post('createNode', { text: 'three' });
await post('createNode', { parentRkey: one.rkey, text: 'one.a' });
await post('createNode', { parentRkey: one.rkey, text: 'one.b' });
// What the search test looks for, under a bullet of its own.
const seeds = await post('createNode', { text: 'search seeds' });
await post('createNode', { parentRkey: seeds.rkey, text: '東京タワーに行く' });
const needle = await post('createNode', { parentRkey: seeds.rkey, text: 'find the needle #project' });
await post('createNode', { parentRkey: seeds.rkey, text: '<img src=x onerror=alert(2)> needle' });
// A record whose display says collapsed: shut until the reader opens it.
const folded = await post('createNode', { parentRkey: seeds.rkey, text: 'folded', display: 'collapsed' });
await post('createNode', { parentRkey: folded.rkey, text: 'folded.a' });
const hostile = await post('importOutline', { format: 'opml', content: `<?xml version="1.0"?>
<opml version="2.0"><head><title>t</title></head><body>
<outline text="&lt;b&gt;bold&lt;/b&gt; and &lt;a href=&quot;https://example.com/x&quot;&gt;a link&lt;/a&gt; and &lt;a href=&quot;javascript:alert(1)&quot;&gt;no link&lt;/a&gt; &lt;img src=x onerror=alert(1)&gt;"/>
</body></opml>` });
await waitFor('the seed import', async () => (await api('getImportJob', { id: hostile.jobId })).body.state === 'done', 20000);

const browser = await launchChromium();
const problems = [];
// Sets the latency Chrome adds to each of a page's requests, in ms.
const latencySetter = (cdp) => async (ms) => {
  await cdp.send('Network.enable');
  await cdp.send('Network.emulateNetworkConditions', { offline: false, latency: ms, downloadThroughput: -1, uploadThroughput: -1 });
};
async function newPage(context) {
  const page = await context.newPage();
  page.on('console', (m) => {
    if (m.type() === 'error') problems.push(`console: ${m.text()}`);
    else if (process.env.WEB_E2E_LOG) console.log(`page: ${m.text()}`);
  });
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  page.on('dialog', (d) => { problems.push(`a dialog opened: ${d.message()}`); d.dismiss(); });
  await page.setViewport({ width: 1280, height: 900 });
  // WEB_E2E_LATENCY_MS=N delays every request of the page by N ms, which
  // widens the windows between a key's change to the page and the server's
  // answer (races show up there).
  page.latency = latencySetter(await page.createCDPSession());
  await page.latency(Number(process.env.WEB_E2E_LATENCY_MS ?? 0));
  return page;
}
const context = browser.defaultBrowserContext();
const page = await newPage(context);
const shown = (p) => p.$$eval('#outline > li.node > .row > .text', (els) => els.map((e) => e.textContent));
const textHandle = (p, text) => p.evaluateHandle((t) => [...document.querySelectorAll('.text')].find((e) => e.textContent === t), text);
// The page has the caret in the bullet showing `text` (after an edit's
// refresh), as a user would see before pressing the next key.
const focusedOn = (p, text) => waitFor(`the caret in "${text}"`, () => p.evaluate((t) =>
  document.activeElement?.classList.contains('text') && document.activeElement.textContent === t, text), 10000);
async function focusEnd(p, text) {
  const el = await textHandle(p, text);
  await el.click();
  await p.keyboard.press('End');
}

try {
  await runner.test('a newcomer is told the steps to a first outline, on the page and in the log', async () => {
    // The server started on an empty index (the outline above was made after).
    const logged = fs.readFileSync(path.join(workdir, 'appview-web.log'), 'utf8');
    assert(/getting started: .*bulleted-appview token create --did/.test(logged), 'the log says how to start');
    assert(logged.includes(`--db ${dbPath}`), 'with the database it serves');
    await page.goto(`${base}/`);
    await page.waitForSelector('#start:not(.hidden) li');
    const steps = await page.$$eval('#start-steps li', (els) => els.map((e) => e.textContent));
    assert(steps.length === 4 && /bulleted-appview token create --did/.test(steps[0]) && /Sign in/.test(steps[1]),
      `the steps of local mode: ${JSON.stringify(steps)}`);
    // Opening an outline puts the steps away.
    await page.goto(`${base}/#/${did}`);
    await page.waitForSelector('#outline .text');
    assert(await page.$eval('#start', (e) => e.classList.contains('hidden')), 'no steps over an outline');
  });

  await runner.test('an outline opens read-only by DID and by handle, a page at a time', async () => {
    await page.goto(`${base}/#/${did}`);
    await page.waitForSelector('#outline .text');
    const top = await textsUnder(undefined);
    await waitFor('the top level', async () => JSON.stringify(await shown(page)) === JSON.stringify(top), 10000);
    assertEqual(await page.$eval('#outline .text', (e) => e.contentEditable), 'false', 'read-only without signing in');
    const headers = (await fetch(`${base}/`)).headers;
    assert(/script-src 'self'/.test(headers.get('content-security-policy')), 'a CSP without inline script');
    await page.goto(`${base}/#/${handle}`);
    await waitFor('the outline by handle', async () => JSON.stringify(await shown(page)) === JSON.stringify(top), 10000);
  });

  await runner.test('hostile records are shown as text; only http(s) links are made', async () => {
    // The import's root holds the record: open it.
    // A record without display is expanded: its children show unasked.
    const root = await page.evaluateHandle(() => [...document.querySelectorAll('#outline > li.node')].at(-1));
    await page.waitForSelector('#outline .f-bold');
    assertEqual(await root.evaluate((li) => li.getAttribute('aria-expanded')), 'true', 'open by itself');
    const links = await page.$$eval('#outline a.f-link', (els) => els.map((a) => a.href));
    assertEqual(links, ['https://example.com/x'], 'one link, the https one');
    assertEqual(await page.$$eval('#outline img', (els) => els.length), 0, 'no element from record text');
    assert(await page.$eval('#outline .f-bold', (e) => e.textContent === 'bold'), 'bold rendered');
  });

  await runner.test('signing in makes it editable: edit, Enter, Tab, Shift-Tab, Alt-Down, Ctrl-Enter, Backspace', async () => {
    await page.type('#token-input', token);
    await page.click('#signin-button');
    await waitFor('editable', async () => (await page.$eval('#outline .text', (e) => e.contentEditable)) === 'true', 10000);
    await focusEnd(page, 'two');
    await page.keyboard.type(' edited');
    await waitFor('the edit saved', async () => (await api('getNode', { repo: did, rkey: two.rkey })).body.text === 'two edited', 10000);

    await page.keyboard.press('Enter');
    await page.keyboard.type('new');
    await waitFor('a new sibling below', async () => {
      const top = await textsUnder(undefined);
      return top.indexOf('new') === top.indexOf('two edited') + 1;
    }, 10000);
    const created = await nodeByText('new', undefined);

    await page.keyboard.press('Tab');
    await waitFor('indented under two', async () => (await api('getNode', { repo: did, rkey: created.rkey })).body.parent === two.rkey, 10000);
    await focusedOn(page, 'new');
    await page.keyboard.down('Shift');
    await page.keyboard.press('Tab');
    await page.keyboard.up('Shift');
    await waitFor('outdented after two', async () => {
      const node = (await api('getNode', { repo: did, rkey: created.rkey })).body;
      const top = await textsUnder(undefined);
      return !('parent' in node) && top.indexOf('new') === top.indexOf('two edited') + 1;
    }, 10000);

    await focusedOn(page, 'new');
    await page.keyboard.down('Alt');
    await page.keyboard.press('ArrowDown');
    await page.keyboard.up('Alt');
    await waitFor('moved below three', async () => {
      const top = await textsUnder(undefined);
      return top.indexOf('new') === top.indexOf('three') + 1;
    }, 10000);
    await focusedOn(page, 'new');
    await page.keyboard.down('Alt');
    await page.keyboard.press('ArrowUp');
    await page.keyboard.up('Alt');
    await waitFor('moved back above three', async () => {
      const top = await textsUnder(undefined);
      return top.indexOf('new') === top.indexOf('three') - 1;
    }, 10000);

    await focusedOn(page, 'new');
    await page.keyboard.down('Control');
    await page.keyboard.press('Enter');
    await page.keyboard.up('Control');
    await waitFor('completed', async () => (await api('getNode', { repo: did, rkey: created.rkey })).body.completed === true, 10000);

    await focusedOn(page, 'new');
    for (let i = 0; i < 3; i++) await page.keyboard.press('Backspace');
    await waitFor('emptied', async () => (await api('getNode', { repo: did, rkey: created.rkey })).body.text === '', 10000);
    await page.keyboard.press('Backspace');
    await waitFor('deleted', async () => (await api('getNode', { repo: did, rkey: created.rkey })).status === 404, 10000);
  });

  await runner.test('keys pressed faster than the server answers: every edit lands, each bullet shows once', async () => {
    // 300 ms for each of the page's requests: the keys come while the
    // earlier edits, and the refreshes after them, are still on their way;
    // a bullet being deleted is still in the page, hidden, when the next
    // keys come.
    await page.latency(300);
    const done = async (method) => Number((await (await fetch(`${base}/metrics`)).text())
      .match(new RegExp(`^bulleted_http_requests_total\\{method="app.bulleted.${method}",status="200"\\} (\\d+)$`, 'm'))?.[1] ?? 0);
    const before = { moves: await done('moveNode'), deletes: await done('deleteNode') };
    const three = await nodeByText('three', undefined);
    const inPage = () => page.evaluate((rkey) => {
      const all = [...document.querySelectorAll('#outline li.node')].map((li) => li.dataset.rkey);
      const li = document.querySelector(`#outline li.node[data-rkey="${rkey}"]`);
      return { duplicates: all.filter((r, i) => all.indexOf(r) !== i), parent: li?.parentElement.closest('li.node')?.dataset.rkey,
        hidden: document.querySelectorAll('#outline li.hidden').length };
    }, three.rkey);
    await focusEnd(page, 'two edited');
    await page.keyboard.press('Enter');
    await page.keyboard.press('Backspace');
    await page.keyboard.press('ArrowDown');
    await page.keyboard.press('Tab');
    await page.keyboard.down('Shift');
    await page.keyboard.press('Tab');
    await page.keyboard.up('Shift');
    await page.keyboard.press('Tab');
    await waitFor('three moves and a delete made', async () =>
      (await done('moveNode')) === before.moves + 3 && (await done('deleteNode')) === before.deletes + 1, 15000);
    assertEqual((await api('getNode', { repo: did, rkey: three.rkey })).body.parent, two.rkey, 'three under two on the server');
    await waitFor('three under two in the page, once', async () => {
      const seen = await inPage();
      return seen.duplicates.length === 0 && seen.hidden === 0 && seen.parent === two.rkey;
    }, 15000);
    await page.latency(Number(process.env.WEB_E2E_LATENCY_MS ?? 0));
    await focusedOn(page, 'three');
    await page.keyboard.down('Shift');
    await page.keyboard.press('Tab');
    await page.keyboard.up('Shift');
    await waitFor('three back at the top', async () =>
      !('parent' in (await api('getNode', { repo: did, rkey: three.rkey })).body), 10000);
  });

  await runner.test('collapse, expand and zoom with breadcrumbs', async () => {
    // Elements are read afresh each time: a refresh may rebuild the group.
    const under = () => page.evaluate(() => [...document.querySelectorAll('#outline > li.node')]
      .find((li) => li.querySelector(':scope > .row > .text').textContent === 'one')
      .querySelectorAll(':scope > .children .text').length);
    const press = (part) => page.evaluate((p) => [...document.querySelectorAll('#outline > li.node')]
      .find((li) => li.querySelector(':scope > .row > .text').textContent === 'one')
      .querySelector(`:scope > .row > .${p}`).click(), part);
    // Open by itself (no display in its record), shut and opened by the
    // reader, whose choice wins.
    await waitFor('expanded by itself', async () => (await under()) === 2, 10000);
    await press('toggle');
    await waitFor('collapsed', async () => (await under()) === 0, 10000);
    await press('toggle');
    await waitFor('expanded', async () => (await under()) === 2, 10000);
    // A record that says collapsed stays shut until it is opened.
    const foldedState = () => page.evaluate(() => {
      const li = [...document.querySelectorAll('#outline li.node')]
        .find((e) => e.querySelector(':scope > .row > .text').textContent === 'folded');
      return li && [li.getAttribute('aria-expanded'), li.querySelectorAll(':scope > .children .text').length];
    });
    await waitFor('the folded bullet shown shut', async () => JSON.stringify(await foldedState()) === '["false",0]', 10000);
    await page.evaluate(() => [...document.querySelectorAll('#outline li.node')]
      .find((e) => e.querySelector(':scope > .row > .text').textContent === 'folded')
      .querySelector(':scope > .row > .toggle').click());
    await waitFor('opened by the reader', async () => JSON.stringify(await foldedState()) === '["true",1]', 10000);
    await press('bullet');
    await waitFor('zoomed', async () => (await shown(page)).join() === 'one.a,one.b', 10000);
    assertEqual(await page.$eval('#zoom-title', (e) => e.textContent), 'one', 'the zoomed title');
    assert((await page.$eval('#breadcrumbs', (e) => e.textContent)).startsWith('Top'), 'breadcrumbs');
    await page.screenshot({ path: path.join(shots, 'outline-zoomed-1280.png') });
    await page.click('#breadcrumbs a');
    await waitFor('back at the top', async () => (await shown(page))[0] === 'one', 10000);
  });

  await runner.test("an outline record's title shows above the outline, at its level and below", async () => {
    // Outline records come from the network; here they are put in the
    // index as its ingest would (local mode has no procedure for them).
    const Database = createRequire(import.meta.url)('./pds/node_modules/better-sqlite3');
    const db = new Database(dbPath);
    const put = db.prepare('INSERT INTO outlines (did, rkey, rev, cid, root_rkey, record) VALUES (?, ?, ?, ?, ?, ?)');
    const record = (fields) => JSON.stringify({ $type: 'app.bulleted.outline', createdAt: new Date().toISOString(), ...fields });
    put.run(did, 'self', '3kaaaaaaaaaa2', 'bafyself', null, record({ title: 'My <b>notes</b>', description: 'Everything' }));
    put.run(did, 'ones', '3kaaaaaaaaaa2', 'bafyones', one.rkey,
      record({ title: 'The ones', root: `at://${did}/app.bulleted.node/${one.rkey}` }));
    db.close();
    const title = () => page.evaluate(() => {
      const box = document.getElementById('outline-title');
      return box.classList.contains('hidden') ? null : [box.querySelector('h1').textContent, box.querySelector('p').textContent];
    });
    await page.goto(`${base}/#/${did}/${two.rkey}`);
    await waitFor('the forest\'s title', async () => JSON.stringify(await title()) === '["My <b>notes</b>","Everything"]', 10000);
    assertEqual(await page.$$eval('#outline-title b', (els) => els.length), 0, 'a title is text');
    await page.goto(`${base}/#/${did}/${one.rkey}`);
    await waitFor('the subtree\'s title', async () => JSON.stringify(await title()) === '["The ones",""]', 10000);
    await page.goto(`${base}/#/${did}`);
    await waitFor('back at the top', async () => (await title())?.[0] === 'My <b>notes</b>', 10000);
  });

  await runner.test('search: / focuses the box; results as you type, with breadcrumbs, marks and tags; a click opens the bullet', async () => {
    const searchFor = async (q) => {
      await page.focus('#search-input');
      await page.$eval('#search-input', (e) => e.select());
      await page.keyboard.press('Backspace');
      await page.keyboard.type(q);
    };
    const results = () => page.$$eval('#results li.result a.hit', (els) => els.map((e) => e.textContent));
    await page.evaluate(() => document.activeElement?.blur());
    await page.keyboard.press('/');
    assert(await page.evaluate(() => document.activeElement?.id === 'search-input'), '/ focuses the search box');
    await page.keyboard.type('東京');
    await waitFor('the Japanese result', async () => (await results()).join() === '東京タワーに行く', 10000);
    assertEqual(await page.$$eval('#results mark', (els) => els.map((e) => e.textContent).join('')), '東京',
      'the matched characters marked');
    assertEqual(await page.$eval('#results .crumbs', (e) => e.textContent), 'search seeds', 'its ancestors as breadcrumbs');
    await searchFor('needle');
    await waitFor('both needles', async () => (await results()).length === 2, 10000);
    assert((await results()).includes('<img src=x onerror=alert(2)> needle'), 'a hostile text shown as text');
    assertEqual(await page.$$eval('#results img', (els) => els.length), 0, 'no element from a result');
    await searchFor('#pro');
    await waitFor('the tag offered', async () =>
      (await page.$$eval('#tag-list option', (els) => els.map((e) => e.value))).includes('#project'), 10000);
    await searchFor('needle #project');
    await waitFor('one result', async () => (await results()).join() === 'find the needle #project', 10000);
    await page.screenshot({ path: path.join(shots, 'search-1280.png') });
    await page.click('#results a.hit');
    await waitFor('its parent zoomed', async () => (await page.evaluate(() => location.hash)) === `#/${did}/${seeds.rkey}`, 10000);
    await waitFor('the bullet shown and focused', async () => page.evaluate((rkey) =>
      document.querySelector('li.found')?.dataset.rkey === rkey &&
      document.activeElement?.closest('li')?.dataset.rkey === rkey, needle.rkey), 10000);
    assert(await page.$eval('#search-results', (e) => e.classList.contains('hidden')), 'the results closed');
    // Inside a zoomed bullet, its subtree only.
    await searchFor('three');
    await waitFor('nothing under the zoomed bullet', async () =>
      !(await page.$eval('#no-results', (e) => e.classList.contains('hidden'))), 10000);
    await searchFor('needle');
    await waitFor('the needles under the zoomed bullet', async () => (await results()).length === 2, 10000);
    await page.keyboard.press('Escape');
    assert(await page.$eval('#search-results', (e) => e.classList.contains('hidden')), 'Escape leaves the results');
    assertEqual(await page.$eval('#search-input', (e) => e.value), '', 'and empties the box');
    await page.evaluate((d) => { location.hash = `#/${d}`; }, did);
    await waitFor('back at the top', async () => (await shown(page))[0] === 'one', 10000);
  });

  await runner.test('an import shows its progress to 100% and lands in the outline', async () => {
    const file = path.join(workdir, 'notes.txt');
    fs.writeFileSync(file, Array.from({ length: 40 }, (_, i) => `- imported ${i}\n  - under ${i}`).join('\n'));
    const before = (await children(undefined)).length;
    const input = await page.$('#import-file');
    await input.uploadFile(file);
    await waitFor('the progress bar at 100%', async () => (await page.$eval('#import-progress', (e) => e.value)) === 100, 30000);
    const top = await children(undefined);
    assertEqual(top.length, before + 1, 'one import root at the top');
    assertEqual((await children(top.at(-1).rkey)).length, 40, 'the imported bullets under it');
    await waitFor('the import root in the page', async () => (await shown(page)).length === before + 1, 10000);
  });

  await runner.test('a second browser context sees edits, new bullets, moves and deletes as they are made, without polling', async () => {
    const other = await browser.createBrowserContext();
    const second = await newPage(other);
    const asked = [];
    second.on('request', (r) => asked.push(r.url()));
    // What the second page was told and asked, for a failure's message.
    const seen = [];
    const cdp = await second.createCDPSession();
    await cdp.send('Network.enable');
    cdp.on('Network.eventSourceMessageReceived', (e) => seen.push(`event ${e.eventName} ${e.eventId} ${e.data.slice(0, 200)}`));
    second.on('request', (r) => seen.push(`asked ${r.url().replace(base, '')}`));
    second.on('console', (m) => seen.push(`console ${m.text()}`));
    const inSecond = (what, check) => waitFor(what, check, 15000).catch((err) => {
      err.message += `\nthe second page saw, last first:\n  ${seen.slice(-150).reverse().join('\n  ')}`;
      throw err;
    });
    await second.goto(`${base}/#/${did}`);
    await waitFor('the second context', async () => (await shown(second)).includes('two edited'), 10000);
    await waitFor('its stream open', () => asked.some((u) => u.includes('streamChanges')), 10000);
    const pollsBefore = asked.filter((u) => u.includes('getChanges')).length;
    await focusEnd(page, 'three');
    await page.keyboard.type(' (changed)');
    await inSecond('the change in the second context', async () => (await shown(second)).includes('three (changed)'));
    // A structural change: a new bullet at the top level.
    await page.keyboard.press('Enter');
    await page.keyboard.type('from the first');
    await inSecond('the new bullet in the second context', async () => (await shown(second)).includes('from the first'));
    // A move (made elsewhere: through the API) and a delete.
    const moved = await nodeByText('from the first');
    await post('moveNode', { rkey: moved.rkey, parentRkey: one.rkey, position: 'first' });
    await inSecond('the move in the second context', async () => !(await shown(second)).includes('from the first'));
    const doomed = await post('createNode', { text: 'short-lived' });
    await inSecond('the short-lived bullet', async () => (await shown(second)).includes('short-lived'));
    await post('deleteNode', { rkey: doomed.rkey });
    await inSecond('the delete in the second context', async () => !(await shown(second)).includes('short-lived'));
    assertEqual(asked.filter((u) => u.includes('getChanges')).length, pollsBefore, 'no getChanges request meanwhile');
    await second.screenshot({ path: path.join(shots, 'outline-1280.png') });
    // A read that fails while a change is applied: the change is read
    // again (getChanges from where the page was), not lost.
    const abortedFrom = problems.length;
    await second.setRequestInterception(true);
    let failed = 0;
    const failOnce = (r) => {
      if (failed === 0 && r.url().includes('getChildren')) {
        failed++;
        r.abort();
      } else {
        r.continue();
      }
    };
    second.on('request', failOnce);
    const survivor = await post('createNode', { text: 'read again' });
    await inSecond('a change whose read failed', async () => (await shown(second)).includes('read again'));
    assertEqual(failed, 1, 'the second page\'s read failed once');
    // The browser logs the aborted read; nothing else is expected.
    const aborted = problems.splice(abortedFrom);
    assertEqual(aborted.filter((p) => !/ERR_FAILED/.test(p)), [], 'no other problem while a read failed');
    second.off('request', failOnce);
    await second.setRequestInterception(false);
    await post('deleteNode', { rkey: survivor.rkey });

    // A second tab of that browser shares the first tab's stream.
    const third = await newPage(other);
    third.on('request', (r) => asked.push(r.url()));
    await third.goto(`${base}/#/${did}`);
    await waitFor('the second tab', async () => (await shown(third)).includes('three (changed)'), 10000);
    const shared = await post('createNode', { text: 'seen by both tabs' });
    await waitFor('both tabs', async () => (await shown(second)).includes('seen by both tabs') &&
      (await shown(third)).includes('seen by both tabs'), 15000);
    assertEqual(asked.filter((u) => u.includes('streamChanges')).length, 1, 'one stream for the two tabs');
    await post('deleteNode', { rkey: shared.rkey });

    // A restart cuts the stream; an edit made while it was down (the CLI, on
    // the file) arrives once the stream resumes.
    const quietUntil = problems.length;
    await stopProcess(server);
    await waitFor('offline shown', () => second.evaluate(() => document.body.classList.contains('offline')), 15000);
    const file = path.join(workdir, 'while-down.txt');
    fs.writeFileSync(file, '- made while the server was down\n');
    execFileSync(binary, ['import', file, '--repo', did, '--format', 'text', '--db', dbPath], { stdio: 'ignore' });
    await startServer();
    await waitFor('back online', () => second.evaluate(() => !document.body.classList.contains('offline')), 30000);
    // What the browser logs of requests refused while the server was down
    // is expected; nothing else is.
    const whileDown = problems.splice(quietUntil);
    assertEqual(whileDown.filter((p) => !/ERR_CONNECTION_REFUSED|Failed to load resource|EventSource/.test(p)), [],
      'no other problem while the server was down');
    await waitFor('the edit made while down', async () =>
      (await shown(second)).some((t) => t.startsWith('Imported')) && (await shown(third)).some((t) => t.startsWith('Imported')), 30000);

    // The third tab opened in front of the second: a tab behind another
    // draws no frames, and a screenshot of it waits for one.
    await second.bringToFront();
    await second.setViewport({ width: 320, height: 720 });
    await second.reload();
    await waitFor('the narrow page', async () => (await shown(second)).length > 0, 10000);
    const width = await second.evaluate(() => document.documentElement.scrollWidth);
    assert(width <= 320, `no horizontal scrolling at 320 px (${width})`);
    await second.screenshot({ path: path.join(shots, 'outline-320.png') });
    await other.close();
  });

  await runner.test('layouts are drawn (a todo with its box, headings, code, quote) and the box completes', async () => {
    const holder = await post('createNode', { text: 'layouts' });
    const made = {};
    for (const layout of ['todo', 'h1', 'codeBlock', 'quoteBlock', 'kanbanCard']) {
      made[layout] = await post('createNode', { parentRkey: holder.rkey, text: `a ${layout}`, layout });
    }
    await page.goto(`${base}/#/${did}/${holder.rkey}`);
    await page.waitForSelector(`#outline li.node[data-rkey="${made.kanbanCard.rkey}"]`);
    const drawn = await page.$$eval('#outline > li.node', (els) => els.map((e) => [e.dataset.rkey,
      [...e.classList].filter((c) => c.startsWith('layout-')).join(' '),
      !e.querySelector(':scope > .row > .check').classList.contains('hidden')]));
    assertEqual(drawn, [[made.todo.rkey, 'layout-todo', true], [made.h1.rkey, 'layout-h1', false],
      [made.codeBlock.rkey, 'layout-codeBlock', false], [made.quoteBlock.rkey, 'layout-quoteBlock', false],
      [made.kanbanCard.rkey, '', false]], 'each drawn by its layout; one of a later version as a bullet');
    await page.click(`#outline li.node[data-rkey="${made.todo.rkey}"] > .row > .check`);
    await waitFor('the todo completed', async () =>
      (await api('getNode', { repo: did, rkey: made.todo.rkey })).body.completed === true, 10000);
    assert(await page.$eval(`li.node[data-rkey="${made.todo.rkey}"]`,
      (e) => e.classList.contains('completed') && e.querySelector('.check').checked), 'shown completed');
    await page.goto(`${base}/#/${did}`);
    await page.waitForSelector('#outline .text');
  });

  await runner.test('a failed save is shown, not lost', async () => {
    // The token stops being valid: the page says the edit was not saved.
    await page.evaluate(() => { sessionStorage.setItem('bulleted.token', 'not-a-token'); });
    await page.reload();
    await page.waitForSelector('#outline .text[contenteditable="true"]');
    await focusEnd(page, 'one');
    await page.keyboard.type('!');
    await waitFor('the failure shown', async () => (await page.$eval('#status', (e) => e.textContent)).startsWith('Not saved'), 10000);
    assert(await page.$eval('#status', (e) => e.classList.contains('error')), 'shown as an error');
    assertEqual((await api('getNode', { repo: did, rkey: one.rkey })).body.text, 'one', 'nothing written');
    const problemsBefore = problems.filter((p) => !/401|Unauthorized/.test(p));
    assertEqual(problemsBefore, [], 'no console errors but the refused save');
  });
} finally {
  if (runner.failed > 0) {
    console.log('page status:', await page.$eval('#status', (e) => e.textContent).catch(() => '?'));
    console.log('problems:', problems);
  }
  await browser.close().catch(() => {});
  await stopProcess(server);
  await stopProcess(pds);
}
process.exit(runner.finish());
