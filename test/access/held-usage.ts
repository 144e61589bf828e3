// The real DbUsageSink with its next billing record held by the test, and a poll: shared by the
// tests of void rows (a client that leaves while its usage row is being written).
import { DbUsageSink, type Database } from '../../src/access/index.js';
import type { UsageRecord, UsageSink } from '../../src/http/index.js';

export type HeldSink = UsageSink & { hold?: { recorded: () => void; release: Promise<void> } };

/** The real DbUsageSink; a record (not a void) resolves only once `hold` is released, when set. */
export function heldSink(db: Database): HeldSink {
  const real = new DbUsageSink(db);
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
