// The outliner's connection to the app view: what the page shows (state),
// XRPC calls, and the status line. Importing it touches nothing: the page's
// elements are looked up when used, the stored token read by app.js.
export const $ = (id) => document.getElementById(id);
export const outlineRoot = () => $('outline');

export const state = {
  repo: null,        // the outline's DID
  zoom: null,        // the rkey shown as the root, or null for the top level
  token: null,       // a local-mode token (kept in sessionStorage)
  session: null,     // {did, handle?, via} of the OAuth sign-in (pds mode), by cookie
  oauth: false,      // whether this app view signs in with OAuth
  signIn: null,      // how people sign in here (_health's signIn: token, oauth, password, none)
  cursor: null,      // getChanges cursor
  nodes: new Map(),  // rkey -> NodeView (as last read)
  opened: new Map(),  // rkey -> true/false: the reader's own choice, which always wins
  editing: null,     // rkey whose text has focus
  focusAfterOpen: null,  // rkey to focus once the outline opened (a search result)
  generation: 0,     // bumped on navigation: late answers are dropped
};

class XrpcError extends Error {
  constructor(status, error, message) {
    super(message || error || `HTTP ${status}`);
    this.status = status;
    this.error = error;
  }
}

export async function xrpc(nsid, { params, body } = {}) {
  const url = new URL(`/xrpc/${nsid}`, location.origin);
  for (const [k, v] of Object.entries(params ?? {})) if (v !== undefined && v !== null) url.searchParams.set(k, String(v));
  // A request never waits forever: the edits' queue waits on it.
  const init = { method: body ? 'POST' : 'GET', headers: {}, signal: AbortSignal.timeout(60000) };
  if (body) {
    init.headers['content-type'] = 'application/json';
    init.body = JSON.stringify(body);
  }
  if (body && state.token) init.headers.authorization = `Bearer ${state.token}`;
  const res = await fetch(url, init);
  const type = res.headers.get('content-type') ?? '';
  if (!res.ok) {
    const err = type.includes('json') ? await res.json().catch(() => ({})) : {};
    throw new XrpcError(res.status, err.error, err.message);
  }
  return type.includes('json') ? res.json() : res.text();
}
export const query = (method, params) => xrpc(`app.bulleted.${method}`, { params });
// Whether this page may edit the outline it shows: a token, or the signed-in
// account's own outline (its session cookie goes with same-origin calls).
export const canEdit = () => !!state.token || (!!state.session && state.session.did === state.repo);
export const call = (method, body) => xrpc(`app.bulleted.${method}`, { body: { repo: state.repo, ...body } });

export function say(text, isError = false) {
  const box = $('status');
  box.textContent = text;
  box.classList.toggle('error', isError);
}

