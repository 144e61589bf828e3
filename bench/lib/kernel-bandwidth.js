// Memory-read bandwidth of the kernel itself: readSum (assembly/bench.ts, build/kernel-bench.wasm)
// streaming 256 MiB per thread of the shared WebAssembly memory, on one thread and on every
// core at once (one worker thread each, released together). What bounds a group-by pass
// that reads each respondent's ranks and weight once.
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const wasmPath = join(root, 'build', 'kernel-bench.wasm');
const REGION = 256 * 2 ** 20;
const TRIALS = 5;

const WORKER = `
const { workerData, parentPort } = require('node:worker_threads');
const { module, memory, flag, ptr, bytes, trials } = workerData;
const kernel = new WebAssembly.Instance(module, { env: { memory, abort() { throw new Error('abort'); } } }).exports;
const times = [];
for (let t = 0; t < trials; t++) {
  Atomics.add(flag, 1, 1);
  Atomics.wait(flag, 0, t);
  const start = performance.now();
  kernel.readSum(ptr, bytes);
  times.push(performance.now() - start);
}
parentPort.postMessage(times);
`;

/** @returns {{method: string, readGBps1: number, readGBpsAll: number, threads: number}} */
export async function kernelReadBandwidth(threads = availableParallelism()) {
  if (!existsSync(wasmPath)) execFileSync('npx', ['asc', 'assembly/bench.ts', '--target', 'bench'], { cwd: root, stdio: 'ignore' });
  const module = new WebAssembly.Module(readFileSync(wasmPath));
  const pages = (REGION * threads + 2 ** 20) / 65536;
  const memory = new WebAssembly.Memory({ initial: pages, maximum: pages, shared: true });
  const kernel = new WebAssembly.Instance(module, { env: { memory, abort() { throw new Error('abort'); } } }).exports;
  const first = 2 ** 20;
  // Written, not left as fresh zero pages (which all map one physical page and would read from cache).
  kernel.bitsUniverse(first, (REGION * threads) / 8, (REGION * threads) / 8);
  const one = [];
  for (let t = 0; t < TRIALS; t++) {
    const start = performance.now();
    kernel.readSum(first, REGION);
    one.push(performance.now() - start);
  }
  const flag = new Int32Array(new SharedArrayBuffer(8));
  const workers = Array.from({ length: threads }, (_, i) => new Worker(WORKER, { eval: true, workerData: { module, memory, flag, ptr: first + i * REGION, bytes: REGION, trials: TRIALS } }));
  const results = workers.map((worker) => new Promise((resolve, reject) => { worker.once('message', resolve); worker.once('error', reject); }));
  for (let t = 0; t < TRIALS; t++) {
    while (Atomics.load(flag, 1) < threads * (t + 1)) await new Promise((resolve) => setTimeout(resolve, 1));
    Atomics.store(flag, 0, t + 1);
    Atomics.notify(flag, 0);
  }
  const times = await Promise.all(results);
  await Promise.all(workers.map((worker) => worker.terminate()));
  const together = Array.from({ length: TRIALS }, (_, t) => Math.max(...times.map((list) => list[t])));
  return {
    method: `kernel readSum (wasm SIMD, 4 accumulators) over ${REGION / 2 ** 20} MiB per thread, best of ${TRIALS}`,
    readGBps1: REGION / (Math.min(...one) * 1e6),
    readGBpsAll: (REGION * threads) / (Math.min(...together) * 1e6),
    threads,
  };
}
