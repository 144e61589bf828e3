/**
 * The streamed answers a handler has handed to its shims and that are not yet sent: close()
 * waits for them (a table being read is delivered whole), up to its time limit, and then cuts
 * those left (a reader that stalled): their workers stop and each shim ends its response.
 */
import type { ResponseStream } from './answer-budget.js';

/** A ResponseStream the handler can cut: `cut` aborts then, and the shim ends the response at once. */
export interface CuttableStream extends ResponseStream {
  readonly cut: AbortSignal;
}

export class AnswersSending {
  private readonly open = new Map<ResponseStream, () => void>();
  private allSent: (() => void) | undefined;

  /** Streams not yet sent, cancelled or cut. */
  get size(): number {
    return this.open.size;
  }

  /** `stream`, counted until it is iterated to its end, left, cancelled or cut. */
  track(stream: ResponseStream): CuttableStream {
    const cut = new AbortController();
    let settled = false;
    const settle = (): void => {
      if (settled) return;
      settled = true;
      this.open.delete(tracked);
      if (this.open.size === 0) this.allSent?.();
    };
    const tracked: CuttableStream = {
      byteLength: stream.byteLength,
      cut: cut.signal,
      cancel() {
        stream.cancel();
        settle();
      },
      async *[Symbol.asyncIterator]() {
        try {
          yield* stream;
        } finally {
          settle();
        }
      },
    };
    this.open.set(tracked, () => {
      cut.abort();
      stream.cancel();
      settle();
    });
    return tracked;
  }

  /**
   * Resolves when every stream is sent, or after `timeoutMs`, when those left are cut;
   * resolves with the number cut.
   */
  async drain(timeoutMs: number): Promise<number> {
    if (this.open.size === 0) return 0;
    let timer: NodeJS.Timeout | undefined;
    const sent = new Promise<boolean>((resolve) => (this.allSent = () => resolve(true)));
    const late = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), timeoutMs)));
    const whole = await Promise.race([sent, late]);
    clearTimeout(timer);
    this.allSent = undefined;
    if (whole) return 0;
    const cuts = [...this.open.values()];
    for (const cutOne of cuts) cutOne();
    return cuts.length;
  }
}

/** Whether `stream` is one the handler can cut (the shims end their response when it is). */
export function cutSignalOf(stream: ResponseStream): AbortSignal | undefined {
  const cut = (stream as Partial<CuttableStream>).cut;
  return cut instanceof AbortSignal ? cut : undefined;
}
