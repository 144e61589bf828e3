/** One billable call: a successful POST /crosstab or POST /tables. */
export interface UsageRecord {
  /** ISO 8601 time the result was computed. */
  time: string;
  /** The X-Request-Id of the call. */
  requestId: string;
  /** Id of the API key (never the key). */
  keyId: string;
  survey: string;
  /** POST /crosstab: its target codes (1 or 2); POST /tables: its row and column entries, whole variables expanded; POST /tabbooks: its number of tables. */
  targets: number;
  /** Which operation was billed; absent in records written before tables were served (crosstab). */
  operation?: 'crosstab' | 'table' | 'tabbook';
  /** The account billed, when the key belongs to one (database keys, single sign-on). */
  accountId?: string;
  /**
   * A void (credit) record: the answer of the record with this requestId was billed and then
   * not delivered (its connection closed before the last byte was handed to the kernel, or
   * its response could not be written). The other fields repeat that record's; `time` is when
   * the void was made. Readers count a call only when no void names its requestId.
   */
  void?: true;
  /** Why a void record was made (only with `void`). */
  reason?: VoidReason;
}

/**
 * Why a billed answer was voided: `client_closed` its connection closed (or failed) before
 * the answer's last byte was handed to the kernel; `send_failed` the response could not be
 * written (a header refused, the answer failed while streaming); `shutdown_cut` a streamed
 * answer still being sent at the shutdown deadline.
 */
export type VoidReason = 'client_closed' | 'send_failed' | 'shutdown_cut';

/**
 * Where usage goes. `record` resolves once the record is durable; the handler sends the 200
 * only after that, and sends no 200 when it rejects.
 */
export interface UsageSink {
  record(usage: UsageRecord): Promise<void>;
  /** Waits for pending records, then releases the sink. */
  close(): Promise<void>;
  /**
   * Optional: calls `listener` after each durable write (ledger flush, database commit) with
   * the records it held and its wall time in seconds. One listener; a later call replaces it.
   */
  observeWrites?(listener: DurableWriteListener): void;
}

/** Told of each durable write of a usage sink: records held, seconds in flight. */
export type DurableWriteListener = (records: number, seconds: number) => void;

/**
 * What a usage sink made durable, as data for measurements (logs say it in words): records,
 * the durable writes that held them (ledger fsyncs, database commits) and the wall time those
 * writes were in flight, in ms.
 */
export interface DurableWriteStats {
  records: number;
  durableWrites: number;
  writeMs: number;
}
