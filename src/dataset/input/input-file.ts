import { type FileHandle, open } from 'node:fs/promises';
import { CrosstabError, ErrorCode } from '../../errors.js';
import type { RawTable, ReadOptions } from './raw-table.js';
import { inputError } from './table-encoder.js';
import { checkSameFile, type FileIdentity, fileIdentity, openSame } from './file-identity.js';
import { closeSync } from 'node:fs';

/**
 * The one prologue of the typed readers (Arrow, Parquet, SPSS): checks the options, opens
 * the file (`file_not_found` when it cannot be), hands `read` the handle, the file size and the
 * file's identity (for worker threads that open the path again), refuses a file changed
 * while it was read,
 * turns any failure into a CrosstabError ({@link readFailure}) and closes the file.
 */
export async function readTypedFile(path: string, options: ReadOptions, format: string, read: (handle: FileHandle, size: number, identity: FileIdentity) => Promise<RawTable>): Promise<RawTable> {
  checkReadOptions(path, options);
  const handle = await open(path, 'r').catch((error: unknown) => {
    throw unreadable(path, error);
  });
  // A second descriptor of the same file, to look at it once read (a reader may close `handle`).
  let watch: number | undefined;
  try {
    const identity = fileIdentity(await handle.stat());
    watch = openSame(path, identity);
    const table = await read(handle, identity.size, identity);
    // Rewritten in place while read: some bytes may be the old file's, some the new one's.
    checkSameFile(path, watch, identity);
    return table;
  } catch (error) {
    throw readFailure(path, format, error);
  } finally {
    if (watch !== undefined) closeSync(watch);
    await handle.close().catch(() => undefined);
  }
}

/** The checks every reader makes on its options. */
export function checkReadOptions(path: string, options: ReadOptions): void {
  const invalid = (field: string, message: string) => new CrosstabError(ErrorCode.invalidOption, message, { field });
  if (typeof path !== 'string' || path.length === 0) throw invalid('path', 'path must be a non-empty string naming an input file');
  const weights: unknown = options?.weights;
  if (!Array.isArray(weights) || weights.length === 0 || !weights.every((name) => typeof name === 'string' && name.length > 0)) {
    throw invalid('weights', "options.weights must be a non-empty array of column names, e.g. { weights: ['PWGTP'] }");
  }
  const repeated = weights.find((name, i) => weights.indexOf(name) !== i);
  if (repeated !== undefined) throw invalid('weights', `options.weights lists "${repeated}" twice; list each weight column once`);
  const exclude: unknown = options.exclude;
  if (exclude !== undefined && (!Array.isArray(exclude) || !exclude.every((name) => typeof name === 'string'))) {
    throw invalid('exclude', 'options.exclude must be an array of column names');
  }
  const ignore: unknown = options.ignore;
  if (ignore !== undefined && (!Array.isArray(ignore) || !ignore.every((name) => typeof name === 'string'))) {
    throw invalid('ignore', 'options.ignore must be an array of column names');
  }
  const both = options.exclude?.find((name) => weights.includes(name));
  if (both !== undefined) throw invalid('exclude', `"${both}" is in both options.weights and options.exclude; remove it from one of them`);
  if (options.onProgress !== undefined && typeof options.onProgress !== 'function') {
    throw invalid('onProgress', 'options.onProgress must be a function');
  }
}

/** `file_not_found` for an input that cannot be opened or read. */
export function unreadable(path: string, error: unknown): CrosstabError {
  const reason = (error as NodeJS.ErrnoException).code;
  const what = reason === 'ENOENT' ? 'does not exist' : reason === 'EACCES' ? 'is not readable (permission denied)' : `cannot be read (${String(error)})`;
  const hint = `Check the path (relative paths start at ${process.cwd()}) and the file's permissions.`;
  return new CrosstabError(ErrorCode.fileNotFound, `${path}: the input file ${what}. ${hint}`, { file: path, hint });
}

/**
 * Refuses a file whose last bytes are not the format's closing magic (Parquet `PAR1`, Arrow
 * file `ARROW1`): the usual sign of a file cut short, which the parsers report obscurely.
 */
export async function checkTrailer(handle: FileHandle, size: number, path: string, format: string, magic: string): Promise<void> {
  const tail = new Uint8Array(magic.length);
  const { bytesRead } = size >= magic.length * 2 ? await handle.read(tail, 0, magic.length, size - magic.length) : { bytesRead: 0 };
  if (bytesRead === magic.length && String.fromCharCode(...tail) === magic) return;
  const hint = `The file was cut short (an interrupted download or copy?): write or get the ${format} file again.`;
  throw inputError(path, `the file does not end with ${magic}, as every ${format} file does: it is truncated (${size} bytes)`, hint);
}

/**
 * What a typed reader rethrows: our errors as they are, I/O errors as `file_not_found`,
 * anything a parser library threw as `invalid_input` naming the file and the format.
 */
export function readFailure(path: string, format: string, error: unknown): CrosstabError {
  if (error instanceof CrosstabError) return error;
  if (typeof (error as NodeJS.ErrnoException)?.syscall === 'string') return unreadable(path, error);
  const reason = (error instanceof Error ? error.message : String(error)).replace(/[.\s]+$/, '');
  const hint = `Check that the file is a complete ${format} file (not truncated, not another format renamed); write it again if in doubt.`;
  return inputError(path, `cannot be read as ${format}: ${reason}`, hint);
}
