// The soak of bench/embedded-bench.js: crosstab() calls kept at a fixed number in flight for
// minutes, in process, with a sample every few seconds of throughput, latency, memory (RSS,
// V8 heap, the kernel's WebAssembly memory) and the event loop's delay over that interval
// (perf_hooks.monitorEventLoopDelay, reset at each sample). Measurements are returned as data.
import { monitorEventLoopDelay } from 'node:perf_hooks';

const MB = 1e6;
const percentile = (sorted, p) => (sorted.length === 0 ? 0 : sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))]);

/**
 * Runs `inFlight` lanes of `ds.crosstab(next())` for `seconds`, sampling every `everySeconds`.
 * `kernelMemory` is the library's kernelMemoryUsage. Returns { series, summary }.
 */
export async function soak({ ds, next, seconds, inFlight, everySeconds, kernelMemory }) {
  const histogram = monitorEventLoopDelay({ resolution: 1 });
  histogram.enable();
  const series = [];
  let latencies = [];
  let failures = 0;
  const started = performance.now();
  const until = started + seconds * 1000;
  let last = started;
  const sample = () => {
    const now = performance.now();
    const memory = process.memoryUsage();
    const kernel = kernelMemory();
    const sorted = latencies.sort((a, b) => a - b);
    series.push({
      atSeconds: (now - started) / 1000,
      calls: sorted.length,
      callsPerSecond: sorted.length / ((now - last) / 1000),
      p50Ms: percentile(sorted, 0.5),
      p99Ms: percentile(sorted, 0.99),
      loopDelayP50Ms: histogram.percentile(50) / 1e6,
      loopDelayP99Ms: histogram.percentile(99) / 1e6,
      loopDelayMaxMs: histogram.max / 1e6,
      rssMB: memory.rss / MB,
      heapUsedMB: memory.heapUsed / MB,
      heapTotalMB: memory.heapTotal / MB,
      externalMB: memory.external / MB,
      kernelReservedMB: kernel.reservedBytes / MB,
      kernelAllocatedMB: kernel.allocatedBytes / MB,
    });
    latencies = [];
    histogram.reset();
    last = now;
  };
  const timer = setInterval(sample, everySeconds * 1000);
  const lane = async () => {
    while (performance.now() < until) {
      const t = performance.now();
      try {
        await ds.crosstab(next());
        latencies.push(performance.now() - t);
      } catch {
        failures++;
      }
    }
  };
  await Promise.all(Array.from({ length: inFlight }, lane));
  clearInterval(timer);
  sample();
  histogram.disable();
  return { series, summary: summarize(series, failures) };
}

/** First and last samples after the first (warm-up) one, the worst interval, and whether the event loop stayed under 20 ms p99. */
function summarize(series, failures) {
  const steady = series.length > 2 ? series.slice(1) : series;
  const first = steady[0];
  const lastSample = steady.at(-1);
  const worstLoopP99 = Math.max(...steady.map((s) => s.loopDelayP99Ms));
  const calls = series.reduce((total, s) => total + s.calls, 0);
  return {
    calls,
    failures,
    callsPerSecond: calls / series.at(-1).atSeconds,
    rssGrowthMB: lastSample.rssMB - first.rssMB,
    heapUsedGrowthMB: lastSample.heapUsedMB - first.heapUsedMB,
    kernelAllocatedGrowthMB: lastSample.kernelAllocatedMB - first.kernelAllocatedMB,
    maxRssMB: Math.max(...series.map((s) => s.rssMB)),
    worstIntervalLoopDelayP99Ms: worstLoopP99,
    medianIntervalLoopDelayP99Ms: [...steady.map((s) => s.loopDelayP99Ms)].sort((a, b) => a - b)[Math.floor(steady.length / 2)],
    loopDelayTargetP99Ms: 20,
  };
}
