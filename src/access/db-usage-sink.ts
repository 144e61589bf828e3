import type { DurableWriteListener, DurableWriteStats, UsageRecord, UsageSink } from '../keys/index.js';
import type { Database, Queryable } from './database.js';

interface Pending {
  usage: UsageRecord;
  resolve: () => void;
  reject: (error: unknown) => void;
}

/** Rows per statement at most. */
const MAX_BATCH = 5000;
const COLUMNS = '(request_id, time, account_id, key_id, survey, targets, operation, void_reason)';
const INSERT_USAGE = `INSERT INTO usage ${COLUMNS} SELECT * FROM unnest($1::text[], $2::timestamptz[], $3::text[], $4::text[], $5::text[], $6::smallint[], $7::text[], $8::text[])`;
const COPY_USAGE = `COPY usage ${COLUMNS} FROM STDIN`;

/** A field of COPY's text format: the four characters it gives a meaning escaped; \N (NULL) for a missing value. */
function copyField(value: string | number | undefined): string {
  if (value === undefined || value === null) return '\\N';
  const text = String(value);
  return /[\\\t\n\r]/.test(text) ? text.replace(/[\\\t\n\r]/g, (c) => (c === '\\' ? '\\\\' : c === '\t' ? '\\t' : c === '\n' ? '\\n' : '\\r')) : text;
}

/**
 * Usage rows in the access database (a void record is a row with its `void_reason`). Group
 * commit: records arriving while a statement is in
 * flight go into the next one, and each caller's promise resolves only after the commit
 * that holds its row (PostgreSQL's synchronous_commit makes that durable; PGlite writes its
 * WAL before it answers). A batch starts on the event loop's next turn, so the records of
 * one turn share a statement.
 *
 * The embedded database takes a batch as one `COPY usage FROM STDIN` (one call into PGlite,
 * rows inserted a page at a time: bench/pglite-usage.js); a server as one
 * `INSERT ... SELECT FROM unnest(arrays)`, up to `concurrency` at once on separate
 * connections (PostgreSQL can share one WAL flush between them; `crosstab serve` runs one
 * by default, which measured faster on two shared cores: docs/http.md).
 */
export class DbUsageSink implements UsageSink {
  private pending: Pending[] = [];
  private readonly flushing = new Set<Promise<void>>();
  /**
   * Flushes started and not finished, counted down in the same synchronous step that finds
   * nothing left to send: a record arriving after that step starts a new flush.
   */
  private active = 0;
  /** A flush is waiting for the event loop's next turn to take the pending records. */
  private starting = false;
  private closed = false;
  /**
   * Rows committed so far, the commits that did it, and the wall time those statements were
   * in flight (ms): commitMs / commits is what a billed call waits for the database.
   */
  readonly stats = { records: 0, commits: 0, commitMs: 0 };
  private writes: DurableWriteListener | undefined;

  observeWrites(listener: DurableWriteListener): void {
    this.writes = listener;
  }

  /**
   * `onEvent` is told when the sink closes: how many rows it committed, in how many
   * statements, and how long one took on average.
   */
  constructor(
    private readonly db: Queryable & Pick<Partial<Database>, 'copyFrom'>,
    private readonly concurrency = 1,
    private readonly options: { onEvent?: (event: 'usage_closed', message: string, stats?: DurableWriteStats) => void } = {},
  ) {}

  record(usage: UsageRecord): Promise<void> {
    if (this.closed) return Promise.reject(new Error('The usage sink is closed.'));
    if (usage.accountId === undefined) return Promise.reject(new Error(`Usage of key ${usage.keyId} has no account; it cannot be billed.`));
    return new Promise<void>((resolve, reject) => {
      this.pending.push({ usage, resolve, reject });
      if (!this.starting && this.active < this.concurrency) {
        this.starting = true;
        this.active++;
        const flush: Promise<void> = new Promise<void>((next) => setImmediate(next)).then(() => {
          this.starting = false;
          return this.flush();
        });
        this.flushing.add(flush);
        void flush.finally(() => this.flushing.delete(flush));
      }
    });
  }

  private async flush(): Promise<void> {
    try {
      while (this.pending.length > 0) {
        const batch = this.pending.splice(0, MAX_BATCH);
        try {
          const started = performance.now();
          await this.insert(batch);
          const ms = performance.now() - started;
          this.stats.commitMs += ms;
          this.writes?.(batch.length, ms / 1000);
          this.stats.records += batch.length;
          this.stats.commits++;
          for (const entry of batch) entry.resolve();
        } catch (error) {
          for (const entry of batch) entry.reject(error);
        }
      }
    } finally {
      this.active--;
    }
  }

  private async insert(batch: Pending[]): Promise<void> {
    if (this.db.copyFrom !== undefined) {
      let data = '';
      for (const { usage } of batch) {
        data += `${copyField(usage.requestId)}\t${copyField(usage.time)}\t${copyField(usage.accountId)}\t${copyField(usage.keyId)}\t${copyField(usage.survey)}\t${copyField(usage.targets)}\t${copyField(usage.operation ?? 'crosstab')}\t${usage.void === true ? copyField(usage.reason ?? 'client_closed') : '\\N'}\n`;
      }
      await this.db.copyFrom(COPY_USAGE, data);
      return;
    }
    // One array per column: the statement's text is the same for every batch, with no
    // VALUES list to parse that grows with the batch.
    const columns = [[], [], [], [], [], [], [], []] as unknown[][];
    for (const { usage } of batch) {
      columns[0]!.push(usage.requestId);
      columns[1]!.push(usage.time);
      columns[2]!.push(usage.accountId);
      columns[3]!.push(usage.keyId);
      columns[4]!.push(usage.survey);
      columns[5]!.push(usage.targets);
      columns[6]!.push(usage.operation ?? 'crosstab');
      columns[7]!.push(usage.void === true ? (usage.reason ?? 'client_closed') : null);
    }
    await this.db.query(INSERT_USAGE, columns);
  }

  async close(): Promise<void> {
    const first = !this.closed;
    this.closed = true;
    while (this.flushing.size > 0) await Promise.allSettled([...this.flushing]);
    if (!first) return;
    const { records, commits, commitMs } = this.stats;
    this.options.onEvent?.(
      'usage_closed',
      `Closed the usage sink: ${records} rows in ${commits} statements` +
        (commits === 0 ? '.' : ` (${(records / commits).toFixed(1)} billed calls per durable write, ${Math.round((commitMs * 1000) / commits)} µs per write on average).`),
      { records, durableWrites: commits, writeMs: commitMs },
    );
  }
}
