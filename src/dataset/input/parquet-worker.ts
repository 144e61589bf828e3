// A Parquet build worker: decodes its share of a file's flat columns, each column's chunks
// in row-group order, into column encoders of its own (so each column's dictionary and ids
// are made here just as the main thread would make them), and hands back each column's
// dictionary, ids and counts as soon as it is done. Bundled as dist/dataset/parquet-worker.js.
//
// workerData: a ShareTask (parquet-share.ts), or none: then the task is the first message
//   (a worker started before the reader had read the file's metadata; see startWorkers)
// Out: { column: ShareResult } per column (ids and counts transferred), then { done: true };
//   or { error: {code, message, details} | {message} }
import { closeSync, readSync } from 'node:fs';
import { parentPort, workerData } from 'node:worker_threads';
import { CrosstabError } from '../../errors.js';
import { shareResult } from './column-shares.js';
import { openSame } from './file-identity.js';
import { chunkFailure, codecsReady, storeColumnChunk } from './parquet-chunk.js';
import type { ShareTask } from './parquet-share.js';
import { ColumnEncoder } from './table-encoder.js';

const port = parentPort;
if (port === null) throw new Error('parquet-worker runs as a worker thread of the Parquet reader.');
const task = (workerData as ShareTask | null | undefined) ?? (await new Promise<ShareTask>((resolve) => port.once('message', resolve)));
const { path, identity, rows, columns } = task;

await codecsReady(columns.flatMap((column) => column.chunks.map((chunk) => chunk.meta.codec)));
let file: number | undefined;
try {
  file = openSame(path, identity);
  for (const column of columns) {
    const target = new ColumnEncoder({ name: column.name }, rows);
    for (const chunk of column.chunks) {
      const bytes = new Uint8Array(chunk.end - chunk.start);
      let filled = 0;
      while (filled < bytes.length) {
        const read = readSync(file, bytes, filled, bytes.length - filled, chunk.start + filled);
        if (read === 0) throw chunkFailure(path, column.name, chunk.group, new Error('the file ends inside a column chunk'));
        filled += read;
      }
      try {
        storeColumnChunk(bytes, chunk.meta, { type: column.type, optional: column.optional, target }, chunk.firstRow, chunk.rows);
      } catch (error) {
        throw chunkFailure(path, column.name, chunk.group, error);
      }
    }
    const { result, transfer } = shareResult(column.position, target, rows);
    port.postMessage({ column: result }, transfer);
  }
  port.postMessage({ done: true });
} catch (error) {
  port.postMessage({ error: error instanceof CrosstabError ? error.toJSON() : { message: error instanceof Error ? error.message : String(error) } });
} finally {
  if (file !== undefined) closeSync(file);
}
