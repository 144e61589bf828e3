import type { MessagePort } from 'node:worker_threads';
import type { MainStreamMessage, WorkerStreamMessage } from './table-stream.js';

/**
 * A JSON or CSV table answer a worker streams (table-stream.ts): its exact size is known, and
 * nothing is sent until it is iterated (so the usage can be recorded first). Iterate it once;
 * each chunk taken lets the worker send one more, so at most STREAM_BYTES_IN_FLIGHT bytes of
 * it are on this thread. `cancel()` (or leaving the loop) stops the worker's sending.
 */
export class TableAnswerStream implements AsyncIterable<Uint8Array> {
  private readonly chunks: Uint8Array[] = [];
  private ended = false;
  private closed = false;
  private failure: unknown;
  private wake: (() => void) | undefined;
  private readonly closers: Array<() => void> = [];

  constructor(
    readonly byteLength: number,
    private readonly port: MessagePort,
    done: Promise<unknown>,
  ) {
    port.on('message', (message: WorkerStreamMessage) => {
      if ('chunk' in message) this.chunks.push(new Uint8Array(message.chunk));
      else if ('end' in message) this.ended = true;
      this.wake?.();
    });
    done.then(
      () => {
        // The task ended: whatever it sent has arrived before its answer.
        if (!this.ended && !this.closed) this.failure ??= new Error('the table worker ended before the answer was sent');
        this.wake?.();
      },
      (error: unknown) => {
        this.failure ??= error;
        this.wake?.();
      },
    );
  }

  /** Calls `closer` once when the stream ends: sent whole, failed or cancelled. */
  onClose(closer: () => void): void {
    if (this.closed) closer();
    else this.closers.push(closer);
  }

  /** Stops the worker's sending (nothing more arrives); idempotent. */
  cancel(): void {
    if (this.closed) return;
    this.post({ cancel: true });
    this.close();
  }

  private post(message: MainStreamMessage): void {
    try {
      this.port.postMessage(message);
    } catch {
      // The worker has gone: nothing to tell it.
    }
  }

  private close(): void {
    if (this.closed) return;
    this.closed = true;
    this.port.close();
    this.chunks.length = 0;
    for (const closer of this.closers.splice(0)) closer();
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<Uint8Array> {
    this.post({ go: true });
    let yielded = 0;
    try {
      for (;;) {
        const chunk = this.chunks.shift();
        if (chunk !== undefined) {
          this.post({ credit: 1 });
          yielded += chunk.byteLength;
          yield chunk;
          continue;
        }
        // Whole once its last byte is taken, without waiting for the worker's end message: the
        // sender then ends its response in the same turn as it hands the last bytes over, so a
        // client that reads them and closes at once finds the answer delivered (not voided).
        if (yielded === this.byteLength) this.ended = true;
        if (this.ended) return;
        if (this.closed) throw new Error('the table answer was cancelled');
        if (this.failure !== undefined) throw this.failure instanceof Error ? this.failure : new Error(String(this.failure));
        await new Promise<void>((resolve) => (this.wake = resolve));
        this.wake = undefined;
      }
    } finally {
      if (this.ended) this.close();
      else this.cancel();
    }
  }
}
