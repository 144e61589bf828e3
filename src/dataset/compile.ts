import { bitsetWords } from '../kernel/exports.js';
import { classifyColumn } from './classify.js';
import type { Codebook } from './codebook.js';
import {
  BUFFER_ALIGN,
  BufferKind,
  CODE_LIMIT,
  DEFAULT_GROUP,
  DEFAULT_STABILITY,
  FORMAT_VERSION,
  type StoredMeta,
  type StoredVariable,
} from './format.js';
import type { RawColumn, RawTable } from './raw-table.js';
import type { StabilityThresholds } from '../facade/types.js';

export interface CompileOptions {
  survey: string;
  name?: string;
  units?: number;
  stability?: StabilityThresholds;
  codebook?: Codebook;
}

export interface CompiledBuffer {
  name: string;
  kind: BufferKind;
  count: number;
  data: Uint8Array;
}

export interface CompiledDataset {
  meta: StoredMeta;
  buffers: CompiledBuffer[];
}

/** Turns dictionary-encoded columns into variables, index columns and code containers. */
export function compileDataset(input: RawTable, options: CompileOptions): CompiledDataset {
  const table = sortByWeight(input);
  const rows = table.rows;
  const words = bitsetWords(rows);
  const buffers: CompiledBuffer[] = [];
  const add = (buffer: CompiledBuffer): number => buffers.push(buffer) - 1;

  const weights = table.weights.map((weight) => {
    const padded = new Float64Array(words * 64);
    padded.set(weight.values);
    return { name: weight.name, buffer: add({ name: `weight:${weight.name}`, kind: BufferKind.weights, count: rows, data: bytesOf(padded) }) };
  });

  const variables: StoredVariable[] = [];
  const skipped: StoredMeta['skipped'] = [];
  for (const column of table.columns) {
    const described = options.codebook?.variables[column.name];
    const verdict = classifyColumn(column, rows);
    if (verdict.kind === 'skip') {
      skipped.push({ column: column.name, reason: verdict.reason });
      continue;
    }
    const { values, remap } = sortDictionary(column, verdict.kind);
    const counts = new Array<number>(values.length).fill(0);
    const index = makeIndex(column.ids, remap, values.length, words);
    let missing = 0;
    for (let row = 0; row < rows; row++) {
      const rank = remap[column.ids[row]!]!;
      if (rank === 0) missing++;
      else counts[rank - 1]!++;
    }
    const variable: StoredVariable = {
      name: column.name,
      kind: verdict.kind,
      group: described?.group ?? DEFAULT_GROUP,
      values,
      counts,
      missing,
      index: add({ name: `index:${column.name}`, kind: index.kind, count: rows, data: index.data }),
    };
    const label = described?.label ?? column.label;
    if (label !== undefined) variable.label = label;
    const valueLabels = { ...column.valueLabels, ...described?.values };
    if (Object.keys(valueLabels).length > 0) variable.valueLabels = valueLabels;
    if (values.length <= CODE_LIMIT) {
      variable.codes = makeCodes(index.ranks, counts, words, rows).map((code, rank) =>
        add({ name: `code:${column.name}=${values[rank]}`, ...code }),
      );
    }
    variables.push(variable);
  }

  const meta: StoredMeta = {
    format: FORMAT_VERSION,
    survey: options.survey,
    name: options.name ?? options.survey,
    units: options.units ?? 1,
    respondents: rows,
    weights,
    stability: options.stability ?? DEFAULT_STABILITY,
    variables,
    codes: options.codebook?.codes ?? [],
    skipped,
    source: table.source.split(/[\\/]/).pop() ?? table.source,
    createdAt: new Date().toISOString(),
  };
  return { meta, buffers };
}

/**
 * Stores respondents in order of their default weight (ties in input order). Nothing in a
 * crosstab depends on respondent order, and runs of equal weights let the kernel take a
 * 64-bit word's weighted sum as popcount x weight (see wordWeights in assembly/index.ts).
 */
function sortByWeight(table: RawTable): RawTable {
  const weight = table.weights[0];
  if (!weight) return table;
  const values = weight.values;
  const order = new Uint32Array(table.rows);
  for (let row = 0; row < order.length; row++) order[row] = row;
  order.sort((a, b) => values[a]! - values[b]! || a - b);
  const permute = <T extends Float64Array | Uint32Array>(source: T, target: T): T => {
    for (let row = 0; row < order.length; row++) target[row] = source[order[row]!]!;
    return target;
  };
  return {
    ...table,
    weights: table.weights.map((w) => ({ ...w, values: permute(w.values, new Float64Array(table.rows)) })),
    columns: table.columns.map((column) => ({ ...column, ids: permute(column.ids, new Uint32Array(table.rows)) })),
  };
}

/**
 * Sorts a column's distinct values (numerically for numeric columns, so ranks follow
 * value order and a range is a run of ranks) and maps first-seen ids to 1-based ranks.
 * Numeric texts with the same value (`1` and `1.0`) share a rank.
 */
function sortDictionary(column: RawColumn, kind: 'numeric' | 'text'): { values: string[]; remap: Uint32Array } {
  const order = column.dictionary.map((_, id) => id);
  if (kind === 'numeric') {
    const numbers = column.dictionary.map(Number);
    order.sort((a, b) => numbers[a]! - numbers[b]!);
  } else {
    const texts = column.dictionary;
    order.sort((a, b) => (texts[a]! < texts[b]! ? -1 : texts[a]! > texts[b]! ? 1 : 0));
  }
  const remap = new Uint32Array(column.dictionary.length + 1);
  const values: string[] = [];
  let previous: string | number | undefined;
  for (const id of order) {
    const text = column.dictionary[id]!;
    const key = kind === 'numeric' ? Number(text) : text;
    if (key !== previous) values.push(text);
    previous = key;
    remap[id + 1] = values.length;
  }
  return { values, remap };
}

function makeIndex(ids: Uint32Array, remap: Uint32Array, distinct: number, words: number) {
  const length = words * 64;
  const ranks = distinct <= 0xff ? new Uint8Array(length) : distinct <= 0xffff ? new Uint16Array(length) : new Uint32Array(length);
  for (let row = 0; row < ids.length; row++) ranks[row] = remap[ids[row]!]!;
  const kind = distinct <= 0xff ? BufferKind.indexU8 : distinct <= 0xffff ? BufferKind.indexU16 : BufferKind.indexU32;
  return { ranks, kind, data: bytesOf(ranks) };
}

/**
 * One container per value: a dense bitset when the value is common, a sorted list of
 * respondent numbers when the list is smaller than the bitset (as roaring does), so a
 * rare value (a PUMA, an occupation) costs 4 bytes per respondent, not N/8 bytes.
 */
function makeCodes(ranks: ArrayLike<number>, counts: number[], words: number, rows: number) {
  const denseBytes = words * 8;
  const isDense = counts.map((count) => count * 4 >= denseBytes);
  const bitsets = counts.map((_, rank) => (isDense[rank] ? new BigUint64Array(words) : undefined));
  const words32 = bitsets.map((bits) => (bits ? new Uint32Array(bits.buffer) : undefined));
  const lists = counts.map((count, rank) => (isDense[rank] ? undefined : new Uint32Array(count)));
  const filled = new Array<number>(counts.length).fill(0);
  for (let row = 0; row < rows; row++) {
    const rank = ranks[row]!;
    if (rank === 0) continue;
    const bits = words32[rank - 1];
    if (bits) bits[row >>> 5]! |= 1 << (row & 31);
    else lists[rank - 1]![filled[rank - 1]!++] = row;
  }
  return counts.map((count, rank) =>
    isDense[rank]
      ? { kind: BufferKind.dense, count, data: bytesOf(words32[rank]!) }
      : { kind: BufferKind.sparse, count, data: bytesOf(lists[rank]!) },
  );
}

function bytesOf(view: ArrayBufferView): Uint8Array {
  return new Uint8Array(view.buffer, view.byteOffset, view.byteLength);
}

/** Size of a buffer once padded inside the Arrow value buffer. */
export function paddedSize(bytes: number): number {
  return Math.ceil(bytes / BUFFER_ALIGN) * BUFFER_ALIGN;
}
