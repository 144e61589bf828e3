/**
 * The loops that place respondents in a buffer, shared by an append (which extends a stored
 * buffer with a wave's respondents) and the reader of a dataset in segments (which puts a
 * buffer together from its segments' parts): both make the same bytes with them.
 */
import type { Kernel } from '../../kernel/kernel.js';

/** A view of an index column's ranks (no copy: use it before kernel memory can grow). */
export function readIndex(bytes: Uint8Array, width: number): Uint8Array | Uint16Array | Uint32Array {
  const length = bytes.byteLength / width;
  return width === 1 ? bytes : width === 2 ? new Uint16Array(bytes.buffer, bytes.byteOffset, length) : new Uint32Array(bytes.buffer, bytes.byteOffset, length);
}

/** `target[r] = rankNow[source[r]]` for the first `count` respondents (source may be target). */
export function remapRanks(target: Uint8Array | Uint16Array | Uint32Array, source: Uint8Array | Uint16Array | Uint32Array, rankNow: Uint32Array, count: number): void {
  for (let r = 0; r < count; r++) target[r] = rankNow[source[r]!]!;
}

/** Sets the bits of `respondents` in a bitset of 32-bit words. */
export function setBits(bits: Uint32Array, respondents: Uint32Array): void {
  for (let i = 0; i < respondents.length; i++) {
    const respondent = respondents[i]!;
    bits[respondent >>> 5]! |= 1 << (respondent & 31);
  }
}

/** Sets the bits of `respondents` + `first` in a bitset of 32-bit words. */
export function setBitsAfter(bits: Uint32Array, respondents: Uint32Array, first: number): void {
  for (let i = 0; i < respondents.length; i++) {
    const respondent = respondents[i]! + first;
    bits[respondent >>> 5]! |= 1 << (respondent & 31);
  }
}

/** ORs the bitset `from` (32-bit words, its bit 0 respondent `first`) into `bits`: shifted by first % 32 when `first` is not on a word. */
export function orBitsAt(bits: Uint32Array, from: Uint32Array, first: number): void {
  const at = first >>> 5;
  const shift = first & 31;
  for (let w = 0; w < from.length; w++) {
    const word = from[w]!;
    if (word === 0) continue;
    bits[at + w]! |= word << shift;
    // The bits shifted out of the top word: none past the bitset but zeros (a segment's bits past its respondents are 0).
    if (shift !== 0 && at + w + 1 < bits.length) bits[at + w + 1]! |= word >>> (32 - shift);
  }
}

/** Writes the respondents set in `bits` (32-bit words), each + `first`, to `list` from `at`; returns where the list ends. */
export function listBits(list: Uint32Array, at: number, bits: Uint32Array, first: number): number {
  for (let w = 0; w < bits.length; w++) {
    for (let word = bits[w]!; word !== 0; word &= word - 1) list[at++] = first + w * 32 + (31 - Math.clz32(word & -word));
  }
  return at;
}

/**
 * Zeroes `bytes` (a view of kernel memory) from byte `from` on: the whole 64-bit words by the
 * kernel's memory.fill, a few bytes before them by hand (a typed array's fill over shared
 * memory stores element by element).
 */
export function zeroFrom(kernel: Kernel, bytes: Uint8Array, from: number): void {
  let at = from;
  while (at < bytes.byteLength && (bytes.byteOffset + at) % 8 !== 0) bytes[at++] = 0;
  const words = Math.max(0, Math.floor((bytes.byteLength - at) / 8));
  if (words > 0) kernel.exports.bitsClear(bytes.byteOffset + at, words);
  if (at + words * 8 < bytes.byteLength) bytes.fill(0, at + words * 8);
}
