import { createHash, randomBytes } from 'node:crypto';
import { open, rename, rm } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { Binary, Field, makeData, RecordBatch, Schema, Struct, Table, tableToIPC, Uint32, Uint8, Utf8, vectorFromArray } from 'apache-arrow';
import type { CompiledBuffer, CompiledDataset } from './compile.js';
import { paddedSize } from './compile.js';
import { CHECKSUM_KEY, FORMAT_KEY, FORMAT_VERSION, META_KEY } from './format.js';

/** Record batches are cut so that no batch's value buffer exceeds this (Binary offsets are i32). */
const BATCH_BYTES = 256 * 1024 * 1024;

export const bufferFields = [
  new Field('name', new Utf8(), false),
  new Field('kind', new Uint8(), false),
  new Field('count', new Uint32(), false),
  new Field('data', new Binary(), false),
];

/** Temp files of builds under way, removed if the process is interrupted. */
export const pendingOutputs = new Set<string>();

/**
 * Writes a compiled dataset as an Arrow IPC file: to a temporary file beside `out`,
 * flushed to disk, then renamed over `out`, so a failed or interrupted build never
 * leaves a partial dataset behind.
 */
export async function writeDataset(dataset: CompiledDataset, out: string): Promise<{ bytes: number; checksum: string }> {
  const batches = cutBatches(dataset.buffers);
  const metaJson = JSON.stringify(dataset.meta);
  const hash = createHash('sha256');
  for (const batch of batches) hash.update(batch.bytes);
  hash.update(metaJson);
  const checksum = hash.digest('hex');

  const schema = new Schema(
    bufferFields,
    new Map([
      [FORMAT_KEY, FORMAT_VERSION],
      [META_KEY, metaJson],
      [CHECKSUM_KEY, checksum],
    ]),
  );
  const table = new Table(schema, batches.map((batch) => toRecordBatch(schema, batch)));
  const bytes = tableToIPC(table, 'file');

  const temp = join(dirname(out), `.${basename(out)}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`);
  pendingOutputs.add(temp);
  try {
    const file = await open(temp, 'wx');
    try {
      await file.writeFile(bytes);
      await file.sync();
    } finally {
      await file.close();
    }
    await rename(temp, out);
  } catch (error) {
    await rm(temp, { force: true });
    throw error;
  } finally {
    pendingOutputs.delete(temp);
  }
  return { bytes: bytes.byteLength, checksum };
}

interface BatchParts {
  buffers: CompiledBuffer[];
  offsets: Int32Array;
  bytes: Uint8Array;
}

function cutBatches(buffers: CompiledBuffer[]): BatchParts[] {
  const batches: BatchParts[] = [];
  let start = 0;
  while (start < buffers.length) {
    let end = start;
    let size = 0;
    while (end < buffers.length && (end === start || size + paddedSize(buffers[end]!.data.byteLength) <= BATCH_BYTES)) {
      size += paddedSize(buffers[end]!.data.byteLength);
      end++;
    }
    const slice = buffers.slice(start, end);
    const offsets = new Int32Array(slice.length + 1);
    const bytes = new Uint8Array(size);
    let at = 0;
    slice.forEach((buffer, i) => {
      bytes.set(buffer.data, at);
      at += paddedSize(buffer.data.byteLength);
      offsets[i + 1] = at;
    });
    batches.push({ buffers: slice, offsets, bytes });
    start = end;
  }
  return batches;
}

function toRecordBatch(schema: Schema, batch: BatchParts): RecordBatch {
  const length = batch.buffers.length;
  const children = [
    vectorFromArray(batch.buffers.map((buffer) => buffer.name), new Utf8()).data[0]!,
    makeData({ type: new Uint8(), length, nullCount: 0, data: Uint8Array.from(batch.buffers, (buffer) => buffer.kind) }),
    makeData({ type: new Uint32(), length, nullCount: 0, data: Uint32Array.from(batch.buffers, (buffer) => buffer.count) }),
    makeData({ type: new Binary(), length, nullCount: 0, valueOffsets: batch.offsets, data: batch.bytes }),
  ];
  return new RecordBatch(schema, makeData({ type: new Struct(schema.fields), length, nullCount: 0, children }));
}
