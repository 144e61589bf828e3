// Numbering of typed number columns (an Arrow record batch's Int and Float buffers as they
// are stored): each distinct value gets an id, 1-based in first-seen order, as the
// JavaScript column encoder numbers values; rows get ids and each id its rows. Part of
// build/csv.wasm (re-exported by assembly/csv.ts), driven by src/dataset/input/typed-numbers.ts.
//
// Values are keyed by a 64-bit pattern: integers by their value (sign- or zero-extended),
// floats by their bits as a double (-0 as 0; NaN is blank, id 0). Whole numbers 0 .. SMALL - 1
// (codes, ages: most survey columns) are looked up in a table by value; others in an
// open-addressing table. Why here: a JavaScript loop over a BigInt64Array's halves took about
// 17 ns a row, this loop about 6 (the ACS file's 34 integer columns, one thread).
//
// Per column, a header of NUMBERS_BYTES:
//   0 u32 small: u32 id per whole number 0 .. SMALL - 1 (0: not seen)
//   4 u32 table: open-addressing slots (u32 id, 0 = empty), a power of two of them
//   8 u32 mask: slots - 1
//  12 u32 count: ids handed out
//  16 u32 keys: u64 per id (id - 1), in first-seen order
//  20 u32 keys capacity (ids)
//  24 u32 rows: u32 per id (index id; index 0 unused), rows since the caller last read them
//  28 u32 rows capacity (ids)
//  32 u32 kind (see KIND_*)

export const NUMBERS_BYTES: usize = 36;
const SMALL: u64 = 16384;

/** Stored value types (the width and meaning of each value in `src`). */
export const KIND_INT64: u32 = 0;
export const KIND_UINT64: u32 = 1;
export const KIND_INT32: u32 = 2;
export const KIND_UINT32: u32 = 3;
export const KIND_INT16: u32 = 4;
export const KIND_UINT16: u32 = 5;
export const KIND_INT8: u32 = 6;
export const KIND_UINT8: u32 = 7;
export const KIND_FLOAT64: u32 = 8;
export const KIND_FLOAT32: u32 = 9;

/** A column of numbers of `kind`; returns its header's address. */
export function newNumberColumn(kind: u32): usize {
  const column = heap.alloc(NUMBERS_BYTES);
  const small = heap.alloc(<usize>SMALL << 2);
  memory.fill(small, 0, <usize>SMALL << 2);
  store<u32>(column, <u32>small, 0);
  const slots: usize = 1024;
  const table = heap.alloc(slots << 2);
  memory.fill(table, 0, slots << 2);
  store<u32>(column, <u32>table, 4);
  store<u32>(column, <u32>(slots - 1), 8);
  store<u32>(column, 0, 12);
  store<u32>(column, <u32>heap.alloc(256 << 3), 16);
  store<u32>(column, 256, 20);
  const rows = heap.alloc(257 << 2);
  memory.fill(rows, 0, 257 << 2);
  store<u32>(column, <u32>rows, 24);
  store<u32>(column, 256, 28);
  store<u32>(column, kind, 32);
  return column;
}

/** Ids handed out by `column`. */
export function numberCount(column: usize): u32 {
  return load<u32>(column, 12);
}

/** Address of the keys (u64 per id, id 1 first): an integer's value, or a float's bits as a double. */
export function numberKeys(column: usize): usize {
  return <usize>load<u32>(column, 16);
}

/** Address of the rows per id (u32, index id) since they were last zeroed by the caller. */
export function numberRows(column: usize): usize {
  return <usize>load<u32>(column, 24);
}

// @ts-ignore: decorator
@inline function hash64(key: u64): u32 {
  let h = key * 0x9e3779b185ebca87;
  h ^= h >> 29;
  h *= 0xc2b2ae3d27d4eb4f;
  return <u32>(h >> 32);
}

/** The key of value k of `src` (a float's NaN is left to the caller, which reads it as blank). */
// @ts-ignore: decorator
@inline function keyAt(src: usize, k: usize, kind: u32): u64 {
  switch (kind) {
    case KIND_INT64:
    case KIND_UINT64:
      return load<u64>(src + (k << 3));
    case KIND_INT32:
      return <u64>load<i32>(src + (k << 2));
    case KIND_UINT32:
      return <u64>load<u32>(src + (k << 2));
    case KIND_INT16:
      return <u64>load<i16>(src + (k << 1));
    case KIND_UINT16:
      return <u64>load<u16>(src + (k << 1));
    case KIND_INT8:
      return <u64>load<i8>(src + k);
    case KIND_UINT8:
      return <u64>load<u8>(src + k);
    case KIND_FLOAT64:
      return reinterpret<u64>(load<f64>(src + (k << 3)) + 0.0);
    default:
      return reinterpret<u64>(<f64>load<f32>(src + (k << 2)) + 0.0);
  }
}

/** The small-table index of a key (a whole number 0 .. SMALL - 1), else SMALL. */
// @ts-ignore: decorator
@inline function smallOf(key: u64, kind: u32): u64 {
  if (kind < KIND_FLOAT64) return key < SMALL ? key : SMALL;
  const value = reinterpret<f64>(key);
  return value >= 0 && value < <f64>SMALL && value == Math.floor(value) ? <u64>value : SMALL;
}

/** A new id for `key`, its rows count made room for. */
function newId(column: usize, key: u64): u32 {
  const id = load<u32>(column, 12) + 1;
  const capacity = load<u32>(column, 20);
  if (id > capacity) {
    const grown = heap.alloc(<usize>capacity << 4);
    memory.copy(grown, <usize>load<u32>(column, 16), <usize>capacity << 3);
    store<u32>(column, <u32>grown, 16);
    store<u32>(column, capacity << 1, 20);
  }
  store<u64>(<usize>load<u32>(column, 16) + (<usize>(id - 1) << 3), key);
  const rowsCapacity = load<u32>(column, 28);
  if (id > rowsCapacity) {
    const bytes = (<usize>(rowsCapacity << 1) + 1) << 2;
    const grown = heap.alloc(bytes);
    memory.fill(grown, 0, bytes);
    memory.copy(grown, <usize>load<u32>(column, 24), (<usize>rowsCapacity + 1) << 2);
    store<u32>(column, <u32>grown, 24);
    store<u32>(column, rowsCapacity << 1, 28);
  }
  store<u32>(column, id, 12);
  return id;
}

/** The id of a key that is not a small whole number, numbering it if new. */
function tableId(column: usize, key: u64): u32 {
  const table = <usize>load<u32>(column, 4);
  const mask = load<u32>(column, 8);
  const keys = <usize>load<u32>(column, 16);
  let slot = hash64(key) & mask;
  while (true) {
    const id = load<u32>(table + (<usize>slot << 2));
    if (id == 0) break;
    if (load<u64>(keys + (<usize>(id - 1) << 3)) == key) return id;
    slot = (slot + 1) & mask;
  }
  const id = newId(column, key);
  store<u32>(table + (<usize>slot << 2), id);
  // Keep the table at most half full (it holds only the keys that are not small).
  if (id << 1 > mask + 1) rehash(column, (mask + 1) << 1);
  return id;
}

function rehash(column: usize, slots: u32): void {
  const table = heap.alloc(<usize>slots << 2);
  memory.fill(table, 0, <usize>slots << 2);
  const mask = slots - 1;
  const keys = <usize>load<u32>(column, 16);
  const count = load<u32>(column, 12);
  const kind = load<u32>(column, 32);
  for (let id: u32 = 1; id <= count; id++) {
    const key = load<u64>(keys + (<usize>(id - 1) << 3));
    if (smallOf(key, kind) < SMALL) continue;
    let slot = hash64(key) & mask;
    while (load<u32>(table + (<usize>slot << 2)) != 0) slot = (slot + 1) & mask;
    store<u32>(table + (<usize>slot << 2), id);
  }
  store<u32>(column, <u32>table, 4);
  store<u32>(column, mask, 8);
}

/**
 * Ids of `count` values of the column's kind from `src` into `ids` (u32 each; 0 for a null
 * row, bit `validityOffset + k` of `validity` clear, or a NaN), numbering new values and
 * counting each id's rows. `validity` 0: every row has a value. Returns the ids handed out
 * so far (new ones are the keys after the caller's last count).
 */
export function encodeNumbers(column: usize, src: usize, count: u32, validity: usize, validityOffset: u32, ids: usize): u32 {
  const kind = load<u32>(column, 32);
  switch (kind) {
    case KIND_INT64:
      encodeKind(column, src, count, validity, validityOffset, ids, KIND_INT64);
      break;
    case KIND_UINT64:
      encodeKind(column, src, count, validity, validityOffset, ids, KIND_UINT64);
      break;
    case KIND_INT32:
      encodeKind(column, src, count, validity, validityOffset, ids, KIND_INT32);
      break;
    case KIND_UINT32:
      encodeKind(column, src, count, validity, validityOffset, ids, KIND_UINT32);
      break;
    case KIND_INT16:
      encodeKind(column, src, count, validity, validityOffset, ids, KIND_INT16);
      break;
    case KIND_UINT16:
      encodeKind(column, src, count, validity, validityOffset, ids, KIND_UINT16);
      break;
    case KIND_INT8:
      encodeKind(column, src, count, validity, validityOffset, ids, KIND_INT8);
      break;
    case KIND_UINT8:
      encodeKind(column, src, count, validity, validityOffset, ids, KIND_UINT8);
      break;
    case KIND_FLOAT64:
      encodeKind(column, src, count, validity, validityOffset, ids, KIND_FLOAT64);
      break;
    default:
      encodeKind(column, src, count, validity, validityOffset, ids, KIND_FLOAT32);
  }
  return load<u32>(column, 12);
}

/** encodeNumbers for one kind (inlined with a constant `kind`: one loop per kind, no switch per row). */
// @ts-ignore: decorator
@inline function encodeKind(column: usize, src: usize, count: u32, validity: usize, validityOffset: u32, ids: usize, kind: u32): void {
  const small = <usize>load<u32>(column, 0);
  let rows = <usize>load<u32>(column, 24);
  for (let k: u32 = 0; k < count; k++) {
    let id: u32 = 0;
    const bit = validityOffset + k;
    if (validity == 0 || ((load<u8>(validity + <usize>(bit >> 3)) >> (bit & 7)) & 1) != 0) {
      const key = keyAt(src, <usize>k, kind);
      // NaN (every NaN pattern) is blank; -0 was made 0 by keyAt's `+ 0.0`.
      if (kind < KIND_FLOAT64 || (key & 0x7fffffffffffffff) <= 0x7ff0000000000000) {
        const at = smallOf(key, kind);
        if (at < SMALL) {
          id = load<u32>(small + (<usize>at << 2));
          if (id == 0) {
            id = newId(column, key);
            store<u32>(small + (<usize>at << 2), id);
            rows = <usize>load<u32>(column, 24);
          }
        } else {
          id = tableId(column, key);
          rows = <usize>load<u32>(column, 24);
        }
        const counted = rows + (<usize>id << 2);
        store<u32>(counted, load<u32>(counted) + 1);
      }
    }
    store<u32>(ids + (<usize>k << 2), id);
  }
}
