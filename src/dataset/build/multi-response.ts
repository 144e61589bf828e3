import { CrosstabError, ErrorCode } from '../../errors.js';
import { AXIS_LIMIT } from '../format.js';
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
  const held = new Int32Array(plan.values.length + 1).fill(-1);
  for (let respondent = 0; respondent < order.length; respondent++) {
    const row = order[respondent]!;
    let answered = false;
    for (const { column, ranksOfId } of plan.members) {
      const id = column.ids[row]!;
      if (id === 0) continue;
      answered = true;
      for (const rank of ranksOfId[id]!) {
        if (held[rank] !== respondent) {
          held[rank] = respondent;
          mark(rank - 1, respondent);
        }
      }
    }
    if (!answered) mark(noAnswer, respondent);
  }
  return containers.map((container) => {
    const view = container.bits ?? container.list!;
    return new Uint8Array(view.buffer, view.byteOffset, view.byteLength);
  });
}
