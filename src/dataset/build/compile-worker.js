// A build worker that makes variables' buffers (column-buffers.js) while the main thread
// writes the ones before: the index and code containers of a large survey are most of a
// build's time after reading. Plain JavaScript so that the same file runs under the test
// runner (from src/) and from the bundle (dist/).
//
// workerData: { module, memory, orderAt, scratchAt } (build/columns.wasm, compiled by the
//   main thread; the build's shared memory, where the main thread wrote the respondents'
//   order, and this worker's scratch area in it: see columnMemory)
// In: { id, task } (a ColumnBuffersTask; `ids` transferred)
// Out: { id, buffers: { stored: Uint8Array, hash }[] } (views of one transferred ArrayBuffer) or { id, error }
import { parentPort, workerData } from 'node:worker_threads';
import { ColumnKernel } from './column-buffers.js';

const port = parentPort;
if (port === null) throw new Error('compile-worker runs as a worker thread of the dataset compiler.');

let kernel;
let refused;
try {
  kernel = new ColumnKernel(workerData.module, workerData);
} catch (error) {
  refused = error instanceof Error ? error.message : String(error);
}
port.on('message', ({ id, task }) => {
  if (refused !== undefined) return port.postMessage({ id, error: refused });
  try {
    const buffers = kernel.columnBuffers(task);
    port.postMessage({ id, buffers }, [buffers[0].stored.buffer]);
  } catch (error) {
    port.postMessage({ id, error: error instanceof Error ? error.message : String(error) });
  }
});
