// Weighted-sum strategies of the kernel, measured on the real ACS weight vector (PWGTP,
// respondents stored sorted by weight as the dataset builder does): walking set bits
// (ctz), weight runs (what the engine uses), bit-sliced integer weights (12 planes), and a
// plain AND + popcount as the floor. Answers are checked equal before timing.
//
// The alternatives are not in the shipped kernel: this loads build/kernel-bench.wasm
// (assembly/bench.ts: the shipped kernel plus cellWalk and cellBitSliced), which
// `npm run bench:kernel` builds first (`npm run build:wasm:bench`).
//
//   npm run bench:kernel -- --dataset /path/acs.arrow [--json out.json]
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { tableFromIPC } from 'apache-arrow';

const wasmPath = fileURLToPath(new URL('../build/kernel-bench.wasm', import.meta.url));

/** The bench kernel's exports over `memory`. */
function benchKernel(memory) {
  if (!existsSync(wasmPath)) throw new Error(`${wasmPath} not found: run \`npm run build:wasm:bench\` (npm run bench:kernel does)`);
  return new WebAssembly.Instance(new WebAssembly.Module(readFileSync(wasmPath)), { env: { memory, abort() { throw new Error('abort'); } } }).exports;
}

/** Loads the default weight vector of a dataset file (buffer `weight:*`). */
function datasetWeights(path) {
  const table = tableFromIPC(readFileSync(path));
  const meta = JSON.parse(table.schema.metadata.get('crosstab.meta'));
  for (const batch of table.batches) {
    const names = batch.getChild('name').toArray();
    const data = batch.getChild('data').data[0];
    const row = names.findIndex((name) => name === `weight:${meta.weights[0].name}`);
    if (row >= 0) {
      const bytes = data.values.slice(data.valueOffsets[row], data.valueOffsets[row + 1]);
      return { weights: new Float64Array(bytes.buffer, 0, bytes.byteLength / 8), respondents: meta.respondents };
    }
  }
  throw new Error(`${path}: no weight buffer`);
}

function seeded(seed) {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export async function measureWeightedSums(datasetPath, { reps = 30 } = {}) {
  const { weights, respondents } = datasetWeights(datasetPath);
  const words = weights.length / 64;
  const memory = new WebAssembly.Memory({ initial: 16, maximum: 65536, shared: true });
  const k = benchKernel(memory);
  const runBytes = k.WEIGHT_RUN_BYTES.value;
  let top = 65536;
  const alloc = (bytes) => {
    const ptr = top;
    top += Math.ceil(bytes / 64) * 64;
    if (top > memory.buffer.byteLength) memory.grow(Math.ceil((top - memory.buffer.byteLength) / 65536));
    return ptr;
  };
  const wPtr = alloc(weights.byteLength);
  new Float64Array(memory.buffer, wPtr, weights.length).set(weights);
  // Weight runs, built by the kernel as the engine does.
  const runs = alloc(words * k.MAX_SEGMENTS.value * runBytes);
  const nRuns = k.weightRuns(wPtr, words, respondents, runs);
  const runView = new DataView(memory.buffer, runs, nRuns * runBytes);
  let segments = 0;
  let walked = 0;
  for (let i = 0; i < nRuns; i++) {
    if (runView.getBigUint64(i * runBytes + 16, true) !== 0n) segments++;
    else if (Number.isNaN(runView.getFloat64(i * runBytes + 8, true))) walked++;
  }
  // 12 bit planes of the integer weights.
  const nPlanes = Math.ceil(Math.log2(weights.reduce((a, b) => Math.max(a, b), 0) + 1));
  const planes = alloc(nPlanes * words * 8);
  const planeWords = new Uint32Array(memory.buffer, planes, nPlanes * words * 2);
  for (let r = 0; r < respondents; r++) {
    for (let p = 0; p < nPlanes; p++) if ((weights[r] >> p) & 1) planeWords[p * words * 2 + (r >>> 5)] |= 1 << (r & 31);
  }
  const universe = alloc(words * 8);
  k.bitsUniverse(universe, words, respondents);
  const target = alloc(words * 8);
  const out = alloc(32);
  const sums = new Float64Array(memory.buffer, out, 3);
  const random = seeded(7);
  const rows = [];
  for (const density of [0.01, 0.1, 0.5, 0.9, 1]) {
    const bits = new Uint32Array(memory.buffer, target, words * 2).fill(0);
    for (let r = 0; r < respondents; r++) if (density === 1 || random() < density) bits[r >>> 5] |= 1 << (r & 31);
    const variants = {
      'and+popcount (no weights)': () => [k.andPopcount(universe, target, words), NaN],
      'ctz walk': () => [k.cellWalk(universe, target, wPtr, words, out), sums[0]],
      'weight runs (engine)': () => [k.cellDense(universe, target, wPtr, runs, nRuns, words, out), sums[0]],
      [`bit-sliced (${nPlanes} planes)`]: () => [k.cellBitSliced(universe, target, planes, nPlanes, words, out), sums[0]],
    };
    const answers = Object.entries(variants).map(([name, run]) => [name, run()]);
    const [, reference] = answers[1];
    for (const [name, [count, sum]] of answers) {
      if (count !== reference[0] || (!Number.isNaN(sum) && sum !== reference[1])) throw new Error(`something is off: ${name} gives ${count}/${sum}, ctz walk ${reference}`);
    }
    for (const [name, run] of Object.entries(variants)) {
      const times = [];
      for (let i = 0; i < reps; i++) {
        const started = process.hrtime.bigint();
        run();
        times.push(Number(process.hrtime.bigint() - started) / 1e6);
      }
      times.sort((a, b) => a - b);
      rows.push({ density, variant: name, medianMs: times[reps >> 1], nsPerWord: (times[reps >> 1] * 1e6) / words });
    }
  }
  return { words, respondents, runs: nRuns, segments, walkedWords: walked, planes: nPlanes, rows };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const at = process.argv.indexOf('--dataset');
  if (at < 0) {
    console.error('usage: node bench/kernel-variants.js --dataset ACS.arrow [--json out.json]');
    process.exit(2);
  }
  const result = await measureWeightedSums(process.argv[at + 1]);
  console.log(`${result.respondents} respondents, ${result.words} words, ${result.runs} weight runs (${result.segments} word segments, ${result.walkedWords} words walked), ${result.planes} weight planes`);
  console.table(result.rows.map((row) => ({ density: row.density, variant: row.variant, 'median ms': row.medianMs.toFixed(3), 'ns/word': row.nsPerWord.toFixed(2) })));
  const json = process.argv.indexOf('--json');
  if (json > 0) (await import('node:fs')).writeFileSync(process.argv[json + 1], JSON.stringify(result, null, 2));
}
