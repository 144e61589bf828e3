// A pool worker: the same kernel module, instantiated over the process's shared
// WebAssembly.Memory. Tasks carry offsets into that memory, never data, and results are
// written there too; the reply only says the task is done. Plain JavaScript so that the
// same file runs under the test runner (from src/) and from the bundle (dist/).
import { workerData } from 'node:worker_threads';

const { module, memory } = workerData;
const kernel = new WebAssembly.Instance(module, {
  env: {
    memory,
    abort() {
      throw new Error('crosstab kernel aborted');
    },
  },
}).exports;

// Warm-up: run each hot function once on an empty range so the first real task does not
// pay for tier-up.
kernel.cellsTile(0, 0, 0, 0, 0, 0, 0, 0, 0);
kernel.groupBy(0, 0, 0, 0, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0);
kernel.groupByMulti(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0);
kernel.groupByDesign(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0);

/** Runs one kernel task: `{ fn, args }`, where fn is a kernel export name. */
export default function run(task) {
  if (task.fn === '__exit') process.exit(1); // fault injection for the test suite
  const fn = kernel[task.fn];
  if (typeof fn !== 'function') throw new Error(`unknown kernel task ${task.fn}`);
  return fn(...task.args) ?? 0;
}
