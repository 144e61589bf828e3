import { serviceError, type ServiceError } from './service-error.js';

/** How many tables one account may have in work and waiting. */
export interface FairShareLimits {
  /** Tables of one account computed at once; default 1. */
  running: number;
  /** Tables of one account waiting for a turn; past that, 429. Default 8. */
  waiting: number;
}

interface Turn {
  start: () => void;
}

/**
 * A fair share of the table workers per account: each account has at most `running` tables
 * in work; its further tables wait their turn in its own queue (at most `waiting`), so a key
 * that sends many large tables delays only itself, and every other account's next table
 * starts as soon as a worker is free.
 */
export class FairShare {
  private readonly accounts = new Map<string, { running: number; queue: Turn[] }>();

  constructor(private readonly limits: FairShareLimits) {}

  /**
   * Runs `work` in `account`'s turn, or answers 429 when the account already has its limit
   * waiting. A `signal` aborted while waiting leaves the queue (`work` never starts).
   */
  async run<T>(account: string, work: () => Promise<T>, signal?: AbortSignal): Promise<T | ServiceError> {
    let state = this.accounts.get(account);
    if (state === undefined) this.accounts.set(account, (state = { running: 0, queue: [] }));
    if (state.running >= this.limits.running) {
      if (state.queue.length >= this.limits.waiting) {
        return {
          ...serviceError(
            'rate_limited',
            `This account already has ${state.running} table(s) in work and ${state.queue.length} waiting, the most it may have.`,
            'Wait for your tables in progress to be answered before sending more.',
          ),
          retryAfterSeconds: 1,
        };
      }
      const turn: Turn = { start: () => {} };
      const started = new Promise<boolean>((resolve) => {
        turn.start = () => resolve(true);
        signal?.addEventListener('abort', () => resolve(false), { once: true });
      });
      state.queue.push(turn);
      if (!(await started)) {
        const at = state.queue.indexOf(turn);
        if (at >= 0) state.queue.splice(at, 1);
        else this.release(account); // Started and aborted at once: give the turn on.
        throw Object.assign(new Error('aborted while waiting for a table worker'), { code: 'ABORT_ERR' });
      }
    } else {
      state.running++;
    }
    try {
      return await work();
    } finally {
      this.release(account);
    }
  }

  private release(account: string): void {
    const state = this.accounts.get(account);
    if (state === undefined) return;
    const next = state.queue.shift();
    if (next !== undefined) {
      next.start(); // The turn passes on: `running` stays.
      return;
    }
    state.running--;
    if (state.running === 0) this.accounts.delete(account);
  }
}
