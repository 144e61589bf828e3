// The buffer codecs of compressed Arrow IPC files (LZ4 frame and Zstandard, the two the
// format defines), registered with apache-arrow's reader, which decompresses a record or
// dictionary batch whose header names one. Feather V2 files are LZ4-compressed by default
// (pyarrow's write_feather, pandas' to_feather). Zstandard is fzstd's (through
// hyparquet-compressors, which the Parquet reader uses too); the LZ4 frame reader is here.
import { CompressionType } from 'apache-arrow/fb/compression-type';
import { compressionRegistry } from 'apache-arrow/ipc/compression/registry';
import { decompressZstd } from 'hyparquet-compressors';

let registered = false;

/** Registers the decoders with apache-arrow (once per thread; the worker threads call it too). */
export function registerArrowCodecs(): void {
  if (registered) return;
  registered = true;
  compressionRegistry.set(CompressionType.LZ4_FRAME, { decode: decodeLz4Frame });
  compressionRegistry.set(CompressionType.ZSTD, { decode: (bytes: Uint8Array) => decompressZstd(bytes) });
}

const LZ4_MAGIC = 0x184d2204;

class Lz4Output {
  bytes: Uint8Array;
  length = 0;
  constructor(capacity: number) {
    this.bytes = new Uint8Array(Math.max(capacity, 64));
  }
  /** Makes room for `more` bytes after what is written (earlier bytes stay: later blocks may refer back to them). */
  reserve(more: number): void {
    if (this.length + more <= this.bytes.length) return;
    const grown = new Uint8Array(Math.max(this.bytes.length * 2, this.length + more));
    grown.set(this.bytes.subarray(0, this.length));
    this.bytes = grown;
  }
}

/**
 * The bytes of one or more LZ4 frames (the LZ4 frame format, version 1),
 * independent or linked blocks, stored or compressed, with or without content size and
 * checksums (not verified), skippable frames skipped. Throws on anything malformed: a
 * truncated frame, a bad magic number or version, a block larger than the frame's block
 * size, a match reaching before the start of the output, a content size that disagrees.
 */
export function decodeLz4Frame(input: Uint8Array): Uint8Array {
  const view = new DataView(input.buffer, input.byteOffset, input.byteLength);
  const out = new Lz4Output(input.length * 2);
  let at = 0;
  const need = (bytes: number): void => {
    if (at + bytes > input.length) throw new Error('LZ4 frame is truncated');
  };
  while (at < input.length) {
    need(4);
    const magic = view.getUint32(at, true);
    if ((magic & 0xfffffff0) === 0x184d2a50) {
      need(8);
      at += 8 + view.getUint32(at + 4, true);
      continue;
    }
    if (magic !== LZ4_MAGIC) throw new Error('not an LZ4 frame (bad magic number)');
    need(7);
    const flags = input[at + 4]!;
    const blockCode = (input[at + 5]! >> 4) & 7;
    if (flags >> 6 !== 1) throw new Error(`LZ4 frame version ${flags >> 6} is not supported`);
    if ((flags & 1) !== 0) throw new Error('LZ4 frames with a dictionary are not supported');
    if (blockCode < 4) throw new Error(`LZ4 frame block size code ${blockCode} is invalid`);
    const blockMax = 1 << (2 * blockCode + 8);
    const blockChecksums = (flags & 0x10) !== 0;
    at += 6;
    let contentSize: number | undefined;
    if ((flags & 0x08) !== 0) {
      need(8);
      contentSize = Number(view.getBigUint64(at, true));
      at += 8;
      out.reserve(contentSize);
    }
    at += 1; // header checksum
    const frameStart = out.length;
    for (;;) {
      need(4);
      const word = view.getUint32(at, true);
      at += 4;
      if (word === 0) break;
      const length = word & 0x7fffffff;
      if (length > blockMax) throw new Error('LZ4 block is larger than its frame allows');
      need(length + (blockChecksums ? 4 : 0));
      const block = input.subarray(at, at + length);
      out.reserve(blockMax);
      if ((word & 0x80000000) !== 0) {
        out.bytes.set(block, out.length);
        out.length += length;
      } else {
        out.length = decodeLz4Block(block, out.bytes, out.length, out.length + blockMax);
      }
      at += length + (blockChecksums ? 4 : 0);
    }
    if ((flags & 0x04) !== 0) {
      need(4);
      at += 4;
    }
    if (contentSize !== undefined && out.length - frameStart !== contentSize) throw new Error(`LZ4 frame holds ${out.length - frameStart} bytes where its header says ${contentSize}`);
  }
  return out.bytes.subarray(0, out.length);
}

/**
 * One LZ4 block (the LZ4 block format: sequences of literals and matches) decoded into
 * `output` from `at`, writing no further than `end`; matches may reach back into bytes
 * before `at` (linked blocks). Returns the new end of the output.
 */
export function decodeLz4Block(block: Uint8Array, output: Uint8Array, at: number, end: number): number {
  let i = 0;
  let o = at;
  const length = (base: number): number => {
    let total = base;
    if (base === 15) {
      let byte: number;
      do {
        if (i >= block.length) throw new Error('LZ4 block is truncated');
        byte = block[i++]!;
        total += byte;
      } while (byte === 255);
    }
    return total;
  };
  while (i < block.length) {
    const token = block[i++]!;
    const literals = length(token >> 4);
    if (i + literals > block.length || o + literals > end) throw new Error('LZ4 block is malformed (literals run past its end)');
    output.set(block.subarray(i, i + literals), o);
    i += literals;
    o += literals;
    if (i === block.length) return o;
    if (i + 2 > block.length) throw new Error('LZ4 block is truncated');
    const offset = block[i]! | (block[i + 1]! << 8);
    i += 2;
    if (offset === 0 || offset > o) throw new Error('LZ4 block is malformed (a match reaches before the start)');
    const match = length(token & 15) + 4;
    if (o + match > end) throw new Error('LZ4 block is malformed (a match runs past the block size)');
    let from = o - offset;
    if (offset >= match) {
      output.copyWithin(o, from, from + match);
      o += match;
    } else {
      for (let k = 0; k < match; k++) output[o++] = output[from++]!;
    }
  }
  if (o !== at) throw new Error('LZ4 block ends in a match'); // a block's last sequence is literals only
  return o;
}
