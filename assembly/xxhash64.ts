// XXH64 (Yann Collet's xxHash, 64-bit variant) over kernel memory: the per-buffer checksum
// of dataset files (src/dataset/format.ts). It runs at memory speed, so a buffer can be
// checked the first time a query touches it instead of hashing the whole file at open.
//
// Streaming state, 48 bytes at `state`: v1..v4 (u64 accumulators), total length, seed.
// The writer feeds a buffer in chunks whose lengths are multiples of 32 (a stripe), so no
// partial stripe is ever carried between calls; the last chunk goes to xxh64Digest, which
// takes any length.

const P1: u64 = 0x9e3779b185ebca87;
const P2: u64 = 0xc2b2ae3d27d4eb4f;
const P3: u64 = 0x165667b19e3779f9;
const P4: u64 = 0x85ebca77c2b2ae63;
const P5: u64 = 0x27d4eb2f165667c5;

// @ts-ignore: decorator
@inline function round(acc: u64, input: u64): u64 {
  return rotl<u64>(acc + input * P2, 31) * P1;
}

// @ts-ignore: decorator
@inline function merge(acc: u64, value: u64): u64 {
  return (acc ^ round(0, value)) * P1 + P4;
}

export function xxh64Init(state: usize, seed: u64): void {
  store<u64>(state, seed + P1 + P2, 0);
  store<u64>(state, seed + P2, 8);
  store<u64>(state, seed, 16);
  store<u64>(state, seed - P1, 24);
  store<u64>(state, 0, 32);
  store<u64>(state, seed, 40);
}

/** Feeds `len` bytes at `ptr`; `len` must be a multiple of 32. */
export function xxh64Update(state: usize, ptr: usize, len: usize): void {
  let v1 = load<u64>(state, 0);
  let v2 = load<u64>(state, 8);
  let v3 = load<u64>(state, 16);
  let v4 = load<u64>(state, 24);
  const end = ptr + len;
  for (let p = ptr; p < end; p += 32) {
    v1 = round(v1, load<u64>(p, 0));
    v2 = round(v2, load<u64>(p, 8));
    v3 = round(v3, load<u64>(p, 16));
    v4 = round(v4, load<u64>(p, 24));
  }
  store<u64>(state, v1, 0);
  store<u64>(state, v2, 8);
  store<u64>(state, v3, 16);
  store<u64>(state, v4, 24);
  store<u64>(state, load<u64>(state, 32) + <u64>len, 32);
}

/** Feeds the last `len` bytes at `ptr` (any length) and returns the hash of everything fed. */
export function xxh64Digest(state: usize, ptr: usize, len: usize): u64 {
  const stripes = len & ~(<usize>31);
  xxh64Update(state, ptr, stripes);
  const total = load<u64>(state, 32) + <u64>(len - stripes);
  let h: u64;
  if (total >= 32) {
    const v1 = load<u64>(state, 0);
    const v2 = load<u64>(state, 8);
    const v3 = load<u64>(state, 16);
    const v4 = load<u64>(state, 24);
    h = rotl<u64>(v1, 1) + rotl<u64>(v2, 7) + rotl<u64>(v3, 12) + rotl<u64>(v4, 18);
    h = merge(h, v1);
    h = merge(h, v2);
    h = merge(h, v3);
    h = merge(h, v4);
  } else {
    h = load<u64>(state, 40) + P5;
  }
  h += total;
  let p = ptr + stripes;
  const end = ptr + len;
  for (; p + 8 <= end; p += 8) h = rotl<u64>(h ^ round(0, load<u64>(p)), 27) * P1 + P4;
  if (p + 4 <= end) {
    h = rotl<u64>(h ^ (<u64>load<u32>(p) * P1), 23) * P2 + P3;
    p += 4;
  }
  for (; p < end; p++) h = rotl<u64>(h ^ (<u64>load<u8>(p) * P5), 11) * P1;
  h ^= h >> 33;
  h *= P2;
  h ^= h >> 29;
  h *= P3;
  h ^= h >> 32;
  return h;
}

/** XXH64 of `len` bytes at `ptr` with seed 0; `state` is 48 bytes of scratch. */
export function xxh64(state: usize, ptr: usize, len: usize): u64 {
  xxh64Init(state, 0);
  return xxh64Digest(state, ptr, len);
}
