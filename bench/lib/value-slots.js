// Dictionary encoding of one column: each respondent's value as its position
// in column.distinct (sorted), -1 when missing. What the one-pass scan keeps,
// and how the bitset peers find a respondent's bitset while building.
import { MISSING } from './column-store.js';

/** @returns {Int32Array} slot per respondent, -1 for missing */
export function valueSlots(column) {
  const values = column.values;
  const slots = new Int32Array(values.length);
  if (column.isText) {
    // Dictionary codes are in order of first appearance; distinct is sorted.
    const position = new Map(column.distinct.map((text, slot) => [text, slot]));
    const byCode = Int32Array.from(column.dictionary, (text) => position.get(text));
    for (let i = 0; i < values.length; i++) slots[i] = values[i] === MISSING ? -1 : byCode[values[i]];
    return slots;
  }
  if (values instanceof Float64Array) {
    const position = new Map(column.distinct.map((value, slot) => [value, slot]));
    for (let i = 0; i < values.length; i++) slots[i] = Number.isNaN(values[i]) ? -1 : position.get(values[i]);
    return slots;
  }
  const distinct = column.distinct;
  if (distinct.length === 0) return slots.fill(-1);
  const min = distinct[0];
  const lookup = new Int32Array(distinct[distinct.length - 1] - min + 1).fill(-1);
  distinct.forEach((value, slot) => { lookup[value - min] = slot; });
  for (let i = 0; i < values.length; i++) slots[i] = values[i] === MISSING ? -1 : lookup[values[i] - min];
  return slots;
}

/** Row indexes grouped by slot (counting sort, ascending within a slot): {offsets, rows}. */
export function rowsBySlot(slots, slotCount) {
  const offsets = new Int32Array(slotCount + 1);
  for (let i = 0; i < slots.length; i++) if (slots[i] >= 0) offsets[slots[i] + 1]++;
  for (let s = 0; s < slotCount; s++) offsets[s + 1] += offsets[s];
  const cursor = offsets.slice(0, slotCount);
  const rows = new Uint32Array(offsets[slotCount]);
  for (let i = 0; i < slots.length; i++) if (slots[i] >= 0) rows[cursor[slots[i]]++] = i;
  return { offsets, rows };
}
