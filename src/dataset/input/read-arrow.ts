import { defaultBuildThreads } from './build-threads.js';
import { builtWorkerFile, ShareWorkers } from './column-shares.js';
import { readTypedFile } from './input-file.js';
import type { RawTable, ReadOptions } from './raw-table.js';

/**
 * Reads an Arrow IPC file (`ARROW1`, "Feather v2") or an Arrow IPC stream into
 * dictionary-encoded columns and validated weights, one record batch at a time.
 *
 * A file's columns are read by worker threads too (`threads`, see arrow-share.ts); a
 * stream's on the calling thread.
 *
 * Values are the text a CSV export of the same data would hold: integers and floats as
 * JavaScript writes them (`2`, not `2.0`), strings as they are (`06` stays `06`),
 * dictionary-encoded columns by their values, booleans as `true`/`false`, dates, times and
 * timestamps as ISO 8601 with every digit stored; null, NaN and empty strings are blank. Weight columns may be any
 * numeric type. Decimals are read as their exact digits. Other types (binary, lists, structs...) cannot be crosstabbed:
 * leave them out with `exclude`.
 *
 * Rejects with a {@link CrosstabError}, as {@link readCsv} does, plus `invalid_input` for a
 * truncated or corrupt file; bad weights carry `row` (1-based) and `field` in `details`.
 */
export async function readArrow(path: string, options: ReadOptions): Promise<RawTable> {
  return readTypedFile(path, options, 'Arrow IPC', async (handle, size, identity) => {
    const head = new Uint8Array(6);
    await handle.read(head, 0, 6, 0);
    const isFile = String.fromCharCode(...head) === 'ARROW1';
    // A file's workers start now: their start-up overlaps this thread's read of the footer and messages.
    const started = isFile ? startArrowWorkers(size, options.threads) : undefined;
    try {
      // apache-arrow (about 150 ms to load) is loaded after the workers are started, with the reader proper.
      const { readArrowOpen } = await import('./read-arrow-open.js');
      return await readArrowOpen(path, options, handle, size, identity, isFile, started);
    } finally {
      await started?.stop();
    }
  });
}

/**
 * Files of this many bytes or more start their workers before the footer is read
 * (startArrowWorkers): an Arrow file of PARALLEL_BUILD_MIN_ROWS rows of one number takes 800 kB.
 */
const EARLY_START_BYTES = 1 << 20;

/**
 * The workers handOutArrowColumns will most likely use, started now, before apache-arrow is
 * loaded and the file's footer and messages are read (their start-up, their modules and
 * WebAssembly, then overlaps that): `threads` of them if given, else one per core (at most 4)
 * for a file of EARLY_START_BYTES or more; undefined otherwise, or when the worker is not
 * built. handOutArrowColumns ends those it does not need; readArrow stops them all at the end.
 */
export function startArrowWorkers(size: number, threads: number | undefined): ShareWorkers | undefined {
  const count = threads ?? (size >= EARLY_START_BYTES ? defaultBuildThreads() : 0);
  const file = count > 0 ? builtWorkerFile('arrow-worker.js') : undefined;
  return file === undefined ? undefined : new ShareWorkers(file, count, 'Arrow');
}
