// An Arrow build worker: opens an Arrow IPC file itself, walks its record batches in order,
// reading only its share of the columns' buffers (arrow-batch-columns.ts), and stores them
// into column encoders of its own by the calling thread's code (arrow-columns.ts), so each
// column's dictionary and ids are made here just as the calling thread would make them;
// then hands back each column's dictionary, ids and counts. Bundled as
// dist/dataset/arrow-worker.js.
//
// workerData: an ArrowShareTask (arrow-share.ts)
// Out: { column: ShareResult } per column (ids and counts transferred), then { done: true };
//   or { error: {code, message, details} }, the CrosstabError a one-thread read gives.
import { open } from 'node:fs/promises';
import { parentPort, workerData } from 'node:worker_threads';
import { RecordBatchReader } from 'apache-arrow';
import { registerArrowCodecs } from './arrow-codecs.js';
import { type BatchColumns, readBatchColumns, wholeBatch } from './arrow-batch-columns.js';
import { storeColumnar, TextColumns } from './arrow-columns.js';
import type { ArrowShareTask } from './arrow-share.js';
import { shareResult } from './column-shares.js';
import { changedWhileRead, fileIdentity, sameFile } from './file-identity.js';
import { readFailure } from './input-file.js';
import { ColumnEncoder } from './table-encoder.js';

const port = parentPort;
if (port === null) throw new Error('arrow-worker runs as a worker thread of the Arrow reader.');
const { path, identity, columns, rows: fileRows } = workerData as ArrowShareTask;
/** Record batches with a body larger than this are read a column at a time. */
const columnAtATime = 64 << 20;

try {
  registerArrowCodecs();
  const handle = await open(path, 'r').catch(() => {
    throw changedWhileRead(path);
  });
  try {
    if (!sameFile(fileIdentity(await handle.stat()), identity)) throw changedWhileRead(path);
    const reader = await RecordBatchReader.from(handle);
    await reader.open();
    const targets = columns.map((column) => new ColumnEncoder({ name: column.name }, Math.max(1, fileRows ?? 4096)));
    const texts = new TextColumns();
    const footer = reader.footer;
    if (footer === null) throw new Error('the file has no footer');
    const fields = reader.schema.fields;
    const positions = columns.map((column) => column.position);
    let rows = 0;
    for (let index = 0; index < reader.numRecordBatches; index++) {
      const block = footer.getRecordBatch(index);
      if (block === null) throw new Error(`record batch ${index + 1} is missing from the footer`);
      // Only this share's buffers are read, of a large batch one column's at a time (the ACS
      // file is one batch of 860 MB: the share whole was most of the build's peak memory); a
      // compressed batch is read whole.
      let apart = block.bodyLength > columnAtATime && positions.length > 1;
      let batch: BatchColumns | undefined = apart ? undefined : await readBatchColumns(handle, block, fields, positions, reader.dictionaries, reader.schema.metadataVersion);
      for (let k = 0; k < columns.length; k++) {
        if (apart) batch = await readBatchColumns(handle, block, fields, [positions[k]!], reader.dictionaries, reader.schema.metadataVersion);
        if (batch === undefined) {
          batch = wholeBatch((await reader.readRecordBatch(index))!);
          apart = false;
        }
        const column = columns[k]!;
        if (!storeColumnar(targets[k]!, rows, batch.vectorAt(column.position), texts)) throw new Error(`column "${column.name}" is not of one type in every record batch`);
      }
      rows += batch?.rows ?? 0;
    }
    columns.forEach((column, k) => {
      const { result, transfer } = shareResult(column.position, targets[k]!, rows);
      port.postMessage({ column: result }, transfer);
    });
    port.postMessage({ done: true });
  } finally {
    await handle.close().catch(() => undefined);
  }
} catch (error) {
  port.postMessage({ error: readFailure(path, 'Arrow IPC', error).toJSON() });
}
