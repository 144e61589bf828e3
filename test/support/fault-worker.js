// The pool worker of the fault tests: src/pool/worker.js, except that the first task to
// start after failNextPoolTask() (test/support/pool-faults.ts) made the fault file exits
// its thread, as a crashing worker would. Only one worker can remove the file, so exactly
// one task dies. The shipped worker has no such hook.
import { rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import run from '../../src/pool/worker.js';

/** Same path as faultFile() in pool-faults.ts: worker threads share the process id. */
const faultFile = join(tmpdir(), `crosstab-pool-fault-${process.pid}`);

export default function runOrFail(task) {
  try {
    rmSync(faultFile);
  } catch {
    return run(task);
  }
  process.exit(1);
}
