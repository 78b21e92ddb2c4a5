// The reference outliner: a frontend like any other, talking to the app view
// only through XRPC. Record data is only ever set as text (textContent,
// attributes through the DOM), never parsed as HTML.
const $ = (id) => document.getElementById(id);
const statusBox = $('status');
const outlineRoot = $('outline');

const state = {
  repo: null,        // the outline's DID
  zoom: null,        // the rkey shown as the root, or null for the top level
  token: sessionStorage.getItem('bulleted.token'),  // a local-mode token
  session: null,     // {did, handle?, via} of the OAuth sign-in (pds mode), by cookie
  oauth: false,      // whether this app view signs in with OAuth
  cursor: null,      // getChanges cursor
  nodes: new Map(),  // rkey -> NodeView (as last read)
  expanded: new Set(),
  editing: null,     // rkey whose text has focus
  generation: 0,     // bumped on navigation: late answers are dropped
};

class XrpcError extends Error {
  constructor(status, error, message) {
    super(message || error || `HTTP ${status}`);
    this.status = status;
    this.error = error;
  }
}

async function xrpc(nsid, { params, body } = {}) {
  const url = new URL(`/xrpc/${nsid}`, location.origin);
  for (const [k, v] of Object.entries(params ?? {})) if (v !== undefined && v !== null) url.searchParams.set(k, String(v));
  const init = { method: body ? 'POST' : 'GET', headers: {} };
  if (body) {
    init.headers['content-type'] = 'application/json';
    init.body = JSON.stringify(body);
  }
  if (body && state.token) init.headers.authorization = `Bearer ${state.token}`;
  const res = await fetch(url, init);
  const type = res.headers.get('content-type') ?? '';
  if (!res.ok) {
    const err = type.includes('json') ? await res.json().catch(() => ({})) : {};
    throw new XrpcError(res.status, err.error, err.message);
  }
  return type.includes('json') ? res.json() : res.text();
}
const query = (method, params) => xrpc(`app.bulleted.${method}`, { params });
// Whether this page may edit the outline it shows: a token, or the signed-in
// account's own outline (its session cookie goes with same-origin calls).
const canEdit = () => !!state.token || (!!state.session && state.session.did === state.repo);
const call = (method, body) => xrpc(`app.bulleted.${method}`, { body: { repo: state.repo, ...body } });

function say(text, isError = false) {
  statusBox.textContent = text;
  statusBox.classList.toggle('error', isError);
}

// ---- rendering

// Text with its facets as nested spans: byte offsets over UTF-8.
function renderText(span, node) {
  span.replaceChildren();
  const bytes = new TextEncoder().encode(node.text);
  const facets = (node.facets ?? [])
    .filter((f) => f.index && f.index.byteStart < f.index.byteEnd && f.index.byteEnd <= bytes.length)
    .sort((a, b) => a.index.byteStart - b.index.byteStart);
  const decode = (from, to) => new TextDecoder().decode(bytes.subarray(from, to));
  let at = 0;
  for (const facet of facets) {
    const { byteStart, byteEnd } = facet.index;
    if (byteStart < at) continue;  // overlapping facets: the first one wins
    if (byteStart > at) span.append(decode(at, byteStart));
    let piece = document.createElement('span');
    for (const feature of facet.features ?? []) {
      const kind = String(feature.$type ?? '').split('#')[1];
      if (kind === 'link') {
        const uri = String(feature.uri ?? '');
        if (/^(https?:|mailto:)/i.test(uri)) {
          const a = document.createElement('a');
          a.href = uri;
          a.rel = 'noopener noreferrer nofollow';
          a.target = '_blank';
          a.className = 'f-link';
          a.append(...piece.childNodes);
          piece = a;
        }
      } else if (kind === 'highlight') {
        const color = String(feature.color ?? '').toLowerCase();
        piece.classList.add(['red', 'orange', 'yellow', 'green', 'blue', 'purple', 'pink'].includes(color) ? `hl-${color}` : 'hl-other');
      } else if (kind === 'date') {
        piece.classList.add('f-date');
        piece.title = String(feature.start ?? '');
      } else if (['bold', 'italic', 'underline', 'code'].includes(kind)) {
        piece.classList.add(`f-${kind}`);
      } else if (kind === 'strikethrough') {
        piece.classList.add('f-strike');
      }
    }
    piece.append(decode(byteStart, byteEnd));
    span.append(piece);
    at = byteEnd;
  }
  if (at < bytes.length) span.append(decode(at, bytes.length));
}

function nodeElement(node) {
  const li = document.createElement('li');
  li.className = 'node';
  li.dataset.rkey = node.rkey;
  li.setAttribute('role', 'treeitem');
  const row = document.createElement('div');
  row.className = 'row';
  const toggle = document.createElement('button');
  toggle.type = 'button';
  toggle.className = 'toggle';
  toggle.tabIndex = -1;
  toggle.addEventListener('click', () => (state.expanded.has(li.dataset.rkey) ? collapse(li) : expand(li)));
  const bullet = document.createElement('button');
  bullet.type = 'button';
  bullet.className = 'bullet';
  bullet.title = 'Zoom in';
  bullet.setAttribute('aria-label', 'Zoom in');
  bullet.addEventListener('click', () => {
    if (!li.dataset.rkey.startsWith('draft-')) location.hash = `#/${state.repo}/${li.dataset.rkey}`;
  });
  const text = document.createElement('span');
  text.className = 'text';
  text.dataset.rkey = node.rkey;
  wireText(text);
  row.append(toggle, bullet, text);
  const note = document.createElement('div');
  note.className = 'note';
  const children = document.createElement('ul');
  children.className = 'children';
  children.setAttribute('role', 'group');
  li.append(row, note, children);
  updateElement(li, node);
  return li;
}

function updateElement(li, node) {
  state.nodes.set(node.rkey, node);
  li.classList.toggle('completed', !!node.completed);
  const toggle = li.querySelector(':scope > .row > .toggle');
  const open = state.expanded.has(node.rkey);
  toggle.classList.toggle('leaf', node.childCount === 0);
  toggle.textContent = open ? '▾' : '▸';
  toggle.setAttribute('aria-label', open ? 'Collapse' : 'Expand');
  li.classList.toggle('collapsed', node.childCount > 0 && !open);
  li.setAttribute('aria-expanded', String(open));
  const text = li.querySelector(':scope > .row > .text');
  text.contentEditable = canEdit() ? 'true' : 'false';
  if (state.editing !== node.rkey) renderText(text, node);
  const note = li.querySelector(':scope > .note');
  note.textContent = node.note ?? '';
  note.classList.toggle('hidden', !node.note);
}

const elementOf = (rkey) => outlineRoot.querySelector(`li.node[data-rkey="${CSS.escape(rkey)}"]`);
const groupOf = (parent) => (parent === null || parent === state.zoom ? outlineRoot : elementOf(parent)?.querySelector(':scope > .children'));
const parentOf = (li) => li.parentElement.closest('li.node')?.dataset.rkey ?? state.zoom;
const textOf = (li) => li.querySelector(':scope > .row > .text');

// A group's children, page by page: the first page now, the next ones when
// asked ("more"), never the whole outline at once.
async function loadGroup(parent, ul, { atLeast = 0 } = {}) {
  const generation = state.generation;
  const editsBefore = edits;
  const nodes = [];
  let cursor;
  do {
    const page = await query('getChildren', { repo: state.repo, parent: parent ?? undefined, limit: 100, cursor });
    if (generation !== state.generation) return;
    nodes.push(...page.nodes);
    cursor = page.cursor;
  } while (cursor && nodes.length < atLeast);
  // The answer may be older than what the page shows: an edit made in the
  // page and not yet sent (or made while this was read) would be undone by
  // it. The group is read again once the edits are through.
  if (unsent > 0 || edits !== editsBefore) {
    stale.add(parent ?? null);
    if (unsent === 0) enqueue(readStale);
    return;
  }
  // What is being typed survives the rebuild: the focused bullet's text as
  // it is now, put back into its new element, focused again.
  const active = document.activeElement;
  const typing = active?.classList?.contains('text') && ul.contains(active)
    ? { rkey: active.dataset.rkey, text: active.textContent } : null;
  // The element holding the focused bullet (the bullet itself or the one it
  // is nested in) is kept, moved around but never out of the page, so that
  // nothing typed meanwhile goes astray.
  const kept = typing && [...ul.children].find((c) => c.matches('li.node') && c.contains(active));
  const elements = nodes.map((n) => {
    if (kept && n.rkey === kept.dataset.rkey) {
      updateElement(kept, n);
      return kept;
    }
    return nodeElement(n);
  });
  if (kept && elements.includes(kept)) {
    for (const child of [...ul.children]) if (child !== kept) child.remove();
    const at = elements.indexOf(kept);
    kept.before(...elements.slice(0, at));
    kept.after(...elements.slice(at + 1));
  } else {
    ul.replaceChildren(...elements);
  }
  if (cursor) ul.append(moreButton(parent, ul, cursor));
  if (ul === outlineRoot) $('empty').classList.toggle('hidden', nodes.length > 0);
  await Promise.all(nodes.filter((n) => state.expanded.has(n.rkey) && n.childCount > 0)
    .map((n) => loadGroup(n.rkey, elementOf(n.rkey).querySelector(':scope > .children'))));
  if (typing && !(kept && elements.includes(kept))) {
    const li = elementOf(typing.rkey);
    if (li) {
      textOf(li).textContent = typing.text;
      focusText(typing.rkey);
      if (typing.text !== state.nodes.get(typing.rkey)?.text) saveSoon(textOf(li));
    }
  }
}

function moreButton(parent, ul, cursor) {
  const li = document.createElement('li');
  const button = document.createElement('button');
  button.type = 'button';
  button.className = 'more';
  button.textContent = 'More…';
  button.addEventListener('click', async () => {
    const page = await query('getChildren', { repo: state.repo, parent: parent ?? undefined, limit: 100, cursor });
    li.remove();
    ul.append(...page.nodes.map(nodeElement));
    if (page.cursor) ul.append(moreButton(parent, ul, page.cursor));
  });
  li.append(button);
  return li;
}

// Reloads a group as far as it was read (after a change), keeping what was
// expanded and where the caret was.
async function refreshGroup(parent) {
  const ul = groupOf(parent);
  if (!ul) return;
  const loaded = ul.querySelectorAll(':scope > li.node').length;
  await loadGroup(parent, ul, { atLeast: loaded });
  if (parent && parent !== state.zoom) {
    const node = await query('getNode', { repo: state.repo, rkey: parent });
    const li = elementOf(parent);
    if (li) updateElement(li, node);
  }
}

async function expand(li) {
  state.expanded.add(li.dataset.rkey);
  updateElement(li, state.nodes.get(li.dataset.rkey));
  await loadGroup(li.dataset.rkey, li.querySelector(':scope > .children'));
}

function collapse(li) {
  state.expanded.delete(li.dataset.rkey);
  li.querySelector(':scope > .children').replaceChildren();
  updateElement(li, state.nodes.get(li.dataset.rkey));
}

function focusText(rkey, atEnd = true) {
  const li = elementOf(rkey);
  if (!li) return;
  const text = textOf(li);
  text.focus();
  if (atEnd) {
    const range = document.createRange();
    range.selectNodeContents(text);
    range.collapse(false);
    const selection = getSelection();
    selection.removeAllRanges();
    selection.addRange(range);
  }
}

// ---- editing

// Saves what the user typed into `element` (the bullet's text as shown).
const pendingSaves = new Map();  // rkey -> timer
async function save(rkey, element) {
  clearTimeout(pendingSaves.get(rkey));
  pendingSaves.delete(rkey);
  if (rkey.startsWith('draft-')) return;  // saved once it is created
  const node = state.nodes.get(rkey);
  if (!element || !node) return;
  const text = element.textContent;
  if (text === node.text) return;
  try {
    await call('updateNode', { rkey, text });
    state.nodes.set(rkey, { ...node, text, facets: undefined });
    say('Saved');
  } catch (err) {
    // Kept in the page, tried again at the next edit or when the focus leaves.
    say(`Not saved: ${err.message}`, true);
    throw err;
  }
}
const saveSoon = (element) => {
  const rkey = element.dataset.rkey;
  clearTimeout(pendingSaves.get(rkey));
  pendingSaves.set(rkey, setTimeout(() => save(element.dataset.rkey, element).catch(() => {}), 400));
};

// A placement from the intent read off the page now; a 409 StaleNeighbours
// refetches the group and applies the same intent once more.
async function place(parent, intent) {
  try {
    return await intent();
  } catch (err) {
    if (err.error !== 'StaleNeighbours') throw err;
    await refreshGroup(parent);
    return intent();
  }
}

// The bullets shown beside `li` (one being deleted is hidden until it is).
const siblings = (li) => [...li.parentElement.children].filter((e) => e.matches('li.node') && !e.classList.contains('hidden'));

// Structural edits run one after another, in the order of the keys; each
// reads the page when its turn comes (a bullet made by Enter has its rkey
// by then). Typing goes on meanwhile into the focused bullet.
let queue = Promise.resolve();
const enqueue = (work) => { queue = queue.then(work, work); return queue; };
let drafts = 0;
// Edits show in the page at once and reach the server in their turn. Until
// the last one has, no group is rebuilt from the server's answers (which do
// not have them yet); the groups to read are noted and read afterwards.
let unsent = 0;           // edits made in the page and not yet sent
let edits = 0;            // edits made in the page, ever
const stale = new Set();  // groups (parent rkey, null for the top) to read again
async function readStale() {
  if (unsent > 0) return;
  const groups = [...stale];
  stale.clear();
  for (const parent of groups) {
    if (parent === null && state.zoom !== null) continue;
    await refreshGroup(parent).catch(() => {});
  }
}
// Runs `work` in the edits' queue as an edit made in the page now.
function edit(work) {
  unsent++;
  edits++;
  enqueue(async () => {
    try {
      await work();
    } finally {
      unsent--;
    }
    await readStale();
  });
}

function onKey(event) {
  const text = event.target;
  const li = text.closest('li.node');
  const run = (work) => {
    event.preventDefault();
    edit(async () => {
      if (!li.isConnected) return;
      const rkey = li.dataset.rkey;
      const parent = parentOf(li);
      try {
        await save(rkey, textOf(li));
        await work({ rkey, parent });
      } catch (err) {
        say(`${err.error ?? 'Failed'}: ${err.message}`, true);
        stale.add(parent ?? null);
      }
    });
  };
  if (event.key === 'Enter' && (event.ctrlKey || event.metaKey)) {
    return run(async ({ rkey }) => {
      const node = state.nodes.get(rkey);
      await call('updateNode', { rkey, completed: !node.completed });
      updateElement(li, { ...node, completed: !node.completed });
    });
  }
  if (event.key === 'Enter' && !event.shiftKey && !event.altKey) {
    // The new bullet is there at once, focused, and takes what is typed; it
    // is created in its turn and saved with that text.
    const key = `draft-${++drafts}`;
    const draft = nodeElement({ rkey: key, text: '', childCount: 0, completed: false });
    li.after(draft);
    focusText(key);
    return run(async ({ rkey, parent }) => {
      const created = await place(parent, () => call('createNode', {
        parentRkey: parent ?? undefined, afterRkey: rkey, text: '' }));
      state.nodes.delete(key);
      draft.dataset.rkey = created.rkey;
      textOf(draft).dataset.rkey = created.rkey;
      if (state.editing === key) state.editing = created.rkey;
      state.nodes.set(created.rkey, { uri: created.uri, rkey: created.rkey, cid: created.cid, sortKey: created.sortKey,
        text: '', completed: false, childCount: 0, ...(parent ? { parent } : {}) });
      await save(created.rkey, textOf(draft));
    });
  }
  // Moves happen in the page at once (the bullet keeps the focus, so typing
  // goes on into it) and on the server in their turn, from the places the
  // page had when the key was pressed; the groups are then read again.
  const parentLi = li.parentElement.closest('li.node');
  const rkeyOf = (el) => (el ? el.dataset.rkey : state.zoom ?? undefined);
  const moved = (work) => {
    focusText(li.dataset.rkey);
    run(async ({ rkey }) => {
      await work(rkey);
      stale.add(parentOf(li) ?? null);
      if (parentLi && parentLi.isConnected && parentOf(li) !== parentLi.dataset.rkey) stale.add(parentLi.dataset.rkey);
    });
  };
  if (event.key === 'Tab' && !event.shiftKey) {
    event.preventDefault();
    const list = siblings(li);
    const into = list[list.indexOf(li) - 1];
    if (!into) return;
    state.expanded.add(into.dataset.rkey);
    into.querySelector(':scope > .children').append(li);
    updateElement(into, { ...state.nodes.get(into.dataset.rkey), childCount: (state.nodes.get(into.dataset.rkey)?.childCount ?? 0) + 1 });
    return moved((rkey) => place(rkeyOf(into), () => call('moveNode', { rkey, parentRkey: into.dataset.rkey, position: 'last' })));
  }
  if (event.key === 'Tab' && event.shiftKey) {
    event.preventDefault();
    if (!parentLi) return;
    const grandLi = parentLi.parentElement.closest('li.node');
    parentLi.after(li);
    return moved((rkey) => place(rkeyOf(grandLi), () => call('moveNode', { rkey, parentRkey: rkeyOf(grandLi),
      afterRkey: parentLi.dataset.rkey })));
  }
  if (event.altKey && (event.key === 'ArrowUp' || event.key === 'ArrowDown')) {
    event.preventDefault();
    const up = event.key === 'ArrowUp';
    const list = siblings(li);
    const other = list[list.indexOf(li) + (up ? -1 : 1)];
    if (!other) return;
    if (up) other.before(li);
    else other.after(li);
    return moved((rkey) => place(rkeyOf(parentLi), () => call('moveNode', { rkey, parentRkey: rkeyOf(parentLi),
      ...(up ? { beforeRkey: other.dataset.rkey } : { afterRkey: other.dataset.rkey }) })));
  }
  if (event.key === 'Backspace' && text.textContent === '') {
    // Gone from the page at once (the focus to the bullet above), deleted in
    // its turn.
    const list = siblings(li);
    const before = list[list.indexOf(li) - 1] ?? li.parentElement.closest('li.node');
    event.preventDefault();
    edit(async () => {
      const rkey = li.dataset.rkey;
      const parent = parentOf(li);
      li.classList.add('hidden');
      try {
        await call('deleteNode', { rkey });
        li.remove();
        state.nodes.delete(rkey);
      } catch (err) {
        li.classList.remove('hidden');
        say(`${err.error ?? 'Failed'}: ${err.message}`, true);
      }
      if (parent && elementOf(parent)) {
        const node = await query('getNode', { repo: state.repo, rkey: parent }).catch(() => null);
        if (node) updateElement(elementOf(parent), node);
      }
    });
    li.classList.add('hidden');
    if (before) focusText(before.dataset.rkey);
    return;
  }
  if ((event.key === 'ArrowUp' || event.key === 'ArrowDown') && !event.altKey) {
    const texts = [...outlineRoot.querySelectorAll('.text')].filter((t) => !t.closest('li.hidden'));
    const next = texts[texts.indexOf(text) + (event.key === 'ArrowUp' ? -1 : 1)];
    if (next) {
      event.preventDefault();
      focusText(next.dataset.rkey);
    }
  }
}

function wireText(text) {
  text.addEventListener('focus', () => {
    const rkey = text.dataset.rkey;
    state.editing = rkey;
    // Formatting is shown, not edited: the plain text while typing.
    if (text.isContentEditable && text.children.length > 0) text.textContent = state.nodes.get(rkey)?.text ?? text.textContent;
  });
  text.addEventListener('blur', () => {
    const rkey = text.dataset.rkey;
    if (state.editing === rkey) state.editing = null;
    if (text.isContentEditable) save(rkey, text).catch(() => {});
  });
  text.addEventListener('input', () => saveSoon(text));
  text.addEventListener('keydown', (event) => { if (text.isContentEditable) onKey(event); });
  text.addEventListener('paste', (event) => {
    // Plain text only: nothing pasted is taken as markup.
    event.preventDefault();
    document.execCommand('insertText', false, event.clipboardData.getData('text/plain'));
  });
}

// ---- following changes made elsewhere

async function follow() {
  if (!state.repo || state.cursor === null) return;
  const generation = state.generation;
  const parents = new Set();
  for (;;) {
    const page = await query('getChanges', { repo: state.repo, cursor: state.cursor, limit: 100 });
    if (generation !== state.generation) return;
    for (const change of page.changes) {
      const before = state.nodes.get(change.rkey);
      if (before) parents.add(before.parent ?? null);
      if (change.node) {
        parents.add(change.node.parent ?? null);
        const li = elementOf(change.rkey);
        if (li && before && (before.parent ?? null) === (change.node.parent ?? null)) updateElement(li, change.node);
      }
    }
    state.cursor = page.cursor;
    if (page.changes.length < 100) break;
  }
  for (const parent of parents) {
    if (parent === null && state.zoom !== null) continue;
    if (groupOf(parent) && (parent === null || parent === state.zoom || state.expanded.has(parent))) await refreshGroup(parent);
  }
  if (state.editing) focusText(state.editing);
}
// In the edits' queue, so that a refresh never lands inside an edit.
setInterval(() => enqueue(() => follow().catch((err) => say(`Not following changes: ${err.message}`, true))), 2000);

// ---- navigation

async function open() {
  const [, who, zoom] = location.hash.match(/^#\/([^/]*)\/?([^/]*)/) ?? [];
  const generation = ++state.generation;
  stale.clear();
  outlineRoot.replaceChildren();
  $('breadcrumbs').replaceChildren();
  $('zoom-title').classList.add('hidden');
  $('tools').classList.toggle('hidden', !who);
  if (!who) {
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
    state.cursor = (await query('getChanges', { repo: state.repo, latest: true })).cursor;
    if (state.zoom) await showZoom(generation);
    await loadGroup(state.zoom, outlineRoot);
    for (const id of ['add-node']) $(id).classList.toggle('hidden', !canEdit());
    document.querySelector('label[for="import-file"]').classList.toggle('hidden', !canEdit());
    say(canEdit() ? 'Editing.' : 'Read-only: sign in to edit.');
  } catch (err) {
    say(`${err.error ?? 'Error'}: ${err.message}`, true);
  }
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

// Who is signed in (the session cookie), and whether OAuth is on here.
async function loadSession() {
  const health = await fetch('/xrpc/_health').then((r) => r.json()).catch(() => ({}));
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
showSignedIn();
loadSession().finally(open);
