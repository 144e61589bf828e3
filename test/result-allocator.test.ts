import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { mainThreadKernel } from '../src/kernel/kernel.js';

// Copies of S3-sized result arrays (three 140,450-cell Float64Arrays per table) out of kernel
// memory, dropped in batches as a garbage collection frees them: after the main kernel has
// primed malloc (src/kernel/result-allocator.ts), the freed memory stays in the process and
// later copies reuse it instead of faulting in fresh pages. glibc's behaviour, so Linux with
// glibc only; each test file runs in a process of its own (vitest pool: forks).
const report = process.report.getReport() as { header?: { glibcVersionRuntime?: string } };
const glibc = process.platform === 'linux' && report.header?.glibcVersionRuntime !== undefined;
if (!glibc) console.warn('result-allocator.test.ts: SKIPPED, not Linux with glibc (the priming does nothing elsewhere)');

const CELLS = 140_450;
const PAGES_PER_TABLE = Math.ceil((3 * CELLS * 8) / 4096);

describe.runIf(glibc)('result arrays after the main kernel primes malloc (Linux, glibc)', () => {
  it('reuse the memory of dropped tables instead of faulting in fresh pages', () => {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    const kernel = mainThreadKernel();
    gc();
    gc();
    const memory = kernel.memory;
    const figures = memory.alloc(3 * CELLS * 8);
    memory.f64(figures, 3 * CELLS).fill(0.5);
    let held: Float64Array[] = [];
    let faults = 0;
    let sum = 0;
    for (let table = 0; table < 48; table++) {
      const before = process.resourceUsage().minorPageFault;
      for (let k = 0; k < 3; k++) held.push(memory.f64(figures + k * CELLS * 8, CELLS).slice());
      if (table >= 16) faults += process.resourceUsage().minorPageFault - before;
      // A host drops its tables; the collector frees several at once.
      if (table % 8 === 7) {
        sum += held.reduce((total, array) => total + array[CELLS - 1]!, 0);
        held = [];
        gc();
      }
    }
    memory.release(figures, 3 * CELLS * 8);
    expect(sum).toBe(48 * 3 * 0.5);
    // Without the priming every table faults in about all of its pages (PAGES_PER_TABLE).
    expect(faults / 32).toBeLessThan(PAGES_PER_TABLE / 4);
  });
});
