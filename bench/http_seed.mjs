// Seeds a running app view for the HTTP benchmark: a parent with 3,000
// children and a subtree of 2,000 nodes (40 children of 49 children each),
// then writes wrk Lua scripts that pick random rkeys and cursors.
// Usage: node http_seed.mjs BASE_URL TOKEN DID OUT_DIR
import fs from 'node:fs';
import path from 'node:path';

const [base, token, did, out] = process.argv.slice(2);
const post = async (method, body) => {
  const res = await fetch(`${base}/xrpc/app.bulleted.${method}`, { method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` }, body: JSON.stringify(body) });
  if (!res.ok) throw new Error(`${method}: ${res.status} ${await res.text()}`);
  return res.json();
};
const parent = (await post('createNode', { repo: did, text: 'Benchmark parent' })).rkey;
for (let i = 0; i < 3000; i += 50) {
  await Promise.all([...Array(50)].map((_, k) => post('createNode', { repo: did, parentRkey: parent,
    text: `A bullet of ordinary length, number ${i + k}`, position: 'last' })));
}
const tree = (await post('createNode', { repo: did, text: 'Benchmark subtree' })).rkey;
for (let i = 0; i < 40; i++) {
  const child = (await post('createNode', { repo: did, parentRkey: tree, text: `Section ${i}` })).rkey;
  await Promise.all([...Array(49)].map((_, k) => post('createNode', { repo: did, parentRkey: child,
    text: `A bullet of ordinary length in section ${i}, number ${k}` })));
}
const rkeys = [];
const cursors = [''];
let cursor;
do {
  const url = new URL(`${base}/xrpc/app.bulleted.getChildren`);
  url.searchParams.set('repo', did);
  url.searchParams.set('parent', parent);
  url.searchParams.set('limit', '100');
  if (cursor) url.searchParams.set('cursor', cursor);
  const page = await (await fetch(url)).json();
  rkeys.push(...page.nodes.map((n) => n.rkey));
  cursor = page.cursor;
  if (cursor) cursors.push(cursor);
} while (cursor);
const list = (items) => `{${items.map((s) => JSON.stringify(s)).join(',')}}`;
const lua = (body) => `math.randomseed(os.time())\n${body}\n`;
fs.writeFileSync(path.join(out, 'children.lua'), lua(`local cursors = ${list(cursors)}
request = function()
  local c = cursors[math.random(#cursors)]
  local path = "/xrpc/app.bulleted.getChildren?repo=${did}&parent=${parent}&limit=100"
  if c ~= "" then path = path .. "&cursor=" .. c end
  return wrk.format("GET", path)
end`));
fs.writeFileSync(path.join(out, 'node.lua'), lua(`local rkeys = ${list(rkeys)}
request = function()
  return wrk.format("GET", "/xrpc/app.bulleted.getNode?repo=${did}&rkey=" .. rkeys[math.random(#rkeys)])
end`));
fs.writeFileSync(path.join(out, 'position.lua'), lua(`local rkeys = ${list(rkeys)}
request = function()
  return wrk.format("GET", "/xrpc/app.bulleted.getPosition?repo=${did}&rkey=" .. rkeys[math.random(#rkeys)])
end`));
fs.writeFileSync(path.join(out, 'subtree.lua'), lua(`request = function()
  return wrk.format("GET", "/xrpc/app.bulleted.getSubtree?repo=${did}&root=${tree}&depth=8&budgetBytes=4000000")
end`));
fs.writeFileSync(path.join(out, 'create.lua'), lua(`request = function()
  local body = '{"repo":"${did}","parentRkey":"${parent}","text":"inserted","position":' .. math.random(0, 3000) .. '}'
  return wrk.format("POST", "/xrpc/app.bulleted.createNode",
    {["Content-Type"] = "application/json", ["Authorization"] = "Bearer ${token}"}, body)
end`));
console.log(JSON.stringify({ parent, children: rkeys.length, pages: cursors.length, tree }));
