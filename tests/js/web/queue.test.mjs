// The web outliner's edit queue (appview/web/queue.js): edits run one after
// another in the order they were made, a failed one does not stop the
// next, and stale groups wait until no edit is unsent.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { EditQueue } from '../../../appview/web/queue.js';

// A promise the test settles.
function gate() {
  let open;
  const promise = new Promise((resolve) => { open = resolve; });
  return { promise, open };
}

test('edits run in the order they were made, one at a time', async () => {
  const queue = new EditQueue();
  const first = gate();
  const ran = [];
  queue.edit(async () => { ran.push('first starts'); await first.promise; ran.push('first ends'); });
  const done = queue.edit(async () => { ran.push('second'); });
  assert.equal(queue.unsent, 2);
  await Promise.resolve();
  assert.deepEqual(ran, ['first starts'], 'the second waits for the first');
  first.open();
  await done;
  assert.deepEqual(ran, ['first starts', 'first ends', 'second']);
  assert.equal(queue.unsent, 0);
  assert.equal(queue.made, 2);
});

test('a failed edit is counted sent and the next one runs', async () => {
  const queue = new EditQueue();
  const failed = queue.edit(async () => { throw new Error('409'); });
  let ran = false;
  const next = queue.edit(async () => { ran = true; });
  await assert.rejects(failed);
  await next;
  assert.equal(ran, true);
  assert.equal(queue.unsent, 0);
});

test('stale groups are taken only once no edit is unsent, then once', async () => {
  const queue = new EditQueue();
  const slow = gate();
  const taken = [];
  queue.stale.add('a');
  queue.edit(async () => { queue.stale.add(null); await slow.promise; }, () => { taken.push(queue.takeStale()); });
  assert.deepEqual(queue.takeStale(), [], 'an edit is unsent');
  slow.open();
  await queue.tail;
  assert.deepEqual(taken, [['a', null]]);
  assert.deepEqual(queue.takeStale(), [], 'taken once');
});

test('work queued without being an edit waits its turn too', async () => {
  const queue = new EditQueue();
  const order = [];
  const slow = gate();
  queue.edit(async () => { await slow.promise; order.push('edit'); });
  const refresh = queue.enqueue(async () => { order.push('refresh'); });
  slow.open();
  await refresh;
  assert.deepEqual(order, ['edit', 'refresh'], 'a refresh never lands inside an edit');
});
