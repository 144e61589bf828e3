// A real usage sink (the NDJSON ledger, DbUsageSink) with its next billing record held by the
// test, and a poll: shared by the tests of void records (a client that leaves while its usage
// record is being written). Types only from the sources: billed-void runs on dist/, whose sinks
// have the same shape.
import type { UsageRecord, UsageSink } from '../../src/http/index.js';

export type HeldSink = UsageSink & { hold?: { recorded: () => void; release: Promise<void> } };

/**
 * `real`, whose record (not a void) resolves only once `hold` (when set) is released: to the
 * handler, a write that takes as long as the test wants. `recorded` is told once the record is
 * durable (the real sink's record resolved).
 */
export function held(real: UsageSink): HeldSink {
  const sink: HeldSink = {
    async record(usage: UsageRecord) {
      await real.record(usage);
      const hold = sink.hold;
      if (hold !== undefined && usage.void !== true) {
        sink.hold = undefined;
        hold.recorded();
        await hold.release;
      }
    },
    close: () => real.close(),
  };
  return sink;
}

/** Waits until `done` holds, polling every 10 ms; fails naming `what` after 20 s. */
export async function until(done: () => boolean | Promise<boolean>, what: string): Promise<void> {
  for (let waited = 0; !(await done()); waited += 10) {
    if (waited > 20_000) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
