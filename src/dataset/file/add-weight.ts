import { basename } from 'node:path';
import { CrosstabError, ErrorCode } from '../../errors.js';
import { open, type FileHandle } from 'node:fs/promises';
import { StreamingChecksum } from '../../kernel/checksum.js';
import type { Kernel } from '../../kernel/kernel.js';
import type { BufferSpec, CompiledDataset } from '../build/compile.js';
import { BufferKind, type StoredCalibration, type StoredMeta, type StoredWeighting, type StoredWeightsFile, WEIGHTS_FORMAT_VERSION } from '../format.js';
import type { BufferEntry } from './lazy-buffers.js';
import type { LoadedDataset } from './loaded-dataset.js';
import { corrupt, expectedBytes } from './reader.js';
import { currentWeightsChecksum, lockWeightsFile, weightsFileError, weightsFilePath } from './weights-file.js';
import { writeDataset } from './writer.js';

/** A weight vector padded with zeros to whole bitset words, as the file stores it (no copy when it already is). */
function paddedWeights(weights: Float64Array, words: number, respondents: number): Uint8Array {
  let padded = weights;
  if (weights.length !== words * 64) {
    padded = new Float64Array(words * 64);
    padded.set(weights.subarray(0, respondents));
  }
  return new Uint8Array(padded.buffer, padded.byteOffset, padded.byteLength);
}

/**
 * The stored bytes of `rows` of `source`, read from their files (the dataset's, or its
 * weights file's) and each checked against its hash on the way: a damaged buffer is
 * refused, never copied under a fresh checksum. Each is cut to `bytes(row)`. They are read
 * into one array, reused: a buffer's bytes are valid until the next is asked for (the writer
 * has written them by then), and a fresh array per buffer would fault in every page of a
 * dataset's worth of new memory.
 */
async function* copiedBuffers(source: LoadedDataset, kernel: Kernel, rows: number[], bytes: (row: number) => number): AsyncGenerator<Uint8Array> {
  const entries = source.buffers as BufferEntry[];
  const files = new Map<string, FileHandle>();
  const checksums = new StreamingChecksum(kernel);
  const scratch = new Uint8Array(rows.reduce((largest, row) => Math.max(largest, entries[row]!.stored), 0));
  try {
    for (const row of rows) {
      const entry = entries[row]!;
      const path = entry.file?.path ?? source.path;
      const damaged = (what: string) => (entry.file ? weightsFileError(path, what) : corrupt(path, what));
      let file = files.get(path);
      if (file === undefined) files.set(path, (file = await open(path, 'r')));
      const stored = scratch.subarray(0, entry.stored);
      if ('parts' in entry) {
        // A buffer of a file in segments, put together from its parts (each checked against its hash).
        source.readStored(row, stored);
        // A stored weight outside the range the engine takes is refused as its first read refuses it, never copied.
        source.refuseWeightsOutOfRange(row, stored);
        yield stored.subarray(0, bytes(row));
        continue;
      }
      let done = 0;
      while (done < stored.byteLength) {
        const { bytesRead } = await file.read(stored, done, stored.byteLength - done, entry.fileOffset + done);
        if (bytesRead === 0) throw damaged(`is truncated: buffer ${row} (${entry.name}) is past its end`);
        done += bytesRead;
      }
      if (checksums.of(stored) !== entry.hash) throw damaged(`fails the checksum of buffer ${row} (${entry.name}): its bytes were modified or damaged`);
      source.refuseWeightsOutOfRange(row, stored);
      yield stored.subarray(0, bytes(row));
    }
  } finally {
    checksums.dispose();
    for (const file of files.values()) await file.close();
  }
}

/**
 * Writes `out`: the dataset `source` with one more weight, `name`, whose value per
 * respondent (in the dataset's respondent order) is `weights` (`meta.respondents` long,
 * or padded with zeros to whole bitset words, `words * 64`). Every buffer of the source
 * (its weights file's too: they become weights of the new file) is copied from its file and
 * checked against its hash on the way; the new file is written as a build writes one: past
 * the page cache where the file system allows it (a copy of the whole dataset would fill it
 * for nothing), to a temporary file, flushed, then renamed over `out`.
 */
export async function writeWithWeight(source: LoadedDataset, kernel: Kernel, name: string, weights: Float64Array, out: string, describe: Partial<StoredMeta> = {}, calibration?: StoredCalibration, weighting?: StoredWeighting): Promise<{ bytes: number; checksum: string }> {
  const entries = source.buffers as BufferEntry[];
  const words = source.words;
  // Every entry passed the reader's check of its kind and size when the source was opened, so its size is known.
  const specs: BufferSpec[] = entries.map((entry) => ({ name: entry.name, kind: entry.kind, count: entry.count, bytes: expectedBytes(entry.kind, entry.count, words)! }));
  const buffer = specs.push({ name: `weight:${name}`, kind: BufferKind.weights, count: source.meta.respondents, bytes: words * 64 * 8 }) - 1;
  const meta: StoredMeta = { ...source.meta, ...describe, weights: [...source.meta.weights, { name, buffer, ...(calibration ? { calibration } : {}), ...(weighting ? { weighting } : {}) }] };
  const padded = paddedWeights(weights, words, source.meta.respondents);
  async function* data(): AsyncGenerator<Uint8Array> {
    yield* copiedBuffers(source, kernel, entries.map((_, row) => row), (row) => specs[row]!.bytes);
    yield padded;
  }
  const unavailable = (): never => {
    throw new Error('writeWithWeight: input columns are not available when copying a dataset');
  };
  const compiled: CompiledDataset = { meta, specs, data, inputRanks: unavailable, inputWeights: unavailable };
  return writeDataset(compiled, out, undefined, { direct: true });
}

/**
 * Writes the weights file of `source` (its path plus `.weights`) with one more weight: the
 * weights it already has there (copied and checked, as writeWithWeight copies) and `name`.
 * The file names `source`'s dataset checksum, so that it is refused beside any other build.
 * Written to a temporary file, flushed, then renamed over the weights file: the dataset file
 * is not touched, and a reader sees the old weights file or the new one, never a mix.
 */
export async function writeWeightsFile(source: LoadedDataset, kernel: Kernel, name: string, weights: Float64Array, calibration?: StoredCalibration, weighting?: StoredWeighting): Promise<{ path: string; bytes: number; checksum: string }> {
  const path = weightsFilePath(source.path);
  const words = source.words;
  const bytes = words * 64 * 8;
  const known = source.weightsFile?.weights ?? [];
  const kept = source.meta.weights.filter((weight) => known.includes(weight.name));
  const specs: BufferSpec[] = [...kept.map((weight) => ({ name: `weight:${weight.name}`, kind: BufferKind.weights, count: source.meta.respondents, bytes })), { name: `weight:${name}`, kind: BufferKind.weights, count: source.meta.respondents, bytes }];
  const meta: StoredWeightsFile = {
    format: WEIGHTS_FORMAT_VERSION,
    dataset: { checksum: source.weightsFile?.datasetChecksum ?? source.checksum, respondents: source.meta.respondents, file: basename(source.path) },
    weights: [
      ...kept.map(({ name: kept, calibration: stored, weighting: how }, i) => ({ name: kept, buffer: i, ...(stored ? { calibration: stored } : {}), ...(how ? { weighting: how } : {}) })),
      { name, buffer: kept.length, ...(calibration ? { calibration } : {}), ...(weighting ? { weighting } : {}) },
    ],
    createdAt: new Date().toISOString(),
  };
  const padded = paddedWeights(weights, words, source.meta.respondents);
  async function* data(): AsyncGenerator<Uint8Array> {
    yield* copiedBuffers(source, kernel, kept.map((weight) => weight.buffer), () => bytes);
    yield padded;
  }
  // One writer at a time, and only over the weights file this weighting started from: two
  // weightings of one dataset at once would otherwise each write the old weights plus their
  // own, and the last rename would lose the other's weight.
  const release = lockWeightsFile(path);
  try {
    if (currentWeightsChecksum(path) !== source.weightsFile?.checksum) {
      throw new CrosstabError(ErrorCode.locked, `${path} changed while this weight was made (another crosstab weight wrote it); nothing was written`, {
        file: path,
        hint: 'Run this weighting again: it starts from the weights file as it is now.',
      });
    }
    const written = await writeDataset({ meta, specs, data }, path);
    return { path, ...written };
  } finally {
    release();
  }
}
