import { bitsetWords } from '../../kernel/exports.js';
import { columnsModule } from '../../kernel/wasm-module.js';
import { classifyColumn } from './classify.js';
import { dictionaryFloats, rankOf } from './dictionary-floats.js';
import type { Codebook } from './codebook.js';
import {
  BUFFER_ALIGN,
  BufferKind,
  AXIS_LIMIT,
  DEFAULT_GROUP,
  DEFAULT_STABILITY,
  FORMAT_VERSION,
  MULTI_FORMAT_VERSION,
  type StabilityThresholds,
  type StoredMeta,
  type StoredMulti,
  type StoredVariable,
  RANGE_INDEX_LIMIT,
} from '../format.js';
import { CrosstabError, ErrorCode } from '../../errors.js';
import { invalidOption } from '../../options.js';
import { ColumnKernel, columnMemory, scratchBytes, type ColumnMemory, type StoredBuffer } from './column-buffers.js';
import { ColumnPool } from './column-pool.js';
import type { RawColumn, RawTable } from '../input/raw-table.js';
import { type WeightOrder, weightOrder } from './weight-order.js';
import { isDense, multiBuffers, planMulti, type MultiPlan, type MultiSpec } from './multi-response.js';

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
  /**
   * Worker threads making the variables' buffers a few variables ahead of the writer (then
   * `data()` is async). Default 0: all on the calling thread.
   */
  threads?: number;
  /** Multi-response variables made from input columns (codebook, --multi, SPSS sets). */
  multi?: MultiSpec[];
  /**
   * Numeric variables to give a range index (StoredVariable.atLeast), by name; `'auto'`: the
   * variables `autoRangeIndex` picks. Default: none.
   */
  rangeIndex?: string[] | 'auto';
  /** The respondent id column: kept as given (StoredMeta.id), not a variable; unique, never blank. */
  id?: string;
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
   * writes each before asking for the next holds one variable's buffers at a time (with
   * `threads`, those of a few variables: it is then an async iterable). A variable's buffers
   * come as stored (zero-padded) with their XXH64, made where they were made.
   */
  data(): Iterable<Uint8Array | StoredBuffer> | AsyncIterable<Uint8Array | StoredBuffer>;
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
  /** Whether the variable gets a range index (one bitset per rank: rank or more). */
  atLeast: boolean;
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

  // The input row of each respondent, and the id column's texts: first after the weights.
  const inputRows = add({ name: 'input-rows', kind: BufferKind.inputRows, count: rows, bytes: rows * 4 });
  const idColumn = options.id === undefined ? undefined : idColumnOf(input, options.id);
  const idTexts = idColumn === undefined ? undefined : idBytes(idColumn, rows);
  const id = idColumn === undefined ? undefined : { column: idColumn.name, buffer: add({ name: `id:${idColumn.name}`, kind: BufferKind.idTexts, count: idTexts!.byteLength, bytes: idTexts!.byteLength }) };

  const variables: StoredVariable[] = [];
  const planned: PlannedVariable[] = [];
  const skipped: StoredMeta['skipped'] = [];
  // Multi-response variables' buffers come first: made before any member column is let go.
  const byName = new Map(input.columns.map((column) => [column.name, column]));
  const multiPlans = (options.multi ?? []).map((spec) => planMulti(spec, byName, rows, words));
  const multiVariables = multiPlans.map((plan) => multiVariable(plan, add, words, options.codebook));
  const delimited = new Set((options.multi ?? []).filter((spec) => spec.delimiter !== undefined).map((spec) => spec.columns[0]!));
  // The columns' values and counts first: the automatic range index weighs them all.
  const sorted: SortedColumn[] = [];
  for (const column of input.columns) {
    if (delimited.has(column.name) || column === idColumn) continue;
    const verdict = classifyColumn(column, rows);
    if (column.partly === true && verdict.kind !== 'skip') throw new Error(`column ${column.name} was read only in part, yet is kept`);
    if (verdict.kind === 'text' && verdict.note !== undefined) (input.notes ??= []).push(verdict.note);
    if (verdict.kind === 'skip') {
      const { kind: _kind, ...entry } = verdict;
      skipped.push({ column: column.name, ...entry });
      // An id column's dictionary can be most of the input's memory (ACS SERIALNO).
      if (options.consume === true) Object.assign(column, { ids: new Uint8Array(0), dictionary: [] });
      continue;
    }
    const { values, remap } = sortDictionary(column, verdict.kind);
    sorted.push({ column, kind: verdict.kind, values, remap, ...countRanks(column, remap, values.length, rows) });
  }
  const rangeIndex = new Set(
    options.rangeIndex === 'auto'
      ? autoRangeIndex(sorted, specs.reduce((sum, spec) => sum + spec.bytes, 0) + sorted.reduce((sum, entry) => sum + variableBytes(entry.counts, words), 0), words)
      : (options.rangeIndex ?? []),
  );
  for (const { column, kind, values, remap, counts, missing } of sorted) {
    const described = options.codebook?.variables[column.name];
    const indexKind = indexKindOf(values.length);
    const width = indexWidth(indexKind);
    const variable: StoredVariable = {
      name: column.name,
      kind,
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
      dense = counts.map((count) => isDenseCode(count, words));
      variable.codes = counts.map((count, rank) =>
        add({
          name: `code:${column.name}=${values[rank]}`,
          kind: dense![rank] ? BufferKind.dense : BufferKind.sparse,
          count,
          bytes: dense![rank] ? words * 8 : count * 4,
        }),
      );
    }
    const atLeast = rangeIndex.has(column.name);
    if (atLeast) {
      rangeIndexable(column.name, kind, values.length);
      // Respondents of rank r or more: counts summed from the top.
      const atLeastCounts = counts.slice();
      for (let rank = counts.length - 2; rank >= 0; rank--) atLeastCounts[rank]! += atLeastCounts[rank + 1]!;
      variable.atLeast = atLeastCounts.map((count, rank) => add({ name: `atleast:${column.name}>=${values[rank]}`, kind: BufferKind.dense, count, bytes: words * 8 }));
    }
    variables.push(variable);
    planned.push({ column, remap, counts, dense, atLeast });
  }
  for (const name of rangeIndex) {
    if (planned.some((entry) => entry.column.name === name)) continue;
    const why = multiPlans.some((plan) => plan.spec.name === name)
      ? 'is multi-response (a respondent may hold several values)'
      : skipped.some((entry) => entry.column === name)
        ? 'was skipped (see the build\'s notes)'
        : 'is not a column of the input';
    throw invalidOption('rangeIndex', `"${name}" ${why}: a range index is for a numeric single-coded variable`, 'Name numeric columns of the input (e.g. an age), or leave the option out.');
  }
  for (const variable of multiVariables) {
    if (variables.some((other) => other.name === variable.name)) {
      throw new CrosstabError(ErrorCode.invalidInput, `multi-response variable "${variable.name}" has the name of a column of the input`, {
        field: variable.name,
        hint: 'Give the multi-response variable another name.',
      });
    }
    variables.push(variable);
  }

  const meta: StoredMeta = {
    format: multiPlans.length > 0 ? MULTI_FORMAT_VERSION : FORMAT_VERSION,
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
    numberRule: 'float-collisions',
    inputRows,
    ...(id === undefined ? {} : { id }),
    ...(options.codebook?.missingLabel === undefined ? {} : { missingLabel: options.codebook.missingLabel }),
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
  const consume = options.consume === true;
  const threads = options.threads ?? 0;
  const extra = idTexts === undefined ? [] : [idTexts];
  const data = () => (threads > 0 ? makeBuffersInWorkers(input, planned, multiPlans, words, consume, threads, extra) : makeBuffers(input, planned, multiPlans, words, consume, extra));
  return { meta, specs, data, inputRanks, inputWeights };
}

/**
 * Respondents are stored in order of their default weight (ties in input order). Nothing
 * in a crosstab depends on respondent order, and runs of equal weights let the kernel take
 * a 64-bit word's weighted sum as popcount x weight (see weightRuns in assembly/index.ts).
 */
function* makeBuffers(input: RawTable, planned: PlannedVariable[], multiPlans: MultiPlan[], words: number, consume: boolean, idTexts: Uint8Array[]): Generator<Uint8Array | StoredBuffer> {
  const memory = plannedMemory(planned, words, input.rows, 1);
  const sorted = weightOrder(input.weights[0]?.values, input.rows, new Uint32Array(input.rows), memory.respondentOf);
  const order = sorted.order;
  yield* weightBuffers(input, sorted, words);
  yield bytesOf(order);
  yield* idTexts;
  for (const plan of multiPlans) yield* multiBuffers(plan, order, words);
  const kernel = new ColumnKernel(columnsModule(), { memory: memory.memory, orderAt: memory.orderAt, scratchAt: memory.scratchAt[0]! });
  for (const variable of planned) {
    const task = columnTask(variable, words, input.rows);
    if (consume) variable.column.ids = new Uint8Array(0);
    yield* kernel.columnBuffers(task);
  }
}

/**
 * makeBuffers with the variables' buffers made by `threads` workers, `threads` variables
 * ahead of the one being written (so memory holds a few variables' buffers, not all).
 */
async function* makeBuffersInWorkers(input: RawTable, planned: PlannedVariable[], multiPlans: MultiPlan[], words: number, consume: boolean, threads: number, idTexts: Uint8Array[]): AsyncGenerator<Uint8Array | StoredBuffer> {
  const rows = input.rows;
  // The workers start while the order is found; its inverse is in the memory shared with them, not copied to each.
  const memory = plannedMemory(planned, words, rows, threads);
  const pool = new ColumnPool(threads, memory);
  try {
    const sorted = weightOrder(input.weights[0]?.values, rows, new Uint32Array(rows), memory.respondentOf);
    const order = sorted.order;
    // Made before any launch lets a member column go.
    const multi = multiPlans.flatMap((plan) => multiBuffers(plan, order, words));
    const ahead: Array<Promise<StoredBuffer[]>> = [];
    let next = 0;
    const launch = () => {
      const variable = planned[next++]!;
      const made = pool.run(columnTask(variable, words, rows), consume);
      // A rejection is handled when its turn comes; until then it must not count as unhandled.
      made.catch(() => undefined);
      ahead.push(made);
      if (consume) variable.column.ids = new Uint8Array(0);
    };
    while (next < planned.length && ahead.length < threads + 1) launch();
    // The weights (first in the file) are written while the workers make the first variables.
    yield* weightBuffers(input, sorted, words);
    // The order itself, not a copy: nothing writes it once it is found (the writer pads a copy of it).
    yield bytesOf(order);
    yield* idTexts;
    yield* multi;
    while (ahead.length > 0) {
      const buffers = await ahead.shift()!;
      if (next < planned.length) launch();
      yield* buffers;
    }
  } finally {
    await pool.close();
  }
}

function* weightBuffers(input: RawTable, { order, runs }: WeightOrder, words: number): Generator<Uint8Array> {
  for (const [k, weight] of input.weights.entries()) {
    const padded = new Float64Array(words * 64);
    if (k === 0 && runs !== undefined) {
      // The weight respondents are sorted by: its runs of equal weights, not a gather row by row.
      for (let run = 0; run < runs.weights.length; run++) padded.fill(runs.weights[run]!, runs.starts[run]!, runs.starts[run + 1]!);
    } else {
      const values = weight.values;
      for (let row = 0; row < input.rows; row++) padded[row] = values[order[row]!]!;
    }
    yield bytesOf(padded);
  }
}

/** The stored variable of a planned multi-response variable; adds its containers' specs. */
function multiVariable(plan: MultiPlan, add: (spec: BufferSpec) => number, words: number, codebook: Codebook | undefined): StoredVariable {
  const { spec, values, counts } = plan;
  const described = codebook?.variables[spec.name];
  const codes = counts.map((count, rank) =>
    add({ name: `code:${spec.name}=${values[rank]}`, kind: plan.dense[rank] ? BufferKind.dense : BufferKind.sparse, count, bytes: plan.dense[rank] ? words * 8 : count * 4 }),
  );
  const noAnswerDense = isDense(plan.missing, words);
  const noAnswer = add({ name: `na:${spec.name}`, kind: noAnswerDense ? BufferKind.dense : BufferKind.sparse, count: plan.missing, bytes: noAnswerDense ? words * 8 : plan.missing * 4 });
  const source: StoredMulti['source'] = { columns: [...spec.columns] };
  if (spec.counted !== undefined) source.counted = spec.counted;
  if (spec.delimiter !== undefined) source.delimiter = spec.delimiter;
  const variable: StoredVariable = {
    name: spec.name,
    kind: 'multi',
    group: described?.group ?? spec.group ?? DEFAULT_GROUP,
    values,
    counts,
    missing: plan.missing,
    index: -1,
    codes,
    multi: { numeric: plan.numeric, noAnswer, source },
  };
  const label = described?.label ?? spec.label;
  if (label !== undefined) variable.label = label;
  const valueLabels = { ...spec.valueLabels, ...described?.values };
  if (Object.keys(valueLabels).length > 0) variable.valueLabels = valueLabels;
  return variable;
}

function columnTask({ column, remap, counts, dense, atLeast }: PlannedVariable, words: number, rows: number) {
  return { ids: column.ids, remap, distinct: counts.length, counts, dense, atLeast, words, rows };
}

/** The column builders' shared memory: the order, and scratch for the largest variable per thread. */
function plannedMemory(planned: PlannedVariable[], words: number, rows: number, threads: number): ColumnMemory {
  const scratch = planned.reduce((most, variable) => Math.max(most, scratchBytes(columnTask(variable, words, rows))), 0);
  return columnMemory(rows, scratch, threads);
}

/** A column as the compiler sees it before its buffers are planned: sorted values, counts by rank. */
interface SortedColumn {
  column: RawColumn;
  kind: 'numeric' | 'text';
  values: string[];
  remap: Uint32Array;
  counts: number[];
  missing: number;
}

/** Respondents per rank (1-based ranks at index rank - 1) and blank respondents. */
function countRanks(column: RawColumn, remap: Uint32Array, distinct: number, rows: number): { counts: number[]; missing: number } {
  const counts = new Array<number>(distinct).fill(0);
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
  return { counts, missing };
}

function indexKindOf(distinct: number): BufferKind {
  return distinct <= 0xff ? BufferKind.indexU8 : distinct <= 0xffff ? BufferKind.indexU16 : BufferKind.indexU32;
}

function indexWidth(kind: BufferKind): number {
  return kind === BufferKind.indexU8 ? 1 : kind === BufferKind.indexU16 ? 2 : 4;
}

/** A value's code is a dense bitset when the value is common, else a sorted list (as roaring does). */
function isDenseCode(count: number, words: number): boolean {
  return count * 4 >= words * 8;
}

/** Bytes of a single-coded variable's index column and value codes (no range index). */
function variableBytes(counts: number[], words: number): number {
  let bytes = words * 64 * indexWidth(indexKindOf(counts.length));
  if (counts.length <= AXIS_LIMIT) for (const count of counts) bytes += isDenseCode(count, words) ? words * 8 : count * 4;
  return bytes;
}

/**
 * The range index a build gets without naming one (`crosstab build` without --range-index):
 * the numeric variables whose ranges are worth storing, within a size budget.
 *
 * - A candidate is a numeric variable with AUTO_RANGE_MIN_VALUES to RANGE_INDEX_LIMIT distinct
 *   values that fill at least half of their span (distinct >= (max - min + 1) / 2): an age, hours,
 *   a year, an ordered scale or an income band, not scattered codes (a field of degree coded
 *   1100-6403, a state coded 1-555). With fewer values a short range is ORed from its codes.
 * - Its cost is a bitset per value (words * 8 bytes: respondents / 8).
 * - Candidates are taken fewest values first (ties in input order) while the range indexes
 *   together stay within AUTO_RANGE_BUDGET of the rest of the dataset's bytes and the whole
 *   dataset within AUTO_RANGE_FILE_LIMIT (a larger dataset gets none: name them with
 *   --range-index).
 */
export function autoRangeIndex(columns: ReadonlyArray<Pick<SortedColumn, 'column' | 'kind' | 'values'>>, restBytes: number, words: number): string[] {
  const candidates = columns
    .filter(({ kind, values }) => {
      if (kind !== 'numeric' || values.length < AUTO_RANGE_MIN_VALUES || values.length > RANGE_INDEX_LIMIT) return false;
      const span = Number(values[values.length - 1]) - Number(values[0]) + 1;
      return values.length * 2 >= span;
    })
    .map((entry, order) => ({ name: entry.column.name, bytes: entry.values.length * words * 8, distinct: entry.values.length, order }))
    .sort((a, b) => a.distinct - b.distinct || a.order - b.order);
  // Half the rest, and never past AUTO_RANGE_FILE_LIMIT in all: a process's kernel memory (4 GiB) holds the files it opens.
  let left = Math.max(0, Math.min(restBytes * AUTO_RANGE_BUDGET, AUTO_RANGE_FILE_LIMIT - restBytes));
  const chosen: string[] = [];
  for (const candidate of candidates) {
    if (candidate.bytes > left) continue;
    left -= candidate.bytes;
    chosen.push(candidate.name);
  }
  return chosen;
}

/** The fewest distinct values for which the automatic rule gives a range index. */
export const AUTO_RANGE_MIN_VALUES = 10;
/** The automatic range indexes together: at most this share of the rest of the dataset's bytes. */
export const AUTO_RANGE_BUDGET = 0.5;
/** ... and the dataset with them at most this many bytes (1 GiB, a quarter of a process's kernel memory). */
export const AUTO_RANGE_FILE_LIMIT = 2 ** 30;

/** Refuses a range index where ranges mean nothing (text) or its bitsets would be too many. */
function rangeIndexable(name: string, kind: 'numeric' | 'text', values: number): void {
  if (kind !== 'numeric') {
    throw invalidOption('rangeIndex', `"${name}" holds text: ranges (VAR=lo..hi) apply to numeric variables only`, 'Leave it out of the range index.');
  }
  if (values > RANGE_INDEX_LIMIT) {
    throw invalidOption(
      'rangeIndex',
      `"${name}" has ${values} distinct values, more than the ${RANGE_INDEX_LIMIT} a range index takes (it stores a bitset per value)`,
      'Leave it out of the range index: its ranges are then scanned from its index column.',
    );
  }
}

/**
 * Sorts a column's distinct values (numerically for numeric columns, so ranks follow
 * value order and a range is a run of ranks) and maps first-seen ids to 1-based ranks.
 * Numeric texts with the same value (`1` and `1.0`) share a rank: the same float is the same
 * number, since a numeric column's values all fit a float (classify.ts).
 */
function sortDictionary(column: RawColumn, kind: 'numeric' | 'text'): { values: string[]; remap: Uint32Array } {
  if (kind === 'numeric') return sortNumbers(column.dictionary);
  const texts = column.dictionary;
  const order = texts.map((_, id) => id);
  order.sort((a, b) => (texts[a]! < texts[b]! ? -1 : texts[a]! > texts[b]! ? 1 : 0));
  const remap = new Uint32Array(texts.length + 1);
  const values: string[] = [];
  let previous: string | undefined;
  for (const id of order) {
    const text = texts[id]!;
    if (text !== previous) values.push(text);
    previous = text;
    remap[id + 1] = values.length;
  }
  return { values, remap };
}

/**
 * sortDictionary for a numeric column: its distinct floats sorted once (a typed array's own
 * sort) and each id's rank found by binary search, where a comparator sort of the ids took
 * most of a build of replicate-weight columns (thousands of values each). Texts of one float
 * (`1` and `1.0`) share a rank, whose value is the text first seen, as a stable sort of the
 * ids gives it.
 */
function sortNumbers(dictionary: string[]): { values: string[]; remap: Uint32Array } {
  const { numbers, distinct } = dictionaryFloats(dictionary);
  const firstId = new Int32Array(distinct.length).fill(-1);
  const remap = new Uint32Array(dictionary.length + 1);
  for (let id = 0; id < dictionary.length; id++) {
    const rank = rankOf(distinct, numbers[id]!);
    if (firstId[rank] === -1) firstId[rank] = id;
    remap[id + 1] = rank + 1;
  }
  const values = new Array<string>(distinct.length);
  for (let rank = 0; rank < distinct.length; rank++) values[rank] = dictionary[firstId[rank]!]!;
  return { values, remap };
}

/** The input column named `name` as the respondent id: every row has a value, no two the same. */
function idColumnOf(input: RawTable, name: string): RawColumn {
  const column = input.columns.find((candidate) => candidate.name === name);
  if (column === undefined) {
    const why = input.weights.some((weight) => weight.name === name) ? 'is a weight column' : 'is not a column of the input';
    throw invalidOption('id', `"${name}" ${why}`, 'Name the column that identifies each respondent (it must not be a weight or excluded).');
  }
  const rows = input.rows;
  const firstRow = new Int32Array(column.dictionary.length + 1).fill(-1);
  for (let row = 0; row < rows; row++) {
    const id = column.ids[row]!;
    if (id === 0) throw invalidOption('id', `column "${name}" is blank in data row ${row + 1}`, 'Every respondent needs an id: fill it in, or build without --id (the input row number is then the key).');
    if (firstRow[id] !== -1) {
      throw invalidOption('id', `column "${name}" has the value ${JSON.stringify(column.dictionary[id - 1])} in data rows ${firstRow[id]! + 1} and ${row + 1}`, 'An id identifies one respondent: make the ids unique, or build without --id.');
    }
    firstRow[id] = row;
  }
  return column;
}

/** The id column's texts in input row order: (rows + 1) u32 offsets into the UTF-8 text after them. */
function idBytes(column: RawColumn, rows: number): Uint8Array {
  const encoded = column.dictionary.map((text) => Buffer.from(text, 'utf8'));
  let textBytes = 0;
  for (let row = 0; row < rows; row++) textBytes += encoded[column.ids[row]! - 1]!.byteLength;
  const bytes = new Uint8Array((rows + 1) * 4 + textBytes);
  const offsets = new Uint32Array(bytes.buffer, 0, rows + 1);
  let at = 0;
  for (let row = 0; row < rows; row++) {
    const text = encoded[column.ids[row]! - 1]!;
    bytes.set(text, (rows + 1) * 4 + at);
    at += text.byteLength;
    offsets[row + 1] = at;
  }
  return bytes;
}

function bytesOf(view: ArrayBufferView): Uint8Array {
  return new Uint8Array(view.buffer, view.byteOffset, view.byteLength);
}

/** Size of a buffer once padded inside the Arrow value buffer. */
export function paddedSize(bytes: number): number {
  return Math.ceil(bytes / BUFFER_ALIGN) * BUFFER_ALIGN;
}
