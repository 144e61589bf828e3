// Warmup, then timed repetitions with a per-contestant time budget.
import { readFileSync } from 'node:fs';

export function stats(samples) {
  const sorted = [...samples].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  const median = sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
  return { median, min: sorted[0], max: sorted[sorted.length - 1], reps: sorted.length };
}

const collect = () => { if (globalThis.gc) globalThis.gc(); };

/**
 * Runs `fn` `warmup` times untimed, then up to `reps` times timed (ms). Stops early
 * once `minReps` are done and `budgetMs` of timed runs is spent. With `collectEach` (the
 * default) a full garbage collection precedes each timed run: no run pays for another's
 * garbage, and each starts with the processor's caches cold (the collection walks the heap).
 * Without it the runs follow each other, caches warm, as a server's stream of queries does.
 */
export async function measure(fn, { warmup, reps, minReps = 3, budgetMs, collectEach = true }) {
  for (let i = 0; i < warmup; i++) await fn();
  const samples = [];
  let spent = 0;
  for (let i = 0; i < reps; i++) {
    if (collectEach) collect();
    const start = performance.now();
    await fn();
    const ms = performance.now() - start;
    samples.push(ms);
    spent += ms;
    if (samples.length >= Math.min(minReps, reps) && spent >= budgetMs) break;
  }
  return stats(samples);
}

/**
 * Peak RSS so far of this process, bytes: VmHWM from /proc/self/status on Linux.
 * Not getrusage's maxRSS: that survives fork+exec, so a child spawned by a big
 * harness would report the harness's size.
 */
export function peakRss() {
  try {
    const match = /^VmHWM:\s+(\d+) kB/m.exec(readFileSync('/proc/self/status', 'utf8'));
    if (match) return Number(match[1]) * 1024;
  } catch {
    // not Linux
  }
  return process.resourceUsage().maxRSS * 1024;
}
