// The pool worker of the cancellation tests: src/pool/worker.js, which also counts the cells
// programs it ran to the end (one byte appended to a file per program), so a test can see
// how much work an aborted call still did. The shipped worker has no such hook.
import { appendFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import run from '../../src/pool/worker.js';

/** Same path as countFile() in pool-counts.ts: worker threads share the process id. */
const countFile = join(tmpdir(), `crosstab-pool-programs-${process.pid}`);

export default function runAndCount(task) {
  const result = run(task);
  if (task.program && result !== null) appendFileSync(countFile, '.');
  return result;
}
