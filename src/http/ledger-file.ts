import { constants, statSync } from 'node:fs';
import { mkdir, open, type FileHandle } from 'node:fs/promises';
import { dirname } from 'node:path';

/**
 * Append, read and create. Not O_DSYNC: a batch is appended to the page cache, then made
 * durable by an `fdatasync` of its own, so that the next batch can be appended while the
 * previous one's flush is still in flight.
 */
const APPEND = constants.O_APPEND | constants.O_CREAT | constants.O_RDWR;

/** Which file an open ledger is: a path that resolves to another one was rotated or replaced. */
export interface FileIdentity {
  dev: number;
  ino: number;
}

/**
 * One open ledger file: the handle batches are appended through, and one handle per flush
 * that may be in flight. Each flush has its own open file description because Linux reports
 * a failed write-back once per description: two `fdatasync`s sharing one could see the error
 * consumed by the other and both miss it for the batch it concerned.
 */
export interface LedgerFile {
  append: FileHandle;
  syncs: FileHandle[];
  identity: FileIdentity;
  /** Bytes in the file when it was opened (after the fresh-line fix below). */
  size: number;
}

async function syncDirectory(path: string): Promise<void> {
  const dir = await open(path, 'r');
  await dir.sync().finally(() => dir.close());
}

/** Opens `count` more read-only handles on the same file as `identity`: refuses if `path` was replaced meanwhile. */
async function openSyncHandles(path: string, identity: FileIdentity, count: number): Promise<FileHandle[]> {
  const handles: FileHandle[] = [];
  try {
    for (let i = 0; i < count; i++) {
      const handle = await open(path, 'r');
      handles.push(handle);
      const { dev, ino } = await handle.stat();
      if (dev !== identity.dev || ino !== identity.ino) throw new Error(`Usage ledger ${path} was replaced while it was being opened.`);
    }
    return handles;
  } catch (error) {
    await Promise.all(handles.map((handle) => handle.close().catch(() => {})));
    throw error;
  }
}

/**
 * Opens `path` for appending (creating it and its folders durably), with `syncs` handles for
 * flushes, and returns them with the file's size and identity.
 */
export async function openLedgerFile(path: string, syncs: number): Promise<LedgerFile> {
  const folder = dirname(path);
  const created = await mkdir(folder, { recursive: true });
  const append = await open(path, APPEND, 0o600);
  try {
    const opened = await append.stat();
    const identity = { dev: opened.dev, ino: opened.ino };
    let { size } = opened;
    if (size === 0) {
      // Make the new file's directory entry durable, and the folders mkdir created.
      await syncDirectory(folder);
      if (created !== undefined) await syncDirectory(dirname(created));
    } else {
      // A crash can leave a torn tail (a partial line, zero bytes): start ours on a fresh line.
      const last = Buffer.alloc(1);
      await append.read(last, 0, 1, size - 1);
      if (last[0] !== 0x0a) {
        await append.write('\n');
        await append.datasync();
        size++;
      }
    }
    return { append, syncs: await openSyncHandles(path, identity, syncs), identity, size };
  } catch (error) {
    await append.close();
    throw error;
  }
}

export async function closeLedgerFile(file: LedgerFile): Promise<void> {
  await Promise.all([file.append, ...file.syncs].map((handle) => handle.close().catch(() => {})));
}

/**
 * Whether the open file is still the one at `path`: its size if so, else why not. One
 * synchronous `stat` of the path compared with the open file's device and inode.
 */
export function checkPath(path: string, identity: FileIdentity): { size: number; changed?: undefined } | { changed: string } {
  let atPath: ReturnType<typeof statSync>;
  try {
    atPath = statSync(path, { throwIfNoEntry: false });
  } catch {
    atPath = undefined; // e.g. ENOTDIR: a file now stands where the folder was
  }
  // The open file cannot be unlinked while the path still resolves to it (its inode stays
  // ours while we hold it open, so its number is not reused): one `stat` tells all.
  if (atPath === undefined) return { changed: 'the file or its folder was removed or renamed' };
  if (atPath.ino !== identity.ino || atPath.dev !== identity.dev) return { changed: 'the path now names another file' };
  return { size: atPath.size };
}
