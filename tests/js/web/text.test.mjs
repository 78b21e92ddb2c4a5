// The web outliner's text pieces (appview/web/text.js): facets over UTF-8
// byte offsets, each feature's style, and what is left as plain text.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { textPieces } from '../../../appview/web/text.js';

const facet = (byteStart, byteEnd, ...features) => ({ index: { byteStart, byteEnd }, features });
const type = (kind, extra = {}) => ({ $type: `app.bulleted.node#${kind}`, ...extra });

test('a text without facets is one plain piece, an empty one none', () => {
  assert.deepEqual(textPieces('plain', undefined), [{ text: 'plain', styled: false }]);
  assert.deepEqual(textPieces('', []), []);
});

test('offsets are UTF-8 bytes, not UTF-16 units', () => {
  // "Zürich 🙂 ok": ü is two bytes, the emoji four (two UTF-16 units).
  const text = 'Zürich 🙂 ok';
  const pieces = textPieces(text, [facet(8, 12, type('bold')), facet(13, 15, type('italic'))]);
  assert.deepEqual(pieces.map((p) => [p.text, p.classes ?? []]), [
    ['Zürich ', []], ['🙂', ['f-bold']], [' ', []], ['ok', ['f-italic']]]);
  assert.equal(pieces.map((p) => p.text).join(''), text, 'the pieces cover the text exactly');
});

test('each feature gives its style; links only for http(s) and mailto', () => {
  const text = 'abcdefghij';
  const pieces = textPieces(text, [
    facet(0, 1, type('link', { uri: 'https://example.com/' }), type('bold')),
    facet(1, 2, type('link', { uri: 'javascript:alert(1)' })),
    facet(2, 3, type('highlight', { color: 'Yellow' })),
    facet(3, 4, type('highlight', { color: '#123456' })),
    facet(4, 5, type('date', { start: '2026-12-04' })),
    facet(5, 6, type('strikethrough'), type('code'), type('underline')),
    facet(6, 7, type('unknown')),
  ]).filter((p) => p.styled);
  assert.deepEqual(pieces[0], { text: 'a', styled: true, classes: ['f-bold'], href: 'https://example.com/' });
  assert.equal(pieces[1].href, undefined, 'a javascript: link stays text');
  assert.deepEqual(pieces[2].classes, ['hl-yellow']);
  assert.deepEqual(pieces[3].classes, ['hl-other']);
  assert.deepEqual([pieces[4].classes, pieces[4].title], [['f-date'], '2026-12-04']);
  assert.deepEqual(pieces[5].classes, ['f-strike', 'f-code', 'f-underline']);
  assert.deepEqual(pieces[6].classes, [], 'an unknown feature styles nothing');
});

test('facets out of range, empty or overlapping an earlier one are left out', () => {
  const pieces = textPieces('hello', [
    facet(3, 9, type('bold')), facet(2, 2, type('bold')), facet(0, 3, type('italic')),
    facet(1, 4, type('code')), { features: [type('bold')] }]);
  assert.deepEqual(pieces.map((p) => [p.text, p.styled]), [['hel', true], ['lo', false]]);
});
