// Following changes made elsewhere (another device, another tab, an
// import, the network) as they are made: one change stream
// (app.bulleted.streamChanges, server-sent events) per outline and browser.
// The tab holding the outline's Web Lock opens it and passes its events to
// the browser's other tabs over a BroadcastChannel, so six open tabs do not
// take the six connections a browser keeps to one origin. Each tab applies
// the events past its own cursor, in the edits' queue. While the stream is
// closed the page says it is offline, reopens it with a scattered backoff,
// and reads getChanges every 2 s meanwhile.
import { query, say, state } from './client.js';
import { edits } from './queue.js';
import { reconnectDelay, takeEvents } from './stream.js';

let current = null;  // this tab's following of the outline it shows

// Starts following state.repo: events are held until ready(cursor) says
// where the outline that was read stands. `hooks.apply(changes)` applies
// changes to the page; `hooks.reread()` reads the outline again (after an
// error event or a status change).
export function follow(hooks) {
  stop();
  const name = `bulleted.changes.${state.repo}`;
  const me = {
    repo: state.repo, hooks, held: [], ready: false, stopped: false, leading: false, live: true,
    source: null, failures: 0, reopen: null, poller: null, release: null,
    channel: 'BroadcastChannel' in window ? new BroadcastChannel(name) : null,
    abort: new AbortController(),
  };
  current = me;
  if (me.channel) {
    me.channel.onmessage = ({ data }) => {
      if (data.type === 'events') receive(me, data.events);
      if (data.type === 'live') setLive(me, data.live);
      if (data.type === 'hello' && me.leading) me.channel.postMessage({ type: 'live', live: me.live });
    };
    me.channel.postMessage({ type: 'hello' });
  }
  if (navigator.locks) {
    navigator.locks.request(name, { signal: me.abort.signal }, () => lead(me)).catch(() => {});
  } else {
    lead(me);
  }
  return {
    ready(cursor) {
      state.cursor = cursor;
      me.ready = true;
      const held = me.held;
      me.held = [];
      receive(me, held);
      if (me.leading && !me.source) openStream(me);
    },
  };
}

export function stop() {
  const me = current;
  current = null;
  if (!me) return;
  me.stopped = true;
  me.abort.abort();
  me.source?.close();
  clearTimeout(me.reopen);
  clearInterval(me.poller);
  me.channel?.close();
  me.release?.();
}

// Holds the lock while this tab leads: opens the stream (once the outline
// was read) and keeps it until the tab leaves the outline.
function lead(me) {
  if (me.stopped) return undefined;
  me.leading = true;
  if (me.ready) openStream(me);
  return new Promise((resolve) => { me.release = resolve; });
}

function openStream(me) {
  if (me.stopped) return;
  const url = new URL('/xrpc/app.bulleted.streamChanges', location.origin);
  url.searchParams.set('repo', me.repo);
  if (state.cursor !== null) url.searchParams.set('cursor', state.cursor);
  const source = new EventSource(url);
  me.source = source;
  const pass = (event) => (e) => {
    let data = {};
    try { data = JSON.parse(e.data); } catch { /* a comment or an empty event */ }
    const events = [{ id: e.lastEventId, event, data }];
    me.channel?.postMessage({ type: 'events', events });
    receive(me, events);
  };
  for (const event of ['change', 'cursor', 'info']) source.addEventListener(event, pass(event));
  source.addEventListener('error', (e) => {
    if (e.data) {
      // An error event of the stream's own (FutureCursor, TooManyStreams):
      // it has ended; read the outline again and follow from its cursor.
      source.close();
      pass('error')(e);
      return;
    }
    // The connection failed: EventSource tries again by itself (resuming
    // from the last id) unless it gave up.
    setLive(me, false);
    if (source.readyState === EventSource.CLOSED) {
      me.source = null;
      me.reopen = setTimeout(() => openStream(me), reconnectDelay(me.failures++));
    }
  });
  source.addEventListener('open', () => {
    me.failures = 0;
    setLive(me, true);
  });
}

function setLive(me, live) {
  if (me.stopped || me.live === live) return;
  me.live = live;
  if (me.leading) me.channel?.postMessage({ type: 'live', live });
  document.body.classList.toggle('offline', !live);
  if (!live) {
    say('Offline: changes made elsewhere are read every 2 s until the connection is back.', true);
    me.poller = setInterval(() => edits.enqueue(() => poll(me).catch(() => {})), 2000);
  } else {
    clearInterval(me.poller);
    me.poller = null;
    say('Back online.');
  }
}

// getChanges read until it works, every 2 s.
async function catchUp(me) {
  while (!me.stopped) {
    try {
      await poll(me);
      return;
    } catch {
      await new Promise((resolve) => { setTimeout(resolve, 2000); });
    }
  }
}

// One look at getChanges while the stream is closed.
async function poll(me) {
  for (;;) {
    const page = await query('getChanges', { repo: me.repo, cursor: state.cursor, limit: 100 });
    if (me.stopped) return;
    if (page.changes.length > 0) await me.hooks.apply(page.changes);
    state.cursor = page.cursor;
    if (page.changes.length < 100) return;
  }
}

// Events from this tab's stream or the leader's: applied in the edits'
// queue (a refresh never lands inside an edit), past this tab's cursor.
function receive(me, events) {
  if (me.stopped || events.length === 0) return;
  if (!me.ready) {
    me.held.push(...events);
    return;
  }
  edits.enqueue(async () => {
    if (me.stopped) return;
    const before = state.cursor;
    const taken = takeEvents(events, state.cursor);
    state.cursor = taken.cursor;
    if (taken.changes.length > 0) {
      try {
        await me.hooks.apply(taken.changes);
      } catch {
        // Not applied (a read failed, the server going away): the changes
        // past where the page was are read again from getChanges until
        // that works; events that come meanwhile wait behind it.
        state.cursor = before;
        await catchUp(me);
      }
    }
    for (const { event, data } of taken.said) {
      if (event === 'error' || (event === 'info' && data.name === 'RepoStatus')) {
        // The outline is read again and followed from its new cursor.
        me.hooks.reread();
        return;
      }
      if (event === 'info' && data.name === 'ServerShutdown') say('The server is restarting; reconnecting…');
    }
  }).catch((err) => say(`Not following changes: ${err.message}`, true));
}
