import { monitorEventLoopDelay, type IntervalHistogram } from 'node:perf_hooks';
import { sharedPoolStats, type PoolStats } from '../pool/pool.js';
import type { Dataset } from './dataset.js';
import { kernelMemoryUsage, type KernelMemoryUsage } from './kernel-memory.js';

/** One open dataset's figures in engineStats(). */
export interface DatasetStats {
  survey: string;
  respondents: number;
  /** The dataset file's checksum: it changes with every build, so it names the version served. */
  checksum: string;
  /** When the dataset file was built (ISO 8601). */
  createdAt: string;
  /** crosstab() calls answered wholly from the cell cache, and calls that asked the engine. */
  cacheHits: number;
  cacheMisses: number;
  /** Cells the cache holds now, and the most it may hold (0 = off). */
  cachedCells: number;
  maxCachedCells: number;
}

/** What engineStats() reports: everything a host needs to export as metrics of the engine. */
export interface EngineStats {
  datasets: DatasetStats[];
  /** The worker pool, or undefined while no query has needed it. */
  pool: PoolStats | undefined;
  /**
   * Event-loop delay in seconds since the previous engineStats() call (node's
   * monitorEventLoopDelay, started by the first call: that call reports zeros).
   */
  eventLoopDelay: { p50: number; p99: number; max: number };
  /** process.memoryUsage() in bytes, and the kernel's WebAssembly memory (counted in rss only). */
  memory: { rss: number; heapUsed: number; heapTotal: number; external: number; arrayBuffers: number; kernel: KernelMemoryUsage };
}

let loop: IntervalHistogram | undefined;

/**
 * The engine's figures now, for a host's monitoring (`crosstab serve --metrics-port` exports
 * them; an embedding service can register them in its own metrics registry): per dataset its
 * size, version and cell cache counts, the worker pool's counts, event-loop delay and memory.
 * Counts only grow (except the pool's after closePool()); read them as counters.
 */
export function engineStats(datasets: readonly Dataset[] = []): EngineStats {
  let eventLoopDelay = { p50: 0, p99: 0, max: 0 };
  if (loop === undefined) {
    loop = monitorEventLoopDelay({ resolution: 10 });
    loop.enable();
  } else if (loop.count > 0) {
    eventLoopDelay = { p50: loop.percentile(50) / 1e9, p99: loop.percentile(99) / 1e9, max: loop.max / 1e9 };
    loop.reset();
  }
  const { rss, heapUsed, heapTotal, external, arrayBuffers } = process.memoryUsage();
  return {
    datasets: datasets.map((dataset) => {
      const cache = dataset.cacheStats();
      return {
        survey: dataset.info.survey,
        respondents: dataset.info.respondents,
        checksum: dataset.info.checksum,
        createdAt: dataset.info.createdAt,
        cacheHits: cache.hits,
        cacheMisses: cache.misses,
        cachedCells: cache.cells,
        maxCachedCells: cache.maxCells,
      };
    }),
    pool: sharedPoolStats(),
    eventLoopDelay,
    memory: { rss, heapUsed, heapTotal, external, arrayBuffers, kernel: kernelMemoryUsage() },
  };
}
