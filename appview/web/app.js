// The reference outliner: a frontend like any other, talking to the app view
// only through XRPC. Record data is only ever set as text (textContent,
// attributes through the DOM), never parsed as HTML. This module applies
// changes made elsewhere, navigates, signs in, imports and exports;
// client.js, outline.js, edit.js, search.js and live.js (which follows the
// change stream) hold the rest, over the pure modules text.js, queue.js,
// keys.js, found.js and stream.js.
import { $, call, canEdit, outlineRoot, query, say, state, xrpc } from './client.js';
import { elementOf, focusText, groupOf, loadGroup, refreshGroup, showFound, updateElement } from './outline.js';
import { place } from './edit.js';
import { follow, stop as stopFollowing } from './live.js';
import { edits } from './queue.js';
import { resetSearch, setUpSearch } from './search.js';

// ---- following changes made elsewhere (live.js)

// Applies changes read from a stream or getChanges: a bullet edited in
// place is updated; the groups a change touches that are on the page are
// read again.
async function applyChanges(changes) {
  const parents = new Set();
  for (const change of changes) {
    const before = state.nodes.get(change.rkey);
    if (before) parents.add(before.parent ?? null);
    if (change.node) {
      parents.add(change.node.parent ?? null);
      const li = elementOf(change.rkey);
      if (li && before && (before.parent ?? null) === (change.node.parent ?? null)) updateElement(li, change.node);
    }
  }
  for (const parent of parents) {
    if (parent === null && state.zoom !== null) continue;
    if (groupOf(parent) && (parent === null || parent === state.zoom || elementOf(parent)?.getAttribute('aria-expanded') === 'true')) await refreshGroup(parent);
  }
  if (state.editing) focusText(state.editing);
}
const liveHooks = { apply: applyChanges, reread: () => open() };

// ---- navigation

async function open() {
  const [, who, zoom] = location.hash.match(/^#\/([^/]*)\/?([^/]*)/) ?? [];
  const generation = ++state.generation;
  edits.stale.clear();
  resetSearch();
  outlineRoot().replaceChildren();
  $('breadcrumbs').replaceChildren();
  $('zoom-title').classList.add('hidden');
  $('outline-title').classList.add('hidden');
  $('tools').classList.toggle('hidden', !who);
  showStart(!who);
  if (!who) {
    stopFollowing();
    state.repo = null;
    say('Open an outline by DID or handle.');
    return;
  }
  try {
    const id = decodeURIComponent(who);
    state.repo = id.startsWith('did:') ? id : (await xrpc('com.atproto.identity.resolveHandle', { params: { handle: id } })).did;
    if (generation !== state.generation) return;
    state.zoom = zoom ? decodeURIComponent(zoom) : null;
    $('repo-input').value = id;
    // Listening before the cursor is read: nothing made after it is missed.
    const following = follow(liveHooks);
    const { cursor } = await query('getChanges', { repo: state.repo, latest: true });
    if (generation !== state.generation) return;
    if (state.zoom) await showZoom(generation);
    showOutlineTitle(generation);
    await loadGroup(state.zoom, outlineRoot());
    if (generation !== state.generation) return;
    following.ready(cursor);
    if (state.focusAfterOpen) {
      showFound(state.focusAfterOpen);
      state.focusAfterOpen = null;
    }
    for (const id of ['add-node']) $(id).classList.toggle('hidden', !canEdit());
    document.querySelector('label[for="import-file"]').classList.toggle('hidden', !canEdit());
    say(canEdit() ? 'Editing.' : 'Read-only: sign in to edit.');
  } catch (err) {
    if (generation === state.generation) stopFollowing();
    say(`${err.error ?? 'Error'}: ${err.message}`, true);
  }
}

// The title and description of the outline record in effect here (written
// at this level or above it), as getOutline says; nothing when there is none.
async function showOutlineTitle(generation) {
  let answer;
  try {
    answer = await xrpc('app.bulleted.getOutline',
      { params: { did: state.repo, node: state.zoom ?? undefined, depth: 1, limit: 1 } });
  } catch {
    return;
  }
  if (generation !== state.generation || !answer.outline?.title) return;
  const box = $('outline-title');
  box.querySelector('h1').textContent = answer.outline.title;
  box.querySelector('p').textContent = answer.outline.description ?? '';
  box.classList.remove('hidden');
}

async function showZoom(generation) {
  const [{ ancestors }, node] = await Promise.all([
    query('getAncestors', { repo: state.repo, rkey: state.zoom }),
    query('getNode', { repo: state.repo, rkey: state.zoom }),
  ]);
  if (generation !== state.generation) return;
  const crumbs = $('breadcrumbs');
  const link = (label, hash) => {
    const a = document.createElement('a');
    a.href = hash;
    a.textContent = label;
    return a;
  };
  crumbs.append(link('Top', `#/${state.repo}`));
  for (const a of ancestors) crumbs.append(' › ', link(a.text || '(empty)', `#/${state.repo}/${a.rkey}`));
  const title = $('zoom-title');
  title.textContent = node.text;
  title.classList.remove('hidden');
}

$('open').addEventListener('submit', (event) => {
  event.preventDefault();
  const value = $('repo-input').value.trim();
  if (value) location.hash = `#/${encodeURIComponent(value)}`;
});
$('signin').addEventListener('submit', (event) => {
  event.preventDefault();
  if (state.oauth) {
    // Signing in happens at the account's PDS, which sends the browser back.
    const handle = $('handle-input').value.trim().replace(/^@/, '');
    if (!handle) return;
    const target = new URL('/oauth/login', location.origin);
    target.searchParams.set('handle', handle);
    target.searchParams.set('returnTo', `/${location.hash}`);
    location.assign(target);
    return;
  }
  const token = $('token-input').value.trim();
  if (!token) return;
  state.token = token;
  sessionStorage.setItem('bulleted.token', token);
  $('token-input').value = '';
  showSignedIn();
  open();
});
$('signout-button').addEventListener('click', async () => {
  if (state.session) {
    try {
      await xrpc('app.bulleted.deleteSession', { body: {} });
    } catch (err) {
      say(`Sign-out failed: ${err.message}`, true);
      return;
    }
    state.session = null;
  }
  state.token = null;
  sessionStorage.removeItem('bulleted.token');
  showSignedIn();
  open();
});
function showSignedIn() {
  const signedIn = !!state.token || !!state.session;
  $('token-input').classList.toggle('hidden', signedIn || state.oauth);
  $('handle-input').classList.toggle('hidden', signedIn || !state.oauth);
  $('signin-button').classList.toggle('hidden', signedIn);
  $('signout-button').classList.toggle('hidden', !signedIn);
  const who = $('signed-in-as');
  who.textContent = state.session ? `@${state.session.handle ?? state.session.did}` : '';
  who.classList.toggle('hidden', !state.session);
}

// The steps to a first outline, for a newcomer on the page with no
// outline open: how this app view signs people in decides them.
function showStart(shown) {
  const steps = [];
  if (state.signIn === 'token') {
    if (!state.token) {
      steps.push(['Make a token for the DID you write as, in a terminal where the app view runs:',
        'bulleted-appview token create --did did:plc:… --db <the database serve uses>']);
      steps.push(['Paste the token into the token field above and press Sign in.']);
    }
    steps.push(['Type your DID in the outline box above and press Open.']);
  } else if (state.signIn === 'oauth') {
    if (!state.session) steps.push(['Type your handle above and press Sign in: your own server asks you to let Bulleted in.']);
    else steps.push(['Open your outline: type your handle in the outline box above and press Open.']);
  } else {
    steps.push(['Type a DID or handle in the outline box above and press Open.']);
  }
  if (state.signIn === 'token' || state.signIn === 'oauth') {
    steps.push(['Press New bullet, or Import… a WorkFlowy OPML export.']);
  }
  const list = $('start-steps');
  list.replaceChildren(...steps.map(([text, command]) => {
    const li = document.createElement('li');
    li.append(text);
    if (command) {
      const code = document.createElement('code');
      code.textContent = command;
      li.append(document.createElement('br'), code);
    }
    return li;
  }));
  $('start').classList.toggle('hidden', !shown);
}

// Who is signed in (the session cookie), and whether OAuth is on here.
async function loadSession() {
  const health = await fetch('/xrpc/_health').then((r) => r.json()).catch(() => ({}));
  state.signIn = health.signIn ?? null;
  state.oauth = health.signIn === 'oauth';
  if (state.oauth) state.session = await query('getSession').catch(() => null);
  if (state.session && state.session.via === 'serviceAuth') state.session = null;
  showSignedIn();
  if (state.session && !location.hash) location.hash = `#/${state.session.did}`;
}

// ---- import and export

$('import-file').addEventListener('change', async (event) => {
  const file = event.target.files[0];
  event.target.value = '';
  if (!file) return;
  const content = await file.text();
  const format = /\.(opml|xml)$/i.test(file.name) || content.trimStart().startsWith('<') ? 'opml' : 'text';
  const progress = $('import-progress');
  progress.value = 0;
  progress.classList.remove('hidden');
  try {
    const job = await call('importOutline', { parentRkey: state.zoom ?? undefined, format, content });
    for (;;) {
      const status = await query('getImportJob', { id: job.jobId });
      progress.value = status.total > 0 ? Math.round((100 * status.done) / status.total) : 0;
      $('import-status').textContent = `${status.done} / ${status.total}`;
      if (status.state === 'done') break;
      if (status.state === 'failed') throw new Error(status.errors.join('; ') || 'the import failed');
      await new Promise((resolve) => setTimeout(resolve, 300));
    }
    progress.value = 100;
    say(`Imported ${file.name}`);
    await refreshGroup(state.zoom);
  } catch (err) {
    say(`Import failed: ${err.message}`, true);
  }
});

async function exportAs(format) {
  try {
    const body = await query('exportOutline', { repo: state.repo, root: state.zoom ?? undefined, format });
    const blob = new Blob([body], { type: format === 'opml' ? 'text/x-opml' : 'text/plain' });
    const a = document.createElement('a');
    a.href = URL.createObjectURL(blob);
    a.download = `outline.${format === 'opml' ? 'opml' : 'txt'}`;
    a.click();
    setTimeout(() => URL.revokeObjectURL(a.href), 10000);
  } catch (err) {
    say(`Export failed: ${err.message}`, true);
  }
}
$('add-node').addEventListener('click', async () => {
  try {
    const created = await place(state.zoom, () => call('createNode', { parentRkey: state.zoom ?? undefined, position: 'last', text: '' }));
    await refreshGroup(state.zoom);
    focusText(created.rkey);
  } catch (err) {
    say(`${err.error ?? 'Failed'}: ${err.message}`, true);
  }
});
$('export-opml').addEventListener('click', () => exportAs('opml'));
$('export-text').addEventListener('click', () => exportAs('text'));

window.addEventListener('hashchange', open);
setUpSearch();
state.token = sessionStorage.getItem('bulleted.token');
showSignedIn();
loadSession().finally(open);
