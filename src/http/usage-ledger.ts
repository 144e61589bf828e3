import type { DurableWriteListener, DurableWriteStats, UsageRecord, UsageSink } from '../keys/index.js';
import { CrosstabError, ErrorCode } from '../index.js';
import { nextTurn } from './event-loop-turn.js';
import { checkPath, closeLedgerFile, openLedgerFile, type LedgerFile } from './ledger-file.js';

export type { DurableWriteStats, UsageRecord, UsageSink, VoidReason } from '../keys/index.js';

export interface NdjsonLedgerOptions {
  /**
   * Told when the ledger reopens its path (the file or its folder was removed or renamed, or
   * reopen() was called), when it cuts a failed write back to the last whole record, and
   * when it closes (how many records it made durable, in how many writes, how long they took:
   * in words in `message`, as data in `stats`).
   */
  onEvent?: (event: 'ledger_reopened' | 'ledger_repaired' | 'ledger_closed', message: string, stats?: DurableWriteStats) => void;
  /**
   * While a flush is in flight, the next batch waits for it to end, gathering the records made
   * meanwhile, unless it holds at least this many records (default 64): then it is appended and
   * flushed at once, beside the flush in flight.
   */
  overlapRecords?: number;
  /**
   * …or unless its first record has waited this long (ms). Default: the mean time a batch's
   * append and flush have taken so far in this process, so a record waits for at most about
   * one flush before its own starts, also when a flush in flight is slow.
   */
  overlapWaitMs?: number;
}

/**
 * The records waiting to be appended together: their lines, and the one promise they all
 * wait on (a batch's records are answered, or refused, all at once).
 */
class Pending {
  text = '';
  count = 0;
  /** performance.now() when its first record was made. */
  readonly since = performance.now();
  readonly settled: Promise<void>;
  resolve!: () => void;
  reject!: (error: unknown) => void;

  constructor() {
    this.settled = new Promise<void>((resolve, reject) => {
      this.resolve = resolve;
      this.reject = reject;
    });
  }
}

/** One group of records appended in one write, in file order; settled once its flush returns. */
interface Batch {
  records: Pending;
  /** Where the batch starts in the file: a failure is cut back to here. */
  start: number;
  /** performance.now() when its append began. */
  began: number;
  /** Set when its append or flush has finished: `error` if either failed. */
  outcome?: { error?: unknown };
}

/**
 * The most flushes in flight at once. Each holds one of libuv's thread-pool threads (4 by
 * default) for the whole flush, so 3 leaves one for the next batch's append, a reopen and the
 * rest of the process's file work; more would only split the same records over more flushes,
 * which a journaling file system commits one after another anyway.
 */
const FLUSHES_IN_FLIGHT = 3;

/**
 * A waiting batch of this many records starts its flush beside one in flight. Each flush
 * costs the process CPU time of its own (a few hundred microseconds of system time on a
 * virtual disk: the device's kicks and the thread's sleep and wake), whatever it carries, so
 * a few records wait for the flush in flight rather than take one alone; a batch this large
 * already shares its flush widely.
 */
const OVERLAP_RECORDS = 64;

/** How much each new flush's duration moves the mean the default wait follows (an exponential moving average). */
const FLUSH_MEAN_WEIGHT = 1 / 8;

function checkOption(name: string, value: number | undefined, integer: boolean): void {
  if (value === undefined) return;
  if (!(integer ? Number.isInteger(value) && value >= 1 : Number.isFinite(value) && value >= 0)) {
    throw new CrosstabError(ErrorCode.invalidOption, `${name} must be ${integer ? 'a positive integer' : 'a number of milliseconds, 0 or more'}; got ${String(value)}.`, { field: name });
  }
}

/**
 * Append-only NDJSON ledger, one UsageRecord per line. Group commit, pipelined: the records
 * made in one turn of the event loop form a batch (one write to the page cache), flushed with
 * an `fdatasync` of its own. Records arriving while a batch is being flushed wait for that
 * flush to end and form the next batch, unless they reach `overlapRecords` or the first of
 * them has waited `overlapWaitMs` (by default, as long as a flush takes on average): then they
 * are appended and flushed beside it, up to FLUSHES_IN_FLIGHT flushes at once. So a record
 * waits for at most about one flush before its own, and each flush carries as many records
 * as that allows. Appends are made one at a time, so batches lie in the file in the order
 * they were formed.
 *
 * A record's promise resolves (its 200 is sent) only once its batch's own flush, issued after
 * the batch was appended, has returned and every earlier batch's record resolved: the records
 * answered always form a prefix of the file, made durable. So a crash can only leave, after
 * the last record answered, the batches that were in flight: any of their bytes may be
 * missing (a partial line, a run of zero bytes where a later page reached the disk before an
 * earlier one) or present (records of calls never answered). Readers skip lines that are not
 * JSON; reopening starts on a fresh line.
 *
 * A failed append or flush refuses its batch and every batch after it (rejected even if their
 * own flush succeeded: they lie after bytes that may be lost), waits for the flushes in flight
 * before it to settle, and cuts the file back to where the failed batch began before anything
 * else is written, so a disk-full error never glues the next record to a partial line.
 *
 * Before each batch the ledger checks that its open file is still the one at `path` (not
 * removed, renamed or replaced) and reopens the path if not (after the flushes in flight
 * settle), so log rotation and a removed folder cannot swallow records. That check is one
 * synchronous `stat` of the path, a few microseconds on a local file system and exact.
 */
export class NdjsonLedger implements UsageSink {
  /** The records of the next batch, if any. */
  private pending: Pending | undefined;
  /** Appended batches whose records are not yet resolved or rejected, in file order. */
  private inFlight: Batch[] = [];
  /** Flush handles of the open file not in use. */
  private idleSyncs: LedgerFile['syncs'];
  /** The loop appending batches, while there are records to append or a failure to cut. */
  private appending: Promise<void> | undefined;
  private waiters: Array<() => void> = [];
  /** The file must be cut back to this size before anything else is appended. */
  private cutAt: number | undefined;
  /** Why batches still in flight are refused: the first failure, until the cut is made. */
  private refusal: { error: unknown } | undefined;
  private closed = false;
  private reopenRequested = false;
  /**
   * Records made durable so far, the flushes that did it, reopens, and the wall time from each
   * batch's append to the end of its flush (ms): writeMs / flushes is what a billed call waits
   * for the disk, records / flushes how many calls share one flush. mostInFlight is the most
   * flushes that were in flight at once.
   */
  readonly stats = { records: 0, flushes: 0, reopens: 0, writeMs: 0, mostInFlight: 0 };
  private writes: DurableWriteListener | undefined;
  /** The mean time (ms) from a batch's append to the end of its flush, moving; undefined before the first. */
  private meanFlushMs: number | undefined;

  observeWrites(listener: DurableWriteListener): void {
    this.writes = listener;
  }

  private constructor(
    readonly path: string,
    private file: LedgerFile,
    private readonly onEvent: NonNullable<NdjsonLedgerOptions['onEvent']>,
    private readonly overlapRecords: number,
    private readonly overlapWaitMs: number | undefined,
  ) {
    this.idleSyncs = [...file.syncs];
  }

  /** Opens (creating if needed) the ledger for appending. */
  static async open(path: string, options: NdjsonLedgerOptions = {}): Promise<NdjsonLedger> {
    checkOption('overlapRecords', options.overlapRecords, true);
    checkOption('overlapWaitMs', options.overlapWaitMs, false);
    const file = await openLedgerFile(path, FLUSHES_IN_FLIGHT);
    return new NdjsonLedger(path, file, options.onEvent ?? (() => {}), options.overlapRecords ?? OVERLAP_RECORDS, options.overlapWaitMs);
  }

  record(usage: UsageRecord): Promise<void> {
    if (this.closed) return Promise.reject(new Error(`Usage ledger ${this.path} is closed.`));
    const pending = (this.pending ??= new Pending());
    pending.text += `${JSON.stringify(usage)}\n`;
    pending.count++;
    this.appending ??= this.appendLoop();
    return pending.settled;
  }

  /**
   * Reopens the path before the next record (call it on SIGHUP after rotating the file).
   * The file is checked before every batch anyway; this forces the reopen.
   */
  reopen(): void {
    this.reopenRequested = true;
  }

  /** Resolves the next time a batch settles. */
  private settled(): Promise<void> {
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  /** Resolves the next time a batch settles, or after `ms`, whichever comes first. */
  private settledOrAfter(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, ms);
      this.waiters.push(() => {
        clearTimeout(timer);
        resolve();
      });
    });
  }

  /** How much longer the waiting batch should wait for a flush in flight to end before starting its own (ms; 0: not at all). */
  private overlapDelay(pending: Pending): number {
    if (this.idleSyncs.length === this.file.syncs.length || pending.count >= this.overlapRecords) return 0;
    const wait = this.overlapWaitMs ?? this.meanFlushMs ?? 0;
    return Math.max(0, pending.since + wait - performance.now());
  }

  /**
   * Started only with records pending or a cut to make, so it always awaits before it ends:
   * `appending` is set before the loop clears it, in the same step that finds nothing to do.
   */
  private async appendLoop(): Promise<void> {
    /** Whether the records pending have waited for the turn of the event loop they were made in to end. */
    let gathered = false;
    for (;;) {
      if (this.cutAt !== undefined) {
        if (this.inFlight.length > 0) {
          await this.settled();
          continue;
        }
        try {
          await this.repair(this.cutAt);
        } catch (error) {
          // Refuse what waits (503), and try again with the next record.
          this.takePending()?.reject(error);
          break;
        }
        continue;
      }
      if (this.pending === undefined) break;
      // Records wait here while every flush handle is busy, making the next batch bigger.
      if (this.idleSyncs.length === 0) {
        await this.settled();
        continue;
      }
      // A few records wait for the flush in flight rather than take one of their own.
      const delay = this.overlapDelay(this.pending);
      if (delay > 0) {
        await this.settledOrAfter(delay);
        continue;
      }
      // A batch is taken one turn of the event loop after the flush handle it needs was found
      // free: the records of every request answered in this turn join it (each in a callback
      // of its own), rather than the first of them taking a flush alone.
      if (!gathered) {
        gathered = true;
        await nextTurn();
        continue;
      }
      gathered = false;
      const atPath = checkPath(this.path, this.file.identity);
      const changed = this.reopenRequested ? 'reopen requested' : atPath.changed;
      if (changed !== undefined) {
        if (this.inFlight.length > 0) {
          await this.settled();
          continue;
        }
        try {
          await this.reopenPath(changed);
        } catch (error) {
          this.takePending()?.reject(error);
        }
        continue;
      }
      await this.append((atPath as { size: number }).size);
    }
    this.appending = undefined;
  }

  private takePending(): Pending | undefined {
    const records = this.pending;
    this.pending = undefined;
    return records;
  }

  /** Appends the waiting records as one batch starting at `start`, and starts its flush. */
  private async append(start: number): Promise<void> {
    const records = this.takePending()!;
    const batch: Batch = { records, start, began: performance.now() };
    this.inFlight.push(batch);
    const text = Buffer.from(records.text);
    try {
      // A short write (a file-size limit) continues, then fails.
      for (let written = 0; written < text.length; ) written += (await this.file.append.write(text, written)).bytesWritten;
    } catch (error) {
      this.cutAt = Math.min(this.cutAt ?? start, start);
      this.settle(batch, error);
      return;
    }
    const sync = this.idleSyncs.pop()!;
    this.stats.mostInFlight = Math.max(this.stats.mostInFlight, this.file.syncs.length - this.idleSyncs.length);
    void sync.datasync().then(
      () => {
        const ms = performance.now() - batch.began;
        this.meanFlushMs = this.meanFlushMs === undefined ? ms : this.meanFlushMs + (ms - this.meanFlushMs) * FLUSH_MEAN_WEIGHT;
        this.idleSyncs.push(sync);
        this.settle(batch);
      },
      (error: unknown) => {
        this.idleSyncs.push(sync);
        this.settle(batch, error);
      },
    );
  }

  /** Records how `batch` ended, then resolves or rejects every batch at the head that has ended. */
  private settle(batch: Batch, error?: unknown): void {
    batch.outcome = error === undefined ? {} : { error };
    while (this.inFlight[0]?.outcome !== undefined) {
      const done = this.inFlight.shift()!;
      if (done.outcome!.error !== undefined && this.refusal === undefined) {
        this.refusal = { error: done.outcome!.error };
        this.cutAt = Math.min(this.cutAt ?? done.start, done.start);
      }
      if (this.refusal !== undefined) {
        done.records.reject(this.refusal.error);
        continue;
      }
      const ms = performance.now() - done.began;
      this.stats.records += done.records.count;
      this.stats.flushes++;
      this.stats.writeMs += ms;
      this.writes?.(done.records.count, ms / 1000);
      done.records.resolve();
    }
    // A failure found after the appending loop ended (e.g. while closing) is still cut back.
    if (this.cutAt !== undefined) this.appending ??= this.appendLoop();
    const waiters = this.waiters;
    this.waiters = [];
    for (const wake of waiters) wake();
  }

  /** Truncates a failed batch (and any after it) back to the last whole record. Throws while it cannot. */
  private async repair(size: number): Promise<void> {
    await this.file.append.truncate(size);
    await this.file.append.datasync();
    this.cutAt = undefined;
    this.refusal = undefined;
    this.onEvent('ledger_repaired', `A failed write to ${this.path} was cut back to the last whole record (${size} bytes).`);
  }

  /** Opens `path` afresh (nothing in flight) and closes the file it replaces. */
  private async reopenPath(reason: string): Promise<void> {
    const file = await openLedgerFile(this.path, FLUSHES_IN_FLIGHT);
    const previous = this.file;
    this.file = file;
    this.idleSyncs = [...file.syncs];
    this.reopenRequested = false;
    this.stats.reopens++;
    await closeLedgerFile(previous);
    this.onEvent('ledger_reopened', `Reopened usage ledger ${this.path}: ${reason}.`);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    while (this.appending !== undefined || this.inFlight.length > 0) await (this.appending ?? this.settled());
    await closeLedgerFile(this.file);
    const { records, flushes, writeMs } = this.stats;
    this.onEvent(
      'ledger_closed',
      `Closed usage ledger ${this.path}: ${records} records in ${flushes} durable writes` +
        (flushes === 0 ? '.' : ` (${(records / flushes).toFixed(1)} billed calls per durable write, ${Math.round((writeMs * 1000) / flushes)} µs per write on average).`),
      { records, durableWrites: flushes, writeMs },
    );
  }
}
