/**
 * The floats of a column's distinct texts (all plain decimal numbers), read once for the
 * checks and the sort that both need them: a replicate-weight column has thousands of
 * distinct values, and a build of a hundred such columns read each of them three times
 * (classify, collision check, sort) and sorted them with a comparator.
 */
export interface DictionaryFloats {
  /** `Number(texts[i])`, in the order of the texts. */
  numbers: Float64Array;
  /** The distinct floats of `numbers`, ascending (`-0` and `0` are one float, as `===` has it). */
  distinct: Float64Array;
}

/** Made once per texts array (and length: a dictionary that grew is read again). */
const made = new WeakMap<readonly string[], DictionaryFloats>();

/** The floats of `texts` (see DictionaryFloats), read at the first call for the array. */
export function dictionaryFloats(texts: readonly string[]): DictionaryFloats {
  const known = made.get(texts);
  if (known !== undefined && known.numbers.length === texts.length) return known;
  const numbers = new Float64Array(texts.length);
  for (let i = 0; i < texts.length; i++) numbers[i] = Number(texts[i]);
  // A typed array sorts numerically without a comparator (-0 before 0, NaN last).
  const sorted = numbers.slice().sort();
  let kept = 0;
  for (let i = 0; i < sorted.length; i++) {
    if (kept === 0 || sorted[i] !== sorted[kept - 1]) sorted[kept++] = sorted[i]!;
  }
  const floats = { numbers, distinct: sorted.subarray(0, kept) };
  made.set(texts, floats);
  return floats;
}

/** The index of `value` in `distinct` (ascending, holding it; `-0` finds `0` and back). */
export function rankOf(distinct: Float64Array, value: number): number {
  let low = 0;
  let high = distinct.length - 1;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (distinct[middle]! < value) low = middle + 1;
    else high = middle;
  }
  return low;
}
