// Editing: saves as you type, and the keys' structural edits, shown in the
// page at once and sent to the app view one after another (queue.js).
import { call, outlineRoot, query, say, state } from './client.js';
import { commandFor } from './keys.js';
import { elementOf, focusText, nodeElement, parentOf, readStale, refreshGroup, textOf, updateElement, useEditing } from './outline.js';
import { edits } from './queue.js';

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

let drafts = 0;

// Runs `work` in the edits' queue as an edit made in the page now; the
// stale groups are read once it is through.
const edit = (work) => edits.edit(work, readStale);

// An edit of bullet `li` in its turn: its text saved first, then `work`;
// a failure is said and its group read again.
function editOf(li, work) {
  edit(async () => {
    if (!li.isConnected) return;
    const rkey = li.dataset.rkey;
    const parent = parentOf(li);
    try {
      await save(rkey, textOf(li));
      await work({ rkey, parent });
    } catch (err) {
      say(`${err.error ?? 'Failed'}: ${err.message}`, true);
      edits.stale.add(parent ?? null);
    }
  });
}

// A move made in the page at once (the bullet keeps the focus, so typing
// goes on into it) and on the server in its turn, from the places the page
// had when the key was pressed; the groups are then read again.
function moved(li, parentLi, work) {
  focusText(li.dataset.rkey);
  editOf(li, async ({ rkey }) => {
    await work(rkey);
    edits.stale.add(parentOf(li) ?? null);
    if (parentLi && parentLi.isConnected && parentOf(li) !== parentLi.dataset.rkey) edits.stale.add(parentLi.dataset.rkey);
  });
}

const rkeyOf = (el) => (el ? el.dataset.rkey : state.zoom ?? undefined);

// What each command of keys.js does to bullet `li`; true when it took the key.
const commands = {
  toggleCompleted(li) {
    editOf(li, async ({ rkey }) => {
      const node = state.nodes.get(rkey);
      await call('updateNode', { rkey, completed: !node.completed });
      updateElement(li, { ...node, completed: !node.completed });
    });
    return true;
  },
  newBullet(li) {
    // The new bullet is there at once, focused, and takes what is typed; it
    // is created in its turn and saved with that text.
    const key = `draft-${++drafts}`;
    const draft = nodeElement({ rkey: key, text: '', childCount: 0, completed: false });
    li.after(draft);
    focusText(key);
    editOf(li, async ({ rkey, parent }) => {
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
    return true;
  },
  indent(li) {
    const parentLi = li.parentElement.closest('li.node');
    const list = siblings(li);
    const into = list[list.indexOf(li) - 1];
    if (!into) return true;
    state.opened.set(into.dataset.rkey, true);
    into.querySelector(':scope > .children').append(li);
    updateElement(into, { ...state.nodes.get(into.dataset.rkey), childCount: (state.nodes.get(into.dataset.rkey)?.childCount ?? 0) + 1 });
    moved(li, parentLi, (rkey) =>
      place(rkeyOf(into), () => call('moveNode', { rkey, parentRkey: into.dataset.rkey, position: 'last' })));
    return true;
  },
  outdent(li) {
    const parentLi = li.parentElement.closest('li.node');
    if (!parentLi) return true;
    const grandLi = parentLi.parentElement.closest('li.node');
    parentLi.after(li);
    moved(li, parentLi, (rkey) => place(rkeyOf(grandLi), () => call('moveNode', { rkey, parentRkey: rkeyOf(grandLi),
      afterRkey: parentLi.dataset.rkey })));
    return true;
  },
  moveUp: (li) => moveAlong(li, true),
  moveDown: (li) => moveAlong(li, false),
  deleteEmpty(li) {
    // Gone from the page at once (the focus to the bullet above), deleted in
    // its turn.
    const list = siblings(li);
    const before = list[list.indexOf(li) - 1] ?? li.parentElement.closest('li.node');
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
    return true;
  },
  focusPrevious: (li, text) => focusAlong(text, -1),
  focusNext: (li, text) => focusAlong(text, 1),
};

function moveAlong(li, up) {
  const parentLi = li.parentElement.closest('li.node');
  const list = siblings(li);
  const other = list[list.indexOf(li) + (up ? -1 : 1)];
  if (!other) return true;
  if (up) other.before(li);
  else other.after(li);
  moved(li, parentLi, (rkey) => place(rkeyOf(parentLi), () => call('moveNode', { rkey, parentRkey: rkeyOf(parentLi),
    ...(up ? { beforeRkey: other.dataset.rkey } : { afterRkey: other.dataset.rkey }) })));
  return true;
}

// The caret to the bullet shown before or after; the key is the browser's
// when there is none.
function focusAlong(text, step) {
  const texts = [...outlineRoot().querySelectorAll('.text')].filter((t) => !t.closest('li.hidden'));
  const next = texts[texts.indexOf(text) + step];
  if (!next) return false;
  focusText(next.dataset.rkey);
  return true;
}

function onKey(event) {
  const text = event.target;
  const command = commandFor(event, { empty: text.textContent === '' });
  if (!command) return;
  if (commands[command](text.closest('li.node'), text)) event.preventDefault();
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


useEditing({ wire: wireText, saveSoon, toggleCompleted: (li) => commands.toggleCompleted(li) });
