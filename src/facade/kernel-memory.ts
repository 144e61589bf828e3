import { mainThreadKernel } from '../kernel/kernel.js';

/** The process's kernel memory, for a host's monitoring. */
export interface KernelMemoryUsage {
  /** Size of the WebAssembly memory shared by the calling thread and the pool's workers: it grows, it never shrinks. */
  reservedBytes: number;
  /** Bytes in use within it: open datasets, scratch bitsets, weight runs, results of calls in flight. */
  allocatedBytes: number;
}

/** How much kernel memory the process holds now (process.memoryUsage() counts it in `rss` only). */
export function kernelMemoryUsage(): KernelMemoryUsage {
  const memory = mainThreadKernel().memory;
  return { reservedBytes: memory.memory.buffer.byteLength, allocatedBytes: memory.allocatedBytes };
}
