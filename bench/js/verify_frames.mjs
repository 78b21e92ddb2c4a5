// The JavaScript consumer on the same frame stream: @atproto/sync's Firehose
// with its proofs verified (the default, not `unauthenticatedCommits`),
// filtered to app.bulleted.node like the app view. Each frame takes the path
// a frame from the socket takes inside the library: Frame.fromBytes, the
// subscription's lexicon validation of the typed body, then the Firehose's
// own event processing (verifyProofs: the commit's signature against the
// repo's key and each op's MST proof) into handleEvent. Only the socket is
// left out, as on the C++ side. Keys come from the key directory
// (FRAMES.keys.json) through the resolver interface the Firehose calls.
// Best of 3 passes.
// Usage: node22 verify_frames.mjs SYNC_DIR FRAMES   (SYNC_DIR: where
// @atproto/sync is installed)
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';

const [syncDir, file] = process.argv.slice(2);
const require = createRequire(path.resolve(syncDir, 'package.json'));
const load = (name) => import(pathToFileURL(require.resolve(name)).href);
const { Firehose } = await load('@atproto/sync');
const { Frame } = await load('@atproto/xrpc-server');

const keys = JSON.parse(fs.readFileSync(`${file}.keys.json`, 'utf8'));
const idResolver = {
  did: {
    resolveAtprotoKey: async (did) => {
      const key = keys[did];
      if (!key) throw new Error(`no key for ${did}`);
      return key;
    },
  },
};
let ops = 0;
let errors = 0;
let firstError;
const firehose = new Firehose({
  idResolver,
  service: 'ws://127.0.0.1:9',  // never connected: frames are handed in below
  filterCollections: ['app.bulleted.node'],
  handleEvent: () => { ops++; },
  onError: (err) => { errors++; firstError ??= err; },
});
const method = 'com.atproto.sync.subscribeRepos';
const validate = firehose.sub.opts.validate;

const data = fs.readFileSync(file);
const frames = [];
for (let pos = 0; pos + 4 <= data.length;) {
  const n = data.readUInt32LE(pos);
  frames.push(new Uint8Array(data.buffer, data.byteOffset + pos + 4, n));
  pos += 4 + n;
}
let best = Infinity;
let passOps = 0;
for (let pass = 0; pass < 3; pass++) {
  ops = 0;
  const t0 = process.hrtime.bigint();
  for (const bytes of frames) {
    const frame = Frame.fromBytes(bytes);
    if (!frame.isMessage()) continue;
    const t = frame.header.t;
    const evt = validate({ ...frame.body, $type: t.startsWith('#') ? method + t : t });
    if (evt !== undefined) await firehose.processEvt(evt);
  }
  best = Math.min(best, Number(process.hrtime.bigint() - t0) / 1e9);
  passOps = ops;
}
if (errors > 0) {
  console.error(`${errors} events refused; the first: ${firstError?.stack ?? firstError}`);
  process.exit(1);
}
console.log(JSON.stringify({ benchmark: 'decodeAndVerify', implementation: 'js', frames: frames.length,
  ops: passOps, seconds: best, framesPerSecond: frames.length / best, opsPerSecond: passOps / best }));
