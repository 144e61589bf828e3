// A pool worker: the same kernel module, instantiated over the process's shared
// WebAssembly.Memory. Tasks carry offsets into that memory, never data, and results are
// written there too; the reply only says the task is done. Plain JavaScript so that the
// same file runs under the test runner (from src/) and from the bundle (dist/). What it
// checks and warms comes from the pool (PoolWorkerData in pool.ts), so no kernel name,
// argument count or ABI number is written here.
import { workerData } from 'node:worker_threads';

const { module, memory, abi, warmUp, programFunctions } = workerData;
const kernel = new WebAssembly.Instance(module, {
  env: {
    memory,
    abort() {
      throw new Error('crosstab kernel aborted');
    },
  },
}).exports;

// A kernel of another ABI would be called with the wrong arguments: refuse every task.
const found = typeof kernel.kernelAbi === 'function' ? kernel.kernelAbi() : 0;
const refused =
  found === abi
    ? undefined
    : new Error(`pool worker: the kernel module has kernel ABI ${found}, this code expects ${abi}; the bundle and build/kernel.wasm come from different builds: run \`npm run build\``);

// Warm-up: run each task function once on an empty range (all arguments 0) so the first
// real task does not pay for tier-up.
if (!refused) for (const name of warmUp) kernel[name](...new Array(kernel[name].length).fill(0));

/**
 * Runs one kernel task: `{ fn, args, cancel? }`, where fn is a kernel export name, or
 * `{ program, cancel? }`. `cancel` is an Int32Array over shared memory that the main thread
 * sets to 1 when the task's query is aborted: a task that has not started by then returns
 * null without running, and a program checks it before each of its kernel calls.
 */
export default function run(task) {
  if (refused) throw refused;
  if (task.cancel && Atomics.load(task.cancel, 0) !== 0) return null;
  if (task.program) return runProgram(task.program, task.cancel);
  const fn = kernel[task.fn];
  if (typeof fn !== 'function') throw new Error(`unknown kernel task ${task.fn}`);
  return fn(...task.args) ?? 0;
}

/**
 * A cells program (src/query/cells-program.ts): u32 records of function index, argument
 * count, arguments and a keep flag. Returns the kept results in order, or null when
 * `cancel` was set before the program finished (it stops between two kernel calls).
 */
function runProgram(program, cancel) {
  const kept = [];
  for (let at = 0; at < program.length; ) {
    if (cancel && Atomics.load(cancel, 0) !== 0) return null;
    const name = programFunctions[program[at]];
    const count = program[at + 1];
    const fn = kernel[name];
    if (typeof fn !== 'function') throw new Error(`unknown kernel function ${name} in a cells program`);
    const result = fn(...program.subarray(at + 2, at + 2 + count));
    if (program[at + 2 + count] === 1) kept.push(result);
    at += count + 3;
  }
  return kept;
}
