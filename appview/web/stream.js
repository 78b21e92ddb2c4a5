// What a page does with a change stream's events, without the DOM (tested
// on its own): which events are new past a cursor, and how long to wait
// before reopening a stream that closed.

// The events of `batch` past `cursor`, in order: the changes to apply, the
// cursor they reach (a `cursor` event moves it too), and what else was said
// (`info` and `error` events, as {event, data}).
export function takeEvents(batch, cursor) {
  let at = cursor === null || cursor === undefined ? null : BigInt(cursor);
  const changes = [];
  const said = [];
  for (const e of batch) {
    if (e.event === 'info' || e.event === 'error') {
      said.push({ event: e.event, data: e.data });
      continue;
    }
    if (e.id === undefined || e.id === null || e.id === '') continue;
    const id = BigInt(e.id);
    if (at !== null && id <= at) continue;  // already had (a leader's older event, a resume)
    at = id;
    if (e.event === 'change') changes.push(e.data);
  }
  return { changes, cursor: at === null ? cursor : at.toString(), said };
}

// The wait before reopening after `attempt` failures: doubling from 1 s to
// 30 s, each scattered over half to one and a half of itself, so that the
// pages of many browsers do not come back at once.
export function reconnectDelay(attempt, random = Math.random) {
  const base = Math.min(30000, 1000 * 2 ** Math.max(0, attempt));
  return Math.round(base * (0.5 + random()));
}
