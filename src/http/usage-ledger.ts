import { mkdir, open, type FileHandle } from 'node:fs/promises';
import { dirname } from 'node:path';

/** One billable call: a successful POST /crosstab. */
export interface UsageRecord {
  /** ISO 8601 time the result was computed. */
  time: string;
  /** The X-Request-Id of the call. */
  requestId: string;
  /** Id of the API key (never the key). */
  keyId: string;
  survey: string;
  /** Number of target codes in the request (1 or 2). */
  targets: number;
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

interface Pending {
  line: string;
  resolve: () => void;
  reject: (error: unknown) => void;
}

/**
 * Append-only NDJSON ledger, one UsageRecord per line. Group commit: records arriving while
 * a write is in flight are batched into the next single write + fdatasync, so durability
 * costs one disk flush per batch, not per request.
 */
export class NdjsonLedger implements UsageSink {
  private pending: Pending[] = [];
  private flushing: Promise<void> | undefined;
  private closed = false;
  /** Records made durable so far, and the write + fdatasync batches that did it. */
  readonly stats = { records: 0, flushes: 0 };

  private constructor(readonly path: string, private readonly file: FileHandle) {}

  /** Opens (creating if needed) the ledger for appending. */
  static async open(path: string): Promise<NdjsonLedger> {
    await mkdir(dirname(path), { recursive: true });
    const file = await open(path, 'a+', 0o600);
    const { size } = await file.stat();
    if (size === 0) {
      // Make the new file's directory entry durable too.
      const dir = await open(dirname(path), 'r');
      await dir.sync().finally(() => dir.close());
    } else {
      // A crash mid-write can leave a partial last line: start ours on a fresh line.
      const last = Buffer.alloc(1);
      await file.read(last, 0, 1, size - 1);
      if (last[0] !== 0x0a) await file.appendFile('\n');
    }
    return new NdjsonLedger(path, file);
  }

  record(usage: UsageRecord): Promise<void> {
    if (this.closed) return Promise.reject(new Error(`Usage ledger ${this.path} is closed.`));
    const line = `${JSON.stringify(usage)}\n`;
    return new Promise<void>((resolve, reject) => {
      this.pending.push({ line, resolve, reject });
      this.flushing ??= this.flush();
    });
  }

  private async flush(): Promise<void> {
    while (this.pending.length > 0) {
      const batch = this.pending;
      this.pending = [];
      try {
        await this.file.appendFile(batch.map((entry) => entry.line).join(''));
        await this.file.datasync();
        this.stats.records += batch.length;
        this.stats.flushes++;
        for (const entry of batch) entry.resolve();
      } catch (error) {
        for (const entry of batch) entry.reject(error);
      }
    }
    this.flushing = undefined;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.flushing;
    await this.file.close();
  }
}
