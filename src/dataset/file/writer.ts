import { constants } from 'node:fs';
import { type FileHandle, open } from 'node:fs/promises';
import { throwIfCancelled } from '../../errors.js';
import { mainThreadKernel } from '../../kernel/kernel.js';
import { StreamingChecksum } from '../../kernel/checksum.js';
import { bufferFieldTypes, type BufferRegionEntry, encodeFooter, encodeRecordBatchMessage, type FileBlockEntry } from './arrow-encode.js';
import { type BufferRow, datasetChecksum, HASH_CHARS } from './dataset-checksum.js';
import type { BufferSpec, CompiledDataset } from '../build/compile.js';
import { paddedSize } from '../build/compile.js';
import { writeAtomically } from './atomic-write.js';
import { BUFFER_ALIGN, BUILD_CANCELLED_HINT, CHECKSUM_KEY, FORMAT_KEY, META_KEY, SEGMENTS_KEY } from '../format.js';

/** Record batches are cut so that no batch's value buffer exceeds this (Binary offsets are i32). */
const BATCH_BYTES = 256 * 1024 * 1024;
/** Every region of a batch body starts on a 64-byte boundary, as kernel memory does. */
const REGION_ALIGN = 64;
const MAGIC = new TextEncoder().encode('ARROW1');

/**
 * What the writer writes: metadata (its `format` goes to `crosstab.format`, all of it as JSON
 * to `crosstab.meta`), the buffers' specs and their bytes. A compiled dataset is one; a
 * weights file (StoredWeightsFile) is another.
 */
export type BufferTable = Pick<CompiledDataset, 'specs'> & {
  meta: { format: string };
  data(): Iterable<Uint8Array | HashedBuffer | PlacedBuffer> | AsyncIterable<Uint8Array | HashedBuffer | PlacedBuffer>;
};

/**
 * A buffer its maker already hashed: `stored` is its bytes with the zero padding of the file
 * (paddedSize of the spec's bytes) and `hash` their XXH64, so the writer writes it as it is.
 * The maker must not change the bytes until it is asked for the next buffer.
 */
export interface HashedBuffer {
  stored: Uint8Array;
  hash: string;
}

/**
 * A buffer its maker makes where the writer says, in the writer's staging memory (no copy):
 * `makeInto` gets a view of kernel memory of exactly `stored` bytes (the spec's bytes with
 * the file's zero padding), holding whatever was staged there before, writes every one of
 * them and returns their XXH64. Only a writer with `direct: true` takes one.
 */
export interface PlacedBuffer {
  stored: number;
  makeInto(target: Uint8Array): string;
}

export interface WriteOptions {
  /**
   * Write the file's blocks past the page cache (O_DIRECT) where the platform and file
   * system allow it: no copy into the page cache, and the final fsync has little left to
   * write, but each write waits for the device: the maker should run at most a bounded
   * number of buffers ahead of the writer (an append makes each when the writer asks for
   * it; a build's workers run a few variables ahead). Default false: through the page cache.
   */
  direct?: boolean;
}

/**
 * Writes a compiled dataset as an Arrow IPC file, streaming: each buffer is hashed and
 * written as soon as it is made, so the writer holds one buffer, not the dataset. The file
 * goes to a temporary name beside `out`, is flushed to disk, then renamed over `out`: a
 * failed or cancelled build never leaves a partial dataset behind. Aborting `signal` stops
 * the writer at its next buffer: it removes the temporary file and rejects with `cancelled`.
 */
export async function writeDataset(dataset: BufferTable, out: string, signal?: AbortSignal, options: WriteOptions = {}): Promise<{ bytes: number; checksum: string }> {
  throwIfCancelled(signal, 'the build', BUILD_CANCELLED_HINT);
  const checksums = new StreamingChecksum(mainThreadKernel());
  try {
    return await writeAtomically(
      out,
      async (file, temporary) => {
        let output: Output | undefined;
        try {
          const direct = options.direct === true ? await openDirect(temporary) : undefined;
          try {
            output = new Output(file, direct, options.direct === true ? placedCapacity(dataset.specs) : undefined);
          } catch (error) {
            await direct?.close();
            throw error;
          }
          const written = await writeFile(output, dataset, checksums, signal);
          await output.finish();
          return written;
        } finally {
          await output?.release();
        }
      },
      { beforeRename: () => throwIfCancelled(signal, 'the build', BUILD_CANCELLED_HINT) },
    );
  } finally {
    checksums.dispose();
  }
}

async function writeFile(output: Output, dataset: BufferTable, checksums: StreamingChecksum, signal: AbortSignal | undefined) {
  const metaJson = JSON.stringify(dataset.meta);
  await output.write(MAGIC);
  await output.pad(8);
  const data = dataset.data();
  const source: Iterator<Uint8Array | HashedBuffer | PlacedBuffer> | AsyncIterator<Uint8Array | HashedBuffer | PlacedBuffer> = Symbol.asyncIterator in data ? data[Symbol.asyncIterator]() : data[Symbol.iterator]();
  try {
    return await writeBatches(output, dataset, source, metaJson, checksums, signal);
  } finally {
    // Stops buffers still being made (build workers) when the write fails.
    await source.return?.();
  }
}

/**
 * A file written after the record batches of another (a dataset in segments): their rows and
 * blocks come first in the new footer, whose format, segment table and checksum are these.
 */
export interface Continuation {
  rows: BufferRow[];
  blocks: FileBlockEntry[];
  format: string;
  segmentsJson: string;
}

/**
 * Writes the record batches of `dataset` and the footer at `start` of `file`, after the bytes
 * it holds (the record batches of `continuation`), and waits for the writes; the caller syncs.
 */
export async function writeContinued(file: FileHandle, start: number, dataset: BufferTable, continuation: Continuation, signal?: AbortSignal): Promise<{ bytes: number; checksum: string }> {
  const checksums = new StreamingChecksum(mainThreadKernel());
  // The wave's parts all live until the write ends (segment-writer.ts makes them before it): written from where they are.
  const output = new Output(file, undefined, undefined, start, true);
  const data = dataset.data();
  const source: Iterator<Uint8Array | HashedBuffer | PlacedBuffer> | AsyncIterator<Uint8Array | HashedBuffer | PlacedBuffer> = Symbol.asyncIterator in data ? data[Symbol.asyncIterator]() : data[Symbol.iterator]();
  try {
    const written = await writeBatches(output, dataset, source, JSON.stringify(dataset.meta), checksums, signal, continuation);
    await output.finish();
    return written;
  } finally {
    await source.return?.();
    await output.release();
    checksums.dispose();
  }
}

async function writeBatches(
  output: Output,
  dataset: BufferTable,
  source: Iterator<Uint8Array | HashedBuffer | PlacedBuffer> | AsyncIterator<Uint8Array | HashedBuffer | PlacedBuffer>,
  metaJson: string,
  checksums: StreamingChecksum,
  signal: AbortSignal | undefined,
  continuation?: Continuation,
) {
  const rows: BufferRow[] = [...(continuation?.rows ?? [])];
  const blocks: FileBlockEntry[] = [...(continuation?.blocks ?? [])];
  for (const batch of cutBatches(dataset.specs)) {
    const layout = batchLayout(batch);
    const message = encodeRecordBatchMessage(batch.length, layout.nodes, layout.regions, layout.bodyBytes);
    const metaBytes = (message.byteLength + 8 + 7) & ~7;
    blocks.push({ metaDataLength: metaBytes, bodyLength: layout.bodyBytes, offset: output.position });
    await output.write(new Uint8Array(Int32Array.of(-1, metaBytes - 8).buffer));
    await output.write(message);
    await output.pad(8);
    const bodyStart = output.position;

    await output.write(new Uint8Array(layout.dataOffsets.buffer));
    await output.padTo(bodyStart + layout.valuesAt);
    for (const spec of batch) {
      throwIfCancelled(signal, 'the build', BUILD_CANCELLED_HINT);
      rows.push(await writeBuffer(output, spec, await source.next(), checksums));
    }
    const tail = batchTail(rows.slice(rows.length - batch.length));
    for (const [region, bytes] of tail) {
      await output.padTo(bodyStart + layout.regions[region]!.offset);
      await output.write(bytes);
    }
    await output.padTo(bodyStart + layout.bodyBytes);
  }
  if (!(await source.next()).done) throw new Error('dataset writer: more buffers were made than planned');

  const format = continuation?.format ?? dataset.meta.format;
  const checksum = datasetChecksum(format, continuation === undefined ? metaJson : `${metaJson}\0${continuation.segmentsJson}`, rows);
  const segments: Array<[string, string]> = continuation === undefined ? [] : [[SEGMENTS_KEY, continuation.segmentsJson]];
  const footer = encodeFooter(bufferFieldTypes, [[FORMAT_KEY, format], [META_KEY, metaJson], ...segments, [CHECKSUM_KEY, checksum]], blocks);
  await output.write(new Uint8Array(Int32Array.of(-1, 0).buffer));
  await output.write(footer);
  await output.write(new Uint8Array(Int32Array.of(footer.byteLength).buffer));
  await output.write(MAGIC);
  return { bytes: output.position, checksum };
}

/**
 * Writes one buffer of the table as `spec` planned it, padded, and returns its row. A
 * function of its own: writeBatches runs once per batch and stays cheap for V8 to compile.
 */
async function writeBuffer(output: Output, spec: BufferSpec, next: IteratorResult<Uint8Array | HashedBuffer | PlacedBuffer>, checksums: StreamingChecksum): Promise<BufferRow> {
  if (!next.done && !(next.value instanceof Uint8Array)) {
    if ('makeInto' in next.value) return writePlaced(output, spec, next.value);
    // Made and hashed by its maker, padding included.
    const { stored, hash } = next.value;
    if (stored.byteLength !== paddedSize(spec.bytes)) throw new Error(`dataset writer: buffer ${spec.name} has ${stored.byteLength} stored bytes, ${paddedSize(spec.bytes)} were planned`);
    await output.write(stored);
    return { name: spec.name, kind: spec.kind, count: spec.count, stored: stored.byteLength, hash };
  }
  const bytes = next.done ? undefined : (next.value as Uint8Array);
  if (bytes === undefined || bytes.byteLength !== spec.bytes) {
    throw new Error(`dataset writer: buffer ${spec.name} has ${bytes === undefined ? 'no' : bytes.byteLength} bytes, ${spec.bytes} were planned`);
  }
  // The padding hashed and written from zeros kept for it: no padded copy of each buffer (a wave's segment is thousands of small ones).
  const padding = paddedSize(spec.bytes) - spec.bytes;
  const hash = checksums.of(bytes, padding);
  await output.write(bytes);
  if (padding > 0) await output.write(PADDING.subarray(0, padding));
  return { name: spec.name, kind: spec.kind, count: spec.count, stored: spec.bytes + padding, hash };
}

/** Writes a buffer its maker makes in the staging memory (PlacedBuffer), and returns its row. */
async function writePlaced(output: Output, spec: BufferSpec, placed: PlacedBuffer): Promise<BufferRow> {
  const stored = paddedSize(spec.bytes);
  if (placed.stored !== stored) throw new Error(`dataset writer: buffer ${spec.name} has ${placed.stored} stored bytes, ${stored} were planned`);
  const hash = placed.makeInto(await output.reserve(stored));
  await output.commit(stored);
  return { name: spec.name, kind: spec.kind, count: spec.count, stored, hash };
}

/** Buffer regions of one batch, in the order of the buffer table's fields (validity, offsets, values...). */
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
  const regions = sizes.map((size): BufferRegionEntry => {
    const region = { offset: at, length: size };
    at += Math.ceil(size / REGION_ALIGN) * REGION_ALIGN;
    return region;
  });
  const nodes = bufferFieldTypes.map(() => ({ length: n, nullCount: 0 }));
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

/** Zero bytes, never written to: a buffer's padding. */
const PADDING = new Uint8Array(BUFFER_ALIGN);

/** Pieces gathered (Output's `gather`) per writev(): its IOV_MAX on Linux and macOS. */
const GATHERED_PIECES = 1024;

/** Bytes gathered before a write to the file: small pieces (padding, table columns, small buffers) go in one write. */
const STAGING_BYTES = 8 << 20;
/**
 * Alignment of the writes that bypass the page cache (O_DIRECT): their memory, file offset
 * and length are multiples of it (a file system's logical block is 512 or 4096 bytes).
 */
const DIRECT_ALIGN = 4096;

/**
 * The second descriptor of `path` (open for writing) that writes past the page cache
 * (O_DIRECT), or undefined where the platform or file system has none (tmpfs on older
 * kernels, macOS, Windows): the writes then go through `file` as before.
 */
async function openDirect(path: string): Promise<FileHandle | undefined> {
  const flag = constants.O_DIRECT;
  if (flag === undefined || flag === 0) return undefined;
  return open(path, constants.O_WRONLY | flag).catch(() => undefined);
}

/**
 * Bytes of each staging buffer when buffers may be made in it (PlacedBuffer): the largest
 * buffer fits after a partial block carried over from the buffer before.
 */
function placedCapacity(specs: BufferSpec[]): number {
  let largest = 0;
  for (const spec of specs) largest = Math.max(largest, paddedSize(spec.bytes));
  return Math.max(STAGING_BYTES, Math.ceil((largest + DIRECT_ALIGN) / DIRECT_ALIGN) * DIRECT_ALIGN);
}

/** Whether a write failed because the file system refused its alignment for O_DIRECT. */
function refusedDirect(error: unknown): boolean {
  return (error as NodeJS.ErrnoException).code === 'EINVAL';
}

/**
 * Sequential writes to a file, tracking the position. Pieces smaller than the staging
 * buffer are copied into it (a dataset is thousands of small pieces: one write each cost a
 * round trip to the thread pool). A full staging buffer is written while the next one
 * fills, so the copy into the file overlaps making the next buffers; a larger piece is
 * written as it is, after what was staged. finish() writes the rest and waits for it.
 *
 * With a `direct` descriptor (O_DIRECT) every byte goes through the staging buffers, which
 * are 4096-aligned in kernel memory (WebAssembly memory starts on a page): full buffers are
 * written past the page cache, so the file is not copied into it and the final fsync has
 * little left to write (on a loaded 2-core machine, 353 MB written so took about 60 ms of
 * CPU against 600-1,300 ms through the page cache). The last partial block goes through
 * `file`. Should the file system refuse an O_DIRECT write, the rest goes through `file`.
 */
class Output {
  position = 0;
  private staging: Uint8Array;
  /** The other staging buffer: the one being written, if a write is pending. */
  private spare: Uint8Array;
  private staged = 0;
  /** File position of the staging buffer's first byte. */
  private stagedAt = 0;
  private pending: Promise<void> = Promise.resolve();
  /** Kernel memory holding the staging buffers (direct writes), given back by release(). */
  private region: { ptr: number; bytes: number } | undefined;
  /** Every byte goes through the staging buffers in kernel memory (direct writes, or buffers made in place). */
  private readonly inKernel: boolean;
  /** Bytes of each staging buffer: STAGING_BYTES, or more where buffers are made in place (reserve()). */
  private readonly capacity: number;
  /** The pieces written so far and not yet in the file (`gather`), and their bytes. */
  private gathered: Uint8Array[] = [];
  private gatheredBytes = 0;

  /**
   * `placed`: the bytes of each staging buffer when buffers are made in them (reserve()); they
   * are then in kernel memory, direct or not. `gather`: every piece given to write() stays as
   * it is until finish(), so none is copied: they go to the file in writev() calls of many
   * pieces (a wave's segment is thousands of small buffers, which a copy into fresh staging
   * memory would fault in page by page).
   */
  constructor(
    private readonly file: FileHandle,
    private direct?: FileHandle,
    placed?: number,
    start = 0,
    private readonly gather = false,
  ) {
    this.position = this.stagedAt = start;
    this.inKernel = direct !== undefined || placed !== undefined;
    this.capacity = placed ?? STAGING_BYTES;
    if (gather && this.inKernel) throw new Error('dataset writer: gathered pieces are written from where they are, not staged in kernel memory');
    if (gather) {
      this.staging = this.spare = new Uint8Array(0);
    } else if (!this.inKernel) {
      this.staging = new Uint8Array(STAGING_BYTES);
      this.spare = new Uint8Array(STAGING_BYTES);
    } else {
      const memory = mainThreadKernel().memory;
      const bytes = 2 * this.capacity + DIRECT_ALIGN;
      const ptr = memory.alloc(bytes, false);
      this.region = { ptr, bytes };
      const aligned = Math.ceil(ptr / DIRECT_ALIGN) * DIRECT_ALIGN;
      this.staging = memory.bytes(aligned, this.capacity);
      this.spare = memory.bytes(aligned + this.capacity, this.capacity);
    }
  }

  /**
   * A view of the next `length` bytes of the file in the staging buffer (kernel memory), for
   * a buffer made in place; commit() takes them. What is staged before them is written first
   * when they do not fit after it.
   */
  async reserve(length: number): Promise<Uint8Array> {
    if (!this.inKernel) throw new Error('dataset writer: a buffer made in place needs the staging buffers in kernel memory (direct: true)');
    if (this.staged + length > this.capacity) await this.flushBlocks();
    if (this.staged + length > this.capacity) throw new Error(`dataset writer: a buffer of ${length} bytes does not fit a staging buffer of ${this.capacity}`);
    return this.staging.subarray(this.staged, this.staged + length);
  }

  /** Takes the `length` bytes reserve() gave, made; writes the staging buffer once it holds STAGING_BYTES or more. */
  async commit(length: number): Promise<void> {
    this.staged += length;
    this.position += length;
    if (this.staged >= STAGING_BYTES) await this.flushBlocks();
  }

  /**
   * Starts writing the whole blocks of what is staged (after the write before it); the rest,
   * less than a block, moves to the start of the other staging buffer, which stages next, so
   * every write but the last starts on a block boundary of the file.
   */
  private async flushBlocks(): Promise<void> {
    await this.pending;
    const whole = this.staged - (this.staged % DIRECT_ALIGN);
    if (whole === 0) return;
    this.pending = this.writeAt(this.staging.subarray(0, whole), this.stagedAt);
    this.pending.catch(() => undefined);
    this.spare.set(this.staging.subarray(whole, this.staged));
    [this.staging, this.spare] = [this.spare, this.staging];
    this.stagedAt += whole;
    this.staged -= whole;
  }

  async write(bytes: Uint8Array): Promise<void> {
    if (this.gather) {
      this.gathered.push(bytes);
      this.gatheredBytes += bytes.byteLength;
      this.position += bytes.byteLength;
      if (this.gathered.length >= GATHERED_PIECES || this.gatheredBytes >= STAGING_BYTES) await this.writeGathered();
      return;
    }
    if (this.inKernel) return this.writeStaged(bytes);
    if (this.staged + bytes.byteLength > STAGING_BYTES) await this.flush();
    if (bytes.byteLength >= STAGING_BYTES) {
      await this.pending;
      await this.writeAt(bytes, this.position);
      this.stagedAt = this.position + bytes.byteLength;
    } else {
      this.staging.set(bytes, this.staged);
      this.staged += bytes.byteLength;
    }
    this.position += bytes.byteLength;
  }

  /** Every byte through the staging buffers, each written when full (direct writes). */
  private async writeStaged(bytes: Uint8Array): Promise<void> {
    let at = 0;
    while (at < bytes.byteLength) {
      const length = Math.min(STAGING_BYTES - this.staged, bytes.byteLength - at);
      this.staging.set(at === 0 && length === bytes.byteLength ? bytes : bytes.subarray(at, at + length), this.staged);
      this.staged += length;
      at += length;
      if (this.staged === STAGING_BYTES) await this.flush();
    }
    this.position += bytes.byteLength;
  }

  /** Starts writing what is staged (after the write before it) and stages into the other buffer. */
  private async flush(): Promise<void> {
    await this.pending;
    if (this.staged > 0) {
      this.pending = this.writeAt(this.staging.subarray(0, this.staged), this.stagedAt);
      // Its failure is thrown where it is awaited (the next flush, or finish), not left unhandled.
      this.pending.catch(() => undefined);
      [this.staging, this.spare] = [this.spare, this.staging];
    }
    this.stagedAt += this.staged;
    this.staged = 0;
  }

  async finish(): Promise<void> {
    if (this.gather) return this.writeGathered();
    await this.flush();
    await this.pending;
  }

  /** Writes the pieces gathered, in writev() calls (the rest of one after a short write). */
  private async writeGathered(): Promise<void> {
    let pieces = this.gathered;
    let left = this.gatheredBytes;
    this.gathered = [];
    this.gatheredBytes = 0;
    while (left > 0) {
      const { bytesWritten } = await this.file.writev(pieces, this.stagedAt);
      if (bytesWritten === 0) throw new Error(`dataset writer: writev wrote nothing at ${this.stagedAt}`);
      this.stagedAt += bytesWritten;
      left -= bytesWritten;
      let skip = bytesWritten;
      let first = 0;
      while (first < pieces.length && skip >= pieces[first]!.byteLength) skip -= pieces[first++]!.byteLength;
      pieces = pieces.slice(first);
      if (skip > 0) pieces[0] = pieces[0]!.subarray(skip);
    }
  }

  /** After the last write (or a failure): closes the direct descriptor and gives the staging buffers' memory back. */
  async release(): Promise<void> {
    await this.pending.catch(() => undefined);
    await this.closeDirect();
    if (this.region !== undefined) mainThreadKernel().memory.release(this.region.ptr, this.region.bytes);
    this.region = undefined;
  }

  /** Writes through the page cache from now on. */
  private async closeDirect(): Promise<void> {
    const direct = this.direct;
    this.direct = undefined;
    await direct?.close();
  }

  private async writeAt(bytes: Uint8Array, position: number): Promise<void> {
    let done = 0;
    // Whole blocks past the page cache (the staging buffers are aligned, and so is every staged position but the last).
    const blocks = Math.floor(bytes.byteLength / DIRECT_ALIGN) * DIRECT_ALIGN;
    while (this.direct !== undefined && done < blocks && position % DIRECT_ALIGN === 0) {
      try {
        const { bytesWritten } = await this.direct.write(bytes, done, blocks - done, position + done);
        // A short direct write stops on a block boundary, or the rest goes through the page cache.
        done += bytesWritten;
        if (bytesWritten === 0 || done % DIRECT_ALIGN !== 0) break;
      } catch (error) {
        if (!refusedDirect(error)) throw error;
        await this.closeDirect();
      }
    }
    while (done < bytes.byteLength) {
      const { bytesWritten } = await this.file.write(bytes, done, bytes.byteLength - done, position + done);
      done += bytesWritten;
    }
  }

  /** Zero bytes up to the next multiple of `align`. */
  pad(align: number): Promise<void> {
    return this.padTo(Math.ceil(this.position / align) * align);
  }

  async padTo(position: number): Promise<void> {
    if (position > this.position) await this.write(new Uint8Array(position - this.position));
  }
}
