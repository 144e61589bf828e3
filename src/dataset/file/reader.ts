import { closeSync, fstatSync, openSync } from 'node:fs';
import { CrosstabError, echo, ErrorCode } from '../../errors.js';
import { bitsetWords } from '../../kernel/exports.js';
import type { Kernel } from '../../kernel/kernel.js';
import { type ArrowSchema, ArrowFileProblem, type BatchLocation, readArrowStructure, readAt } from './arrow-file.js';
import { datasetChecksum, HASH_CHARS } from './dataset-checksum.js';
import { paddedSize } from '../build/compile.js';
import { BufferKind, CHECKSUM_KEY, FORMAT_KEY, META_KEY, MULTI_FORMAT_VERSION, READABLE_FORMATS, SEGMENTED_FORMAT_VERSION, SEGMENTS_KEY, type StoredMeta, type StoredSegments, type StoredVariable } from '../format.js';
import { type BufferEntry, fileStamp, lazyDataset, readFailure, readParallel, readScattered, rewrittenInPlace } from './lazy-buffers.js';
import type { LoadedBuffer, LoadedDataset } from './loaded-dataset.js';
import { rebuildCommand } from './rebuild-command.js';
import { readSegments, SegmentAssembler, type SegmentedBuffer } from './segments.js';
import { openWeightsFile, weightsFileError } from './weights-file.js';

export type { LoadedBuffer, LoadedDataset } from './loaded-dataset.js';

export interface LoadOptions {
  /**
   * Integrity checks. The buffer table and metadata are always checked against the dataset
   * checksum at open. Buffer bytes: `true` (default) checks each buffer against its XXH64
   * before a query first reads it; `'full'` checks them all before openDataset resolves;
   * `false` never checks them.
   */
  verify?: boolean | 'full';
  /**
   * Read every buffer into kernel memory at open (`true`), or each one when a query first
   * needs it (`false`, the default: opening takes the time of reading the metadata, and
   * memory grows with the buffers queries use). `verify: 'full'` reads everything.
   */
  preload?: boolean;
  /**
   * Open the dataset's weights file (its path plus `.weights`, written by `crosstab weight`
   * without `--out`) with it: `true` (default) when there is one. `false` opens the dataset
   * file alone.
   */
  weightsFile?: boolean;
}


/**
 * Opens a dataset file: reads its footer and buffer table and checks them against the
 * dataset checksum. Buffer bytes are read straight into kernel memory (no intermediate copy
 * of the file): each buffer when a query first needs it, or all of them at once with
 * `preload`. The file stays open until close().
 */
export async function loadDataset(path: string, kernel: Kernel, options: LoadOptions = {}): Promise<LoadedDataset> {
  let fd: number;
  let size: number;
  let stamp: string;
  try {
    fd = openSync(path, 'r');
    const stat = fstatSync(fd);
    if (!stat.isFile()) {
      closeSync(fd);
      throw new CrosstabError(ErrorCode.fileNotFound, `${echo(path)}: cannot read the dataset (it is ${stat.isDirectory() ? 'a directory' : 'not a regular file'})`, {
        file: path,
        field: 'path',
        hint: 'Pass the path of a dataset file built with `crosstab build`.',
      });
    }
    size = stat.size;
    stamp = fileStamp(fd);
  } catch (error) {
    throw readFailure(path, error);
  }
  const memory = kernel.memory;
  const regions: LoadedDataset['regions'] = [];
  const otherFds: number[] = [];
  let assembler: SegmentAssembler | undefined;
  try {
    let structure: ReturnType<typeof readArrowStructure>;
    try {
      structure = readArrowStructure(fd, size);
    } catch (error) {
      throw error instanceof ArrowFileProblem ? structureError(path, error.message) : error;
    }
    const { schema } = structure;
    const { format, metaJson } = checkFormat(path, schema);
    checkColumns(path, schema);
    let meta: StoredMeta;
    try {
      meta = JSON.parse(metaJson) as StoredMeta;
    } catch {
      throw corrupt(path, 'has unreadable metadata');
    }
    const words = bitsetWords(meta.respondents);
    const checksum = schema.metadata.get(CHECKSUM_KEY) ?? '';
    let entries: BufferEntry[];
    let batchReads: BatchRead[];
    if (format === SEGMENTED_FORMAT_VERSION) {
      // The buffers are put together from their parts: kernel memory for the buffers, none for the parts.
      const segmentsJson = schema.metadata.get(SEGMENTS_KEY) ?? '';
      const stored = storedRows(path, fd, structure);
      if (datasetChecksum(format, `${metaJson}\0${segmentsJson}`, stored) !== checksum) throw corrupt(path, 'fails its checksum (the file was modified or damaged)');
      let segments: StoredSegments;
      try {
        segments = JSON.parse(segmentsJson) as StoredSegments;
      } catch {
        throw corrupt(path, 'has an unreadable segment table');
      }
      const read = readSegments(segments, stored, meta.respondents, expectedBytes);
      if (typeof read === 'string') throw corrupt(path, read);
      entries = read.rows;
      const bytes = entries.reduce((sum, entry) => sum + entry.stored, 0);
      const ptr = memory.alloc(bytes, false);
      regions.push({ ptr, bytes });
      let at = ptr;
      for (const entry of entries) {
        entry.ptr = at;
        at += entry.stored;
      }
      batchReads = [];
      const readPart = (row: number, into: Uint8Array) => void readAt(fd, stored[row]!.fileOffset, stored[row]!.stored, into);
      const damagedPart = (row: number) => corrupt(path, `fails the checksum of stored part ${row} (${stored[row]!.name}): its bytes were modified or damaged`);
      assembler = new SegmentAssembler(kernel, read.ranges, stored, readPart, damagedPart, (what) => corrupt(path, what));
    } else {
      ({ entries, batchReads } = placeBatches(path, fd, structure, memory, regions, corrupt, (row, index) => {
        const expected = expectedBytes(row.kind, row.count, words);
        if (expected === undefined || paddedSize(expected) !== row.stored) {
          throw corrupt(path, `has a malformed buffer ${index} (${row.name}: kind ${row.kind}, ${row.stored} bytes)`);
        }
      }));
      if (datasetChecksum(format, metaJson, entries) !== checksum) throw corrupt(path, 'fails its checksum (the file was modified or damaged)');
    }
    checkMeta(path, meta, entries);
    // The weights file beside the dataset (`crosstab weight` without --out): its weights follow the dataset's own.
    const extra = options.weightsFile === false ? undefined : openWeightsFile(path, { checksum, meta, words }, memory, regions, { checkColumns, placeBatches });
    if (extra) {
      otherFds.push(extra.fd);
      const first = entries.length;
      entries.push(...extra.entries);
      batchReads.push(...extra.batchReads);
      meta = { ...meta, weights: [...meta.weights, ...extra.weights.map((weight) => ({ ...weight, buffer: first + weight.buffer }))] };
    }
    const stamps = new Map([[fd, stamp], ...otherFds.map((other) => [other, fileStamp(other)] as const)]);
    const loaded = new Uint8Array(entries.length);
    const preload = options.preload === true || options.verify === 'full';
    if (preload) {
      // A file in segments: every part read ahead as the batches are, into its buffer's place where it can be (segments.ts).
      const parts = entries.filter((entry): entry is BufferEntry & SegmentedBuffer => 'parts' in entry);
      const partsRead = assembler?.prefetch(parts, (stretches) =>
        readScattered(fd, stretches).catch((error: unknown) => {
          throw error instanceof ArrowFileProblem ? corrupt(path, 'is truncated: a part of a buffer is past its end') : error;
        }),
      );
      await Promise.all([...batchReads.map((batch) => readParallel(batch.fd, batch.fileOffset, memory.bytes(batch.ptr, batch.bytes))), partsRead]);
      for (const [file, before] of stamps) {
        if (fileStamp(file) !== before) throw rewrittenInPlace(file === fd ? path : (extra?.info.path ?? path), 'its buffers cannot be read from it');
      }
      // A file in segments: its own buffers are put together below (lazyDataset), the weights file's are read.
      loaded.fill(1);
      if (assembler !== undefined) loaded.fill(0, 0, entries.length - (extra?.entries.length ?? 0));
    }
    const corruptFile = (file: string, what: string) => (file === path ? corrupt(file, what) : weightsFileError(file, what));
    const dataset = lazyDataset({
      path, meta, checksum: extra?.info.checksum ?? checksum, words, entries, regions, kernel, fd, otherFds, loaded, stamps, verify: options.verify ?? true, corrupt: corruptFile,
      ...(extra ? { weightsFile: extra.info } : {}),
      ...(assembler ? { assembler, preloadParts: preload && options.verify !== 'full' } : {}),
    });
    if (options.verify === 'full') dataset.verifyAll();
    assembler?.release();
    return dataset;
  } catch (error) {
    assembler?.dispose();
    for (const region of regions) memory.release(region.ptr, region.bytes);
    for (const other of [fd, ...otherFds]) closeSync(other);
    throw readFailure(path, error);
  }
}

/**
 * The buffer table of a dataset or weights file (`structure`, opened at `fd`) placed in
 * kernel memory: one region per record batch for its data bytes, allocated but not touched
 * (fresh kernel memory costs no RSS until a buffer is read into it) and listed in `regions`,
 * which the caller releases on failure; each row as an entry pointing into it, with its
 * offset in the file, and where each batch's bytes go. `check` sees every row (and its index
 * in the table) before it is kept; it may throw. `fail` makes the error of a damaged table.
 */
export function placeBatches(
  path: string,
  fd: number,
  structure: Pick<ReturnType<typeof readArrowStructure>, 'schema' | 'batches'>,
  memory: Kernel['memory'],
  regions: Array<{ ptr: number; bytes: number }>,
  fail: (path: string, what: string) => Error,
  check: (row: BufferEntry, index: number) => void,
): { entries: BufferEntry[]; batchReads: BatchRead[] } {
  const column = (name: string) => structure.schema.fields.findIndex((field) => field.name === name);
  const at = { data: column('data'), name: column('name'), kind: column('kind'), count: column('count'), hash: column('hash') };
  const entries: BufferEntry[] = [];
  const batchReads: BatchRead[] = [];
  for (const batch of structure.batches) {
    const rows = readRows(path, fd, batch, at);
    const values = batch.fields[at.data]![2]!;
    if (values.length !== rows.end) throw fail(path, `has a data column of ${values.length} bytes where its offsets say ${rows.end}`);
    const ptr = memory.alloc(values.length, false);
    regions.push({ ptr, bytes: values.length });
    batchReads.push({ fd, ptr, fileOffset: values.offset, bytes: values.length });
    for (const row of rows.entries) {
      row.fileOffset = values.offset + row.ptr;
      row.ptr += ptr;
      check(row, entries.length);
      entries.push(row);
    }
  }
  return { entries, batchReads };
}

/** The rows of a file's buffer table with where their bytes are in the file (not placed in kernel memory). */
export function storedRows(path: string, fd: number, structure: Pick<ReturnType<typeof readArrowStructure>, 'schema' | 'batches'>): BufferEntry[] {
  const column = (name: string) => structure.schema.fields.findIndex((field) => field.name === name);
  const at = { data: column('data'), name: column('name'), kind: column('kind'), count: column('count'), hash: column('hash') };
  const entries: BufferEntry[] = [];
  for (const batch of structure.batches) {
    const rows = readRows(path, fd, batch, at);
    const values = batch.fields[at.data]![2]!;
    if (values.length !== rows.end) throw corrupt(path, `has a data column of ${values.length} bytes where its offsets say ${rows.end}`);
    for (const row of rows.entries) {
      row.fileOffset = values.offset + row.ptr;
      row.ptr = 0;
      entries.push(row);
    }
  }
  return entries;
}

/** Where one record batch's data bytes go in kernel memory. */
export interface BatchRead {
  fd: number;
  ptr: number;
  fileOffset: number;
  bytes: number;
}

/** The small columns of one batch (everything but the data bytes), as entries with relative pointers. */
export function readRows(path: string, fd: number, batch: BatchLocation, at: Record<'data' | 'name' | 'kind' | 'count' | 'hash', number>) {
  const n = batch.rows;
  const region = (field: number, buffer: number, bytes: number) => {
    const found = batch.fields[field]![buffer]!;
    if (found.length < bytes) throw corrupt(path, `has a buffer table column shorter than its ${n} rows`);
    return readAt(fd, found.offset, bytes);
  };
  const int32 = (bytes: Uint8Array) => new Int32Array(bytes.buffer, bytes.byteOffset, bytes.byteLength / 4);
  const offsets = int32(region(at.data, 1, (n + 1) * 4));
  const nameOffsets = int32(region(at.name, 1, (n + 1) * 4));
  const names = region(at.name, 2, Math.max(0, nameOffsets[n]!));
  const kinds = region(at.kind, 1, n);
  const countBytes = region(at.count, 1, n * 4);
  const counts = new Uint32Array(countBytes.buffer, countBytes.byteOffset, n);
  const hashOffsets = int32(region(at.hash, 1, (n + 1) * 4));
  const hashes = region(at.hash, 2, n * HASH_CHARS);
  const text = new TextDecoder();
  const entries: BufferEntry[] = [];
  if (offsets[0] !== 0) throw corrupt(path, 'has a data column that does not start at offset 0');
  for (let row = 0; row < n; row++) {
    const stored = offsets[row + 1]! - offsets[row]!;
    if (stored < 0 || nameOffsets[row + 1]! < nameOffsets[row]! || hashOffsets[row + 1]! - hashOffsets[row]! !== HASH_CHARS) {
      throw corrupt(path, `has a malformed buffer table row ${row}`);
    }
    entries.push({
      ptr: offsets[row]!,
      fileOffset: 0,
      kind: kinds[row] as BufferKind,
      count: counts[row]!,
      name: text.decode(names.subarray(nameOffsets[row]!, nameOffsets[row + 1]!)),
      stored,
      hash: text.decode(hashes.subarray(hashOffsets[row]!, hashOffsets[row + 1]!)),
    });
  }
  return { entries, end: offsets[n]! };
}

/** The metadata JSON of a dataset of this format version; other versions are refused. */
function checkFormat(path: string, schema: ArrowSchema): { format: string; metaJson: string } {
  const metadata = schema.metadata;
  const format = metadata.get(FORMAT_KEY);
  if (format === undefined) throw corrupt(path, 'is an Arrow file but not a crosstab-engine dataset (no crosstab.format metadata)');
  const metaJson = metadata.get(META_KEY) ?? '';
  if (!READABLE_FORMATS.includes(format)) {
    const command = rebuildCommand(path, metaJson);
    throw new CrosstabError(ErrorCode.unsupportedVersion, `${path}: dataset format "${format}" is not supported; this version reads ${READABLE_FORMATS.map((known) => `"${known}"`).join(' and ')}`, {
      file: path,
      hint: command
        ? `Rebuild it from its source with this version: ${command}`
        : 'Rebuild the dataset from its source with this version of `crosstab build`.',
    });
  }
  return { format, metaJson };
}

/** Type ids of the Arrow format (Schema.fbs). */
const ArrowType = { int: 2, binary: 4, utf8: 5 } as const;

export function checkColumns(path: string, schema: ArrowSchema): void {
  const field = (name: string) => schema.fields.find((candidate) => candidate.name === name);
  const isUint = (name: string, bits: number) => {
    const found = field(name);
    return found?.typeId === ArrowType.int && found.bitWidth === bits && !found.isSigned;
  };
  if (!isUint('kind', 8)) throw corrupt(path, 'lacks the "kind" column of a dataset');
  if (!isUint('count', 32)) throw corrupt(path, 'lacks the "count" column of a dataset');
  if (field('data')?.typeId !== ArrowType.binary) throw corrupt(path, 'lacks the "data" column of a dataset');
  if (field('name')?.typeId !== ArrowType.utf8) throw corrupt(path, 'lacks the "name" column of a dataset');
  if (field('hash')?.typeId !== ArrowType.utf8) throw corrupt(path, 'lacks the "hash" column of a dataset');
}

/** Bytes of a buffer before padding, from its kind and count; undefined for a kind the format does not have. */
export function expectedBytes(kind: BufferKind, count: number, words: number): number | undefined {
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
    case BufferKind.inputRows:
      return count * 4;
    case BufferKind.idTexts:
      return count;
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
    (meta.inputRows === undefined || (kindOf(meta.inputRows) === BufferKind.inputRows && buffers[meta.inputRows]!.count === meta.respondents)) &&
    (meta.id === undefined || kindOf(meta.id.buffer) === BufferKind.idTexts) &&
    meta.variables.every(
      (variable) =>
        (variable.kind === 'multi' ? multiMatches(variable, kindOf, meta.format) : [BufferKind.indexU8, BufferKind.indexU16, BufferKind.indexU32].includes(kindOf(variable.index) as never)) &&
        variable.values.length === variable.counts.length &&
        (variable.codes === undefined ||
          (variable.codes.length === variable.values.length &&
            variable.codes.every((row) => kindOf(row) === BufferKind.dense || kindOf(row) === BufferKind.sparse))) &&
        (variable.atLeast === undefined ||
          (variable.kind === 'numeric' && variable.atLeast.length === variable.values.length && variable.atLeast.every((row) => kindOf(row) === BufferKind.dense))),
    );
  if (!ok) throw corrupt(path, 'has metadata that does not match its buffers');
}

/** A multi-response variable: no index column, a container per value and one of its no-answer respondents. */
function multiMatches(variable: StoredVariable, kindOf: (row: number) => number | undefined, format: string): boolean {
  const container = (row: number) => kindOf(row) === BufferKind.dense || kindOf(row) === BufferKind.sparse;
  return format === MULTI_FORMAT_VERSION && variable.index === -1 && variable.multi !== undefined && variable.codes !== undefined && container(variable.multi.noAnswer);
}

function structureError(path: string, problem: string): CrosstabError {
  if (problem === 'signature') return corrupt(path, 'is not a dataset file (no Arrow IPC file signature)');
  if (problem === 'truncated') return corrupt(path, 'is truncated (the Arrow IPC footer is missing)');
  return corrupt(path, `is damaged: the Arrow IPC structure cannot be read (${problem})`);
}

export function corrupt(path: string, what: string): CrosstabError {
  return new CrosstabError(ErrorCode.corruptDataset, `${path}: ${what}`, {
    file: path,
    hint: 'Rebuild the dataset with `crosstab build`; if it was copied, copy it again.',
  });
}
