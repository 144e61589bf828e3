import type { FileHandle } from 'node:fs/promises';
import { inputError } from './table-encoder.js';

const readAheadBytes = 256 * 1024;

/**
 * Reads a binary file front to back through a window of buffered bytes: `need(n)` makes
 * sure n bytes are buffered (reading more when not), then the getters consume them
 * synchronously. Running out of file inside `need` is a truncated file, reported as
 * `invalid_input` naming the file, what was being read and where.
 */
export class ByteCursor {
  littleEndian = true;
  private buffer = new Uint8Array(0);
  private view = new DataView(this.buffer.buffer);
  /** File offset of buffer[0]. */
  private start = 0;
  private pos = 0;

  constructor(
    private readonly handle: FileHandle,
    readonly size: number,
    readonly file: string,
    private readonly format: string,
  ) {}

  /** File offset of the next byte to consume. */
  get offset(): number {
    return this.start + this.pos;
  }

  /** Bytes buffered and not consumed yet. */
  get buffered(): number {
    return this.buffer.length - this.pos;
  }

  async need(bytes: number, what: string): Promise<void> {
    if (this.pos + bytes <= this.buffer.length) return;
    const rest = this.buffer.subarray(this.pos);
    const next = new Uint8Array(rest.length + Math.max(bytes, readAheadBytes));
    next.set(rest);
    let filled = rest.length;
    while (filled < next.length) {
      const { bytesRead } = await this.handle.read(next, filled, next.length - filled, this.start + this.buffer.length + (filled - rest.length));
      if (bytesRead === 0) break;
      filled += bytesRead;
    }
    this.start += this.pos;
    this.pos = 0;
    this.buffer = next.subarray(0, filled);
    this.view = new DataView(this.buffer.buffer, this.buffer.byteOffset, this.buffer.byteLength);
    if (filled < bytes) throw this.truncated(what);
  }

  /** Consumes and returns up to `max` buffered bytes (reading more if none are buffered); empty at the end of the file. */
  async chunk(max: number): Promise<Uint8Array> {
    if (this.buffered === 0 && this.offset < this.size) await this.need(Math.min(max, this.size - this.offset), 'data');
    const bytes = this.buffer.subarray(this.pos, this.pos + Math.min(max, this.buffered));
    this.pos += bytes.length;
    return bytes;
  }

  /** Moves to `offset`, dropping the buffer. */
  seek(offset: number): void {
    this.buffer = new Uint8Array(0);
    this.view = new DataView(this.buffer.buffer);
    this.start = offset;
    this.pos = 0;
  }

  int32(): number {
    const value = this.view.getInt32(this.pos, this.littleEndian);
    this.pos += 4;
    return value;
  }

  int64(): number {
    const value = Number(this.view.getBigInt64(this.pos, this.littleEndian));
    this.pos += 8;
    return value;
  }

  float64(): number {
    const value = this.view.getFloat64(this.pos, this.littleEndian);
    this.pos += 8;
    return value;
  }

  /** The next `length` bytes (a view into the buffer: copy it to keep it past the next `need`). */
  bytes(length: number): Uint8Array {
    const bytes = this.buffer.subarray(this.pos, this.pos + length);
    this.pos += length;
    return bytes;
  }

  /** A truncated-file error at the current offset. */
  truncated(what: string): Error {
    const hint = `The file was cut short (an interrupted download or copy?): get or export the ${this.format} again.`;
    return inputError(this.file, `the file ends inside ${what} (at byte ${this.offset} of ${this.size}): it is truncated`, hint, {
      offset: this.offset,
    });
  }
}
