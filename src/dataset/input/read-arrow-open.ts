import type { FileHandle } from 'node:fs/promises';
import { RecordBatchReader } from 'apache-arrow';
import { registerArrowCodecs } from './arrow-codecs.js';
import { batchFieldBytes, type BatchColumns, batchRows, readBatchColumns, wholeBatch } from './arrow-batch-columns.js';
import { idLikeCountLimit } from '../format.js';
import { cellReader, directKind, storeColumnar, TextColumns } from './arrow-columns.js';
import { manyDistinctRead, storeDirect, storeDirectWeights } from './arrow-direct.js';
import type { NumberKind } from './typed-numbers.js';
import { type ArrowShareTask, handOutArrowColumns, manyDistinct } from './arrow-share.js';
import { adoptShare, type ShareWorkers } from './column-shares.js';
import type { FileIdentity } from './file-identity.js';
import type { RawTable, ReadOptions } from './raw-table.js';
import { checkTrailer } from './input-file.js';
import { ColumnEncoder, inputError, TableEncoder } from './table-encoder.js';

/** readArrow (read-arrow.ts) once the file is open and its kind known, with the workers `started` for a file (startArrowWorkers), if any. */
export async function readArrowOpen(path: string, options: ReadOptions, handle: FileHandle, size: number, identity: FileIdentity, isFile: boolean, started: ShareWorkers | undefined): Promise<RawTable> {
  if (isFile) await checkTrailer(handle, size, path, 'Arrow IPC', 'ARROW1');
  else await checkEndOfStream(handle, size, path);
  registerArrowCodecs();
  const reader = await RecordBatchReader.from(handle);
  await reader.open();
  const fields = reader.schema.fields;
  const batches = reader.isFile() ? reader.numRecordBatches : 0;
  // The file's rows, the sum of its record batches' lengths (a stream's are not known before its end): the id-like
  // bound needs them, and build workers make their columns that long at once (never longer than the file's bytes:
  // a damaged message's row count must not size them). This thread's columns too: those adopted from workers drop
  // theirs unwritten (no memory used), the others are written in place instead of growing by copies.
  const fileRows = isFile && reader.isFile() && batches > 0 ? await rowsOfFile(handle, reader).catch(() => undefined) : undefined;
  const capacity = fileRows === undefined ? undefined : Math.min(fileRows, size);
  const encoder = new TableEncoder(path, 'Arrow schema', fields.map((field) => ({ name: field.name })), options, capacity === undefined ? {} : { expectedRows: capacity });
  const wanted = fields.flatMap((field, i) => (encoder.columns[i] !== undefined || encoder.weightAt[i] !== undefined ? [i] : []));
  const cells = new Map(wanted.map((i) => [i, cellReader(path, fields[i]!)]));
  const stopAbove = fileRows === undefined || options.skipIdLike === undefined ? undefined : idLikeCountLimit(fileRows);
  const readWhole = options.skipIdLike?.except ?? [];
  const texts = new TextColumns(stopAbove, new Set(readWhole));
  // A file's columns (random access) may be read by workers too, dealt by the sizes of the
  // first batch's buffers; this thread then reads only its own columns' bytes, and its
  // columns of numbers and Utf8 text straight into WebAssembly memory (weights of numbers into their doubles).
  const direct = { kinds: new Map<number, NumberKind | 'utf8'>(), fileSize: size };
  for (const i of wanted) {
    const kind = directKind(fields[i]!.type);
    if (kind !== undefined && (encoder.columns[i] instanceof ColumnEncoder || (kind !== 'utf8' && encoder.weightAt[i] !== undefined))) direct.kinds.set(i, kind);
  }
  let handed: Awaited<ReturnType<typeof handOutArrowColumns>>;
  const own = () => (handed === undefined ? wanted : wanted.filter((i) => !handed!.positions.has(i)));
  let source: AsyncIterable<BatchColumns> = streamBatches(reader);
  let rows = 0;
  let batchIndex = 0;
  try {
    if (isFile && reader.isFile() && batches > 0) {
      const version = reader.schema.metadataVersion;
      // Only an estimate: a batch it cannot size is read whole below, which reports what is wrong with it.
      const first = await batchFieldBytes(handle, reader.footer!.getRecordBatch(0)!, fields, reader.dictionaries, version).catch(() => undefined);
      if (first !== undefined) {
        const manyTexts = async (position: number) => {
          const batch = (await readBatchColumns(handle, reader.footer!.getRecordBatch(0)!, fields, [position], reader.dictionaries, version, direct))!;
          const plan = batch.planAt(position);
          return plan === undefined ? manyDistinct(batch.vectorAt(position)) : manyDistinctRead(handle, plan);
        };
        // Workers given where their columns lie in every batch read them without apache-arrow.
        const plan = async (positions: number[]) => (batches <= maxPlannedBatches && positions.every((i) => direct.kinds.has(i)) ? planShare(handle, reader, positions, direct) : undefined);
        handed = await handOutArrowColumns(path, identity, first, batches, fields, encoder, wanted, options.threads, manyTexts, capacity, plan, stopAbove === undefined ? undefined : { stopAbove, readWhole }, started);
      }
      source = fileBatches(handle, reader, own(), direct);
    }
    for await (const batch of source) {
      for (const i of own()) {
        const target = encoder.columns[i] ?? encoder.weightAt[i]!;
        const plan = batch.planAt(i);
        if (plan !== undefined) {
          if (target instanceof ColumnEncoder) await storeDirect(handle, target, rows, plan, texts);
          else await storeDirectWeights(handle, target, rows, plan);
          continue;
        }
        const vector = batch.vectorAt(i);
        if (!storeColumnar(target, rows, vector, texts)) {
          const cell = cells.get(i)!;
          for (let row = 0; row < batch.rows; row++) target.set(rows + row, cell(vector, row));
        }
      }
      rows += batch.rows;
      batchIndex++;
      if (batches > 0) options.onProgress?.(Math.round((size * batchIndex) / batches), size);
    }
    for (const share of (await handed?.results) ?? []) {
      const { position, ids } = share;
      if (ids.length !== rows) throw new Error(`a build worker read ${ids.length} rows of column "${fields[position]!.name}" where this thread read ${rows}: was the file changed while it was read?`);
      adoptShare(encoder.columns[position]!, share);
    }
  } finally {
    await handed?.stop();
  }
  if (fileRows !== undefined && rows !== fileRows) throw new Error(`its record batches hold ${rows} rows where their messages said ${fileRows}: was the file changed while it was read?`);
  options.onProgress?.(size, size);
  return encoder.finish(rows, 'An Arrow file needs at least one row.');
}

/** The rows of every record batch of a file, from their messages. */
async function rowsOfFile(handle: FileHandle, reader: RecordBatchReader): Promise<number> {
  let rows = 0;
  for (let index = 0; index < reader.numRecordBatches; index++) {
    const block = reader.footer!.getRecordBatch(index);
    if (block === null) throw new Error(`record batch ${index + 1} is missing from the footer`);
    rows += await batchRows(handle, block);
  }
  return rows;
}

/** Files of more record batches than this have their workers read them through apache-arrow (a plan per batch and column would be a large message). */
const maxPlannedBatches = 10_000;

/**
 * Where the columns at `positions` (each one of `direct.kinds`) lie in every record batch of
 * the file, in their order; undefined when a batch is compressed (a worker then reads the
 * file through apache-arrow).
 */
export async function planShare(handle: FileHandle, reader: RecordBatchReader, positions: number[], direct: Parameters<typeof readBatchColumns>[6]): Promise<ArrowShareTask['plans']> {
  const plans: NonNullable<ArrowShareTask['plans']> = [];
  for (let index = 0; index < reader.numRecordBatches; index++) {
    const block = reader.footer!.getRecordBatch(index);
    if (block === null) throw new Error(`record batch ${index + 1} is missing from the footer`);
    const batch = await readBatchColumns(handle, block, reader.schema.fields, positions, reader.dictionaries, reader.schema.metadataVersion, direct);
    if (batch === undefined) return undefined;
    plans.push({ rows: batch.rows, columns: positions.map((i) => batch.planAt(i)!) });
  }
  return plans;
}

/** A stream's (or a file's) record batches, whole. */
async function* streamBatches(reader: RecordBatchReader): AsyncGenerator<BatchColumns> {
  for await (const batch of reader) yield wholeBatch(batch);
}

/** A file's record batches, only the columns at `positions` (a compressed batch whole); those of `direct.kinds` planned, not read. */
async function* fileBatches(handle: FileHandle, reader: RecordBatchReader, positions: number[], direct: Parameters<typeof readBatchColumns>[6]): AsyncGenerator<BatchColumns> {
  for (let index = 0; index < reader.numRecordBatches; index++) {
    const block = reader.footer!.getRecordBatch(index);
    if (block === null) throw new Error(`record batch ${index + 1} is missing from the footer`);
    yield (await readBatchColumns(handle, block, reader.schema.fields, positions, reader.dictionaries, reader.schema.metadataVersion, direct)) ?? wholeBatch((await reader.readRecordBatch(index))!);
  }
}

/**
 * An IPC stream ends with an end-of-stream marker (a zero metadata length); a stream cut
 * between two record batches would otherwise read as a shorter, valid one.
 */
async function checkEndOfStream(handle: FileHandle, size: number, path: string): Promise<void> {
  const tail = new Uint8Array(4);
  if (size >= 8) await handle.read(tail, 0, 4, size - 4);
  if (size >= 8 && tail.every((byte) => byte === 0)) return;
  const hint = 'The stream was cut short (an interrupted download or copy?): write or get the Arrow IPC stream again.';
  throw inputError(path, `the Arrow IPC stream does not end with its end-of-stream marker: it is truncated (${size} bytes)`, hint);
}
