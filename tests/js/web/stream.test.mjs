import assert from 'node:assert/strict';
import { test } from 'node:test';
import { reconnectDelay, takeEvents } from '../../../appview/web/stream.js';

const change = (id, rkey) => ({ id, event: 'change', data: { op: 'upsert', rkey } });

test('only events past the cursor are taken, in order, and the cursor follows them', () => {
  const got = takeEvents([change('3', 'a'), change('5', 'b'), change('6', 'c')], '4');
  assert.deepEqual(got.changes.map((c) => c.rkey), ['b', 'c']);
  assert.equal(got.cursor, '6');
});

test('a cursor event moves the cursor without a change; info and error are said', () => {
  const got = takeEvents([{ id: '9', event: 'cursor', data: { cursor: '9' } },
    { event: 'info', data: { name: 'RepoStatus', status: 'deleted' } }, { event: 'error', data: { error: 'FutureCursor' } }], '4');
  assert.deepEqual(got.changes, []);
  assert.equal(got.cursor, '9');
  assert.deepEqual(got.said.map((s) => s.event), ['info', 'error']);
});

test('ids compare as numbers, past 2^53 too, and a repeat is dropped', () => {
  const big = '9007199254740993';
  const got = takeEvents([change('10', 'a'), change('9', 'old'), change(big, 'b'), change(big, 'again')], '2');
  assert.deepEqual(got.changes.map((c) => c.rkey), ['a', 'b']);
  assert.equal(got.cursor, big);
});

test('without a cursor every change is taken', () => {
  assert.equal(takeEvents([change('1', 'a')], null).changes.length, 1);
  assert.equal(takeEvents([], null).cursor, null);
});

test('reopening backs off from about a second to about thirty, scattered', () => {
  assert.equal(reconnectDelay(0, () => 0.5), 1000);
  assert.equal(reconnectDelay(3, () => 0.5), 8000);
  assert.equal(reconnectDelay(10, () => 0.5), 30000);
  assert.equal(reconnectDelay(0, () => 0), 500);
  assert.equal(reconnectDelay(10, () => 0.999), 44970);
});
