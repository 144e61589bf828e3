// Abort latency of bench/embedded-bench.js: a big crosstab() call (many targets) aborted a few
// milliseconds after it starts. Measured: abort → the call's rejection (`cancelled`), and
// abort → the answer of a small call made right after the abort, which waits for whatever
// work of the aborted call still holds the thread or the workers.

const percentile = (sorted, p) => (sorted.length === 0 ? 0 : sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))]);

/** `repeats` aborts of a `targets`-target call after `afterMs`; times in ms (p50, max). */
export async function abortLatency({ ds, next, repeats = 20, targets = 2000, afterMs = 5 }) {
  const rejected = [];
  const nextAnswered = [];
  const codes = new Set();
  for (let i = 0; i < repeats; i++) {
    const big = next();
    const query = { base: big.base, targets: Array.from({ length: targets }, () => next().targets[0]) };
    const controller = new AbortController();
    let abortedAt = 0;
    const call = ds.crosstab({ ...query, signal: controller.signal }).then(
      () => 'resolved',
      (error) => {
        rejected.push(performance.now() - abortedAt);
        return error.code;
      },
    );
    await new Promise((resolve) => setTimeout(resolve, afterMs));
    abortedAt = performance.now();
    controller.abort();
    await ds.crosstab(next());
    nextAnswered.push(performance.now() - abortedAt);
    codes.add(await call);
  }
  rejected.sort((a, b) => a - b);
  nextAnswered.sort((a, b) => a - b);
  return {
    repeats,
    targets,
    afterMs,
    outcomes: [...codes],
    rejectedP50Ms: percentile(rejected, 0.5),
    rejectedMaxMs: rejected.at(-1) ?? 0,
    nextAnsweredP50Ms: percentile(nextAnswered, 0.5),
    nextAnsweredMaxMs: nextAnswered.at(-1) ?? 0,
  };
}
