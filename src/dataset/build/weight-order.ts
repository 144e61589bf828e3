/** Above this many distinct weights the order is found by a comparison sort instead. */
const MAX_BUCKETS = 1 << 20;

/**
 * The input rows in order of their weight, ties in input order (a stable sort), as
 * respondent numbers: `order[r]` is the input row stored as respondent r. Survey weights
 * repeat (ACS person weights are integers up to a few thousand), so a counting sort over
 * the distinct weights does it in two passes; a comparison sort takes the rest. Without a
 * weight, input order.
 */
export function weightOrder(weights: Float64Array | undefined, rows: number): Uint32Array {
  const order = new Uint32Array(rows);
  if (weights === undefined) {
    for (let row = 0; row < rows; row++) order[row] = row;
    return order;
  }
  const bucketOf = new Map<number, number>();
  const bucketOfRow = new Uint32Array(rows);
  for (let row = 0; row < rows; row++) {
    const weight = weights[row]!;
    let bucket = bucketOf.get(weight);
    if (bucket === undefined) {
      if (bucketOf.size === MAX_BUCKETS) return comparisonOrder(weights, order);
      bucket = bucketOf.size;
      bucketOf.set(weight, bucket);
    }
    bucketOfRow[row] = bucket;
  }
  // Buckets in weight order, then their starting positions.
  const distinct = Float64Array.from(bucketOf.keys()).sort();
  const start = new Uint32Array(distinct.length + 1);
  const rankOfBucket = new Uint32Array(distinct.length);
  distinct.forEach((weight, rank) => (rankOfBucket[bucketOf.get(weight)!] = rank));
  for (let row = 0; row < rows; row++) start[rankOfBucket[bucketOfRow[row]!]! + 1]!++;
  for (let rank = 1; rank <= distinct.length; rank++) start[rank]! += start[rank - 1]!;
  for (let row = 0; row < rows; row++) order[start[rankOfBucket[bucketOfRow[row]!]!]!++] = row;
  return order;
}

function comparisonOrder(weights: Float64Array, order: Uint32Array): Uint32Array {
  for (let row = 0; row < order.length; row++) order[row] = row;
  return order.sort((a, b) => weights[a]! - weights[b]! || a - b);
}
