// A CSV build worker: runs the chunk encoder (csv-chunk-encoder.js) over its share of the
// columns of every chunk, in a memory of its own, and posts each result back (its arrays
// transferred). Plain JavaScript so that the same file runs under the test runner (from
// src/) and from the bundle (dist/).
//
// workerData: the share (see csv-chunk-encoder.js)
// In:  { seq, chunk: Uint8Array over a SharedArrayBuffer, length }
// Out: the chunk encoder's result
import { parentPort, workerData } from 'node:worker_threads';
import { chunkEncoder } from './csv-chunk-encoder.js';

const port = parentPort;
if (port === null) throw new Error('csv-worker runs as a worker thread of the CSV reader.');
const encode = chunkEncoder(workerData);

port.on('message', (message) => {
  const result = encode(message);
  const transfer = result.error === undefined ? [...result.ids, ...result.weights, ...result.fresh.flatMap(({ bytes, lengths }) => [bytes, lengths])].map((array) => array.buffer) : [];
  port.postMessage(result, transfer);
});
