import { setMaxListeners } from 'node:events';
import { cancelledError } from '../errors.js';

/**
 * The calls in flight on one dataset, and its close(). A call rejects as soon as its signal
 * aborts or the dataset closes, but the work behind it (kernel tasks on the pool, the
 * main thread's part) runs on until it stops by itself at its next check, and the dataset's
 * memory is released only after the last piece of work has settled: nothing that a closed
 * dataset still has running ever writes into memory that another dataset has been given.
 */
export class InFlight {
  private readonly closing = (() => {
    const controller = new AbortController();
    // Every call in flight listens to it (through AbortSignal.any): hundreds at once are normal.
    setMaxListeners(0, controller.signal);
    return controller;
  })();
  private readonly running = new Set<Promise<unknown>>();
  private released: Promise<void> | undefined;

  /**
   * @param closedError the error of a call that the dataset's close() stopped
   * @param release frees what the dataset holds; called once, when close() was called and no work is left
   */
  constructor(
    private readonly closedError: () => Error,
    private readonly release: () => void,
  ) {}

  get closed(): boolean {
    return this.closing.signal.aborted;
  }

  /**
   * Runs `work` with a signal that aborts when `signal` does or the dataset closes. The
   * returned promise settles with the work, or rejects as soon as that signal aborts
   * (`dataset_closed` after close(), else `cancelled`).
   */
  run<T>(signal: AbortSignal | undefined, work: (signal: AbortSignal) => Promise<T>): Promise<T> {
    if (this.closed) return Promise.reject(this.closedError());
    if (signal?.aborted) return Promise.reject(cancelledError('the query'));
    const combined = signal ? AbortSignal.any([signal, this.closing.signal]) : this.closing.signal;
    const done = work(combined);
    const tracked = done.then(
      () => undefined,
      () => undefined,
    );
    this.running.add(tracked);
    void tracked.then(() => {
      this.running.delete(tracked);
      this.releaseIfIdle();
    });
    return new Promise<T>((resolve, reject) => {
      const onAbort = () => reject(this.closing.signal.aborted ? this.closedError() : cancelledError('the query'));
      combined.addEventListener('abort', onAbort, { once: true });
      done.then(
        (value) => {
          combined.removeEventListener('abort', onAbort);
          resolve(value);
        },
        (error: unknown) => {
          combined.removeEventListener('abort', onAbort);
          reject(error);
        },
      );
    });
  }

  /**
   * Stops every call in flight (each rejects at once) and resolves when their work has
   * settled and release() has run. Idempotent.
   */
  close(): Promise<void> {
    if (!this.released) {
      this.released = new Promise<void>((resolve, reject) => (this.settleRelease = { resolve, reject }));
      this.closing.abort();
      this.releaseIfIdle();
    }
    return this.released;
  }

  private settleRelease: { resolve: () => void; reject: (error: unknown) => void } | undefined;

  private releaseIfIdle(): void {
    const settle = this.settleRelease;
    if (!this.closed || this.running.size > 0 || !settle) return;
    this.settleRelease = undefined;
    try {
      this.release();
      settle.resolve();
    } catch (error) {
      settle.reject(error);
    }
  }
}
