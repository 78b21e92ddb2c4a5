// The search box: results as you type (debounced; a late answer never
// overwrites a newer one), each with its ancestors as breadcrumbs and its
// matched words marked (built as DOM text, never HTML); a click opens the
// bullet in its outline. Inside a zoomed bullet it searches that subtree.
// `/` focuses the box when no bullet is being edited; Escape leaves it.
// Tags complete from getTags.
import { $, query, say, state } from './client.js';
import { Latest, matchPieces, tagBeingTyped } from './found.js';
import { showFound } from './outline.js';

const latest = new Latest();      // searches
const latestTags = new Latest();  // tag completions
let timer = null;
let shown = { q: '', root: null, cursor: null };

function textWithMarks(text, ranges) {
  const span = document.createElement('span');
  for (const piece of matchPieces(text, ranges)) {
    if (piece.hit) {
      const mark = document.createElement('mark');
      mark.textContent = piece.text;
      span.append(mark);
    } else {
      span.append(document.createTextNode(piece.text));
    }
  }
  return span;
}

function resultItem(result) {
  const li = document.createElement('li');
  li.className = 'result';
  li.dataset.rkey = result.node.rkey;
  const crumbs = document.createElement('div');
  crumbs.className = 'crumbs';
  const names = result.ancestors.map((a) => a.text || '(empty)');
  crumbs.textContent = (result.ancestorsTruncated ? ['…', ...names] : names).join(' › ');
  const open = document.createElement('a');
  open.className = 'hit';
  open.href = `#/${state.repo}${result.node.parent ? `/${result.node.parent}` : ''}`;
  open.append(textWithMarks(result.node.text || '(empty)', result.highlights.filter((h) => h.field === 'text')));
  open.addEventListener('click', (event) => {
    if (event.ctrlKey || event.metaKey || event.shiftKey) return;  // a new tab: the link's own way
    event.preventDefault();
    const hash = new URL(open.href).hash;
    closeResults();
    if (hash === location.hash) {
      showFound(result.node.rkey);  // its parent is the zoom shown
      return;
    }
    // Opened with its parent zoomed; app.js shows it once loaded.
    state.focusAfterOpen = result.node.rkey;
    location.hash = hash;
  });
  li.append(crumbs, open);
  if (result.node.note) {
    const note = document.createElement('div');
    note.className = 'note';
    note.append(textWithMarks(result.node.note, result.highlights.filter((h) => h.field === 'note')));
    li.append(note);
  }
  return li;
}

function closeResults() {
  latest.next();  // whatever is still in flight is no longer wanted
  $('search-results').classList.add('hidden');
  $('results').replaceChildren();
}

// Shows a page (appending when it continues the one shown); pages that
// hold nothing but a cursor are followed a few times before asking.
async function search(q, { more = false } = {}) {
  const ticket = latest.next();
  const root = state.zoom;
  let cursor = more ? shown.cursor : undefined;
  const list = $('results');
  if (!more) list.replaceChildren();
  let added = 0;
  for (let pages = 0; pages < 5; pages++) {
    let page;
    try {
      page = await query('searchNodes', { repo: state.repo, q, root: root ?? undefined, cursor, limit: 25 });
    } catch (err) {
      if (latest.isLatest(ticket)) say(`Search failed: ${err.message}`, true);
      return;
    }
    if (!latest.isLatest(ticket)) return;
    for (const result of page.results) list.append(resultItem(result));
    added += page.results.length;
    cursor = page.cursor;
    if (!cursor || added > 0) break;
  }
  shown = { q, root, cursor };
  $('search-results').classList.remove('hidden');
  $('more-results').classList.toggle('hidden', !cursor);
  $('no-results').classList.toggle('hidden', list.childElementCount > 0 || !!cursor);
}

async function completeTag(q) {
  const tag = tagBeingTyped(q);
  const options = $('tag-list');
  if (!tag || !state.repo) return options.replaceChildren();
  const ticket = latestTags.next();
  try {
    const { tags } = await query('getTags', { repo: state.repo, prefix: tag, limit: 10 });
    if (!latestTags.isLatest(ticket)) return;
    const head = q.slice(0, q.length - tag.length);
    options.replaceChildren(...tags.map(({ tag: t }) => {
      const option = document.createElement('option');
      option.value = head + t;
      return option;
    }));
  } catch {
    options.replaceChildren();
  }
}

export function setUpSearch() {
  const input = $('search-input');
  input.addEventListener('input', () => {
    clearTimeout(timer);
    const q = input.value;
    timer = setTimeout(() => {
      if (!state.repo) return;
      if (!q.trim()) return closeResults();
      if (tagBeingTyped(q)) completeTag(q);
      if (tagBeingTyped(q) !== '#' && tagBeingTyped(q) !== '@') search(q);
    }, 180);
  });
  $('search').addEventListener('submit', (event) => {
    event.preventDefault();
    clearTimeout(timer);
    if (state.repo && input.value.trim()) search(input.value);
  });
  $('more-results').addEventListener('click', () => search(shown.q, { more: true }));
  input.addEventListener('keydown', (event) => {
    if (event.key !== 'Escape') return;
    input.value = '';
    closeResults();
    input.blur();
  });
  document.addEventListener('keydown', (event) => {
    if (event.key !== '/' || state.editing || event.ctrlKey || event.metaKey || event.altKey) return;
    const target = event.target;
    if (target instanceof HTMLElement && (target.isContentEditable || ['INPUT', 'TEXTAREA'].includes(target.tagName))) return;
    event.preventDefault();
    input.focus();
    input.select();
  });
}

// A new outline or zoom: results of the old one go.
export function resetSearch() {
  clearTimeout(timer);
  closeResults();
}
