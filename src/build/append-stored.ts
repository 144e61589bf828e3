/**
 * How appendRows() extends a stored buffer at the cost of a copy: the old buffer's bytes are
 * read from the dataset file straight into one region of kernel memory, checked there against
 * their hash, and the new buffer is made over them in place (the new respondents' part after
 * the old respondents', which stay where they are) and hashed there for the writer. The bytes
 * the old and the new buffer share are hashed once: XXH64 is a stream, so its state after them
 * is the start of both the old hash (checked) and the new one (written).
 */
import { hex } from '../kernel/checksum.js';
import type { Kernel } from '../kernel/kernel.js';
import type { LoadedDataset } from '../dataset/file/reader.js';
import type { HashedBuffer } from '../dataset/file/writer.js';

/** XXH64 reads 32-byte stripes: a state can be kept only after a multiple of 32 bytes. */
const STRIPE = 32;

export class StoredExtension {
  private readonly ptr: number;
  private readonly state: number;
  private readonly stateBytes: number;
  /** Old buffers read and checked here. */
  readonly checked = new Set<number>();

  /** `capacity`: the stored bytes of the largest buffer, old or new, made here. */
  constructor(
    private readonly kernel: Kernel,
    private readonly data: LoadedDataset,
    private readonly capacity: number,
  ) {
    this.stateBytes = kernel.layout.xxh64StateBytes;
    this.state = kernel.memory.alloc(this.stateBytes);
    this.ptr = kernel.memory.alloc(capacity, false);
  }

  /**
   * A new buffer of `stored` bytes (padding included) made from old buffer `row` (undefined:
   * from nothing). The old stored bytes are read and checked against their hash (a damaged
   * dataset is never extended); its first `keep` bytes are kept and everything after them is
   * zeroed up to `stored`; then `make` writes the new buffer over them, leaving the first
   * `same` bytes (`same` <= `keep`) as they are. The result is valid until the next call.
   */
  extend(row: number | undefined, keep: number, same: number, stored: number, make: (bytes: Uint8Array) => void): HashedBuffer {
    const { kernel, ptr, state } = this;
    const { xxh64Init, xxh64Update, xxh64Digest } = kernel.exports;
    if (stored > this.capacity) throw new Error(`appendRows: a buffer of ${stored} bytes in a region of ${this.capacity}`);
    let shared = 0;
    let saved: Uint8Array | undefined;
    if (row === undefined) keep = same = 0;
    else {
      // The region holds the largest new buffer, and no old buffer made here is larger than its new one.
      const old = this.data.readStored(row, kernel.memory.bytes(ptr, this.capacity));
      if (keep > old.stored || same > keep) throw new Error(`appendRows: buffer ${row} (${old.name}) does not fit its extension`);
      shared = Math.floor(same / STRIPE) * STRIPE;
      xxh64Init(state, 0n);
      xxh64Update(state, ptr, shared);
      saved = kernel.memory.bytes(state, this.stateBytes).slice();
      if (hex(xxh64Digest(state, ptr + shared, old.stored - shared)) !== old.hash) throw this.data.damaged(row);
      this.checked.add(row);
    }
    const bytes = kernel.memory.bytes(ptr, stored);
    bytes.fill(0, keep);
    make(bytes);
    if (saved === undefined) xxh64Init(state, 0n);
    else kernel.memory.bytes(state, this.stateBytes).set(saved);
    const hash = hex(xxh64Digest(state, ptr + shared, stored - shared));
    return { stored: bytes, hash };
  }

  /** Gives the region back to the kernel allocator. */
  dispose(): void {
    this.kernel.memory.release(this.ptr, this.capacity);
    this.kernel.memory.release(this.state, this.stateBytes);
  }
}
