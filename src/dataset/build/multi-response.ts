import { CrosstabError, ErrorCode } from '../../errors.js';
import { AXIS_LIMIT, type StoredVariable } from '../format.js';
import type { MultiSpec, RawColumn } from '../input/raw-table.js';
import { exactDecimal } from '../../text/decimal-text.js';
import { isNumberText, numberColumnProblem } from './classify.js';

export type { MultiSpec };

/** A planned multi-response variable: its values, counts and, per member column, the values of each id. */
export interface MultiPlan {
  spec: MultiSpec;
  values: string[];
  numeric: boolean;
  counts: number[];
  /** Respondents blank in every column. */
  missing: number;
  members: Array<{ column: RawColumn; ranksOfId: number[][] }>;
  /** Per value: a dense bitset (true) or a sorted list (false), as compile.ts decides for codes. */
  dense: boolean[];
}

function invalid(spec: MultiSpec, problem: string, hint: string): CrosstabError {
  return new CrosstabError(ErrorCode.invalidInput, `${spec.from}: multi-response variable "${spec.name}" ${problem}`, { field: spec.name, hint });
}

/** Same value as written twice (`1` and `1.0`: the same exact number). */
function sameValue(a: string, b: string): boolean {
  return a === b || (isNumberText(a) && isNumberText(b) && exactDecimal(a) === exactDecimal(b));
}

/** Plans `spec` over the input's columns (by name); counts its values in one pass over the rows. */
export function planMulti(spec: MultiSpec, byName: ReadonlyMap<string, RawColumn>, rows: number, words: number): MultiPlan {
  const columns = spec.columns.map((name) => {
    const column = byName.get(name);
    if (!column) throw invalid(spec, `names column "${name}", which the input does not have`, 'Fix the column name, or leave the column out of the set.');
    return column;
  });
  if (columns.length === 0) throw invalid(spec, 'has no columns', 'List its columns.');
  let values: string[];
  let members: MultiPlan['members'];
  if (spec.counted !== undefined) {
    const counted = spec.counted;
    values = columns.map((_, i) => String(i + 1));
    members = columns.map((column, i) => ({ column, ranksOfId: [[], ...column.dictionary.map((text) => (sameValue(text, counted) ? [i + 1] : []))] }));
  } else {
    const split = (text: string): string[] => (spec.delimiter === undefined ? [text] : text.split(spec.delimiter).map((part) => part.trim()).filter((part) => part !== ''));
    const texts = columns.map((column) => column.dictionary.map(split));
    const distinct = new Map<string, string>();
    // Numeric when every code is a number and floats tell its different numbers apart.
    const numeric = texts.every((column) => column.every((parts) => parts.every(isNumberText))) && numberColumnProblem(texts.flat(2)) === undefined;
    for (const column of texts) for (const parts of column) for (const part of parts) {
      const key = numeric ? String(Number(part)) : part;
      if (!distinct.has(key)) distinct.set(key, part);
    }
    if (distinct.size > AXIS_LIMIT) throw invalid(spec, `has ${distinct.size} distinct values; at most ${AXIS_LIMIT} are allowed`, 'Check the delimiter, or leave the column out of --multi.');
    const keys = [...distinct.keys()];
    if (numeric) keys.sort((a, b) => Number(a) - Number(b));
    else keys.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    values = keys.map((key) => distinct.get(key)!);
    const rankOf = new Map(keys.map((key, i) => [key, i + 1]));
    members = columns.map((column, m) => ({
      column,
      ranksOfId: [[], ...texts[m]!.map((parts) => [...new Set(parts.map((part) => rankOf.get(numeric ? String(Number(part)) : part)!))])],
    }));
  }
  const counts = new Array<number>(values.length).fill(0);
  let missing = 0;
  const seenAt = new Int32Array(values.length + 1).fill(-1);
  for (let row = 0; row < rows; row++) {
    let answered = false;
    for (const { column, ranksOfId } of members) {
      const id = column.ids[row]!;
      if (id === 0) continue;
      answered = true;
      for (const rank of ranksOfId[id]!) {
        if (seenAt[rank] !== row) {
          seenAt[rank] = row;
          counts[rank - 1]!++;
        }
      }
    }
    if (!answered) missing++;
  }
  const numeric = spec.counted !== undefined || (values.every(isNumberText) && numberColumnProblem(values) === undefined);
  return { spec, values, numeric, counts, missing, members, dense: counts.map((count) => isDense(count, words)) };
}

/** A dense bitset when the value is common, a sorted list when the list is smaller (compile.ts). */
export function isDense(count: number, words: number): boolean {
  return count * 4 >= words * 8;
}

/**
 * The variable's containers in file order: one per value, then the no-answer respondents'.
 * `order[r]` is the input row stored as respondent r.
 */
export function multiBuffers(plan: MultiPlan, order: Uint32Array, words: number): Uint8Array[] {
  const containers = [...plan.counts, plan.missing].map((count, i) =>
    (i < plan.counts.length ? plan.dense[i]! : isDense(count, words)) ? { bits: new Uint32Array(words * 2), list: undefined, next: 0 } : { bits: undefined, list: new Uint32Array(count), next: 0 },
  );
  const noAnswer = plan.values.length;
  const mark = (index: number, respondent: number) => {
    const container = containers[index]!;
    if (container.bits) container.bits[respondent >>> 5]! |= 1 << (respondent & 31);
    else container.list![container.next++] = respondent;
  };
  eachAnswer(plan.members, order, plan.values.length, (rank, respondent) => mark(rank - 1, respondent), (respondent) => mark(noAnswer, respondent));
  return containers.map((container) => {
    const view = container.bits ?? container.list!;
    return new Uint8Array(view.buffer, view.byteOffset, view.byteLength);
  });
}

/**
 * Walks the respondents in stored order (`order[r]` is the input row stored as respondent r):
 * `each(rank, r)` once for every value (1-based rank, below `values` + 1) respondent r holds,
 * or `none(r)` when r is blank in every member column (no answer).
 */
export function eachAnswer(members: MultiPlan['members'], order: Uint32Array, values: number, each: (rank: number, respondent: number) => void, none: (respondent: number) => void): void {
  const held = new Int32Array(values + 1).fill(-1);
  for (let respondent = 0; respondent < order.length; respondent++) {
    const row = order[respondent]!;
    let answered = false;
    for (const { column, ranksOfId } of members) {
      const id = column.ids[row]!;
      if (id === 0) continue;
      answered = true;
      for (const rank of ranksOfId[id]!) {
        if (held[rank] !== respondent) {
          held[rank] = respondent;
          each(rank, respondent);
        }
      }
    }
    if (!answered) none(respondent);
  }
}

/**
 * A wave of new respondents encoded with a stored multi-response variable's definition (its
 * columns, counted value or delimiter), as `planMulti` would encode them in a build of every
 * row: the wave's values join the stored ones in sorted place, numbers as numbers.
 */
export interface MultiWave {
  /** The variable's values now: the stored ones and the wave's new ones, sorted. */
  values: string[];
  /** Whether every value is a number (StoredMulti.numeric), as a build of every row decides it. */
  numeric: boolean;
  /** Stored rank (1-based; 0 unused) → rank now. */
  rankNow: Uint32Array;
  /** Values the wave brought that the variable did not have, as the wave first writes them. */
  added: string[];
  /** Per member column of the wave: per dictionary id (0 = blank), the ranks now it holds. */
  members: Array<{ column: RawColumn; ranksOfId: number[][] }>;
  /** The wave's columns' value labels (category and delimited sets), under the stored ones. */
  valueLabels: Record<string, string>;
}

/**
 * Plans `variable` (a stored multi-response variable) over a wave's columns (by name). Refuses,
 * naming the column and `file`, what a build of every row would make another variable of: a
 * member column missing, a value that is not a number where the values are numbers (or numbers
 * that read as one float), more than AXIS_LIMIT values.
 */
export function planMultiWave(variable: StoredVariable, byName: ReadonlyMap<string, RawColumn>, file: string, dataset: string): MultiWave {
  const source = variable.multi!.source;
  const unfit = (name: string, what: string, hint: string) => new CrosstabError(ErrorCode.invalidInput, `${file}: ${what}`, { file, field: name, hint });
  const rebuild = 'or build the whole dataset from all the rows with `crosstab build`';
  const columns = source.columns.map((name) => {
    const column = byName.get(name);
    if (!column) throw unfit(name, `has no column ${name}, a column of the multi-response variable ${variable.name} of ${dataset}`, 'Give the new rows every column of the dataset (blank where a respondent has no answer).');
    return column;
  });
  const stored = variable.values;
  if (source.counted !== undefined) {
    // Dichotomies: value i is column i, whatever the wave holds.
    const counted = source.counted;
    return {
      values: stored,
      numeric: variable.multi!.numeric,
      rankNow: Uint32Array.from({ length: stored.length + 1 }, (_, rank) => rank),
      added: [],
      members: columns.map((column, i) => ({ column, ranksOfId: [[], ...column.dictionary.map((text) => (sameValue(text, counted) ? [i + 1] : []))] })),
      valueLabels: {},
    };
  }
  const split = (text: string): string[] => (source.delimiter === undefined ? [text] : text.split(source.delimiter).map((part) => part.trim()).filter((part) => part !== ''));
  const texts = columns.map((column) => column.dictionary.map(split));
  const parts = texts.flat(2);
  // Sorted as numbers when every part of every row is a number that floats tell apart: with no stored value, the wave decides.
  let numeric = variable.multi!.numeric;
  if (stored.length === 0) numeric = parts.every(isNumberText) && numberColumnProblem(parts) === undefined;
  else if (numeric) {
    for (const [m, column] of columns.entries()) {
      const text = texts[m]!.flat().find((part) => !isNumberText(part));
      if (text !== undefined) {
        throw unfit(column.name, `column ${column.name} holds ${JSON.stringify(text)}, but the values of the multi-response variable ${variable.name} are numbers in ${dataset}`, `Fix the value (numbers only), ${rebuild} to make its values text.`);
      }
    }
    const problem = numberColumnProblem([...stored, ...parts]);
    if (problem !== undefined) throw unfit(variable.name, `the multi-response variable ${variable.name} cannot keep number values with the new rows: ${problem}`, `Write the value as the dataset does, ${rebuild} (it makes the values text).`);
  }
  const keyOf = (text: string): string => (numeric ? String(Number(text)) : text);
  const storedKeys = new Set(stored.map(keyOf));
  const added: string[] = [];
  const seen = new Set<string>();
  for (const part of parts) {
    const key = keyOf(part);
    if (!storedKeys.has(key) && !seen.has(key)) {
      seen.add(key);
      added.push(part);
    }
  }
  const values = [...stored, ...added];
  if (numeric) values.sort((a, b) => Number(a) - Number(b));
  else values.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  if (values.length > AXIS_LIMIT) {
    throw unfit(variable.name, `brings the multi-response variable ${variable.name} to ${values.length} distinct values; at most ${AXIS_LIMIT} are allowed`, `Check the delimiter, ${rebuild}.`);
  }
  const rankOf = new Map(values.map((value, i) => [keyOf(value), i + 1]));
  const rankNow = Uint32Array.from({ length: stored.length + 1 }, (_, rank) => (rank === 0 ? 0 : rankOf.get(keyOf(stored[rank - 1]!))!));
  const members = columns.map((column, m) => ({ column, ranksOfId: [[], ...texts[m]!.map((row) => [...new Set(row.map((part) => rankOf.get(keyOf(part))!))])] }));
  const valueLabels = Object.assign({}, ...columns.map((column) => column.valueLabels ?? {})) as Record<string, string>;
  return { values, numeric: values.every(isNumberText) && numberColumnProblem(values) === undefined, rankNow, added, members, valueLabels };
}
