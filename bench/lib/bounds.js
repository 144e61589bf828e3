// Physical bounds of this machine for bitset work: popcount throughput and memory
// bandwidth. Compiles bench/native/bounds.c with the system C compiler when there
// is one (cc -O3 -mpopcnt), else measures the same loops in JavaScript, and says which.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const source = join(dirname(fileURLToPath(import.meta.url)), '..', 'native', 'bounds.c');

function nativeBounds() {
  const dir = mkdtempSync(join(tmpdir(), 'crosstab-bench-'));
  try {
    const binary = join(dir, 'bounds');
    const flags = ['-O3', '-mpopcnt', '-pthread'];
    execFileSync('cc', [...flags, '-o', binary, source], { stdio: ['ignore', 'ignore', 'pipe'] });
    const compiler = execFileSync('cc', ['--version'], { encoding: 'utf8' }).split('\n')[0];
    const result = JSON.parse(execFileSync(binary, { encoding: 'utf8' }));
    delete result.sink;
    return { method: `native C (${compiler}; cc ${flags.join(' ')}; scalar popcnt, 4 accumulators)`, ...result };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function popcount32(x) {
  x -= (x >>> 1) & 0x55555555;
  x = (x & 0x33333333) + ((x >>> 2) & 0x33333333);
  x = (x + (x >>> 4)) & 0x0f0f0f0f;
  return Math.imul(x, 0x01010101) >>> 24;
}

function jsBounds() {
  const best = (fn, trials = 3) => Math.max(...Array.from({ length: trials }, fn));
  const a = new Uint32Array(8192).map(() => (Math.random() * 2 ** 32) >>> 0);
  const b = new Uint32Array(8192).map(() => (Math.random() * 2 ** 32) >>> 0);
  let sink = 0;
  const rate = (kernel) => best(() => {
    const iters = 2000, t0 = performance.now();
    for (let it = 0; it < iters; it++) sink += kernel();
    return (iters * a.length) / 2 / ((performance.now() - t0) * 1e6); // 64-bit-word equivalents per ns
  });
  const popcnt = rate(() => { let s = 0; for (let i = 0; i < a.length; i++) s += popcount32(a[i]); return s; });
  const andPopcnt = rate(() => { let s = 0; for (let i = 0; i < a.length; i++) s += popcount32(a[i] & b[i]); return s; });
  const big = new Float64Array(64 << 20).fill(1);
  const read1 = best(() => {
    const t0 = performance.now();
    let s = 0;
    for (let i = 0; i < big.length; i++) s += big[i];
    sink += s;
    return (big.length * 8) / ((performance.now() - t0) * 1e6);
  });
  const copy = best(() => {
    const half = big.length / 2, t0 = performance.now();
    big.copyWithin(half, 0, half);
    return (half * 8) / ((performance.now() - t0) * 1e6);
  });
  if (sink === 42) console.log('');
  return { method: 'JavaScript loops (C compiler unavailable): SWAR popcount on Uint32Array pairs, Float64Array sum, copyWithin', popcntWordsPerNs: popcnt, andPopcntWordsPerNs: andPopcnt, readGBps1: read1, readGBpsAll: null, threads: 1, copyGBps: copy };
}

/** Set BENCH_BOUNDS=js to skip the C compiler. @returns bounds plus derived per-cell limits for a bitset of `respondents` bits. */
export function measureBounds(respondents) {
  let bounds;
  try {
    if (process.env.BENCH_BOUNDS === 'js') throw new Error('BENCH_BOUNDS=js');
    bounds = nativeBounds();
  } catch (error) {
    bounds = { ...jsBounds(), nativeError: String(error.message).split('\n')[0] };
  }
  const words = Math.ceil(respondents / 64);
  const bitsetBytes = words * 8;
  return {
    ...bounds,
    derived: {
      respondents,
      wordsPerBitset: words,
      bitsetBytes,
      // A dense cell touches one more bitset (base AND row is reused across the row):
      denseCellsPerSecPerCore_popcount: (bounds.andPopcntWordsPerNs * 1e9) / words,
      denseCellsPerSec_memory: ((bounds.readGBpsAll ?? bounds.readGBps1) * 1e9) / bitsetBytes,
    },
  };
}
