// A variable's buffers in the dataset file: its index column (the rank of each stored
// respondent's value) and one container per value (a dense bitset or a sorted list of
// respondent numbers). Made on the main thread (compile.ts, small builds) or in a build
// worker (compile-worker.js); plain JavaScript so that the worker runs the same file from
// src/ (tests) and from the bundle (dist/). Types: column-buffers.d.ts.

/**
 * The index column and, if `dense` is given, the code containers, in file order. The index
 * is a scatter (rank of respondent respondentOf[row] = remap[ids[row]]); the containers come from one
 * sequential pass over it. The bitsets are one array and the lists another (each container
 * a view of its part), so that pass indexes two typed arrays, not an array of them (about
 * a third faster than one array per container; doing both in one pass was slower: the
 * gather's cache misses then stall the container writes).
 */
export function columnBuffers({ ids, remap, respondentOf, distinct, counts, dense, atLeast, words, rows }) {
  const length = words * 64;
  const ranks = distinct <= 0xff ? new Uint8Array(length) : distinct <= 0xffff ? new Uint16Array(length) : new Uint32Array(length);
  if (!dense) {
    scatterRanks(ids, remap, respondentOf, ranks);
    return atLeast ? [bytesOf(ranks), ...atLeastBitsets(ranks, distinct, words, rows)] : [bytesOf(ranks)];
  }
  // Per rank (1-based): its bitset's first u32 word, or -1 and its list's next free slot.
  const bitsetAt = new Int32Array(counts.length + 1).fill(-1);
  const next = new Uint32Array(counts.length + 1);
  let bitsetWords = 0;
  let listed = 0;
  counts.forEach((count, rank) => {
    if (dense[rank]) {
      bitsetAt[rank + 1] = bitsetWords;
      bitsetWords += words * 2;
    } else {
      next[rank + 1] = listed;
      listed += count;
    }
  });
  const bitsets = new Uint32Array(bitsetWords);
  const lists = new Uint32Array(listed);
  const starts = next.slice();
  scatterRanks(ids, remap, respondentOf, ranks);
  loop(
    'codes',
    [ranks],
    ['ranks', 'rows', 'bitsetAt', 'next', 'bitsets', 'lists'],
    `for (let r = 0; r < rows; r++) {
      const rank = ranks[r];
      if (rank === 0) continue;
      const at = bitsetAt[rank];
      if (at >= 0) bitsets[at + (r >>> 5)] |= 1 << (r & 31);
      else lists[next[rank]++] = r;
    }`,
  )(ranks, rows, bitsetAt, next, bitsets, lists);
  const buffers = [bytesOf(ranks)];
  counts.forEach((count, rank) => {
    const at = bitsetAt[rank + 1];
    buffers.push(at >= 0 ? bytesOf(bitsets.subarray(at, at + words * 2)) : bytesOf(lists.subarray(starts[rank + 1], starts[rank + 1] + count)));
  });
  if (atLeast) buffers.push(...atLeastBitsets(ranks, distinct, words, rows));
  return buffers;
}

/**
 * The range index: per rank r (1-based), the bitset of respondents whose rank is r or more.
 * Each respondent's bit is set in its own rank's bitset, then the bitsets are ORed from the
 * top down (bitset r |= bitset r + 1). One array holds them all.
 */
function atLeastBitsets(ranks, distinct, words, rows) {
  const stride = words * 2;
  const bits = new Uint32Array(distinct * stride);
  loop(
    'atLeast',
    [ranks],
    ['ranks', 'rows', 'bits', 'stride'],
    `for (let r = 0; r < rows; r++) {
      const rank = ranks[r];
      if (rank !== 0) bits[(rank - 1) * stride + (r >>> 5)] |= 1 << (r & 31);
    }`,
  )(ranks, rows, bits, stride);
  for (let rank = distinct - 2; rank >= 0; rank--) {
    const at = rank * stride;
    for (let w = 0; w < stride; w++) bits[at + w] |= bits[at + stride + w];
  }
  const out = [];
  for (let rank = 0; rank < distinct; rank++) out.push(bytesOf(bits.subarray(rank * stride, (rank + 1) * stride)));
  return out;
}

/**
 * The index column: ranks[respondentOf[row]] = remap[ids[row]], the rank of each input row's
 * value at the respondent it is stored as. Reading the ids in input order and writing at
 * random takes about half the time of the gather through the order (ranks[r] =
 * remap[ids[order[r]]]): a random read stalls until its line arrives, a random write does
 * not (measured on the ACS's weight order: 14 against 32 ms per one-byte column).
 */
function scatterRanks(ids, remap, respondentOf, ranks) {
  loop('index', [ids, ranks], ['ids', 'remap', 'respondentOf', 'ranks'], 'for (let row = 0; row < respondentOf.length; row++) ranks[respondentOf[row]] = remap[ids[row]];')(ids, remap, respondentOf, ranks);
}

/**
 * The hot loops, compiled once per combination of array types. One function called with
 * Uint8Array, Uint16Array and Uint32Array arguments turns polymorphic and runs about 3x
 * slower (measured: 10.5 ms against 3 ms per ACS-sized column); a function made by
 * `new Function` has feedback of its own, so each copy stays monomorphic.
 */
const loops = new Map();
function loop(name, arrays, params, body) {
  const key = `${name}:${arrays.map((array) => array.constructor.name).join(',')}`;
  let made = loops.get(key);
  if (made === undefined) loops.set(key, (made = new Function(...params, body)));
  return made;
}

function bytesOf(view) {
  return new Uint8Array(view.buffer, view.byteOffset, view.byteLength);
}
