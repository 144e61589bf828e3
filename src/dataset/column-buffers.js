// A variable's buffers in the dataset file: its index column (the rank of each stored
// respondent's value) and one container per value (a dense bitset or a sorted list of
// respondent numbers). Made on the main thread (compile.ts, small builds) or in a build
// worker (compile-worker.js); plain JavaScript so that the worker runs the same file from
// src/ (tests) and from the bundle (dist/). Types: column-buffers.d.ts.

/** The index column and, if `dense` is given, the code containers, in file order. */
export function columnBuffers({ ids, remap, order, distinct, counts, dense, words, rows }) {
  const ranks = makeIndex(ids, remap, order, distinct, words);
  const buffers = [bytesOf(ranks)];
  if (dense) for (const code of makeCodes(ranks, counts, dense, words, rows)) buffers.push(code);
  return buffers;
}

/** Per stored respondent (input row order[r]), the rank of its value: the index column. */
function makeIndex(ids, remap, order, distinct, words) {
  const length = words * 64;
  const ranks = distinct <= 0xff ? new Uint8Array(length) : distinct <= 0xffff ? new Uint16Array(length) : new Uint32Array(length);
  for (let row = 0; row < order.length; row++) ranks[row] = remap[ids[order[row]]];
  return ranks;
}

/**
 * One container per value: a dense bitset when the value is common, a sorted list of
 * respondent numbers otherwise, so a rare value (a PUMA, an occupation) costs 4 bytes
 * per respondent, not N/8 bytes.
 */
function makeCodes(ranks, counts, dense, words, rows) {
  const bitsets = counts.map((_, rank) => (dense[rank] ? new Uint32Array(words * 2) : undefined));
  const lists = counts.map((count, rank) => (dense[rank] ? undefined : new Uint32Array(count)));
  const filled = new Uint32Array(counts.length);
  for (let row = 0; row < rows; row++) {
    const rank = ranks[row];
    if (rank === 0) continue;
    const bits = bitsets[rank - 1];
    if (bits) bits[row >>> 5] |= 1 << (row & 31);
    else lists[rank - 1][filled[rank - 1]++] = row;
  }
  return counts.map((_, rank) => bytesOf(bitsets[rank] ?? lists[rank]));
}

function bytesOf(view) {
  return new Uint8Array(view.buffer, view.byteOffset, view.byteLength);
}
