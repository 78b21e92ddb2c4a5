// Drawing the outline: bullets as elements, groups read a page at a time and
// redrawn from the app view's answers, keeping the caret where it was.
import { $, canEdit, outlineRoot, query, state } from './client.js';
import { edits } from './queue.js';
import { textPieces } from './text.js';

// What editing does with a bullet's text element (edit.js gives it, once,
// when it is loaded): its listeners, and a save soon after typing.
let editing = { wire: () => {}, saveSoon: () => {}, toggleCompleted: () => {} };
// The layouts the page draws (the record's layout is an open set: any
// other value is drawn as a bullet).
const layouts = ['todo', 'h1', 'h2', 'h3', 'codeBlock', 'quoteBlock'];
export const useEditing = (behaviour) => { editing = behaviour; };

// Text with its facets as nested spans (text.js says which).
function renderText(span, node) {
  span.replaceChildren();
  for (const piece of textPieces(node.text, node.facets)) {
    if (!piece.styled) {
      span.append(piece.text);
      continue;
    }
    const element = document.createElement(piece.href ? 'a' : 'span');
    if (piece.href) {
      element.href = piece.href;
      element.rel = 'noopener noreferrer nofollow';
      element.target = '_blank';
      element.className = 'f-link';
    }
    element.classList.add(...piece.classes);
    if (piece.title !== undefined) element.title = piece.title;
    element.append(piece.text);
    span.append(element);
  }
}

export function nodeElement(node) {
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
  toggle.addEventListener('click', () => (li.getAttribute('aria-expanded') === 'true' ? collapse(li) : expand(li)));
  const bullet = document.createElement('button');
  bullet.type = 'button';
  bullet.className = 'bullet';
  bullet.title = 'Zoom in';
  bullet.setAttribute('aria-label', 'Zoom in');
  bullet.addEventListener('click', () => {
    // A mirror's bullet opens its original, where it lives.
    const original = state.nodes.get(li.dataset.rkey)?.mirror?.original;
    const [, did, rkey] = original?.match(/^at:\/\/([^/]+)\/app\.bulleted\.node\/([^/]+)$/) ?? [];
    if (did) location.hash = `#/${did}/${rkey}`;
    else if (!li.dataset.rkey.startsWith('draft-')) location.hash = `#/${state.repo}/${li.dataset.rkey}`;
  });
  // A todo's box: its completion, which a click changes where editing is.
  const check = document.createElement('input');
  check.type = 'checkbox';
  check.className = 'check';
  check.tabIndex = -1;
  check.setAttribute('aria-label', 'Completed');
  check.addEventListener('click', (event) => {
    if (!canEdit()) {
      event.preventDefault();
      return;
    }
    editing.toggleCompleted(li);
  });
  const text = document.createElement('span');
  text.className = 'text';
  text.dataset.rkey = node.rkey;
  editing.wire(text);
  row.append(toggle, bullet, check, text);
  const note = document.createElement('div');
  note.className = 'note';
  const children = document.createElement('ul');
  children.className = 'children';
  children.setAttribute('role', 'group');
  li.append(row, note, children);
  updateElement(li, node);
  return li;
}

// Levels below the page's top that open by themselves (a record's display
// says whether it would): deeper ones wait for a click, so that an outline
// of many levels is never read whole at once.
const kOpenByItself = 3;

// Whether a bullet shows its children: the reader's own choice, else what
// its record's display says (absent, or anything but collapsed: expanded),
// near the top of the page.
export function isOpen(li, node) {
  const chosen = state.opened.get(node.rkey);
  if (chosen !== undefined) return chosen;
  let depth = 0;
  for (let up = li.parentElement?.closest('li.node'); up; up = up.parentElement?.closest('li.node')) depth++;
  return node.display !== 'collapsed' && li.isConnected && depth < kOpenByItself;
}

export function updateElement(li, node) {
  state.nodes.set(node.rkey, node);
  li.classList.toggle('completed', !!node.completed);
  for (const layout of layouts) li.classList.toggle(`layout-${layout}`, node.layout === layout);
  const check = li.querySelector(':scope > .row > .check');
  check.classList.toggle('hidden', node.layout !== 'todo');
  check.checked = !!node.completed;
  check.disabled = !canEdit();
  const toggle = li.querySelector(':scope > .row > .toggle');
  const open = isOpen(li, node);
  toggle.classList.toggle('leaf', node.childCount === 0);
  toggle.textContent = open ? '▾' : '▸';
  toggle.setAttribute('aria-label', open ? 'Collapse' : 'Expand');
  li.classList.toggle('collapsed', node.childCount > 0 && !open);
  li.setAttribute('aria-expanded', String(open));
  const text = li.querySelector(':scope > .row > .text');
  li.classList.toggle('mirror', !!node.mirror);
  const note = li.querySelector(':scope > .note');
  if (node.mirror) {
    showMirror(text, node.mirror.original);
    note.classList.add('hidden');
    return;
  }
  text.contentEditable = canEdit() ? 'true' : 'false';
  text.removeAttribute('title');
  if (state.editing !== node.rkey) renderText(text, node);
  note.textContent = node.note ?? '';
  note.classList.toggle('hidden', !node.note);
}

// A mirror (app.bulleted.mirror) stands for another bullet, its original:
// shown as the original's text as it is now, read-only here (the original
// is edited where it lives), marked as a mirror.
function showMirror(text, original) {
  text.contentEditable = 'false';
  text.title = `Mirror of ${original}`;
  const [, did, rkey] = original.match(/^at:\/\/([^/]+)\/app\.bulleted\.node\/([^/]+)$/) ?? [];
  if (!did) {
    text.textContent = '(a mirror)';
    return;
  }
  if (!text.textContent) text.textContent = '…';
  query('getNode', { repo: did, rkey }).then(
    (node) => { text.textContent = node.text || '(empty)'; },
    () => { text.textContent = '(a mirror of a bullet not shown here)'; });
}

export const elementOf = (rkey) => outlineRoot().querySelector(`li.node[data-rkey="${CSS.escape(rkey)}"]`);
export const groupOf = (parent) => (parent === null || parent === state.zoom ? outlineRoot() : elementOf(parent)?.querySelector(':scope > .children'));
export const parentOf = (li) => li.parentElement.closest('li.node')?.dataset.rkey ?? state.zoom;
export const textOf = (li) => li.querySelector(':scope > .row > .text');

// A group's children, page by page: the first page now, the next ones when
// asked ("more"), never the whole outline at once.
export async function loadGroup(parent, ul, { atLeast = 0 } = {}) {
  const generation = state.generation;
  const editsBefore = edits.made;
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
  if (edits.unsent > 0 || edits.made !== editsBefore) {
    edits.stale.add(parent ?? null);
    if (edits.unsent === 0) edits.enqueue(readStale);
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
  if (ul === outlineRoot()) $('empty').classList.toggle('hidden', nodes.length > 0);
  // In the page now: whether each opens by itself is known.
  for (const [i, n] of nodes.entries()) updateElement(elements[i], n);
  await Promise.all(nodes.filter((n, i) => n.childCount > 0 && elements[i].getAttribute('aria-expanded') === 'true')
    .map((n, i) => loadGroup(n.rkey, elementOf(n.rkey).querySelector(':scope > .children'))));
  if (typing && !(kept && elements.includes(kept))) {
    const li = elementOf(typing.rkey);
    if (li) {
      textOf(li).textContent = typing.text;
      focusText(typing.rkey);
      if (typing.text !== state.nodes.get(typing.rkey)?.text) editing.saveSoon(textOf(li));
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
export async function refreshGroup(parent) {
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

// Reads the groups noted stale, once no edit is unsent.
export async function readStale() {
  for (const parent of edits.takeStale()) {
    if (parent === null && state.zoom !== null) continue;
    await refreshGroup(parent).catch(() => {});
  }
}

async function expand(li) {
  state.opened.set(li.dataset.rkey, true);
  updateElement(li, state.nodes.get(li.dataset.rkey));
  await loadGroup(li.dataset.rkey, li.querySelector(':scope > .children'));
}

function collapse(li) {
  state.opened.set(li.dataset.rkey, false);
  li.querySelector(':scope > .children').replaceChildren();
  updateElement(li, state.nodes.get(li.dataset.rkey));
}

export function focusText(rkey, atEnd = true) {
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

// A bullet a search found, in the outline shown: scrolled to, marked, and
// focused when it can be edited.
export function showFound(rkey) {
  const li = elementOf(rkey);
  if (!li) return;
  for (const old of document.querySelectorAll('li.found')) old.classList.remove('found');
  li.classList.add('found');
  li.scrollIntoView({ block: 'center' });
  focusText(rkey);
}
