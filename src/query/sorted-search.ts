/** Binary searches over ascending arrays (dictionaries' values, in a variable's sort order). Imports nothing. */

/** The first index whose value is not below `target` (sorted.length: none). */
export function lowerBound<T extends number | string>(sorted: ArrayLike<T>, target: T): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (sorted[mid]! < target) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** The number of values not above `target`. */
export function upperBound(sorted: Float64Array, target: number): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (sorted[mid]! <= target) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
