// An Arrow build worker: opens an Arrow IPC file itself and stores its share of the columns
// into column encoders of its own by the calling thread's code, so each column's dictionary
// and ids are made here just as the calling thread would make them; then hands back each
// column's dictionary, ids and counts. Bundled as dist/dataset/arrow-worker.js.
//
// Given read plans (where each column's buffers lie in each record batch, from the calling
// thread, which parsed the file's metadata), it reads them straight into WebAssembly memory
// (arrow-direct.ts) and never loads apache-arrow; else (a compressed batch, a column not of
// numbers or Utf8 text) it walks the record batches through apache-arrow's reader
// (arrow-share-vectors.ts), reading only its share of the columns' buffers.
//
// workerData: an ArrowShareTask (arrow-share.ts), or none: then the task is the first message
//   (a worker started before the reader had read the file's footer; see startArrowWorkers)
// Out: { column: ShareResult } per column (ids and counts transferred), then { done: true };
//   or { error: {code, message, details} }, the CrosstabError a one-thread read gives.
import { open } from 'node:fs/promises';
import { parentPort, workerData } from 'node:worker_threads';
import { storeDirect, TextColumns } from './arrow-direct.js';
import type { ArrowShareTask } from './arrow-share.js';
import { shareResult } from './column-shares.js';
import { changedWhileRead, fileIdentity, sameFile } from './file-identity.js';
import { readFailure } from './input-file.js';
import { ColumnEncoder } from './table-encoder.js';
import { csvEncoderModule } from '../../kernel/wasm-module.js';

const port = parentPort;
if (port === null) throw new Error('arrow-worker runs as a worker thread of the Arrow reader.');
// A worker started early compiles the number encoder while it waits for its task.
if (workerData === null || workerData === undefined) csvEncoderModule();
const task = (workerData as ArrowShareTask | null | undefined) ?? (await new Promise<ArrowShareTask>((resolve) => port.once('message', resolve)));
const { path, identity, columns, rows: fileRows, plans, idLike, claim } = task;

try {
  const handle = await open(path, 'r').catch(() => {
    throw changedWhileRead(path);
  });
  try {
    if (!sameFile(fileIdentity(await handle.stat()), identity)) throw changedWhileRead(path);
    const texts = new TextColumns(idLike?.stopAbove, new Set(idLike?.readWhole));
    if (plans !== undefined) {
      // Planned columns, each read whole (every batch) and handed back: all of them, or those this worker takes from a shared queue.
      const rows = plans.reduce((sum, batch) => sum + batch.rows, 0);
      for (let k = claim === undefined ? 0 : Atomics.add(claim, 0, 1); k < columns.length; k = claim === undefined ? k + 1 : Atomics.add(claim, 0, 1)) {
        const target = new ColumnEncoder({ name: columns[k]!.name }, Math.max(1, fileRows ?? 4096));
        let at = 0;
        for (const batch of plans) {
          await storeDirect(handle, target, at, batch.columns[k]!, texts);
          at += batch.rows;
        }
        const { result, transfer } = shareResult(columns[k]!.position, target, rows);
        port.postMessage({ column: result }, transfer);
      }
    } else {
      const targets = columns.map((column) => new ColumnEncoder({ name: column.name }, Math.max(1, fileRows ?? 4096)));
      const { readShareVectors } = await import('./arrow-share-vectors.js');
      const rows = await readShareVectors(handle, columns, targets, texts, identity.size);
      columns.forEach((column, k) => {
        const { result, transfer } = shareResult(column.position, targets[k]!, rows);
        port.postMessage({ column: result }, transfer);
      });
    }
    port.postMessage({ done: true });
  } finally {
    await handle.close().catch(() => undefined);
  }
} catch (error) {
  port.postMessage({ error: readFailure(path, 'Arrow IPC', error).toJSON() });
}
