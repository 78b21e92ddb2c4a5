// Editing: saves as you type, and the keys' structural edits, shown in the
// page at once and sent to the app view one after another.
import { call, outlineRoot, query, say, state } from './client.js';
import { elementOf, focusText, nodeElement, parentOf, refreshGroup, textOf, updateElement } from './outline.js';

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
export const saveSoon = (element) => {
  const rkey = element.dataset.rkey;
  clearTimeout(pendingSaves.get(rkey));
  pendingSaves.set(rkey, setTimeout(() => save(element.dataset.rkey, element).catch(() => {}), 400));
};

// A placement from the intent read off the page now; a 409 StaleNeighbours
// refetches the group and applies the same intent once more.
export async function place(parent, intent) {
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
export const enqueue = (work) => { queue = queue.then(work, work); return queue; };
let drafts = 0;
// Edits show in the page at once and reach the server in their turn. Until
// the last one has, no group is rebuilt from the server's answers (which do
// not have them yet); the groups to read are noted and read afterwards.
export let unsent = 0;           // edits made in the page and not yet sent
export let edits = 0;            // edits made in the page, ever
export const stale = new Set();  // groups (parent rkey, null for the top) to read again
export async function readStale() {
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

export function wireText(text) {
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

