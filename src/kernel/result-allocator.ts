/**
 * Keeps the memory of freed result arrays in the process for the next table (Linux, glibc).
 *
 * A table's figures are copied out of kernel memory into arrays the caller owns (S3: three
 * 1.1 MB Float64Arrays per table). Node allocates array memory with malloc, and glibc's
 * malloc gives memory back to the operating system whenever more than its trim threshold
 * lies free at the top of the heap (`mallopt(3)`: M_TRIM_THRESHOLD, 128 KiB at start). The
 * garbage collector frees the arrays of many dropped tables at once, so that memory went
 * back to the system and every table's copy faulted in fresh pages (S3: about 820 page
 * faults, 2 ms, per table, plus the unmapping).
 *
 * glibc raises both thresholds by itself when a block it had mapped on its own is freed:
 * the mmap threshold to that block's size, the trim threshold to twice that (at most
 * 32 MiB and 64 MiB). Allocating and dropping one 31 MiB buffer makes that happen early:
 * afterwards blocks under 31 MiB come from the heap and up to 62 MiB of freed blocks stay
 * there for the next tables. Nothing else changes: the arrays are new, owned by the caller
 * alone, and hold the same figures. Where the host has set malloc's thresholds itself
 * (GLIBC_TUNABLES, mallopt) or another allocator is in use, this does nothing.
 */

/** Just under glibc's largest dynamic mmap threshold (32 MiB on 64-bit), page headers included. */
const PRIMING_BYTES = 31 * 2 ** 20;

let primed = false;

/**
 * Once per process on Linux: allocates and drops a buffer of PRIMING_BYTES (mapped, never
 * touched but one page) for the garbage collector to free.
 */
export function primeResultAllocator(): void {
  if (primed || process.platform !== 'linux') return;
  primed = true;
  // One written byte, so the allocation cannot be elided; the buffer is garbage on return.
  new Uint8Array(new ArrayBuffer(PRIMING_BYTES))[0] = 1;
}
