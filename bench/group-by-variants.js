// The group-by pass of the kernel against the pass it replaced, on a synthetic S3-sized table:
// 2,736,891 respondents (ACS's count), half of them in the base, 530 x 265 u16 ranks with
// skewed value frequencies (rank = 1 + floor(n * u²)), whole-number weights 1-200. Both
// passes fill a grid of (rows + 1) x (columns + 1) cells; the grids are checked equal to the
// last bit before timing, and runs alternate between the two in one process.
//
// `groupByPositions` (assembly/bench.ts) is the earlier pass: i32 positions per rank, a
// multiply for the cell, the index width tested per respondent, three scalar adds. The
// shipped `groupBy` reads byte offsets per rank, has a loop per pair of index widths and
// adds (w, w²) in one SIMD add.
//
//   npm run bench:group-by -- [--runs 15] [--md FILE]
import { readFileSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';

const flag = (name, fallback) => {
  const at = process.argv.indexOf(name);
  return at === -1 ? fallback : process.argv[at + 1];
};
const runs = Number(flag('--runs', 15));
const md = flag('--md');
const wasmPath = fileURLToPath(new URL('../build/kernel-bench.wasm', import.meta.url));
const memory = new WebAssembly.Memory({ initial: 2048, maximum: 65536, shared: true });
const k = new WebAssembly.Instance(new WebAssembly.Module(readFileSync(wasmPath)), { env: { memory, abort() { throw new Error('kernel abort'); } } }).exports;
const cellBytes = k.CELL_BYTES.value;

const respondents = 2_736_891;
const words = Math.ceil(respondents / 128) * 2;
const nRows = 530;
const nColumns = 265;
let seed = 20261126;
const random = () => (seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0) / 2 ** 32;
let top = 1 << 20;
const take = (bytes) => {
  const ptr = top;
  top += Math.ceil(bytes / 64) * 64;
  return ptr;
};
const base = take(words * 8);
const a = take(words * 64 * 2);
const b = take(words * 64 * 2);
const weights = take(words * 64 * 8);
const positionsA = take((nRows + 1) * 4);
const positionsB = take((nColumns + 1) * 4);
const offsetsA = take((nRows + 1) * 4);
const offsetsB = take((nColumns + 1) * 4);
const gridCells = (nRows + 1) * (nColumns + 1);
const grid = take(gridCells * cellBytes);
const scratch = take(128);

const bits = new Uint32Array(memory.buffer, base, words * 2);
const rowRanks = new Uint16Array(memory.buffer, a, words * 64);
const columnRanks = new Uint16Array(memory.buffer, b, words * 64);
const w = new Float64Array(memory.buffer, weights, words * 64);
for (let r = 0; r < respondents; r++) {
  if (random() < 0.5) bits[r >>> 5] |= 1 << (r & 31);
  rowRanks[r] = 1 + Math.floor(nRows * random() ** 2);
  columnRanks[r] = 1 + Math.floor(nColumns * random() ** 2);
  w[r] = 1 + Math.floor(random() * 200);
}
// Rank 0 (blank) is off both axes; rank p + 1 is position p.
const rowBytes = (nColumns + 1) * cellBytes;
const pa = new Int32Array(memory.buffer, positionsA, nRows + 1).fill(-1);
const pb = new Int32Array(memory.buffer, positionsB, nColumns + 1).fill(-1);
const oa = new Uint32Array(memory.buffer, offsetsA, nRows + 1).fill(nRows * rowBytes);
const ob = new Uint32Array(memory.buffer, offsetsB, nColumns + 1).fill(nColumns * cellBytes);
for (let p = 0; p < nRows; p++) (pa[p + 1] = p), (oa[p + 1] = p * rowBytes);
for (let p = 0; p < nColumns; p++) (pb[p + 1] = p), (ob[p + 1] = p * cellBytes);

const passes = {
  'earlier pass (positions, multiply, width test, scalar adds)': () => k.groupByPositions(base, words, a, 2, positionsA, b, 2, positionsB, nRows, nColumns, weights, grid),
  'shipped groupBy (offsets, loop per width, SIMD pair)': () => k.groupBy(base, words, a, 2, offsetsA, b, 2, offsetsB, 0, 0xffffffff, weights, grid, scratch, 0),
};
const view = new Float64Array(memory.buffer, grid, (gridCells * cellBytes) / 8);
const grids = Object.values(passes).map((pass) => {
  view.fill(0);
  pass();
  return view.slice();
});
if (!grids.every((g) => g.every((x, i) => x === grids[0][i]))) throw new Error('the passes gave different grids');

// Warm-up: both passes tier up to optimized code before anything is timed.
for (let run = 0; run < 3; run++) for (const pass of Object.values(passes)) (view.fill(0), pass());
const times = Object.fromEntries(Object.keys(passes).map((name) => [name, []]));
const loads = [loadavg()[0]];
for (let run = 0; run < runs; run++) {
  const order = run % 2 === 0 ? Object.entries(passes) : Object.entries(passes).reverse();
  for (const [name, pass] of order) {
    view.fill(0);
    const t0 = performance.now();
    pass();
    times[name].push(performance.now() - t0);
  }
}
loads.push(loadavg()[0]);
const stat = (list) => {
  const sorted = [...list].sort((x, y) => x - y);
  return { median: sorted[Math.floor(sorted.length / 2)], min: sorted[0] };
};
const names = Object.keys(passes);
const lines = [
  `Group-by pass on a synthetic S3-sized table (${respondents.toLocaleString('en-US')} respondents, about half in the base, ${nRows} x ${nColumns}), ${runs} alternated runs after 3 untimed, one thread.`,
  `${new Date().toISOString().slice(0, 10)}; ${cpus()[0]?.model ?? 'cpu'}, ${cpus().length} cores; Node ${process.version}; load average (1 min) ${loads.map((l) => l.toFixed(1)).join(' -> ')}. Grids equal to the last bit.`,
  '',
  '| pass | median ms | min ms |',
  '|---|---:|---:|',
  ...names.map((name) => `| ${name} | ${stat(times[name]).median.toFixed(2)} | ${stat(times[name]).min.toFixed(2)} |`),
  '',
  `shipped / earlier, median: ${(stat(times[names[1]]).median / stat(times[names[0]]).median).toFixed(3)}`,
];
console.log(lines.join('\n'));
if (md) writeFileSync(md, `${lines.join('\n')}\n`);
