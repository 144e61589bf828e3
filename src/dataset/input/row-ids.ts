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
  // A column widens as its values are numbered, often before any row's id is written (a
  // batch's new values come first): then there is nothing to convert (a copy between arrays
  // of two widths costs several nanoseconds a row; looking at the bytes, a fraction of one).
  if (!allBlank(ids)) wider.set(ids);
  return wider;
}

/** Whether every id in `ids` is 0 (blank). */
function allBlank(ids: RowIds): boolean {
  const bytes = new Uint8Array(ids.buffer, ids.byteOffset, ids.byteLength);
  // Four bytes at a time from the first aligned one.
  const head = Math.min(bytes.length, (4 - (bytes.byteOffset & 3)) & 3);
  const quads = (bytes.length - head) >> 2;
  for (let k = 0; k < head; k++) if (bytes[k] !== 0) return false;
  const words = new Int32Array(bytes.buffer, bytes.byteOffset + head, quads);
  for (let k = 0; k < quads; k++) if (words[k] !== 0) return false;
  for (let k = head + quads * 4; k < bytes.length; k++) if (bytes[k] !== 0) return false;
  return true;
}

/** A copy of `ids` (same width) with room for `capacity` rows. */
export function grownIds(ids: RowIds, capacity: number): RowIds {
  const grown = rowIds(capacity, idLimit(ids));
  grown.set(ids);
  return grown;
}
