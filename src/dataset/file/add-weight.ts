import { open } from 'node:fs/promises';
import { StreamingChecksum } from '../../kernel/checksum.js';
import type { Kernel } from '../../kernel/kernel.js';
import type { BufferSpec, CompiledDataset } from '../build/compile.js';
import { BufferKind, type StoredCalibration, type StoredMeta } from '../format.js';
import type { BufferEntry } from './lazy-buffers.js';
import type { LoadedDataset } from './loaded-dataset.js';
import { corrupt, expectedBytes } from './reader.js';
import { writeDataset } from './writer.js';

/**
 * Writes `out`: the dataset `source` with one more weight, `name`, whose value per
 * respondent (in the dataset's respondent order) is `weights` (`meta.respondents` long,
 * or padded with zeros to whole bitset words, `words * 64`). Every buffer of the source
 * is copied from its file and checked against its hash on the way (a damaged source is
 * refused, not copied under a fresh checksum); the new file is written as a build writes
 * one: to a temporary file, flushed, then renamed over `out`.
 */
export async function writeWithWeight(source: LoadedDataset, kernel: Kernel, name: string, weights: Float64Array, out: string, describe: Partial<StoredMeta> = {}, calibration?: StoredCalibration): Promise<{ bytes: number; checksum: string }> {
  const entries = source.buffers as BufferEntry[];
  const words = source.words;
  // Every entry passed the reader's check of its kind and size when the source was opened, so its size is known.
  const specs: BufferSpec[] = entries.map((entry) => ({ name: entry.name, kind: entry.kind, count: entry.count, bytes: expectedBytes(entry.kind, entry.count, words)! }));
  const buffer = specs.push({ name: `weight:${name}`, kind: BufferKind.weights, count: source.meta.respondents, bytes: words * 64 * 8 }) - 1;
  const meta: StoredMeta = { ...source.meta, ...describe, weights: [...source.meta.weights, { name, buffer, ...(calibration ? { calibration } : {}) }] };
  // A vector already padded to whole bitset words is written as it is (no second copy).
  let padded = weights;
  if (weights.length !== words * 64) {
    padded = new Float64Array(words * 64);
    padded.set(weights.subarray(0, source.meta.respondents));
  }
  async function* data(): AsyncGenerator<Uint8Array> {
    const file = await open(source.path, 'r');
    const checksums = new StreamingChecksum(kernel);
    try {
      for (let row = 0; row < entries.length; row++) {
        const entry = entries[row]!;
        const bytes = new Uint8Array(entry.stored);
        let done = 0;
        while (done < bytes.byteLength) {
          const { bytesRead } = await file.read(bytes, done, bytes.byteLength - done, entry.fileOffset + done);
          if (bytesRead === 0) throw corrupt(source.path, `is truncated: buffer ${row} (${entry.name}) is past its end`);
          done += bytesRead;
        }
        if (checksums.of(bytes) !== entry.hash) throw corrupt(source.path, `fails the checksum of buffer ${row} (${entry.name}): its bytes were modified or damaged`);
        yield bytes.subarray(0, specs[row]!.bytes);
      }
      yield new Uint8Array(padded.buffer, padded.byteOffset, padded.byteLength);
    } finally {
      checksums.dispose();
      await file.close();
    }
  }
  const unavailable = (): never => {
    throw new Error('writeWithWeight: input columns are not available when copying a dataset');
  };
  const compiled: CompiledDataset = { meta, specs, data, inputRanks: unavailable, inputWeights: unavailable };
  return writeDataset(compiled, out);
}
