import { once } from 'node:events';
import { createWriteStream, type WriteStream } from 'node:fs';
import { CrosstabError, ErrorCode, fieldError } from '../errors.js';
import { replaceAtomically } from '../dataset/file/atomic-write.js';

/**
 * Writes `path` through a temporary file beside it, renamed over `path` only once `write`
 * has finished and the file is synced to disk and closed: a failure (or a crash) never leaves a half-written file under the name asked
 * for. A file-system failure (missing folder, no permission, disk full) rejects with
 * `invalid_option` naming `field`; other failures reject as they are, the temporary file removed.
 */
export async function writeStreamAtomically(path: string, field: string, write: (stream: WriteStream) => Promise<void>): Promise<void> {
  try {
    await replaceAtomically(path, async (temporary) => {
      // flush: the file is synced to disk when it closes, before the rename (a crash after the
      // rename finds the whole file, not an empty one).
      const stream = createWriteStream(temporary, { flags: 'wx', flush: true });
      let failure: Error | undefined;
      stream.on('error', (error) => (failure ??= error));
      try {
        await once(stream, 'open');
        await write(stream);
        if (!stream.closed) {
          const closed = once(stream, 'close');
          stream.end();
          await closed;
        }
        if (failure) throw failure;
      } catch (error) {
        stream.destroy();
        throw error;
      }
    });
  } catch (error) {
    throw fileSystemError(error, path, field);
  }
}

function fileSystemError(error: unknown, path: string, field: string): unknown {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  if (error instanceof CrosstabError || typeof code !== 'string' || !/^E[A-Z]+$/.test(code)) return error;
  return fieldError(ErrorCode.invalidOption, field, `cannot write ${path}: ${(error as Error).message}`, { hint: 'Pass a file path in a folder that exists and that you may write to.' }, ': ');
}
