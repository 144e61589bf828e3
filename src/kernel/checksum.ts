import type { Kernel } from './kernel.js';

/** Bytes copied into kernel memory per step when hashing a buffer that lives outside it. */
const CHUNK = 1 << 20;
/** Zero bytes a buffer may be hashed with after its own (a dataset buffer's padding is less). */
const ZEROS_ROOM = 64;

/** XXH64 as 16 lowercase hex digits. */
export function hex(hash: bigint): string {
  return BigInt.asUintN(64, hash).toString(16).padStart(16, '0');
}

/**
 * XXH64 of bytes already in kernel memory, in CHUNK steps: V8 runs a WebAssembly function
 * first as baseline code and swaps in the optimised code between calls (never during one), so
 * one call over the first buffer a process reads (tens of MB) would run wholly at baseline
 * speed, several times slower.
 */
export function checksumInKernel(kernel: Kernel, ptr: number, length: number): string {
  const { exports } = kernel;
  const state = kernel.scratchState;
  exports.xxh64Init(state, 0n);
  let at = 0;
  // Every chunk but the last is a multiple of 32 bytes, as xxh64Update requires.
  for (; length - at > CHUNK; at += CHUNK) exports.xxh64Update(state, ptr + at, CHUNK);
  return hex(exports.xxh64Digest(state, ptr + at, length - at));
}

/**
 * Hashes buffers that live in JavaScript memory (the dataset writer) by streaming them
 * through one reused 1 MiB window of kernel memory: the build never grows kernel memory by
 * the size of its largest buffer.
 */
export class StreamingChecksum {
  private window = 0;

  constructor(private readonly kernel: Kernel) {}

  /**
   * XXH64 of `bytes` followed by `zeros` zero bytes (at most 64: a buffer's padding in the
   * file, hashed without a padded copy of the buffer being made), seed 0.
   */
  of(bytes: Uint8Array, zeros = 0): string {
    if (!(zeros >= 0 && zeros <= ZEROS_ROOM)) throw new Error(`StreamingChecksum.of: ${zeros} zero bytes, at most ${ZEROS_ROOM}`);
    const { kernel } = this;
    this.window ||= kernel.memory.alloc(CHUNK + ZEROS_ROOM, false);
    const state = kernel.scratchState;
    kernel.exports.xxh64Init(state, 0n);
    let at = 0;
    // Every chunk but the last is a multiple of 32 bytes, as xxh64Update requires.
    while (bytes.byteLength - at > CHUNK) {
      kernel.memory.bytes(this.window, CHUNK).set(bytes.subarray(at, at + CHUNK));
      kernel.exports.xxh64Update(state, this.window, CHUNK);
      at += CHUNK;
    }
    const rest = bytes.byteLength - at;
    const last = kernel.memory.bytes(this.window, rest + zeros);
    last.set(bytes.subarray(at));
    last.fill(0, rest);
    return hex(kernel.exports.xxh64Digest(state, this.window, rest + zeros));
  }

  /**
   * XXH64 of the `length` bytes at `ptr` in kernel memory (a multiple of 32) followed by
   * `tail` (at most 1 MiB), seed 0: bytes of which only the first part is still where they
   * were read, the rest kept aside.
   */
  ofKernelThen(ptr: number, length: number, tail: Uint8Array): string {
    if (length % 32 !== 0 || tail.byteLength > CHUNK) throw new Error(`StreamingChecksum.ofKernelThen: ${length} bytes (a multiple of 32) then ${tail.byteLength} (at most ${CHUNK})`);
    const { kernel } = this;
    this.window ||= kernel.memory.alloc(CHUNK + ZEROS_ROOM, false);
    const state = kernel.scratchState;
    kernel.exports.xxh64Init(state, 0n);
    kernel.exports.xxh64Update(state, ptr, length);
    kernel.memory.bytes(this.window, tail.byteLength).set(tail);
    return hex(kernel.exports.xxh64Digest(state, this.window, tail.byteLength));
  }

  /** Gives the window back to the kernel allocator. */
  dispose(): void {
    if (this.window) this.kernel.memory.release(this.window, CHUNK + ZEROS_ROOM);
    this.window = 0;
  }
}
