/**
 * How appendRows() extends a stored buffer at the cost of a read: the old buffer's bytes are
 * read from the dataset file straight into the writer's staging memory (kernel memory, where
 * the new buffer goes in the file: PlacedBuffer), checked there against their hash, and the
 * new buffer is made over them in place (the new respondents' part after the old
 * respondents', which stay where they are) and hashed there. The bytes the old and the new
 * buffer share are hashed once: XXH64 is a stream, so its state after them is the start of
 * both the old hash (checked) and the new one (written).
 */
import { hex } from '../kernel/checksum.js';
import type { Kernel } from '../kernel/kernel.js';
import type { LoadedDataset } from '../dataset/file/reader.js';
import type { PlacedBuffer } from '../dataset/file/writer.js';
import type { AppendTrace } from './append-trace.js';
import { zeroFrom } from '../dataset/file/respondent-bits.js';

/** XXH64 reads 32-byte stripes: a state can be kept only after a multiple of 32 bytes. */
const STRIPE = 32;

export class StoredExtension {
  private readonly state: number;
  private readonly stateBytes: number;
  /** The XXH64 state after the shared bytes, kept while the old buffer's rest is checked. */
  private readonly saved: Uint8Array;
  /** Old buffers read and checked here. */
  readonly checked = new Set<number>();

  constructor(
    private readonly kernel: Kernel,
    private readonly data: LoadedDataset,
    private readonly trace?: AppendTrace,
  ) {
    this.stateBytes = kernel.layout.xxh64StateBytes;
    this.state = kernel.memory.alloc(this.stateBytes);
    this.saved = new Uint8Array(this.stateBytes);
  }

  /**
   * A new buffer of `stored` bytes (padding included) made from old buffer `row` (undefined:
   * from nothing), where the writer places it. The old stored bytes are read there and
   * checked against their hash (a damaged dataset is never extended); its first `keep` bytes
   * are kept and everything after them is zeroed up to `stored`; then `make` writes the new
   * buffer over them, leaving the first `same` bytes (`same` <= `keep`) as they are.
   */
  extend(row: number | undefined, keep: number, same: number, stored: number, make: (bytes: Uint8Array) => void): PlacedBuffer {
    return { stored, makeInto: (target) => this.makeInto(target, row, keep, same, make) };
  }

  /** Makes the buffer extend() describes in `target` (a view of kernel memory: the new buffer's stored bytes) and returns its hash. */
  makeInto(target: Uint8Array, row: number | undefined, keep: number, same: number, make: (bytes: Uint8Array) => void): string {
    const { kernel, state, stateBytes, trace } = this;
    let at = trace === undefined ? 0 : performance.now();
    const lap = (part: string) => {
      if (trace === undefined) return;
      const now = performance.now();
      trace.add(part, now - at);
      at = now;
    };
    const { xxh64Init, xxh64Update, xxh64Digest } = kernel.exports;
    const ptr = target.byteOffset;
    let shared = 0;
    let saved = false;
    if (row === undefined) keep = same = 0;
    else {
      // No old buffer extended here is larger than its new one.
      // Each buffer's hash vouches for its bytes: the files' stamps are looked at once, after the last (checkUnchanged).
      const old = this.data.readStored(row, target, false);
      lap('read old bytes');
      if (keep > old.stored || same > keep) throw new Error(`appendRows: buffer ${row} (${old.name}) does not fit its extension`);
      shared = Math.floor(same / STRIPE) * STRIPE;
      xxh64Init(state, 0n);
      xxh64Update(state, ptr, shared);
      this.saved.set(kernel.memory.bytes(state, stateBytes));
      saved = true;
      // A buffer of a file in segments was checked part by part as it was read (no hash of its own).
      if (old.hash !== undefined && hex(xxh64Digest(state, ptr + shared, old.stored - shared)) !== old.hash) {
        // Bytes of a file written over in place are named so, not damage.
        this.data.checkUnchanged();
        throw this.data.damaged(row);
      }
      this.checked.add(row);
      // Weights outside the range the engine takes are refused, as their first read by a query refuses them.
      this.data.refuseWeightsOutOfRange(row, target);
      lap('check old hash');
    }
    zeroFrom(kernel, target, keep);
    make(target);
    lap('make new');
    if (!saved) xxh64Init(state, 0n);
    else kernel.memory.bytes(state, stateBytes).set(this.saved);
    const hash = hex(xxh64Digest(state, ptr + shared, target.byteLength - shared));
    lap('hash new');
    return hash;
  }

  /** Gives the hash state back to the kernel allocator. */
  dispose(): void {
    this.kernel.memory.release(this.state, this.stateBytes);
  }
}
