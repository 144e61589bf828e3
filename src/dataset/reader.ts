import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { DataType, type Int, type Table, tableFromIPC } from 'apache-arrow';
import { CrosstabError, ErrorCode } from '../errors.js';
import { bitsetWords } from '../kernel/exports.js';
import type { KernelMemory } from '../kernel/memory.js';
import { paddedSize } from './compile.js';
import { BufferKind, CHECKSUM_KEY, FORMAT_KEY, FORMAT_VERSION, META_KEY, type StoredMeta } from './format.js';

/** A buffer of the dataset, now in kernel memory. */
export interface LoadedBuffer {
  ptr: number;
  kind: BufferKind;
  count: number;
}

export interface LoadedDataset {
  path: string;
  meta: StoredMeta;
  checksum: string;
  /** u64 words of every bitset of this dataset. */
  words: number;
  buffers: LoadedBuffer[];
  /** Kernel memory held by this dataset, released on close. */
  regions: Array<{ ptr: number; bytes: number }>;
}

export interface LoadOptions {
  /** Recompute the sha256 checksum (default true). */
  verify?: boolean;
}

const MAGIC = 'ARROW1';

/**
 * Reads a dataset file, validates it, and copies its buffers into kernel memory: one
 * bulk copy per record batch, no per-value conversion.
 */
export async function loadDataset(path: string, memory: KernelMemory, options: LoadOptions = {}): Promise<LoadedDataset> {
  let file: Buffer;
  try {
    file = await readFile(path);
  } catch (error) {
    throw new CrosstabError(ErrorCode.fileNotFound, `${path}: cannot read the dataset (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`, {
      file: path,
      hint: 'Check the path, or build the dataset with `crosstab build`.',
    });
  }
  const table = parseArrow(path, file);
  const metadata = table.schema.metadata;
  const format = metadata.get(FORMAT_KEY);
  if (format === undefined) throw corrupt(path, 'is an Arrow file but not a crosstab-engine dataset (no crosstab.format metadata)');
  if (format !== FORMAT_VERSION) {
    throw new CrosstabError(ErrorCode.unsupportedVersion, `${path}: dataset format "${format}" is not supported; this version reads "${FORMAT_VERSION}"`, {
      file: path,
      hint: 'Rebuild the dataset from its source with this version of `crosstab build`.',
    });
  }
  const metaJson = metadata.get(META_KEY) ?? '';
  const checksum = metadata.get(CHECKSUM_KEY) ?? '';
  checkColumns(path, table);
  const batchBytes = table.batches.map((batch) => {
    const data = batch.getChild('data')!.data[0]!;
    return data.values.subarray(0, data.valueOffsets[batch.numRows]!) as Uint8Array;
  });
  if (options.verify !== false) {
    const hash = createHash('sha256');
    for (const bytes of batchBytes) hash.update(bytes);
    hash.update(metaJson);
    if (hash.digest('hex') !== checksum) throw corrupt(path, 'fails its checksum (the file was modified or damaged)');
  }
  let meta: StoredMeta;
  try {
    meta = JSON.parse(metaJson) as StoredMeta;
  } catch {
    throw corrupt(path, 'has unreadable metadata');
  }
  const words = bitsetWords(meta.respondents);

  const buffers: LoadedBuffer[] = [];
  const regions: LoadedDataset['regions'] = [];
  try {
    table.batches.forEach((batch, b) => {
      const bytes = batchBytes[b]!;
      const ptr = memory.alloc(bytes.byteLength);
      regions.push({ ptr, bytes: bytes.byteLength });
      memory.bytes(ptr, bytes.byteLength).set(bytes);
      const data = batch.getChild('data')!.data[0]!;
      const kinds = batch.getChild('kind')!.toArray() as Uint8Array;
      const counts = batch.getChild('count')!.toArray() as Uint32Array;
      for (let row = 0; row < batch.numRows; row++) {
        const kind = kinds[row] as BufferKind;
        const count = counts[row]!;
        const stored = data.valueOffsets[row + 1]! - data.valueOffsets[row]!;
        const expected = expectedBytes(kind, count, words);
        if (expected === undefined || paddedSize(expected) !== stored) {
          throw corrupt(path, `has a malformed buffer ${buffers.length} (kind ${kind}, ${stored} bytes)`);
        }
        buffers.push({ ptr: ptr + data.valueOffsets[row]!, kind, count });
      }
    });
    checkMeta(path, meta, buffers);
  } catch (error) {
    for (const region of regions) memory.release(region.ptr, region.bytes);
    throw error;
  }
  return { path, meta, checksum, words, buffers, regions };
}

function parseArrow(path: string, file: Buffer): Table {
  if (file.byteLength < 12 || file.toString('latin1', 0, 6) !== MAGIC) {
    throw corrupt(path, 'is not a dataset file (no Arrow IPC file signature)');
  }
  if (file.toString('latin1', file.byteLength - 6) !== MAGIC) {
    throw corrupt(path, 'is truncated (the Arrow IPC footer is missing)');
  }
  try {
    return tableFromIPC(file);
  } catch (error) {
    throw corrupt(path, `is damaged: the Arrow IPC structure cannot be read (${(error as Error).message})`);
  }
}

function checkColumns(path: string, table: Table): void {
  const type = (name: string) => table.schema.fields.find((field) => field.name === name)?.type;
  const isUint = (t: unknown, bits: number) => DataType.isInt(t) && (t as Int).bitWidth === bits && !(t as Int).isSigned;
  if (!isUint(type('kind'), 8)) throw corrupt(path, 'lacks the "kind" column of a dataset');
  if (!isUint(type('count'), 32)) throw corrupt(path, 'lacks the "count" column of a dataset');
  if (!DataType.isBinary(type('data'))) throw corrupt(path, 'lacks the "data" column of a dataset');
}

function expectedBytes(kind: BufferKind, count: number, words: number): number | undefined {
  switch (kind) {
    case BufferKind.weights:
      return words * 64 * 8;
    case BufferKind.indexU8:
      return words * 64;
    case BufferKind.indexU16:
      return words * 64 * 2;
    case BufferKind.indexU32:
      return words * 64 * 4;
    case BufferKind.dense:
      return words * 8;
    case BufferKind.sparse:
      return count * 4;
    default:
      return undefined;
  }
}

/** Every buffer the metadata points at exists and has the kind it should. */
function checkMeta(path: string, meta: StoredMeta, buffers: LoadedBuffer[]): void {
  const kindOf = (row: number) => buffers[row]?.kind;
  const ok =
    Number.isInteger(meta.respondents) &&
    meta.weights.length > 0 &&
    meta.weights.every((weight) => kindOf(weight.buffer) === BufferKind.weights) &&
    meta.variables.every(
      (variable) =>
        [BufferKind.indexU8, BufferKind.indexU16, BufferKind.indexU32].includes(kindOf(variable.index) as never) &&
        variable.values.length === variable.counts.length &&
        (variable.codes === undefined ||
          (variable.codes.length === variable.values.length &&
            variable.codes.every((row) => kindOf(row) === BufferKind.dense || kindOf(row) === BufferKind.sparse))),
    );
  if (!ok) throw corrupt(path, 'has metadata that does not match its buffers');
}

function corrupt(path: string, what: string): CrosstabError {
  return new CrosstabError(ErrorCode.corruptDataset, `${path}: ${what}`, {
    file: path,
    hint: 'Rebuild the dataset with `crosstab build`; if it was copied, copy it again.',
  });
}
