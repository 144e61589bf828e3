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

/**
 * The hot loops, compiled once per combination of array types. One function called with
 * Uint8Array, Uint16Array and Uint32Array arguments turns polymorphic and runs about 3x
 * slower (measured: 10.5 ms against 3 ms per ACS column); a function made by `new Function`
 * has feedback of its own, so each copy stays monomorphic.
 */
const loops = new Map();
function loop(name, types, params, body) {
  const key = `${name}:${types.join(',')}`;
  let made = loops.get(key);
  if (made === undefined) loops.set(key, (made = new Function(...params, body)));
  return made;
}

/** Per stored respondent (input row order[r]), the rank of its value: the index column. */
function makeIndex(ids, remap, order, distinct, words) {
  const length = words * 64;
  const ranks = distinct <= 0xff ? new Uint8Array(length) : distinct <= 0xffff ? new Uint16Array(length) : new Uint32Array(length);
  const gather = loop('index', [ids.constructor.name, ranks.constructor.name], ['ids', 'remap', 'order', 'ranks'], 'for (let row = 0; row < order.length; row++) ranks[row] = remap[ids[order[row]]];');
  gather(ids, remap, order, ranks);
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
  const fill = loop(
    'codes',
    [ranks.constructor.name],
    ['ranks', 'rows', 'bitsets', 'lists', 'filled'],
    `for (let row = 0; row < rows; row++) {
      const rank = ranks[row];
      if (rank === 0) continue;
      const bits = bitsets[rank - 1];
      if (bits) bits[row >>> 5] |= 1 << (row & 31);
      else lists[rank - 1][filled[rank - 1]++] = row;
    }`,
  );
  fill(ranks, rows, bitsets, lists, new Uint32Array(counts.length));
  return counts.map((_, rank) => bytesOf(bitsets[rank] ?? lists[rank]));
}

function bytesOf(view) {
  return new Uint8Array(view.buffer, view.byteOffset, view.byteLength);
}
