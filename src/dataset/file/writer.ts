import { randomBytes } from 'node:crypto';
import { type FileHandle, open, rename, rm } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { Schema } from 'apache-arrow';
import { MetadataVersion } from 'apache-arrow/enum';
import { FileBlock, Footer } from 'apache-arrow/ipc/metadata/file';
import { BufferRegion, FieldNode, Message, RecordBatch } from 'apache-arrow/ipc/metadata/message';
import { throwIfCancelled } from '../../errors.js';
import { mainThreadKernel } from '../../kernel/kernel.js';
import { StreamingChecksum } from '../../kernel/checksum.js';
import { bufferFields } from './buffer-table.js';
import { type BufferRow, datasetChecksum, HASH_CHARS } from './dataset-checksum.js';
import type { BufferSpec, CompiledDataset } from '../build/compile.js';
import { paddedSize } from '../build/compile.js';
import { BUILD_CANCELLED_HINT, CHECKSUM_KEY, FORMAT_KEY, META_KEY } from '../format.js';

/** Record batches are cut so that no batch's value buffer exceeds this (Binary offsets are i32). */
const BATCH_BYTES = 256 * 1024 * 1024;
/** Every region of a batch body starts on a 64-byte boundary, as kernel memory does. */
const REGION_ALIGN = 64;
const MAGIC = new TextEncoder().encode('ARROW1');
/** Writes smaller than this are gathered into blocks of this size (see Output). */
const STAGE_BYTES = 1024 * 1024;

/**
 * What the writer writes: metadata (its `format` goes to `crosstab.format`, all of it as JSON
 * to `crosstab.meta`), the buffers' specs and their bytes. A compiled dataset is one; a
 * weights file (StoredWeightsFile) is another.
 */
export type BufferTable = Pick<CompiledDataset, 'specs' | 'data'> & { meta: { format: string } };

/**
 * Writes a compiled dataset as an Arrow IPC file, streaming: each buffer is hashed and
 * written as soon as it is made, so the writer holds one buffer, not the dataset. The file
 * goes to a temporary name beside `out`, is flushed to disk, then renamed over `out`: a
 * failed or cancelled build never leaves a partial dataset behind. Aborting `signal` stops
 * the writer at its next buffer: it removes the temporary file and rejects with `cancelled`.
 */
export async function writeDataset(dataset: BufferTable, out: string, signal?: AbortSignal): Promise<{ bytes: number; checksum: string }> {
  throwIfCancelled(signal, 'the build', BUILD_CANCELLED_HINT);
  const temp = join(dirname(out), `.${basename(out)}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`);
  const checksums = new StreamingChecksum(mainThreadKernel());
  try {
    const file = await open(temp, 'wx');
    let written: { bytes: number; checksum: string };
    try {
      written = await writeFile(new Output(file), dataset, checksums, signal);
      await file.sync();
    } finally {
      await file.close();
    }
    throwIfCancelled(signal, 'the build', BUILD_CANCELLED_HINT);
    await rename(temp, out);
    return written;
  } catch (error) {
    await rm(temp, { force: true });
    throw error;
  } finally {
    checksums.dispose();
  }
}

async function writeFile(output: Output, dataset: BufferTable, checksums: StreamingChecksum, signal: AbortSignal | undefined) {
  const metaJson = JSON.stringify(dataset.meta);
  await output.write(MAGIC);
  await output.pad(8);
  const data = dataset.data();
  const source: Iterator<Uint8Array> | AsyncIterator<Uint8Array> = Symbol.asyncIterator in data ? data[Symbol.asyncIterator]() : data[Symbol.iterator]();
  try {
    return await writeBatches(output, dataset, source, metaJson, checksums, signal);
  } finally {
    // Stops buffers still being made (build workers) when the write fails.
    await source.return?.();
  }
}

async function writeBatches(
  output: Output,
  dataset: BufferTable,
  source: Iterator<Uint8Array> | AsyncIterator<Uint8Array>,
  metaJson: string,
  checksums: StreamingChecksum,
  signal: AbortSignal | undefined,
) {
  const rows: BufferRow[] = [];
  const blocks: FileBlock[] = [];
  for (const batch of cutBatches(dataset.specs)) {
    const layout = batchLayout(batch);
    const message = Message.encode(
      Message.from(new RecordBatch(batch.length, layout.nodes, layout.regions, null), layout.bodyBytes) as Message,
    );
    const metaBytes = (message.byteLength + 8 + 7) & ~7;
    blocks.push(new FileBlock(metaBytes, layout.bodyBytes, output.position));
    await output.write(new Uint8Array(Int32Array.of(-1, metaBytes - 8).buffer));
    await output.write(message);
    await output.pad(8);
    const bodyStart = output.position;

    await output.write(new Uint8Array(layout.dataOffsets.buffer));
    await output.padTo(bodyStart + layout.valuesAt);
    for (const spec of batch) {
      throwIfCancelled(signal, 'the build', BUILD_CANCELLED_HINT);
      const next = await source.next();
      if (next.done || next.value.byteLength !== spec.bytes) {
        throw new Error(`dataset writer: buffer ${spec.name} has ${next.done ? 'no' : next.value.byteLength} bytes, ${spec.bytes} were planned`);
      }
      const padding = paddedSize(spec.bytes) - spec.bytes;
      const padded = padding === 0 ? next.value : withPadding(next.value, padding);
      rows.push({ name: spec.name, kind: spec.kind, count: spec.count, stored: padded.byteLength, hash: checksums.of(padded) });
      await output.write(padded);
    }
    const tail = batchTail(rows.slice(rows.length - batch.length));
    for (const [region, bytes] of tail) {
      await output.padTo(bodyStart + layout.regions[region]!.offset);
      await output.write(bytes);
    }
    await output.padTo(bodyStart + layout.bodyBytes);
  }
  if (!(await source.next()).done) throw new Error('dataset writer: more buffers were made than planned');

  const checksum = datasetChecksum(dataset.meta.format, metaJson, rows);
  const schema = new Schema(bufferFields, new Map([[FORMAT_KEY, dataset.meta.format], [META_KEY, metaJson], [CHECKSUM_KEY, checksum]]));
  const footer = Footer.encode(new Footer(schema, MetadataVersion.V5, blocks, []));
  await output.write(new Uint8Array(Int32Array.of(-1, 0).buffer));
  await output.write(footer);
  await output.write(new Uint8Array(Int32Array.of(footer.byteLength).buffer));
  await output.write(MAGIC);
  await output.flush();
  return { bytes: output.position, checksum };
}

/** Buffer regions of one batch, in the order of bufferFields (validity, offsets, values...). */
function batchLayout(batch: BufferSpec[]) {
  const n = batch.length;
  const dataOffsets = new Int32Array(n + 1);
  batch.forEach((spec, i) => (dataOffsets[i + 1] = dataOffsets[i]! + paddedSize(spec.bytes)));
  const names = batch.map((spec) => Buffer.byteLength(spec.name));
  const sizes = [
    0, (n + 1) * 4, dataOffsets[n]!, // data: validity, offsets, values
    0, (n + 1) * 4, names.reduce((a, b) => a + b, 0), // name
    0, n, // kind
    0, n * 4, // count
    0, (n + 1) * 4, n * HASH_CHARS, // hash
  ];
  let at = 0;
  const regions = sizes.map((size) => {
    const region = new BufferRegion(at, size);
    at += Math.ceil(size / REGION_ALIGN) * REGION_ALIGN;
    return region;
  });
  const nodes = bufferFields.map(() => new FieldNode(n, 0));
  return { nodes, regions, bodyBytes: at, dataOffsets, valuesAt: regions[2]!.offset };
}

/** The regions written after the data values, now that every hash is known: [region, bytes]. */
function batchTail(rows: BufferRow[]): Array<[number, Uint8Array]> {
  // All the texts encoded at once when they are ASCII (a batch may name 100,000 buffers).
  const utf8 = (texts: string[]): [Uint8Array, Uint8Array] => {
    const offsets = new Int32Array(texts.length + 1);
    const joined = texts.join('');
    const bytes = Buffer.from(joined, 'utf8');
    if (bytes.byteLength === joined.length) {
      // As many bytes as UTF-16 units: all ASCII (any other character takes more bytes), a byte per unit.
      for (let i = 0; i < texts.length; i++) offsets[i + 1] = offsets[i]! + texts[i]!.length;
      return [new Uint8Array(offsets.buffer), bytes];
    }
    const encoded = texts.map((text) => Buffer.from(text));
    encoded.forEach((text, i) => (offsets[i + 1] = offsets[i]! + text.byteLength));
    return [new Uint8Array(offsets.buffer), Buffer.concat(encoded)];
  };
  const [nameOffsets, nameBytes] = utf8(rows.map((row) => row.name));
  const [hashOffsets, hashBytes] = utf8(rows.map((row) => row.hash));
  return [
    [4, nameOffsets],
    [5, nameBytes],
    [7, Uint8Array.from(rows, (row) => row.kind)],
    [9, new Uint8Array(Uint32Array.from(rows, (row) => row.count).buffer)],
    [11, hashOffsets],
    [12, hashBytes],
  ];
}

function cutBatches(specs: BufferSpec[]): BufferSpec[][] {
  const batches: BufferSpec[][] = [];
  let batch: BufferSpec[] = [];
  let size = 0;
  for (const spec of specs) {
    const bytes = paddedSize(spec.bytes);
    if (batch.length > 0 && size + bytes > BATCH_BYTES) {
      batches.push(batch);
      batch = [];
      size = 0;
    }
    batch.push(spec);
    size += bytes;
  }
  if (batch.length > 0 || batches.length === 0) batches.push(batch);
  return batches;
}

function withPadding(bytes: Uint8Array, padding: number): Uint8Array {
  const padded = new Uint8Array(bytes.byteLength + padding);
  padded.set(bytes);
  return padded;
}

/**
 * Sequential writes to a file, tracking the position. Writes smaller than STAGE_BYTES are
 * gathered and written a STAGE_BYTES block at a time: a dataset of many small buffers (a
 * value code per value of a replicate-weight column: 128,000 of them) made a write call per
 * buffer and per padding, each a trip through the thread pool. Call flush() at the end.
 */
class Output {
  /** Bytes written so far, those still staged included. */
  position = 0;
  private readonly stage = Buffer.allocUnsafe(STAGE_BYTES);
  private staged = 0;

  constructor(private readonly file: FileHandle) {}

  async write(bytes: Uint8Array): Promise<void> {
    if (this.staged + bytes.byteLength > STAGE_BYTES) await this.flush();
    if (bytes.byteLength >= STAGE_BYTES) {
      await this.writeOut(bytes, this.position);
    } else {
      this.stage.set(bytes, this.staged);
      this.staged += bytes.byteLength;
    }
    this.position += bytes.byteLength;
  }

  /** Zero bytes up to the next multiple of `align`. */
  pad(align: number): Promise<void> {
    return this.padTo(Math.ceil(this.position / align) * align);
  }

  async padTo(position: number): Promise<void> {
    while (this.position < position) {
      if (this.staged === STAGE_BYTES) await this.flush();
      const zeros = Math.min(position - this.position, STAGE_BYTES - this.staged);
      this.stage.fill(0, this.staged, this.staged + zeros);
      this.staged += zeros;
      this.position += zeros;
    }
  }

  /** Writes the staged bytes. */
  async flush(): Promise<void> {
    if (this.staged === 0) return;
    const staged = this.staged;
    this.staged = 0;
    await this.writeOut(this.stage.subarray(0, staged), this.position - staged);
  }

  private async writeOut(bytes: Uint8Array, at: number): Promise<void> {
    let done = 0;
    while (done < bytes.byteLength) {
      const { bytesWritten } = await this.file.write(bytes, done, bytes.byteLength - done, at + done);
      done += bytesWritten;
    }
  }
}
