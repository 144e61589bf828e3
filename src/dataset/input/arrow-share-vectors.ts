import type { FileHandle } from 'node:fs/promises';
import { RecordBatchReader } from 'apache-arrow';
import { registerArrowCodecs } from './arrow-codecs.js';
import { type BatchColumns, readBatchColumns, wholeBatch } from './arrow-batch-columns.js';
import { directKind, storeColumnar } from './arrow-columns.js';
import { storeDirect, type TextColumns } from './arrow-direct.js';
import type { ColumnEncoder } from './table-encoder.js';

/** Record batches with a body larger than this are read a column at a time. */
const columnAtATime = 64 << 20;

/**
 * An Arrow build worker's share of the columns (`columns`, into `targets`) read through
 * apache-arrow's reader, for a file the calling thread gave no read plans for (a compressed
 * batch, a dictionary-encoded column...): the worker loads apache-arrow only then. Returns the
 * rows read.
 */
export async function readShareVectors(handle: FileHandle, columns: Array<{ position: number; name: string }>, targets: ColumnEncoder[], texts: TextColumns, fileSize: number): Promise<number> {
  registerArrowCodecs();
  const reader = await RecordBatchReader.from(handle);
  await reader.open();
  const footer = reader.footer;
  if (footer === null) throw new Error('the file has no footer');
  const fields = reader.schema.fields;
  const positions = columns.map((column) => column.position);
  // Columns of numbers and Utf8 text are read straight into WebAssembly memory (arrow-direct.ts).
  const kinds = new Map(
    positions.flatMap((position) => {
      const kind = directKind(fields[position]!.type);
      return kind === undefined ? [] : [[position, kind] as const];
    }),
  );
  const direct = { kinds, fileSize };
  let rows = 0;
  for (let index = 0; index < reader.numRecordBatches; index++) {
    const block = footer.getRecordBatch(index);
    if (block === null) throw new Error(`record batch ${index + 1} is missing from the footer`);
    // Only this share's buffers are read, of a large batch one column's at a time (the ACS
    // file is one batch of 860 MB: the share whole was most of the build's peak memory); a
    // compressed batch is read whole.
    let apart = block.bodyLength > columnAtATime && positions.length > 1;
    let batch: BatchColumns | undefined = apart ? undefined : await readBatchColumns(handle, block, fields, positions, reader.dictionaries, reader.schema.metadataVersion, direct);
    for (let k = 0; k < columns.length; k++) {
      if (apart) batch = await readBatchColumns(handle, block, fields, [positions[k]!], reader.dictionaries, reader.schema.metadataVersion, direct);
      if (batch === undefined) {
        batch = wholeBatch((await reader.readRecordBatch(index))!);
        apart = false;
      }
      const column = columns[k]!;
      const plan = batch.planAt(column.position);
      if (plan !== undefined) await storeDirect(handle, targets[k]!, rows, plan, texts);
      else if (!storeColumnar(targets[k]!, rows, batch.vectorAt(column.position), texts)) throw new Error(`column "${column.name}" is not of one type in every record batch`);
    }
    rows += batch?.rows ?? 0;
  }
  return rows;
}
