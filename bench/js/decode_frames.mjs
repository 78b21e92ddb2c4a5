// The JavaScript reference decoder on the same frame stream: @atproto/
// xrpc-server's Frame.fromBytes, @atproto/repo's readCar (CIDs verified) and
// @ipld/dag-cbor for each op's record, from the PDS harness's node_modules.
// Best of 3 passes, like the C++ side.
// Usage: node22 decode_frames.mjs HARNESS_DIR FRAMES
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';

const [harness, file] = process.argv.slice(2);
const require = createRequire(path.join(harness, 'package.json'));
const load = (name) => import(pathToFileURL(require.resolve(name)).href);
const { Frame } = await load('@atproto/xrpc-server');
const { readCar } = await load('@atproto/repo');
const dagCbor = await load('@ipld/dag-cbor');

const data = fs.readFileSync(file);
const frames = [];
for (let pos = 0; pos + 4 <= data.length;) {
  const n = data.readUInt32LE(pos);
  frames.push(new Uint8Array(data.buffer, data.byteOffset + pos + 4, n));
  pos += 4 + n;
}
let best = Infinity;
let ops = 0;
for (let pass = 0; pass < 3; pass++) {
  ops = 0;
  const t0 = process.hrtime.bigint();
  for (const bytes of frames) {
    const frame = Frame.fromBytes(bytes);
    const body = frame.body;
    if (frame.header.t !== '#commit') continue;
    if (!body.ops.some((op) => op.path.startsWith('app.bulleted.node/'))) continue;
    const car = await readCar(body.blocks);
    for (const op of body.ops) {
      if (op.action === 'delete') { ops++; continue; }
      const block = car.blocks.get(op.cid);
      if (block) { dagCbor.decode(block); ops++; }
    }
  }
  best = Math.min(best, Number(process.hrtime.bigint() - t0) / 1e9);
}
console.log(JSON.stringify({ benchmark: 'decode', implementation: 'js', frames: frames.length, ops, seconds: best,
  framesPerSecond: frames.length / best, opsPerSecond: ops / best }));
