/**
 * Per-row dictionary ids of one input column, in the narrowest unsigned array that holds
 * them: a column starts as one byte per row and widens to two or four bytes only when its
 * dictionary outgrows 255 or 65,535 values. Most survey columns never leave one byte, which
 * is what keeps a 22-million-row build within twice its output.
 */
export type RowIds = Uint8Array | Uint16Array | Uint32Array;

/** A zeroed id array of `capacity` rows wide enough for ids up to `maxId`. */
export function rowIds(capacity: number, maxId = 0): RowIds {
  return maxId <= 0xff ? new Uint8Array(capacity) : maxId <= 0xffff ? new Uint16Array(capacity) : new Uint32Array(capacity);
}

/** Largest id `ids` can hold. */
export function idLimit(ids: RowIds): number {
  return ids.BYTES_PER_ELEMENT === 1 ? 0xff : ids.BYTES_PER_ELEMENT === 2 ? 0xffff : 0xffffffff;
}

/** `ids` itself when it can hold `maxId`, else a wider copy of it. */
export function widened(ids: RowIds, maxId: number): RowIds {
  if (maxId <= idLimit(ids)) return ids;
  const wider = rowIds(ids.length, maxId);
  wider.set(ids);
  return wider;
}

/** A copy of `ids` (same width) with room for `capacity` rows. */
export function grownIds(ids: RowIds, capacity: number): RowIds {
  const grown = rowIds(capacity, idLimit(ids));
  grown.set(ids);
  return grown;
}
