import { numberColumnProblem } from '../dataset/build/classify.js';
import { lowerBound } from '../query/sorted-search.js';

/** A variable's values with a wave's merged in the order a build sorts them, and the ranks of each (1-based). */
export interface MergedRanks {
  merged: string[];
  /** The wave's values the variable did not have, in the order the wave first has them. */
  added: string[];
  /** Old rank → rank now (index 0 unused). */
  rankNow: Uint32Array;
  /** The wave's dictionary id (1-based; 0 blank) → rank now. */
  rankOfId: Uint32Array;
}

/**
 * The old values `old` and the wave's `dictionary` merged in sorted order (by number, or by
 * UTF-16 code units; texts of one number are one value). The old values, in that order as a
 * build stores them, are searched rather than hashed, and only the wave's new values sorted:
 * a variable of 20,000 values (the ACS's incomes) takes a few milliseconds, not a hash map of
 * its values built twice and all of them sorted again.
 */
export function mergedRanks(old: string[], dictionary: string[], numeric: boolean, oldNumbers?: Float64Array): MergedRanks {
  const keys: Float64Array | string[] = numeric ? (oldNumbers ?? Float64Array.from(old, Number)) : old;
  if (!inOrder(keys)) return mergedRanksHashed(old, dictionary, numeric);
  const n = old.length;
  // Per dictionary id − 1: the old index holding its value (≥ 0), or −1 − its entry in `added`.
  const found = new Int32Array(dictionary.length);
  const added: string[] = [];
  const addedKeys: Array<string | number> = [];
  const entryOf = new Map<string | number, number>();
  /** Per new value: how many old values sort before it. */
  const before: number[] = [];
  for (let i = 0; i < dictionary.length; i++) {
    const key = numeric ? Number(dictionary[i]!) : dictionary[i]!;
    const at = lowerBound(keys, key);
    if (at < n && keys[at] === key) {
      found[i] = at;
      continue;
    }
    let entry = entryOf.get(key);
    if (entry === undefined) {
      entry = added.push(dictionary[i]!) - 1;
      addedKeys.push(key);
      before.push(at);
      entryOf.set(key, entry);
    }
    found[i] = -1 - entry;
  }
  const rankNow = new Uint32Array(n + 1);
  const rankOfId = new Uint32Array(dictionary.length + 1);
  if (added.length === 0) {
    for (let rank = 1; rank <= n; rank++) rankNow[rank] = rank;
    for (let id = 1; id <= dictionary.length; id++) rankOfId[id] = found[id - 1]! + 1;
    return { merged: old, added, rankNow, rankOfId };
  }
  const byKey = added.map((_, entry) => entry);
  if (numeric) byKey.sort((a, b) => (addedKeys[a] as number) - (addedKeys[b] as number));
  else byKey.sort((a, b) => (addedKeys[a]! < addedKeys[b]! ? -1 : addedKeys[a]! > addedKeys[b]! ? 1 : 0));
  // A new value's rank: 1 + the old values and the new ones before it.
  const addedRank = new Uint32Array(added.length);
  byKey.forEach((entry, j) => (addedRank[entry] = 1 + before[entry]! + j));
  const merged = new Array<string>(n + added.length);
  let j = 0;
  for (let i = 0; i < n; i++) {
    while (j < byKey.length && before[byKey[j]!]! <= i) j++;
    rankNow[i + 1] = i + 1 + j;
    merged[i + j] = old[i]!;
  }
  for (let entry = 0; entry < added.length; entry++) merged[addedRank[entry]! - 1] = added[entry]!;
  for (let id = 1; id <= dictionary.length; id++) {
    const at = found[id - 1]!;
    rankOfId[id] = at >= 0 ? rankNow[at + 1]! : addedRank[-1 - at]!;
  }
  return { merged, added, rankNow, rankOfId };
}

/** mergedRanks of old values not in the order sorted here (a dataset of an earlier build may hold them so): every value hashed and sorted. */
function mergedRanksHashed(old: string[], dictionary: string[], numeric: boolean): MergedRanks {
  const keyOf = (text: string): string | number => (numeric ? Number(text) : text);
  const oldRankOf = new Map<string | number, number>(old.map((value, i) => [keyOf(value), i + 1]));
  const added: string[] = [];
  const seen = new Set<string | number>();
  for (const value of dictionary) {
    const key = keyOf(value);
    if (!oldRankOf.has(key) && !seen.has(key)) {
      seen.add(key);
      added.push(value);
    }
  }
  const values = [...old, ...added];
  const sorted = values.map((_, i) => i);
  if (numeric) {
    const numbers = values.map(Number);
    sorted.sort((a, b) => numbers[a]! - numbers[b]!);
  } else sorted.sort((a, b) => (values[a]! < values[b]! ? -1 : values[a]! > values[b]! ? 1 : 0));
  const merged = sorted.map((i) => values[i]!);
  const rankOfKey = new Map<string | number, number>(merged.map((value, i) => [keyOf(value), i + 1]));
  const rankNow = new Uint32Array(old.length + 1);
  old.forEach((value, i) => (rankNow[i + 1] = rankOfKey.get(keyOf(value))!));
  const rankOfId = new Uint32Array(dictionary.length + 1);
  for (let id = 1; id < rankOfId.length; id++) rankOfId[id] = rankOfKey.get(keyOf(dictionary[id - 1]!))!;
  return { merged, added, rankNow, rankOfId };
}

/**
 * Why a numeric variable's values `old` (which a build checked: no problem among them) and a
 * wave's `texts` cannot all be its values (numberColumnProblem's reasons), or undefined. Only
 * a text the old values lack can bring a problem: such a text beyond the float range, or two
 * texts of one float, one of them such a text. So only those are looked at, with the old
 * values that read as the same float as one of them, searched in `oldNumbers` (Number() of
 * each old value); not every old value parsed and sorted again (the ACS's incomes are 20,000).
 */
export function waveNumberProblem(old: string[], oldNumbers: Float64Array, texts: string[]): string | undefined {
  if (!inOrder(oldNumbers)) {
    const oldTexts = new Set(old);
    const newTexts = texts.filter((text) => !oldTexts.has(text));
    return newTexts.length === 0 ? undefined : numberColumnProblem([...old, ...newTexts]);
  }
  const checked: string[] = [];
  const seen = new Set<string>();
  for (const text of texts) {
    const at = lowerBound(oldNumbers, Number(text));
    // An old value itself, as written.
    if (at < old.length && old[at] === text) continue;
    if (seen.has(text)) continue;
    seen.add(text);
    checked.push(text);
    // The old value of the same float, if any (another text of the same number, or a different number of that float).
    if (at < old.length && oldNumbers[at] === Number(text) && !seen.has(old[at]!)) {
      seen.add(old[at]!);
      checked.push(old[at]!);
    }
  }
  return checked.length === 0 ? undefined : numberColumnProblem(checked);
}

/** Whether `keys` ascend strictly (numbers, or texts by UTF-16 code units): the order mergedRanks sorts values in, none twice. */
function inOrder(keys: Float64Array | string[]): boolean {
  for (let i = 1; i < keys.length; i++) if (!(keys[i - 1]! < keys[i]!)) return false;
  return true;
}
