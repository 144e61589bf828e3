import { closeSync, fstatSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { basename } from 'node:path';
import { CrosstabError, ErrorCode } from '../../errors.js';
import type { KernelMemory } from '../../kernel/memory.js';
import { paddedSize } from '../build/compile.js';
import { BufferKind, CHECKSUM_KEY, FORMAT_KEY, META_KEY, type StoredMeta, type StoredWeightsFile, WEIGHTS_FORMAT_VERSION, WEIGHTS_SUFFIX } from '../format.js';
import { ArrowFileProblem, readArrowStructure } from './arrow-file.js';
import { datasetChecksum } from './dataset-checksum.js';
import { type BufferEntry, readFailure } from './lazy-buffers.js';
import type { LoadedWeightsFile } from './loaded-dataset.js';

/** The weights file of the dataset at `dataset`: its path plus `.weights`. */
export function weightsFilePath(dataset: string): string {
  return `${dataset}${WEIGHTS_SUFFIX}`;
}

/** A weights file that cannot be used with its dataset: `corrupt_dataset`, with how to fix it. */
export function weightsFileError(path: string, what: string, hint?: string): CrosstabError {
  return new CrosstabError(ErrorCode.corruptDataset, `${path}: ${what}`, {
    file: path,
    hint: hint ?? `Remove ${path} and run \`crosstab weight\` again (without --out) to make the weights again; if it was copied, copy it again.`,
  });
}

/** A weights file opened beside its dataset, its buffers not read yet. */
export interface OpenedWeightsFile {
  fd: number;
  info: LoadedWeightsFile;
  /** Its weights, `buffer` a row of `entries`. */
  weights: StoredWeightsFile['weights'];
  entries: BufferEntry[];
  /** Where each record batch's bytes go in kernel memory. */
  batchReads: Array<{ fd: number; ptr: number; fileOffset: number; bytes: number }>;
}

/** The reader's helpers this file shares (kept in reader.ts, which reads a dataset's own buffer table the same way). */
export interface TableReading {
  checkColumns(path: string, schema: ReturnType<typeof readArrowStructure>['schema']): void;
  /** reader.ts's placeBatches: the buffer table placed in kernel memory, `check` seeing each row. */
  placeBatches(
    path: string,
    fd: number,
    structure: ReturnType<typeof readArrowStructure>,
    memory: KernelMemory,
    regions: Array<{ ptr: number; bytes: number }>,
    fail: (path: string, what: string) => Error,
    check: (row: BufferEntry, index: number) => void,
  ): { entries: BufferEntry[]; batchReads: OpenedWeightsFile['batchReads'] };
}

/**
 * Opens the weights file beside `datasetPath`, if there is one: checks its structure and
 * checksum, that it was made from exactly this dataset (the dataset's checksum), and that its
 * weights are well-formed and named apart from the dataset's. Kernel memory for its buffers
 * is allocated (untouched) and listed in `regions`, which the caller releases on failure.
 * undefined: there is no weights file.
 */
export function openWeightsFile(
  datasetPath: string,
  dataset: { checksum: string; meta: StoredMeta; words: number },
  memory: KernelMemory,
  regions: Array<{ ptr: number; bytes: number }>,
  reading: TableReading,
): OpenedWeightsFile | undefined {
  const path = weightsFilePath(datasetPath);
  const fd = openIfThere(path);
  if (fd === undefined) return undefined;
  try {
    const stat = fstatSync(fd);
    if (!stat.isFile()) throw weightsFileError(path, 'is not a regular file, where the dataset\'s weights file would be', `Remove or rename ${path}.`);
    let structure: ReturnType<typeof readArrowStructure>;
    try {
      structure = readArrowStructure(fd, stat.size);
    } catch (error) {
      if (error instanceof ArrowFileProblem) throw weightsFileError(path, `is damaged: ${error.message === 'truncated' ? 'it is truncated' : error.message === 'signature' ? 'it is not an Arrow IPC file' : error.message}`);
      throw error;
    }
    const { schema } = structure;
    const format = schema.metadata.get(FORMAT_KEY);
    if (format !== WEIGHTS_FORMAT_VERSION) {
      if (format === undefined) throw weightsFileError(path, 'is not a weights file of crosstab weight (no crosstab.format metadata)');
      throw new CrosstabError(ErrorCode.unsupportedVersion, `${path}: weights file format "${format}" is not supported; this version reads "${WEIGHTS_FORMAT_VERSION}"`, {
        file: path,
        hint: `Remove ${path} and run \`crosstab weight\` again with this version.`,
      });
    }
    const metaJson = schema.metadata.get(META_KEY) ?? '';
    reading.checkColumns(path, schema);
    const weightBytes = paddedSize(dataset.words * 64 * 8);
    let malformed: string | undefined;
    const { entries, batchReads } = reading.placeBatches(path, fd, structure, memory, regions, weightsFileError, (row, index) => {
      row.file = { fd, path };
      // Judged after the checksum and the dataset it was made for: beside another build, that is the error to give.
      if (malformed === undefined && (row.kind !== BufferKind.weights || row.count !== dataset.meta.respondents || row.stored !== weightBytes)) {
        malformed = `has a buffer ${index} (${row.name}) that is not a weight of ${dataset.meta.respondents} respondents`;
      }
    });
    const checksum = schema.metadata.get(CHECKSUM_KEY) ?? '';
    if (datasetChecksum(format, metaJson, entries) !== checksum) throw weightsFileError(path, 'fails its checksum (the file was modified or damaged)');
    let meta: StoredWeightsFile;
    try {
      meta = JSON.parse(metaJson) as StoredWeightsFile;
    } catch {
      throw weightsFileError(path, 'has unreadable metadata');
    }
    if (meta.dataset?.checksum !== dataset.checksum) {
      const made = typeof meta.dataset?.checksum === 'string' ? meta.dataset.checksum.slice(0, 12) : 'unknown';
      throw weightsFileError(
        path,
        `holds weights made for another version of ${basename(datasetPath)} (dataset checksum ${made}; the file now is ${dataset.checksum.slice(0, 12)}): the dataset was rebuilt, appended to or replaced after \`crosstab weight\` wrote them, so they do not fit its respondents`,
        `Remove ${path} and run \`crosstab weight\` again on the dataset as it is now, or put back the build the weights were made from.`,
      );
    }
    if (malformed !== undefined) throw weightsFileError(path, malformed);
    const own = new Set(dataset.meta.weights.map((weight) => weight.name));
    const seen = new Set<string>();
    const fits =
      Array.isArray(meta.weights) &&
      meta.weights.length === entries.length &&
      meta.weights.every((weight, i) => weight.buffer === i && typeof weight.name === 'string' && !own.has(weight.name) && !seen.has(weight.name) && seen.add(weight.name) !== undefined);
    if (!fits || meta.dataset.respondents !== dataset.meta.respondents) throw weightsFileError(path, 'has metadata that does not match its buffers or its dataset');
    const info: LoadedWeightsFile = { path, checksum, datasetChecksum: dataset.checksum, weights: meta.weights.map((weight) => weight.name), createdAt: meta.createdAt };
    return { fd, info, weights: meta.weights, entries, batchReads };
  } catch (error) {
    closeSync(fd);
    throw readFailure(path, error);
  }
}

/** The file at `path` opened for reading, or undefined when there is none. */
function openIfThere(path: string): number | undefined {
  try {
    return openSync(path, 'r');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw readFailure(path, error);
  }
}

/**
 * The checksum the weights file at `path` carries now (read from its footer, not verified), or
 * undefined when there is none. A file that cannot be read as one gives '' (never a match).
 */
export function currentWeightsChecksum(path: string): string | undefined {
  const fd = openIfThere(path);
  if (fd === undefined) return undefined;
  try {
    return readArrowStructure(fd, fstatSync(fd).size).schema.metadata.get(CHECKSUM_KEY) ?? '';
  } catch (error) {
    if (error instanceof ArrowFileProblem) return '';
    throw error;
  } finally {
    closeSync(fd);
  }
}

/**
 * Takes the weights file's lock (`<weights file>.lock`, holding this process's id) for one
 * writer at a time; gives the function that releases it. A lock left by a process that no
 * longer runs is taken over; one held by a running process is refused with `locked`.
 */
export function lockWeightsFile(path: string): () => void {
  const lock = `${path}.lock`;
  for (let attempt = 0; ; attempt++) {
    try {
      writeFileSync(lock, `${process.pid}\n`, { flag: 'wx' });
      return () => rmSync(lock, { force: true });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw readFailure(lock, error);
    }
    const holder = Number.parseInt(readLock(lock), 10);
    if (attempt === 0 && (!Number.isInteger(holder) || !running(holder))) {
      rmSync(lock, { force: true });
      continue;
    }
    throw new CrosstabError(ErrorCode.locked, `${path} is being written by another crosstab weight (process ${Number.isInteger(holder) ? holder : 'unknown'}, lock ${lock})`, {
      file: path,
      hint: 'Wait for it to finish, then run this weighting again: it starts from the weights file as that one leaves it.',
    });
  }
}

function readLock(lock: string): string {
  try {
    return readFileSync(lock, 'utf8');
  } catch {
    return '';
  }
}

function running(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
