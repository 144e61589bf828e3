// XXH64 in the kernel against the published test vectors of xxHash, and the streaming
// path of the writer against the one-shot path of the reader.
import { describe, expect, it } from 'vitest';
import { checksumInKernel, StreamingChecksum } from '../src/kernel/checksum.js';
import { mainThreadKernel } from '../src/kernel/kernel.js';

const kernel = mainThreadKernel();

function oneShot(bytes: Uint8Array): string {
  const ptr = kernel.memory.alloc(Math.max(1, bytes.byteLength));
  try {
    kernel.memory.bytes(ptr, bytes.byteLength).set(bytes);
    return checksumInKernel(kernel, ptr, bytes.byteLength);
  } finally {
    kernel.memory.release(ptr, Math.max(1, bytes.byteLength));
  }
}

describe('XXH64', () => {
  // Vectors from the xxHash reference (xxhsum -H1) and its Wikipedia/README examples.
  it.each([
    ['', 'ef46db3751d8e999'],
    ['a', 'd24ec4f1a98c6e5b'],
    ['abc', '44bc2cf5ad770999'],
    ['Nobody inspects the spammish repetition', 'fbcea83c8a378bf1'],
  ])('XXH64(%j) = %s', (text, expected) => {
    expect(oneShot(new TextEncoder().encode(text))).toBe(expected);
  });

  it('streaming through the 1 MiB window equals one shot, at every tail length', () => {
    const streaming = new StreamingChecksum(kernel);
    try {
      for (const length of [0, 31, 32, 33, 1 << 20, (1 << 20) + 7, 3 * (1 << 20) + 64]) {
        const bytes = new Uint8Array(length);
        for (let i = 0; i < length; i++) bytes[i] = (i * 2654435761) >>> 24;
        expect(streaming.of(bytes), `length ${length}`).toBe(oneShot(bytes));
      }
    } finally {
      streaming.dispose();
    }
  });

  it('a single flipped bit changes the hash', () => {
    const bytes = new Uint8Array(4096).fill(7);
    const before = oneShot(bytes);
    bytes[1234]! ^= 0x04;
    expect(oneShot(bytes)).not.toBe(before);
  });
});
