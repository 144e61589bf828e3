import { describe, expect, it } from 'vitest';
import { CrosstabError, ErrorCode } from '../src/errors.js';
import { KernelMemory } from '../src/kernel/memory.js';

describe('kernel memory allocator', () => {
  it('hands out 64-byte aligned, zeroed blocks, also when reusing released space', () => {
    const memory = new KernelMemory();
    const first = memory.alloc(1000);
    expect(first % 64).toBe(0);
    memory.bytes(first, 1000).fill(7);
    memory.release(first, 1000);
    const again = memory.alloc(1000); // bump space given back: same place, must be zero again
    expect(again).toBe(first);
    expect(memory.bytes(again, 1000).every((byte) => byte === 0)).toBe(true);
    const a = memory.alloc(128);
    const b = memory.alloc(128);
    memory.bytes(a, 128).fill(1);
    memory.release(a, 128);
    const reused = memory.alloc(64); // from the free list
    expect(reused).toBe(a);
    expect(memory.bytes(reused, 64).every((byte) => byte === 0)).toBe(true);
    expect(b).toBeGreaterThan(a);
  });

  it('merges neighbours and tracks what is in use', () => {
    const memory = new KernelMemory();
    const blocks = [memory.alloc(64), memory.alloc(64), memory.alloc(64), memory.alloc(64)];
    expect(memory.allocatedBytes).toBe(256);
    memory.release(blocks[1]!, 64);
    memory.release(blocks[2]!, 64);
    expect(memory.allocatedBytes).toBe(128);
    expect(memory.alloc(128)).toBe(blocks[1]); // the two merged blocks fit a 128-byte request
  });

  it('a block beyond the 4 GiB of kernel memory is out_of_memory, not invalid input', () => {
    const memory = new KernelMemory();
    const error = (() => {
      try {
        memory.alloc(5 * 1024 ** 3);
      } catch (thrown) {
        return thrown;
      }
    })();
    expect(error).toBeInstanceOf(CrosstabError);
    expect((error as CrosstabError).code).toBe(ErrorCode.outOfMemory);
    expect((error as CrosstabError).message).toMatch(/out of kernel memory/);
    expect((error as CrosstabError).details.hint).toBeTruthy();
  });

  it('grows the shared memory for large blocks', () => {
    const memory = new KernelMemory();
    const before = memory.memory.buffer.byteLength;
    const big = memory.alloc(8 * 1024 * 1024);
    expect(memory.memory.buffer.byteLength).toBeGreaterThan(before);
    memory.bytes(big, 8 * 1024 * 1024).fill(1);
  });
});
