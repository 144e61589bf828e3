import type { IncomingMessage, ServerResponse } from 'node:http';
import type { UsageRecord, UsageSink, VoidReason } from '../keys/index.js';
import type { HandlerResponse } from './handler-types.js';

/**
 * The HandlerResponse of a billed answer carries its BilledAnswer under this symbol, so the
 * mount that writes the response can void the record when the answer is not delivered.
 * Internal: not part of HandlerResponse's documented shape.
 */
export const BILLED: unique symbol = Symbol.for('crosstab-engine.billed') as never;

/** A response that may carry BILLED. */
export type BilledResponse = HandlerResponse & { [BILLED]?: BilledAnswer };

/** What the handler does with a void: append it to the usage sink, log and count it. */
export interface VoidWriter {
  write(answer: BilledAnswer, reason: VoidReason): void;
}

/**
 * One billed answer whose usage record is durable: voided at most once, and only by the
 * mount that saw it not delivered (the record of a delivered answer is never voided).
 */
export class BilledAnswer {
  private settled = false;
  /** The node:http response, while it waits behind another on its connection (see watchNodeDelivery). */
  queued: ServerResponse | undefined = undefined;

  constructor(
    readonly record: UsageRecord,
    /** The operationId (metrics label). */
    readonly operation: string,
    private readonly voids: VoidWriter,
  ) {}

  /** Not delivered: writes the void record (once; later calls do nothing). */
  undelivered(reason: VoidReason): void {
    if (this.settled) return;
    this.settled = true;
    this.voids.write(this, reason);
  }
}

/** The void of `record`: its fields, `void`, the reason, and a time strictly after the record's. */
export function voidRecord(record: UsageRecord, reason: VoidReason): UsageRecord {
  // Strictly later than the record (whose time is stamped to the millisecond before its
  // flush): a store keyed on (account, time, request) then never sees the two collide.
  const time = new Date(Math.max(Date.now(), Date.parse(record.time) + 1)).toISOString();
  const made: UsageRecord = { time, requestId: record.requestId, keyId: record.keyId, survey: record.survey, targets: record.targets };
  if (record.operation !== undefined) made.operation = record.operation;
  if (record.accountId !== undefined) made.accountId = record.accountId;
  made.void = true;
  made.reason = reason;
  return made;
}

/**
 * Tracks the void records being written, so the handler's close waits for them before it
 * closes the usage sink. A void that fails (the store down, the sink closed) is logged with
 * the request's id: that call stays billed.
 */
export class UsageVoids implements VoidWriter {
  private readonly writing = new Set<Promise<void>>();

  constructor(
    private readonly usage: UsageSink,
    private readonly done: (answer: BilledAnswer, reason: VoidReason, error?: unknown) => void,
  ) {}

  write(answer: BilledAnswer, reason: VoidReason): void {
    let written: Promise<void>;
    try {
      written = this.usage.record(voidRecord(answer.record, reason));
    } catch (error) {
      written = Promise.reject(error);
    }
    const tracked = written.then(
      () => this.done(answer, reason),
      (error: unknown) => this.done(answer, reason, error),
    );
    this.writing.add(tracked);
    void tracked.finally(() => this.writing.delete(tracked));
  }

  /** Resolves once every void written so far is durable or has failed. */
  async settled(): Promise<void> {
    while (this.writing.size > 0) await Promise.allSettled([...this.writing]);
  }
}

type WatchedResponse = ServerResponse & { [BILLED]?: BilledAnswer };

/**
 * 'close' of a watched node:http response: one function for every response (no closure per
 * request). Delivered means 'finish' came first: the last byte was handed to the kernel.
 */
function onBilledClose(this: WatchedResponse): void {
  if (!this.writableFinished) this[BILLED]?.undelivered('client_closed');
}

/**
 * Voids the usage record of `response` if the node:http response `res` is not delivered: its
 * connection closes (or fails) before 'finish'. Call it before writing the response. Does
 * nothing for an answer not billed. Returns the BilledAnswer (the caller voids it with a more
 * precise reason when it gives the response up itself).
 */
export function watchNodeDelivery(res: ServerResponse, response: HandlerResponse): BilledAnswer | undefined {
  const billed = (response as BilledResponse)[BILLED];
  if (billed === undefined) return undefined;
  // Gone already (during the record's flush), or the connection destroyed under a response
  // still queued behind another on it.
  if (res.destroyed || res.req?.socket?.destroyed === true) {
    billed.undelivered('client_closed');
    return billed;
  }
  (res as WatchedResponse)[BILLED] = billed;
  res.on('close', onBilledClose);
  // Pipelined behind another answer on its connection, the response has no socket yet, and
  // node:http never closes it if the connection ends first: its request's close says so.
  if (res.socket === null && res.req !== undefined) {
    billed.queued = res;
    (res.req as WatchedRequest)[BILLED] = billed;
    res.req.on('close', onQueuedRequestClose);
  }
  return billed;
}

type WatchedRequest = IncomingMessage & { [BILLED]?: BilledAnswer };

/**
 * 'close' of the request of a queued response: not delivered only when its connection is
 * destroyed before the response finished (a request may close before its answer is written
 * while the connection lives on: that is no loss).
 */
function onQueuedRequestClose(this: WatchedRequest): void {
  const billed = this[BILLED];
  const res = billed?.queued;
  if (res !== undefined && !res.writableFinished && this.socket?.destroyed === true) billed!.undelivered('client_closed');
}
