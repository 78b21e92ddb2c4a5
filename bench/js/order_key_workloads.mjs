// The order-key workloads (a, b, c1, c2, d, e, e2) on npm's
// fractional-indexing@4.0.0, timed by the same rules as the C++ program
// (bench/order_key_workloads.cpp). Prints one JSON object per workload.
// Usage: node order_key_workloads.mjs (with fractional-indexing installed
// beside it; bench/run_order_key_bench.sh does that).
import { generateKeyBetween, generateNKeysBetween } from 'fractional-indexing';

const between = (a, b) => generateKeyBetween(a, b);
const now = () => process.hrtime.bigint();
const secs = (t0) => Number(now() - t0) / 1e9;

function fmix32(h) {
  h ^= h >>> 16; h = Math.imul(h, 0x85ebca6b) >>> 0;
  h ^= h >>> 13; h = Math.imul(h, 0xc2b2ae35) >>> 0;
  h ^= h >>> 16; return h >>> 0;
}
function stream(seed) {
  let a = fmix32(seed >>> 0);
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1) >>> 0;
    t = (t ^ (t + (Math.imul(t ^ (t >>> 7), t | 61) >>> 0))) >>> 0;
    return (t ^ (t >>> 14)) >>> 0;
  };
}
const below = (r, m) => Number((BigInt(r) * BigInt(m)) >> 32n);

function fnv1a32(keys) {
  let h = 0x811c9dc5;
  const text = keys.join('\n');
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193) >>> 0;
  return h.toString(16).padStart(8, '0');
}
const median = (v) => {
  const s = [...v].sort((x, y) => x - y), n = s.length;
  return n % 2 ? s[(n - 1) / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
};

function keyReport(generated, ascending) {
  const histogram = {};
  let max = 0, total = 0, duplicates = 0, increasing = true;
  for (const k of generated) {
    histogram[k.length] = (histogram[k.length] || 0) + 1;
    max = Math.max(max, k.length); total += k.length;
  }
  for (let i = 1; i < ascending.length; i++) {
    if (ascending[i - 1] === ascending[i]) duplicates++;
    if (!(ascending[i - 1] < ascending[i])) increasing = false;
  }
  return { count: generated.length, histogram, maxLength: max,
           meanLength: total / generated.length, strictlyIncreasing: increasing,
           duplicates, fnv1a32: fnv1a32(ascending) };
}

function runEdges(append) {
  const N = 100000, rates = [];
  let keys;
  for (let rep = 0; rep < 6; rep++) {
    keys = new Array(N);
    let k = between(null, null);
    const t0 = now();
    for (let i = 0; i < N; i++) { k = append ? between(k, null) : between(null, k); keys[i] = k; }
    const s = secs(t0);
    if (rep > 0) rates.push(N / s);
  }
  const ascending = ['a0', ...keys];
  if (!append) ascending.reverse();
  return { workload: append ? 'a' : 'b', opsPerSecond: median(rates),
           bestOpsPerSecond: Math.max(...rates), last: keys[N - 1], ...keyReport(keys, ascending) };
}

function runHammer(afterFirst) {
  const N = 1000; let timed = 0; const perSeedMax = []; let meanSum = 0; let seedOne;
  // Deterministic package: one pass after the warm-up stands for every seed.
  for (let pass = 0; pass < 2; pass++) {
    const k0 = between(null, null), k1 = between(k0, null);
    const keys = new Array(N);
    let bound = afterFirst ? k1 : k0;
    const t0 = now();
    for (let i = 0; i < N; i++) {
      bound = afterFirst ? between(k0, bound) : between(bound, k1);
      keys[i] = bound;
    }
    const s = secs(t0);
    if (pass === 0) continue;
    timed += s;
    perSeedMax.push(Math.max(...keys.map((k) => k.length)));
    meanSum += keys.reduce((t, k) => t + k.length, 0) / N;
    seedOne = [k0, ...(afterFirst ? [...keys].reverse() : keys), k1];
  }
  return { workload: afterFirst ? 'c1' : 'c2', opsPerSecond: N / timed,
           maxLengthOverSeeds: { min: perSeedMax[0], median: perSeedMax[0], max: perSeedMax[0] },
           meanLengthOverSeeds: meanSum, ...keyReport(seedOne.slice(1, -1), seedOne) };
}

// Nanoseconds one start/stop pair of hrtime reads adds to a timed call.
function timerPairOverheadNs() {
  const pairs = 1000000; let sum = 0n;
  const t0 = now();
  for (let i = 0; i < pairs; i++) { const t = now(); sum += now() - t; }
  if (sum < 0n) throw new Error("clock went back");
  return Number(now() - t0) / pairs;
}

function runRandomPositions() {
  const N = 100000, rates = [], walls = [], corrected = [];
  const overheadNs = timerPairOverheadNs();
  let finalList;
  for (let rep = 0; rep < 3; rep++) {
    const pos = stream(1); const list = []; let lib = 0n;
    const w0 = now();
    for (let i = 0; i < N; i++) {
      const p = below(pos(), list.length + 1);
      const a = p > 0 ? list[p - 1] : null, b = p < list.length ? list[p] : null;
      const t0 = now();
      const k = between(a, b);
      lib += now() - t0;
      list.splice(p, 0, k);
    }
    walls.push(secs(w0)); rates.push(N / (Number(lib) / 1e9));
    corrected.push(N / ((Number(lib) - N * overheadNs) / 1e9));
    if (rep === 0) finalList = list;
  }
  return { workload: 'd', opsPerSecond: median(rates),
           wallSecondsWithListMaintenance: median(walls), timerOverheadNs: overheadNs,
           opsPerSecondTimerCorrected: median(corrected), ...keyReport(finalList, finalList) };
}

function runBulk(intoGap) {
  const N = 3000, times = [];
  let keys, k0, k1;
  for (let rep = 0; rep < 22; rep++) {
    k0 = between(null, null); k1 = between(k0, null);
    const t0 = now();
    keys = intoGap ? generateNKeysBetween(k0, k1, N) : generateNKeysBetween(null, null, N);
    const s = secs(t0);
    if (rep >= 2) times.push(s);
  }
  const ascending = intoGap ? [k0, ...keys, k1] : keys;
  return { workload: intoGap ? 'e2' : 'e', millisecondsPerCall: median(times) * 1e3,
           opsPerSecond: N / median(times), ...keyReport(keys, ascending) };
}

for (const report of [runEdges(true), runEdges(false), runHammer(true), runHammer(false),
                      runRandomPositions(), runBulk(false), runBulk(true)]) {
  console.log(JSON.stringify(report));
}
