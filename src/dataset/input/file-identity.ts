import { closeSync, fstatSync, openSync, type Stats } from 'node:fs';
import { inputError } from './table-encoder.js';

/**
 * Which file a reader opened and what it held: its device and inode (a new file renamed
 * over the path has another inode), size and modification time (a file rewritten in
 * place changes them). A reader's worker threads open the path again; comparing what they
 * opened with what the reader opened keeps a file replaced during the build from giving
 * a dataset made of two files.
 */
export interface FileIdentity {
  dev: number;
  ino: number;
  size: number;
  mtimeMs: number;
}

export function fileIdentity(stats: Pick<Stats, 'dev' | 'ino' | 'size' | 'mtimeMs'>): FileIdentity {
  return { dev: stats.dev, ino: stats.ino, size: stats.size, mtimeMs: stats.mtimeMs };
}

export function sameFile(a: FileIdentity, b: FileIdentity): boolean {
  return a.dev === b.dev && a.ino === b.ino && a.size === b.size && a.mtimeMs === b.mtimeMs;
}

/** The refusal when the file at `path` is no longer the one its reading started on. */
export function changedWhileRead(path: string): Error {
  return inputError(
    path,
    'the file changed while it was being read (it was replaced or rewritten)',
    'Build again once the file is complete; a job that writes input files should write each under another name and rename it into place when done.',
  );
}

/** Throws {@link changedWhileRead} unless descriptor `fd` is the file `expected` describes. */
export function checkSameFile(path: string, fd: number, expected: FileIdentity): void {
  if (!sameFile(fileIdentity(fstatSync(fd)), expected)) throw changedWhileRead(path);
}

/**
 * Opens `path` for reading as a worker thread of a reader does, refusing it (as
 * {@link changedWhileRead}) when it is gone or is no longer the file the reader opened.
 */
export function openSame(path: string, expected: FileIdentity): number {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch {
    throw changedWhileRead(path);
  }
  try {
    checkSameFile(path, fd, expected);
  } catch (error) {
    closeSync(fd);
    throw error;
  }
  return fd;
}
