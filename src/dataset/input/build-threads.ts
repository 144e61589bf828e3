import { availableParallelism } from 'node:os';

/**
 * Worker threads a build uses by default (CSV encoding, then the variables' buffers): one
 * per core, at most 4. The main thread merges and writes; zlib inflates on its own thread.
 */
export function defaultBuildThreads(): number {
  return Math.max(1, Math.min(4, availableParallelism()));
}

/** Inputs with fewer rows build on the calling thread: starting workers costs more than it saves. */
export const PARALLEL_BUILD_MIN_ROWS = 100_000;
