import type { Database } from '../access/index.js';

/** How long a store probe's answer stands: /readyz polled by several balancers costs one query a second. */
const PROBE_TTL_MS = 1000;

/**
 * The store check of GET /readyz: `SELECT 1` on the accounts database (through its guard, so
 * the probe also tells the store_down / store_up events when no request does), at most once
 * per second; undefined when it answered, else what went wrong.
 */
export function storeProbe(db: Pick<Database, 'query'>): () => Promise<string | undefined> {
  let last: { at: number; answer: Promise<string | undefined> } | undefined;
  return () => {
    const now = performance.now();
    if (last === undefined || now - last.at >= PROBE_TTL_MS) {
      last = {
        at: now,
        answer: db.query('SELECT 1').then(
          () => undefined,
          (error: unknown) => (error instanceof Error ? error.message : String(error)),
        ),
      };
    }
    return last.answer;
  };
}
