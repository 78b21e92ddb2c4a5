// The JavaScript side of the backfill benchmark: @atproto/repo's
// verifyRepoCar (blocks read and checked, the commit's signature against the
// repo's key, the whole MST walked, every leaf present) on the same getRepo
// CARs (bench/make_repos), size by size, best of 3 passes.
// Usage: node22 verify_repos.mjs SYNC_DIR DIR   (SYNC_DIR: where @atproto/repo
// is installed)
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';

const [syncDir, dir] = process.argv.slice(2);
const require = createRequire(path.resolve(syncDir, 'package.json'));
const { verifyRepoCar } = await import(pathToFileURL(require.resolve('@atproto/repo')).href);
const keys = JSON.parse(fs.readFileSync(path.join(dir, 'keys.json'), 'utf8'));

const groups = fs.readdirSync(dir).filter((name) => /^\d+$/.test(name)).sort((a, b) => a - b);
for (const group of groups) {
  const cars = fs.readdirSync(path.join(dir, group)).map((name) => ({
    did: name.replace(/\.car$/, ''),
    bytes: new Uint8Array(fs.readFileSync(path.join(dir, group, name))),
  }));
  let best = Infinity;
  let records = 0;
  for (let pass = 0; pass < 3; pass++) {
    records = 0;
    const t0 = process.hrtime.bigint();
    for (const { did, bytes } of cars) {
      const verified = await verifyRepoCar(bytes, did, keys[did]);
      records += verified.creates.length;
    }
    best = Math.min(best, Number(process.hrtime.bigint() - t0) / 1e9);
  }
  console.log(JSON.stringify({ benchmark: 'backfill', implementation: 'js', recordsPerRepo: Number(group),
    repos: cars.length, records, seconds: best, reposPerSecond: cars.length / best,
    recordsPerSecond: records / best }));
}
