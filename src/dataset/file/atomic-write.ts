import { randomBytes } from 'node:crypto';
import { type FileHandle, open, rename, rm } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';

/** A name beside `path` for the file that will replace it: hidden, this process's, random. */
export function temporaryBeside(path: string): string {
  return join(dirname(path), `.${basename(path)}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`);
}

/**
 * Makes `path` through a temporary file beside it: `make` creates and fills the temporary
 * (and syncs it, if it must survive a crash), which is then renamed over `path`. On any
 * failure, of `make` or of the rename, the temporary is removed and the failure rethrown:
 * `path` is as it was or complete, never half-written.
 */
export async function replaceAtomically<T>(path: string, make: (temporary: string) => Promise<T>): Promise<T> {
  const temporary = temporaryBeside(path);
  try {
    const made = await make(temporary);
    await rename(temporary, path);
    return made;
  } catch (error) {
    await rm(temporary, { force: true });
    throw error;
  }
}

export interface WriteAtomicallyOptions {
  /** The new file's permissions (default 0o666 less the umask). */
  mode?: number;
  /** What a failure to create the temporary file rejects with instead (naming the option that gave `path`). */
  openError?: (error: NodeJS.ErrnoException) => unknown;
  /** Called after the file is on disk, before the rename: throwing here (a cancellation) leaves `path` as it was. */
  beforeRename?: () => void;
}

/**
 * Writes `path` as replaceAtomically() does, the temporary created here (it must not exist),
 * written by `write`, flushed to disk (fsync) and closed before the rename.
 */
export async function writeAtomically<T>(path: string, write: (file: FileHandle, temporary: string) => Promise<T>, options: WriteAtomicallyOptions = {}): Promise<T> {
  return replaceAtomically(path, async (temporary) => {
    const file = await open(temporary, 'wx', options.mode).catch((error: NodeJS.ErrnoException) => {
      throw options.openError ? options.openError(error) : error;
    });
    let written: T;
    try {
      written = await write(file, temporary);
      await file.sync();
    } finally {
      await file.close();
    }
    options.beforeRename?.();
    return written;
  });
}
