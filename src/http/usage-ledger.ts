import { constants, statSync } from 'node:fs';
import { mkdir, open, type FileHandle } from 'node:fs/promises';
import { dirname } from 'node:path';

/** One billable call: a successful POST /crosstab or POST /tables. */
export interface UsageRecord {
  /** ISO 8601 time the result was computed. */
  time: string;
  /** The X-Request-Id of the call. */
  requestId: string;
  /** Id of the API key (never the key). */
  keyId: string;
  survey: string;
  /** POST /crosstab: its target codes (1 or 2); POST /tables: its row and column entries, whole variables expanded. */
  targets: number;
  /** Which operation was billed; absent in records written before tables were served (crosstab). */
  operation?: 'crosstab' | 'table';
  /** The account billed, when the key belongs to one (database keys, single sign-on). */
  accountId?: string;
}

/**
 * Where usage goes. `record` resolves once the record is durable; the handler sends the 200
 * only after that, and sends no 200 when it rejects.
 */
export interface UsageSink {
  record(usage: UsageRecord): Promise<void>;
  /** Waits for pending records, then releases the sink. */
  close(): Promise<void>;
}

export interface NdjsonLedgerOptions {
  /**
   * Told when the ledger reopens its path (the file or its folder was removed or renamed, or
   * reopen() was called), when it cuts a failed write back to the last whole record, and
   * when it closes (how many records it made durable, in how many writes, how long they took).
   */
  onEvent?: (event: 'ledger_reopened' | 'ledger_repaired' | 'ledger_closed', message: string) => void;
}

interface Pending {
  line: string;
  resolve: () => void;
  reject: (error: unknown) => void;
}

async function syncDirectory(path: string): Promise<void> {
  const dir = await open(path, 'r');
  await dir.sync().finally(() => dir.close());
}

/**
 * Append, read, create, and O_DSYNC: each write returns only once its data is on disk (as a
 * write followed by fdatasync), so a batch costs one thread-pool round trip, not two.
 */
const APPEND_DURABLY = constants.O_APPEND | constants.O_CREAT | constants.O_RDWR | constants.O_DSYNC;

/** Which file an open ledger is: a path that resolves to another one was rotated or replaced. */
interface FileIdentity {
  dev: number;
  ino: number;
}

/** Opens `path` for appending (creating it and its folders durably) and returns it with its size and identity. */
async function openForAppend(path: string): Promise<{ file: FileHandle; size: number; identity: FileIdentity }> {
  const folder = dirname(path);
  const created = await mkdir(folder, { recursive: true });
  const file = await open(path, APPEND_DURABLY, 0o600);
  try {
    const opened = await file.stat();
    const identity = { dev: opened.dev, ino: opened.ino };
    let { size } = opened;
    if (size === 0) {
      // Make the new file's directory entry durable, and the folders mkdir created.
      await syncDirectory(folder);
      if (created !== undefined) await syncDirectory(dirname(created));
    } else {
      // A crash mid-write can leave a partial last line: start ours on a fresh line.
      const last = Buffer.alloc(1);
      await file.read(last, 0, 1, size - 1);
      if (last[0] !== 0x0a) {
        await file.write('\n');
        size++;
      }
    }
    return { file, size, identity };
  } catch (error) {
    await file.close();
    throw error;
  }
}

/**
 * Append-only NDJSON ledger, one UsageRecord per line. Group commit: records arriving while
 * a write is in flight are batched into the next single synchronous-data (O_DSYNC) write, so
 * durability costs one disk flush per batch, not per request.
 *
 * Before each batch the ledger checks that its open file is still the one at `path` (not
 * removed, renamed or replaced) and reopens the path if not, so log rotation and a removed
 * folder cannot swallow records. That check is one `stat` of the path, made synchronously
 * and compared with the open file's device and inode: a system call of a few microseconds
 * on a local file system, cheaper than a thread-pool round trip, and exact (a check on a
 * timer would leave a window in which records go to a removed file). A failed write is cut
 * back to the last whole record, so a disk-full error never glues the next record to a
 * partial line.
 */
export class NdjsonLedger implements UsageSink {
  private pending: Pending[] = [];
  private flushing: Promise<void> | undefined;
  private closed = false;
  private reopenRequested = false;
  /** Bytes of whole, durable records in the open file; a failed write is truncated back to it. */
  private goodSize: number;
  /** Whether the open file may hold a partial batch past goodSize. */
  private torn = false;
  /**
   * Records made durable so far, the durable (O_DSYNC) writes that did it, reopens, and the
   * wall time those writes were in flight (ms): writeMs / flushes is what a billed call waits
   * for the disk, records / flushes how many calls share one wait.
   */
  readonly stats = { records: 0, flushes: 0, reopens: 0, writeMs: 0 };

  private constructor(
    readonly path: string,
    private file: FileHandle,
    private identity: FileIdentity,
    size: number,
    private readonly onEvent: NonNullable<NdjsonLedgerOptions['onEvent']>,
  ) {
    this.goodSize = size;
  }

  /** Opens (creating if needed) the ledger for appending. */
  static async open(path: string, options: NdjsonLedgerOptions = {}): Promise<NdjsonLedger> {
    const { file, size, identity } = await openForAppend(path);
    return new NdjsonLedger(path, file, identity, size, options.onEvent ?? (() => {}));
  }

  record(usage: UsageRecord): Promise<void> {
    if (this.closed) return Promise.reject(new Error(`Usage ledger ${this.path} is closed.`));
    const line = `${JSON.stringify(usage)}\n`;
    return new Promise<void>((resolve, reject) => {
      this.pending.push({ line, resolve, reject });
      this.flushing ??= this.flush();
    });
  }

  /**
   * Reopens the path before the next record (call it on SIGHUP after rotating the file).
   * The file is checked before every batch anyway; this forces the reopen.
   */
  reopen(): void {
    this.reopenRequested = true;
  }

  private async flush(): Promise<void> {
    while (this.pending.length > 0) {
      const batch = this.pending;
      this.pending = [];
      const text = Buffer.from(batch.map((entry) => entry.line).join(''));
      try {
        await this.repair();
        // Where this batch starts: a failed write is cut back to here (records another process
        // appended to the same file before now are kept).
        this.goodSize = await this.followPath();
        this.torn = true;
        // O_DSYNC: durable once written. A short write (a file-size limit) continues, then fails.
        const started = performance.now();
        for (let written = 0; written < text.length; ) written += (await this.file.write(text, written)).bytesWritten;
        this.stats.writeMs += performance.now() - started;
        this.torn = false;
        this.stats.records += batch.length;
        this.stats.flushes++;
        for (const entry of batch) entry.resolve();
      } catch (error) {
        for (const entry of batch) entry.reject(error);
        // Cut the partial batch now, so the file holds only whole records while it waits.
        await this.repair().catch(() => {});
      }
    }
    this.flushing = undefined;
  }

  /** Truncates a failed batch back to the last whole record. Throws (refusing records) while it cannot. */
  private async repair(): Promise<void> {
    if (!this.torn) return;
    await this.file.truncate(this.goodSize);
    await this.file.datasync();
    this.torn = false;
    this.onEvent('ledger_repaired', `A failed write to ${this.path} was cut back to the last whole record (${this.goodSize} bytes).`);
  }

  /** Reopens `path` when the open file is no longer the one at `path`; returns the open file's size. */
  private async followPath(): Promise<number> {
    let atPath: ReturnType<typeof statSync>;
    try {
      atPath = statSync(this.path, { throwIfNoEntry: false });
    } catch {
      atPath = undefined; // e.g. ENOTDIR: a file now stands where the folder was
    }
    // The open file cannot be unlinked while the path still resolves to it (its inode stays
    // ours while we hold it open, so its number is not reused): one `stat` tells all.
    const reason = this.reopenRequested
      ? 'reopen requested'
      : atPath === undefined
        ? 'the file or its folder was removed or renamed'
        : atPath.ino !== this.identity.ino || atPath.dev !== this.identity.dev
          ? 'the path now names another file'
          : undefined;
    if (reason === undefined) return (atPath as NonNullable<typeof atPath>).size;
    const { file, size, identity } = await openForAppend(this.path);
    const previous = this.file;
    this.file = file;
    this.identity = identity;
    this.goodSize = size;
    this.reopenRequested = false;
    this.stats.reopens++;
    await previous.close().catch(() => {});
    this.onEvent('ledger_reopened', `Reopened usage ledger ${this.path}: ${reason}.`);
    return size;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.flushing;
    await this.file.close();
    const { records, flushes, writeMs } = this.stats;
    this.onEvent(
      'ledger_closed',
      `Closed usage ledger ${this.path}: ${records} records in ${flushes} durable writes` +
        (flushes === 0 ? '.' : ` (${(records / flushes).toFixed(1)} billed calls per durable write, ${Math.round((writeMs * 1000) / flushes)} µs per write on average).`),
    );
  }
}
