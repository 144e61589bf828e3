import { closeSync, fstatSync, read, readv } from 'node:fs';
import { CrosstabError, echo, ErrorCode } from '../../errors.js';
import { checksumInKernel } from '../../kernel/checksum.js';
import type { Kernel } from '../../kernel/kernel.js';
import { ArrowFileProblem, readAt } from './arrow-file.js';
import type { BufferRow } from './dataset-checksum.js';
import { BufferKind, type StoredMeta } from '../format.js';
import { firstWeightOutOfRange, weightRangeProblem } from '../weight-range.js';
import type { LoadedBuffer, LoadedDataset } from './loaded-dataset.js';
import type { SegmentAssembler, SegmentedBuffer } from './segments.js';

/** A buffer of an open dataset: where it goes in kernel memory, where it is in the file, its hash. */
export interface BufferEntry extends LoadedBuffer, Omit<BufferRow, 'kind'> {
  /** Where the stored bytes are in the file. */
  fileOffset: number;
  /** The file holding the bytes when it is not the dataset's own (a weights file). */
  file?: { fd: number; path: string };
}

/** Weights read per step by checkStoredWeights (256 KiB): a window reused, not the buffer's kernel memory. */
const WEIGHTS_WINDOW = 32 * 1024;

/** Bytes per read when a batch is read in pieces. */
const READ_PIECE = 8 << 20;

/**
 * Reads `into.byteLength` bytes at `position` in pieces that libuv's thread pool reads at
 * once: the page faults of fresh kernel memory and the copies from the page cache are
 * spread over the cores instead of one thread.
 */
export async function readParallel(fd: number, position: number, into: Uint8Array): Promise<void> {
  const piece = (at: number, length: number, done = 0): Promise<void> =>
    new Promise<number>((resolve, reject) =>
      read(fd, into, at + done, length - done, position + at + done, (error, bytesRead) => (error ? reject(error) : resolve(bytesRead))),
    ).then((bytesRead) => {
      if (bytesRead === 0) throw new ArrowFileProblem('truncated');
      return done + bytesRead < length ? piece(at, length, done + bytesRead) : undefined;
    });
  const reads: Array<Promise<void>> = [];
  for (let at = 0; at < into.byteLength; at += READ_PIECE) reads.push(piece(at, Math.min(READ_PIECE, into.byteLength - at)));
  await Promise.all(reads);
}

/** Buffers one readv() fills at most (IOV_MAX is 1024 on Linux and macOS). */
const READ_VECTORS = 1024;

/**
 * Reads many stretches of the file, each `into.byteLength` bytes at `fileOffset`, as
 * readParallel reads one: stretches that follow one another in the file go in one readv()
 * of at most READ_PIECE bytes (many small stretches are a few requests, not one each), the
 * requests read at once by libuv's thread pool.
 */
export async function readScattered(fd: number, stretches: Array<{ fileOffset: number; into: Uint8Array }>): Promise<void> {
  const pieces: Array<{ fileOffset: number; into: Uint8Array }> = [];
  for (const { fileOffset, into } of stretches) {
    for (let at = 0; at < into.byteLength; at += READ_PIECE) pieces.push({ fileOffset: fileOffset + at, into: into.subarray(at, Math.min(at + READ_PIECE, into.byteLength)) });
  }
  pieces.sort((a, b) => a.fileOffset - b.fileOffset);
  const groups: Array<{ position: number; views: Uint8Array[]; bytes: number }> = [];
  for (const piece of pieces) {
    const last = groups.at(-1);
    if (last && last.position + last.bytes === piece.fileOffset && last.bytes + piece.into.byteLength <= READ_PIECE && last.views.length < READ_VECTORS) {
      last.views.push(piece.into);
      last.bytes += piece.into.byteLength;
    } else groups.push({ position: piece.fileOffset, views: [piece.into], bytes: piece.into.byteLength });
  }
  const group = (position: number, views: Uint8Array[]): Promise<void> =>
    new Promise<number>((resolve, reject) => readv(fd, views, position, (error, bytesRead) => (error ? reject(error) : resolve(bytesRead)))).then((bytesRead) => {
      const wanted = views.reduce((sum, view) => sum + view.byteLength, 0);
      if (bytesRead >= wanted) return undefined;
      if (bytesRead === 0) throw new ArrowFileProblem('truncated');
      // A short read: the rest from where it stopped.
      const rest: Uint8Array[] = [];
      let skip = bytesRead;
      for (const view of views) {
        if (skip >= view.byteLength) skip -= view.byteLength;
        else {
          rest.push(view.subarray(skip));
          skip = 0;
        }
      }
      return group(position + bytesRead, rest);
    });
  await Promise.all(groups.map(({ position, views }) => group(position, views)));
}

/** An error of the file system while reading a dataset (EIO, EISDIR...) as `file_not_found`; a CrosstabError stays as it is. */
export function readFailure(path: string, error: unknown): CrosstabError {
  if (error instanceof CrosstabError) return error;
  const reason = (error as NodeJS.ErrnoException).code ?? (error as Error).message;
  return new CrosstabError(ErrorCode.fileNotFound, `${echo(path)}: cannot read the dataset (${reason})`, { file: path, hint: 'Check the path, or build the dataset with `crosstab build`.' });
}

/**
 * What changes when a file is written over in place (a copy over it instead of a rename): its
 * size and modification time, read from the open descriptor. A file renamed over the path
 * leaves the open descriptor on the old file, whose stamp stays (not its change time, which
 * the unlink of the old name moves: not part of the stamp).
 */
export function fileStamp(fd: number): string {
  const stat = fstatSync(fd, { bigint: true });
  return `${stat.size}:${stat.mtimeNs}`;
}

/** The error of a file whose stamp is no longer the one taken at open: its bytes may be another file's. */
export function rewrittenInPlace(path: string, what: string): CrosstabError {
  return new CrosstabError(ErrorCode.corruptDataset, `${path} was written over in place after it was opened (its size or modification time changed): ${what}`, {
    file: path,
    hint: 'Open the dataset again. Publish a new build by writing it under another name and renaming it over the file: a dataset open on the old file then goes on reading the old one.',
  });
}

interface LazyParts {
  path: string;
  meta: StoredMeta;
  checksum: string;
  words: number;
  entries: BufferEntry[];
  regions: LoadedDataset['regions'];
  kernel: Kernel;
  fd: number;
  /** Other files entries read from (BufferEntry.file), closed with the dataset. */
  otherFds?: number[];
  /** Per buffer: 1 once its bytes are in kernel memory. */
  loaded: Uint8Array;
  /** fileStamp() of each open file (`fd` and `otherFds`) when it was opened: a buffer is read only while its file still has it. */
  stamps: ReadonlyMap<number, string>;
  verify: boolean | 'full';
  /** The reader's `corrupt_dataset` error for this file. */
  corrupt: (path: string, what: string) => CrosstabError;
  /** A file in segments: puts its buffers (entries with parts) together from their parts. */
  assembler?: SegmentAssembler;
  /** Put every buffer of the file in segments together before returning (preload). */
  preloadParts?: boolean;
}

function partsOf(entry: BufferEntry): SegmentedBuffer | undefined {
  return 'parts' in entry ? (entry as BufferEntry & SegmentedBuffer) : undefined;
}

export function lazyDataset({ path, meta, checksum, words, entries, regions, kernel, fd, otherFds = [], loaded, stamps, verify, corrupt, weightsFile, assembler, preloadParts = false }: LazyParts & Pick<LoadedDataset, 'weightsFile'>): LoadedDataset {
  const checked = new Uint8Array(entries.length);
  /** Per weights buffer: 1 once its values were found in the range the engine takes. */
  const inRange = new Uint8Array(entries.length);
  let open = true;
  const isOpen = () => {
    if (!open) throw new CrosstabError(ErrorCode.closed, `dataset ${path} is closed`, { hint: 'Open it again with openDataset().' });
  };
  /** A buffer of a file in segments, from its parts (each checked against its hash when `check`). */
  const assemble = (row: number, into: Uint8Array, check: boolean | 'later', checkStamp: boolean): boolean => {
    const entry = entries[row]!;
    isOpen();
    try {
      const checked = assembler!.assemble(entry as BufferEntry & SegmentedBuffer, into.subarray(0, entry.stored), check);
      if (checkStamp && fileStamp(fd) !== stamps.get(fd)) throw rewrittenInPlace(path, `buffer ${row} (${entry.name}) cannot be read from it`);
      return checked;
    } catch (error) {
      if (error instanceof CrosstabError) throw error;
      throw error instanceof ArrowFileProblem ? corrupt(path, `is truncated: a part of buffer ${row} (${entry.name}) is past its end`) : readFailure(path, error);
    }
  };
  const readStored = (row: number, into: Uint8Array, checkStamp = true): { name: string; stored: number; hash: string | undefined } => {
    const entry = entries[row]!;
    // Its parts checked as they are read: there is no hash of the whole buffer to check it against.
    if (partsOf(entry)) {
      assemble(row, into, true, checkStamp);
      return { name: entry.name, stored: entry.stored, hash: undefined };
    }
    isOpen();
    const file = entry.file?.path ?? path;
    const from = entry.file?.fd ?? fd;
    try {
      readAt(from, entry.fileOffset, entry.stored, into);
      // Checked once the bytes are read: bytes of a file written over in place since it was
      // opened could be another build's, which with verify: false nothing else would notice.
      if (checkStamp && fileStamp(from) !== stamps.get(from)) throw rewrittenInPlace(file, `buffer ${row} (${entry.name}) cannot be read from it`);
    } catch (error) {
      if (error instanceof CrosstabError) throw error;
      throw error instanceof ArrowFileProblem ? corrupt(file, `is truncated: buffer ${row} (${entry.name}) is past its end`) : readFailure(file, error);
    }
    return entry;
  };
  const load = (row: number) => {
    const entry = entries[row]!;
    if (partsOf(entry)) {
      // verify: true: the parts read ahead at open are checked at the buffer's first use, as a compact file's buffers are.
      const all = assemble(row, kernel.memory.bytes(entry.ptr, entry.stored), verify === true ? 'later' : verify === 'full', true);
      if (verify !== false && all) checked[row] = 1;
    } else readStored(row, kernel.memory.bytes(entry.ptr, entry.stored));
    loaded[row] = 1;
  };
  const damaged = (row: number) => {
    const entry = entries[row]!;
    return corrupt(entry.file?.path ?? path, `fails the checksum of buffer ${row} (${entry.name}): its bytes were modified or damaged`);
  };
  const check = (row: number) => {
    const entry = entries[row]!;
    if (partsOf(entry)) {
      // From what was kept of the parts read ahead; else read again, each part checked (the
      // bytes are the same: a failed check throws before any query reads them).
      isOpen();
      if (!assembler!.checkLater(entry as BufferEntry & SegmentedBuffer, entry.ptr)) assemble(row, kernel.memory.bytes(entry.ptr, entry.stored), true, true);
      checked[row] = 1;
      return;
    }
    if (checksumInKernel(kernel, entry.ptr, entry.stored) !== entry.hash) throw damaged(row);
    checked[row] = 1;
  };
  /** The refusal of weight `weight` of respondent `at` (0-based) of weights buffer `row`, outside the range the engine takes. */
  const weightOutOfRange = (row: number, at: number, weight: number): CrosstabError => {
    const entry = entries[row]!;
    const file = entry.file?.path ?? path;
    const name = meta.weights.find((stored) => stored.buffer === row)?.name ?? entry.name;
    // Respondents are stored in an order of their own: the input row says which one it is.
    const inputRow = meta.inputRows === undefined ? '' : ` (input row ${new Uint32Array(kernel.memory.memory.buffer, buffer(meta.inputRows).ptr, meta.respondents)[at]! + 1})`;
    return new CrosstabError(ErrorCode.invalidInput, `${file}: weight "${name}" of respondent ${at + 1}${inputRow}, the first outside the range, is ${weightRangeProblem(weight)}`, {
      file,
      field: name,
      hint: `The file was built before weights were checked. Rebuild it with the weight rescaled (every weight times one factor: percentages and their standard errors stay the same), or with 0 for a respondent who should not count.`,
    });
  };
  /**
   * A weights buffer's values, once, after its hash: a file built before the build, append and
   * weighting refused weights outside weight-range.ts's range may hold some, whose sums and
   * squares would be wrong figures (a base of Infinity, standard errors of subnormals).
   */
  const checkWeights = (row: number) => {
    const entry = entries[row]!;
    refuseOutOfRange(row, kernel.memory.f64(entry.ptr, entry.count));
    inRange[row] = 1;
  };
  /** Refuses `weights`, the values of weights buffer `row`, holding a weight outside the range. */
  const refuseOutOfRange = (row: number, weights: Float64Array) => {
    const at = firstWeightOutOfRange(weights);
    // The value taken before weightOutOfRange reads the input rows (which may grow the memory under `weights`).
    if (at >= 0) throw weightOutOfRange(row, at, weights[at]!);
  };
  const refuseWeightsOutOfRange = (row: number, stored: Uint8Array) => {
    const entry = entries[row]!;
    if (entry.kind === BufferKind.weights) refuseOutOfRange(row, new Float64Array(stored.buffer, stored.byteOffset, entry.count));
  };
  const checkStoredWeights = (row: number) => {
    const entry = entries[row]!;
    if (entry.kind !== BufferKind.weights) throw new Error(`checkStoredWeights: buffer ${row} (${entry.name}) holds no weights`);
    if (inRange[row] === 1) return;
    isOpen();
    const from = entry.file?.fd ?? fd;
    // A file in segments: the parts one after the other, each of its segment's respondents.
    const parts = partsOf(entry) ? assembler!.partsInFile(entry as BufferEntry & SegmentedBuffer) : [{ fileOffset: entry.fileOffset, count: entry.count }];
    const window = new Float64Array(Math.min(WEIGHTS_WINDOW, entry.count));
    const bytes = new Uint8Array(window.buffer);
    let respondent = 0;
    try {
      for (const part of parts) {
        for (let done = 0; done < part.count; ) {
          const count = Math.min(window.length, part.count - done);
          readAt(from, part.fileOffset + done * 8, count * 8, bytes);
          const at = firstWeightOutOfRange(window, count);
          if (at >= 0) throw weightOutOfRange(row, respondent + done + at, window[at]!);
          done += count;
        }
        respondent += part.count;
      }
    } catch (error) {
      if (error instanceof CrosstabError) throw error;
      const file = entry.file?.path ?? path;
      throw error instanceof ArrowFileProblem ? corrupt(file, `is truncated: buffer ${row} (${entry.name}) is past its end`) : readFailure(file, error);
    }
  };
  const buffer = (row: number): LoadedBuffer => {
    if (loaded[row] === 0) load(row);
    if (checked[row] === 0 && verify !== false) check(row);
    if (inRange[row] === 0 && entries[row]!.kind === BufferKind.weights) checkWeights(row);
    return entries[row]!;
  };
  const checkUnchanged = () => {
    for (const [file, before] of stamps) {
      if (fileStamp(file) !== before) throw rewrittenInPlace(entries.find((entry) => entry.file?.fd === file)?.file?.path ?? path, 'what was read from it may be of another version');
    }
  };
  const verifyAll = () => {
    let bytes = 0;
    for (let row = 0; row < entries.length; row++) {
      if (loaded[row] === 0) load(row);
      if (checked[row] === 0) check(row);
      if (inRange[row] === 0 && entries[row]!.kind === BufferKind.weights) checkWeights(row);
      bytes += entries[row]!.stored;
    }
    return { buffers: entries.length, bytes };
  };
  // Read ahead at open (preload): put together now, their check left to their first use.
  if (preloadParts) for (let row = 0; row < entries.length; row++) if (partsOf(entries[row]!) && loaded[row] === 0) load(row);
  const close = () => {
    if (open) for (const file of [fd, ...otherFds]) closeSync(file);
    if (open) assembler?.dispose();
    open = false;
  };
  return { path, meta, checksum, words, ...(assembler ? { segments: assembler.segments } : {}), buffers: entries, regions, buffer, readStored, refuseWeightsOutOfRange, checkStoredWeights, checkUnchanged, damaged, verifyAll, close, ...(weightsFile ? { weightsFile } : {}) };
}

