import { setMaxListeners } from 'node:events';
import { cancelledError } from '../errors.js';

/**
 * The calls in flight on one dataset, and its close(). A call rejects as soon as its signal
 * aborts or the dataset closes (unless close() drains: then the calls in flight run to
 * their end, up to a time limit, and only new calls are refused), but the work behind it (kernel tasks on the pool, the
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
  private readonly running = new Set<object>();
  private released: Promise<void> | undefined;
  /** Set by close(): new calls are refused from then on, while a drain lets the running ones finish. */
  private refusing = false;
  /** The drain's time limit, while close({ drain }) waits for the calls in flight. */
  private drainTimer: NodeJS.Timeout | undefined;

  /**
   * @param closedError the error of a call that the dataset's close() stopped
   * @param release frees what the dataset holds; called once, when close() was called and no work is left
   */
  constructor(
    private readonly closedError: () => Error,
    private readonly release: () => void,
  ) {}

  /**
   * Whether new calls are refused: close() was called, and no hold is open while it drains
   * (a hold's calls are admitted until the drain's time limit).
   */
  get closed(): boolean {
    return this.refusing && (this.holds.size === 0 || this.closing.signal.aborted);
  }

  /** Open holds (hold()): each resolves its promise when released. */
  private readonly holds = new Map<Promise<void>, () => void>();

  /**
   * Keeps the dataset open for a piece of work made of several calls (a service's request,
   * which picked this dataset before it was replaced): until the returned function is called,
   * a draining close() waits for it and still admits calls, up to the drain's time limit (then
   * the calls are stopped and the hold no longer counts). On a closed dataset it holds nothing.
   */
  hold(): () => void {
    if (this.closed) return () => {};
    let resolve!: () => void;
    const held = new Promise<void>((settle) => (resolve = settle));
    this.holds.set(held, resolve);
    return () => {
      if (!this.holds.delete(held)) return;
      resolve();
      this.releaseIfIdle();
    };
  }

  /** Calls whose work has not settled yet. */
  get size(): number {
    return this.running.size;
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
    // One token per call, ended by the one reaction below that settles the call, rather than
    // a promise of the work's settling and another reaction to that.
    const token = {};
    this.running.add(token);
    const ended = (): void => {
      this.running.delete(token);
      this.releaseIfIdle();
    };
    return new Promise<T>((resolve, reject) => {
      const onAbort = () => reject(this.closing.signal.aborted ? this.closedError() : cancelledError('the query'));
      // Without a signal of the caller's, stop() rejects the call from `stopping`: an abort
      // listener added and removed per call cost as much as a cached answer's lookup.
      if (signal === undefined) this.stopping.add(onAbort);
      else combined.addEventListener('abort', onAbort, { once: true });
      const detach = (): void => {
        if (signal === undefined) this.stopping.delete(onAbort);
        else combined.removeEventListener('abort', onAbort);
      };
      done.then(
        (value) => {
          detach();
          resolve(value);
          ended();
        },
        (error: unknown) => {
          detach();
          reject(error);
          ended();
        },
      );
    });
  }

  /** The rejections of the calls in flight that brought no signal, called by stop(). */
  private readonly stopping = new Set<() => void>();

  /**
   * Refuses new calls and resolves when the work of the calls in flight has settled and
   * release() has run. Without `drainMs`, every call in flight is stopped (each rejects at
   * once); with it, they run to their end, and those still running after `drainMs`
   * milliseconds are stopped then. A later close() without a drain stops them at once; the
   * promise is always the first one.
   */
  close(drainMs?: number): Promise<void> {
    if (!this.released) {
      this.released = new Promise<void>((resolve, reject) => (this.settleRelease = { resolve, reject }));
      this.refusing = true;
      if (drainMs !== undefined && (this.running.size > 0 || this.holds.size > 0)) {
        this.drainTimer = setTimeout(() => this.stop(), drainMs);
      } else {
        this.stop();
      }
    } else if (drainMs === undefined) {
      this.stop();
    }
    return this.released;
  }

  /** Stops the calls in flight (each rejects with the closed error) and releases once their work settles. */
  private stop(): void {
    clearTimeout(this.drainTimer);
    this.drainTimer = undefined;
    if (!this.closing.signal.aborted) this.closing.abort();
    // Past the drain, a hold keeps nothing open: its calls are stopped with the others.
    for (const resolve of this.holds.values()) resolve();
    this.holds.clear();
    const stopping = [...this.stopping];
    this.stopping.clear();
    for (const reject of stopping) reject();
    this.releaseIfIdle();
  }

  private settleRelease: { resolve: () => void; reject: (error: unknown) => void } | undefined;

  private releaseIfIdle(): void {
    const settle = this.settleRelease;
    if (!this.refusing || this.running.size > 0 || this.holds.size > 0 || !settle) return;
    this.settleRelease = undefined;
    clearTimeout(this.drainTimer);
    this.drainTimer = undefined;
    try {
      this.release();
      settle.resolve();
    } catch (error) {
      settle.reject(error);
    }
  }
}
