// FairShare: one account's tables wait for one another, never another account's; past the
// waiting limit, 429; a waiting request whose client has gone leaves the queue.
import { describe, expect, it } from 'vitest';
import { FairShare } from '../../src/http/fair-share.js';

/** A piece of work that finishes when told to. */
function gate(): { promise: Promise<string>; open: (value: string) => void } {
  let open: (value: string) => void = () => {};
  const promise = new Promise<string>((resolve) => (open = resolve));
  return { promise, open };
}

describe('FairShare', () => {
  it('runs one table per account at a time, another account at once, and refuses past the waiting limit', async () => {
    const share = new FairShare({ running: 1, waiting: 1 });
    const started: string[] = [];
    const first = gate();
    const a1 = share.run('a', () => (started.push('a1'), first.promise));
    const a2 = share.run('a', async () => (started.push('a2'), 'a2'));
    const refused = await share.run('a', async () => 'a3');
    expect(refused).toMatchObject({ code: 'rate_limited', retryAfterSeconds: 1 });
    // Another account is not behind account a's queue.
    expect(await share.run('b', async () => (started.push('b1'), 'b1'))).toBe('b1');
    expect(started).toEqual(['a1', 'b1']);
    first.open('a1');
    expect(await a1).toBe('a1');
    expect(await a2).toBe('a2');
    expect(started).toEqual(['a1', 'b1', 'a2']);
    // All turns given back: the account runs again at once.
    expect(await share.run('a', async () => 'again')).toBe('again');
  });

  it('a waiting request whose signal aborts never starts, and the queue goes on', async () => {
    const share = new FairShare({ running: 1, waiting: 4 });
    const first = gate();
    const a1 = share.run('a', () => first.promise);
    const gone = new AbortController();
    let ranAbandoned = false;
    const abandoned = share.run('a', async () => ((ranAbandoned = true), 'no'), gone.signal);
    const a3 = share.run('a', async () => 'a3');
    gone.abort();
    await expect(abandoned).rejects.toThrow(/aborted/);
    first.open('a1');
    expect(await a1).toBe('a1');
    expect(await a3).toBe('a3');
    expect(ranAbandoned).toBe(false);
  });
});
