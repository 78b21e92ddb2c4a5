// appview/web/found.js: highlights cut by UTF-8 byte ranges, the tag being
// typed, and late answers dropped.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Latest, matchPieces, tagBeingTyped } from '../../../appview/web/found.js';

test('a text is cut at its highlights, counted in UTF-8 bytes', () => {
  assert.deepEqual(matchPieces('Café au lait', [{ byteStart: 0, byteEnd: 5 }, { byteStart: 9, byteEnd: 13 }]), [
    { text: 'Café', hit: true }, { text: ' au ', hit: false }, { text: 'lait', hit: true },
  ]);
  assert.deepEqual(matchPieces('東京タワー', [{ byteStart: 3, byteEnd: 9 }]), [
    { text: '東', hit: false }, { text: '京タ', hit: true }, { text: 'ワー', hit: false },
  ]);
});

test('ranges that are empty, out of range, overlapping or inside a character are ignored', () => {
  const text = 'é<b>x</b>';
  assert.deepEqual(matchPieces(text, [{ byteStart: 1, byteEnd: 2 }, { byteStart: 5, byteEnd: 5 },
    { byteStart: 2, byteEnd: 99 }, { byteStart: 'x', byteEnd: 3 }]), [{ text, hit: false }]);
  assert.deepEqual(matchPieces('abcdef', [{ byteStart: 0, byteEnd: 3 }, { byteStart: 2, byteEnd: 5 }]), [
    { text: 'abc', hit: true }, { text: 'def', hit: false },
  ]);
  assert.deepEqual(matchPieces('', []), [{ text: '', hit: false }]);
});

test('the tag being typed is the last word when it starts with # or @', () => {
  assert.equal(tagBeingTyped('plan #wo'), '#wo');
  assert.equal(tagBeingTyped('#'), '#');
  assert.equal(tagBeingTyped('x -@al'), '@al');
  assert.equal(tagBeingTyped('#work plan'), null);
  assert.equal(tagBeingTyped('mail@ex'), null);
});

test('only the newest search may be shown', () => {
  const latest = new Latest();
  const first = latest.next();
  const second = latest.next();
  assert.equal(latest.isLatest(first), false);
  assert.equal(latest.isLatest(second), true);
});
