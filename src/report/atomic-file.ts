import { once } from 'node:events';
import { createWriteStream, type WriteStream } from 'node:fs';
import { CrosstabError, ErrorCode, fieldError } from '../errors.js';
import { replaceAtomically } from '../dataset/file/atomic-write.js';

/**
 * Writes `path` through a temporary file beside it, renamed over `path` only once `write`
 * has finished: a failure (or a crash) never leaves a half-written file under the name asked
 * for. A file-system failure (missing folder, no permission, disk full) rejects with
 * `invalid_option` naming `field`; other failures reject as they are, the temporary file removed.
 */
export async function writeStreamAtomically(path: string, field: string, write: (stream: WriteStream) => Promise<void>): Promise<void> {
  try {
    await replaceAtomically(path, async (temporary) => {
      const stream = createWriteStream(temporary, { flags: 'wx' });
      let failure: Error | undefined;
      stream.on('error', (error) => (failure ??= error));
      try {
        await once(stream, 'open');
        await write(stream);
        if (!stream.writableFinished) {
          stream.end();
          await once(stream, 'finish');
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
