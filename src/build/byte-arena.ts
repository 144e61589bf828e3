/**
 * Zeroed byte ranges carved out of large chunks. A wave's segment is thousands of small
 * buffers that all live until the segment is written: each a typed array of its own costs an
 * ArrayBuffer allocation (zeroed memory outside the heap, which the garbage collector tracks
 * and collects for) per buffer; from an arena it costs a view. Every range starts on an
 * 8-byte boundary, so it may be viewed as 32- or 64-bit words.
 */
export class ByteArena {
  private chunk = new Uint8Array(0);
  private used = 0;

  constructor(private readonly chunkBytes = 1 << 20) {}

  /** `bytes` zero bytes, of the arena until it is dropped. */
  take(bytes: number): Uint8Array {
    if (this.used + bytes > this.chunk.byteLength) {
      this.chunk = new Uint8Array(Math.max(this.chunkBytes, bytes));
      this.used = 0;
    }
    const range = this.chunk.subarray(this.used, this.used + bytes);
    this.used += Math.ceil(bytes / 8) * 8;
    return range;
  }

  /** `count` zero 32-bit words. */
  words32(count: number): Uint32Array {
    const bytes = this.take(count * 4);
    return new Uint32Array(bytes.buffer, bytes.byteOffset, count);
  }

  /** `count` zero 64-bit floats. */
  floats64(count: number): Float64Array {
    const bytes = this.take(count * 8);
    return new Float64Array(bytes.buffer, bytes.byteOffset, count);
  }
}
