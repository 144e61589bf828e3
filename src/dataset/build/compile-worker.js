// A build worker that makes variables' buffers (column-buffers.js) while the main thread
// writes the ones before: the index and code containers of a large survey are most of a
// build's time after reading. Plain JavaScript so that the same file runs under the test
// runner (from src/) and from the bundle (dist/).
//
// In: { id, task } (a ColumnBuffersTask; `order` over a SharedArrayBuffer, `ids` transferred)
// Out: { id, buffers: Uint8Array[] } (transferred) or { id, error }
import { parentPort } from 'node:worker_threads';
import { columnBuffers } from './column-buffers.js';

const port = parentPort;
if (port === null) throw new Error('compile-worker runs as a worker thread of the dataset compiler.');

port.on('message', ({ id, task }) => {
  try {
    const buffers = columnBuffers(task);
    // Containers share the memory of their kind (one array of bitsets, one of lists).
    port.postMessage({ id, buffers }, [...new Set(buffers.map((buffer) => buffer.buffer))]);
  } catch (error) {
    port.postMessage({ id, error: error instanceof Error ? error.message : String(error) });
  }
});
