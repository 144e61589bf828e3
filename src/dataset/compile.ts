import { bitsetWords } from '../kernel/exports.js';
import { classifyColumn } from './classify.js';
import type { Codebook } from './codebook.js';
import {
  BUFFER_ALIGN,
  BufferKind,
  AXIS_LIMIT,
  DEFAULT_GROUP,
  DEFAULT_STABILITY,
  FORMAT_VERSION,
  type StabilityThresholds,
  type StoredMeta,
  type StoredVariable,
} from './format.js';
import type { RawColumn, RawTable } from './raw-table.js';
import { weightOrder } from './weight-order.js';

export interface CompileOptions {
  survey: string;
  name?: string;
  units?: number;
  stability?: StabilityThresholds;
  codebook?: Codebook;
  /**
   * Let go of each input column once its buffers are made (the build's own table): the
   * input's memory shrinks as the output is written. Default false (the table is kept).
   */
  consume?: boolean;
}

/** One buffer of the dataset as planned before its bytes exist. */
export interface BufferSpec {
  name: string;
  kind: BufferKind;
  count: number;
  /** Exact size in bytes, before padding to BUFFER_ALIGN. */
  bytes: number;
}

export interface CompiledDataset {
  meta: StoredMeta;
  /** Every buffer, in file order; sizes are known before any is made. */
  specs: BufferSpec[];
  /**
   * The buffers' bytes in the order of `specs`, each made when asked for: a writer that
   * writes each before asking for the next holds one variable's buffers at a time.
   */
  data(): Iterable<Uint8Array>;
  /**
   * A variable's 1-based value ranks (0 = blank) and a weight's values, per respondent in
   * input order: what a build-time check that does not depend on respondent order (the
   * survey design) reads. Valid until `data()` has made that variable's buffers.
   */
  inputRanks(variable: string): Uint32Array;
  inputWeights(weight: string): Float64Array;
}

interface PlannedVariable {
  column: RawColumn;
  remap: Uint32Array;
  counts: number[];
  dense: boolean[] | undefined;
}

/**
 * Plans a dataset from dictionary-encoded columns: variables, dictionaries, counts, and the
 * kind and size of every buffer (index columns and code containers). The bytes are made
 * later, one variable at a time, by `data()`.
 */
export function compileDataset(input: RawTable, options: CompileOptions): CompiledDataset {
  const rows = input.rows;
  const words = bitsetWords(rows);
  const specs: BufferSpec[] = [];
  const add = (spec: BufferSpec): number => specs.push(spec) - 1;

  const weights = input.weights.map((weight) => ({
    name: weight.name,
    buffer: add({ name: `weight:${weight.name}`, kind: BufferKind.weights, count: rows, bytes: words * 64 * 8 }),
  }));

  const variables: StoredVariable[] = [];
  const planned: PlannedVariable[] = [];
  const skipped: StoredMeta['skipped'] = [];
  for (const column of input.columns) {
    const described = options.codebook?.variables[column.name];
    const verdict = classifyColumn(column, rows);
    if (verdict.kind === 'skip') {
      skipped.push({ column: column.name, reason: verdict.reason });
      // An id column's dictionary can be most of the input's memory (ACS SERIALNO).
      if (options.consume === true) Object.assign(column, { ids: new Uint8Array(0), dictionary: [] });
      continue;
    }
    const { values, remap } = sortDictionary(column, verdict.kind);
    const counts = new Array<number>(values.length).fill(0);
    let missing = 0;
    const counted = column.counts;
    if (counted !== undefined && counted.length === column.dictionary.length + 1) {
      // Counted by the reader: by rank, and the rest of the rows are blank.
      missing = rows;
      for (let id = 1; id < counted.length; id++) {
        counts[remap[id]! - 1]! += counted[id]!;
        missing -= counted[id]!;
      }
    } else {
      const ids = column.ids;
      for (let row = 0; row < rows; row++) {
        const rank = remap[ids[row]!]!;
        if (rank === 0) missing++;
        else counts[rank - 1]!++;
      }
    }
    const indexKind = values.length <= 0xff ? BufferKind.indexU8 : values.length <= 0xffff ? BufferKind.indexU16 : BufferKind.indexU32;
    const width = indexKind === BufferKind.indexU8 ? 1 : indexKind === BufferKind.indexU16 ? 2 : 4;
    const variable: StoredVariable = {
      name: column.name,
      kind: verdict.kind,
      group: described?.group ?? DEFAULT_GROUP,
      values,
      counts,
      missing,
      index: add({ name: `index:${column.name}`, kind: indexKind, count: rows, bytes: words * 64 * width }),
    };
    const label = described?.label ?? column.label;
    if (label !== undefined) variable.label = label;
    const valueLabels = { ...column.valueLabels, ...described?.values };
    if (Object.keys(valueLabels).length > 0) variable.valueLabels = valueLabels;
    let dense: boolean[] | undefined;
    if (values.length <= AXIS_LIMIT) {
      // A dense bitset when the value is common, a sorted list of respondent numbers when
      // the list is smaller than the bitset (as roaring does).
      dense = counts.map((count) => count * 4 >= words * 8);
      variable.codes = counts.map((count, rank) =>
        add({
          name: `code:${column.name}=${values[rank]}`,
          kind: dense![rank] ? BufferKind.dense : BufferKind.sparse,
          count,
          bytes: dense![rank] ? words * 8 : count * 4,
        }),
      );
    }
    variables.push(variable);
    planned.push({ column, remap, counts, dense });
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
    source: input.source.split(/[\\/]/).pop() ?? input.source,
    createdAt: new Date().toISOString(),
  };
  const inputRanks = (name: string): Uint32Array => {
    const found = planned.find((entry) => entry.column.name === name);
    if (!found) throw new Error(`compile: no variable ${name}`);
    const ranks = new Uint32Array(rows);
    for (let row = 0; row < rows; row++) ranks[row] = found.remap[found.column.ids[row]!]!;
    return ranks;
  };
  const inputWeights = (name: string): Float64Array => {
    const found = input.weights.find((weight) => weight.name === name);
    if (!found) throw new Error(`compile: no weight ${name}`);
    return found.values;
  };
  return { meta, specs, data: () => makeBuffers(input, planned, words, options.consume === true), inputRanks, inputWeights };
}

/**
 * Respondents are stored in order of their default weight (ties in input order). Nothing
 * in a crosstab depends on respondent order, and runs of equal weights let the kernel take
 * a 64-bit word's weighted sum as popcount x weight (see weightRuns in assembly/index.ts).
 */
function* makeBuffers(input: RawTable, planned: PlannedVariable[], words: number, consume: boolean): Generator<Uint8Array> {
  const rows = input.rows;
  const order = weightOrder(input.weights[0]?.values, rows);
  for (const weight of input.weights) {
    const padded = new Float64Array(words * 64);
    const values = weight.values;
    for (let row = 0; row < rows; row++) padded[row] = values[order[row]!]!;
    yield bytesOf(padded);
  }
  for (const { column, remap, counts, dense } of planned) {
    const ranks = makeIndex(column.ids, remap, order, counts.length, words);
    if (consume) column.ids = new Uint8Array(0);
    yield bytesOf(ranks);
    if (dense) yield* makeCodes(ranks, counts, dense, words, rows);
  }
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

/** Per stored respondent (input row order[r]), the rank of its value: the index column. */
function makeIndex(ids: ArrayLike<number>, remap: Uint32Array, order: Uint32Array, distinct: number, words: number) {
  const length = words * 64;
  const ranks = distinct <= 0xff ? new Uint8Array(length) : distinct <= 0xffff ? new Uint16Array(length) : new Uint32Array(length);
  for (let row = 0; row < order.length; row++) ranks[row] = remap[ids[order[row]!]!]!;
  return ranks;
}

/**
 * One container per value: a dense bitset when the value is common, a sorted list of
 * respondent numbers otherwise, so a rare value (a PUMA, an occupation) costs 4 bytes
 * per respondent, not N/8 bytes.
 */
function* makeCodes(ranks: ArrayLike<number>, counts: number[], dense: boolean[], words: number, rows: number): Generator<Uint8Array> {
  const bitsets = counts.map((_, rank) => (dense[rank] ? new Uint32Array(words * 2) : undefined));
  const lists = counts.map((count, rank) => (dense[rank] ? undefined : new Uint32Array(count)));
  const filled = new Array<number>(counts.length).fill(0);
  for (let row = 0; row < rows; row++) {
    const rank = ranks[row]!;
    if (rank === 0) continue;
    const bits = bitsets[rank - 1];
    if (bits) bits[row >>> 5]! |= 1 << (row & 31);
    else lists[rank - 1]![filled[rank - 1]!++] = row;
  }
  for (let rank = 0; rank < counts.length; rank++) {
    yield bytesOf(bitsets[rank] ?? lists[rank]!);
    bitsets[rank] = lists[rank] = undefined;
  }
}

function bytesOf(view: ArrayBufferView): Uint8Array {
  return new Uint8Array(view.buffer, view.byteOffset, view.byteLength);
}

/** Size of a buffer once padded inside the Arrow value buffer. */
export function paddedSize(bytes: number): number {
  return Math.ceil(bytes / BUFFER_ALIGN) * BUFFER_ALIGN;
}
