import { NumberIds } from '../input/number-ids.js';

/** Above this many distinct weights the order is found by a comparison sort instead. */
const MAX_BUCKETS = 1 << 20;

/** Respondents in weight order (see weightOrder). */
export interface WeightOrder {
  /** `order[r]` is the input row stored as respondent r. */
  order: Uint32Array<ArrayBufferLike>;
  /**
   * The inverse of `order`: `respondentOf[row]` is the respondent number input row `row` is
   * stored as. Made with the order (the counting sort writes both at once): a variable's index
   * column is then a scatter from its input ids in input order (sequential reads), which runs
   * about twice as fast as gathering them through `order` (a random read per respondent).
   */
  respondentOf: Uint32Array<ArrayBufferLike>;
  /**
   * The weights in that order as runs, when the counting sort found them: respondents
   * `starts[k] .. starts[k + 1] - 1` weigh `weights[k]`. Undefined when the weights must be
   * gathered row by row (a comparison sort, or a -0 among the zeros: one run per value would
   * lose its sign).
   */
  runs?: { weights: Float64Array; starts: Uint32Array };
}

/**
 * The input rows in order of their weight, ties in input order (a stable sort), as
 * respondent numbers: `order[r]` is the input row stored as respondent r. Survey weights
 * repeat (ACS person weights are integers up to a few thousand), so a counting sort over
 * the distinct weights does it in two passes; a comparison sort takes the rest. Without a
 * weight, input order. `order` and `respondentOf` may be given (zeroed or not) to be filled.
 */
export function weightOrder(
  weights: Float64Array | undefined,
  rows: number,
  order: Uint32Array<ArrayBufferLike> = new Uint32Array(rows),
  respondentOf: Uint32Array<ArrayBufferLike> = new Uint32Array(rows),
): WeightOrder {
  if (weights === undefined) {
    for (let row = 0; row < rows; row++) order[row] = respondentOf[row] = row;
    return { order, respondentOf };
  }
  const byValue = integerOrder(weights, rows, order, respondentOf);
  if (byValue !== undefined) return byValue;
  // Buckets numbered 1.. in first-seen order (weights are finite: the weight encoder refuses the rest).
  const bucketOf = new NumberIds();
  const bucketWeights: number[] = [0];
  let negativeZero = false;
  const bucketOfRow = new Uint32Array(rows);
  for (let row = 0; row < rows; row++) {
    const weight = weights[row]!;
    let bucket = bucketOf.get(weight);
    if (bucket === 0) {
      if (bucketWeights.length > MAX_BUCKETS) return comparisonOrder(weights, order, respondentOf);
      bucket = bucketWeights.push(weight) - 1;
      bucketOf.set(weight, bucket);
    }
    if (weight === 0 && 1 / weight < 0) negativeZero = true;
    bucketOfRow[row] = bucket;
  }
  // Buckets in weight order (no two weigh the same), then their starting positions.
  const buckets = bucketWeights.length - 1;
  const byWeight = Uint32Array.from({ length: buckets }, (_, k) => k + 1).sort((a, b) => bucketWeights[a]! - bucketWeights[b]!);
  const rankOfBucket = new Uint32Array(buckets + 1);
  byWeight.forEach((bucket, rank) => (rankOfBucket[bucket] = rank));
  const distinct = Float64Array.from(byWeight, (bucket) => bucketWeights[bucket]!);
  const starts = new Uint32Array(buckets + 1);
  for (let row = 0; row < rows; row++) starts[rankOfBucket[bucketOfRow[row]!]! + 1]!++;
  for (let rank = 1; rank <= buckets; rank++) starts[rank]! += starts[rank - 1]!;
  const next = starts.slice();
  for (let row = 0; row < rows; row++) {
    const respondent = next[rankOfBucket[bucketOfRow[row]!]!]!++;
    order[respondent] = row;
    respondentOf[row] = respondent;
  }
  return negativeZero ? { order, respondentOf } : { order, respondentOf, runs: { weights: distinct, starts } };
}

/** Weights that are all integers below this are counted by value (a count per integer up to the largest). */
const MAX_INTEGER_WEIGHT = 1 << 20;

/**
 * weightOrder when every weight is an integer in [0, MAX_INTEGER_WEIGHT) (ACS person weights
 * are integers up to a few thousand): the counting sort indexes its counts by the weight
 * itself, where the general one looks each row's weight up in a hash table first (most of
 * its time). The same order, inverse and runs; undefined when a weight is not such an integer.
 */
function integerOrder(weights: Float64Array, rows: number, order: Uint32Array<ArrayBufferLike>, respondentOf: Uint32Array<ArrayBufferLike>): WeightOrder | undefined {
  let largest = 0;
  let negativeZero = false;
  for (let row = 0; row < rows; row++) {
    const weight = weights[row]!;
    if (!(weight >= 0 && weight < MAX_INTEGER_WEIGHT && Math.floor(weight) === weight)) return undefined;
    if (weight > largest) largest = weight;
    // -0 sorts with 0 (a tie, in input order), as NumberIds has it; its sign is kept by gathering the weights.
    if (weight === 0 && 1 / weight < 0) negativeZero = true;
  }
  // starts[w]: the first respondent of weight w (a running sum of the counts).
  const starts = new Uint32Array(largest + 2);
  for (let row = 0; row < rows; row++) starts[weights[row]! + 1]!++;
  for (let weight = 1; weight <= largest + 1; weight++) starts[weight]! += starts[weight - 1]!;
  const next = starts.slice(0, largest + 1);
  for (let row = 0; row < rows; row++) {
    const respondent = next[weights[row]!]!++;
    order[respondent] = row;
    respondentOf[row] = respondent;
  }
  if (negativeZero) return { order, respondentOf };
  // Runs of the weights that occur.
  let distinct = 0;
  for (let weight = 0; weight <= largest; weight++) if (starts[weight + 1]! > starts[weight]!) distinct++;
  const runWeights = new Float64Array(distinct);
  const runStarts = new Uint32Array(distinct + 1);
  let run = 0;
  for (let weight = 0; weight <= largest; weight++) {
    if (starts[weight + 1]! === starts[weight]!) continue;
    runWeights[run] = weight;
    runStarts[run++] = starts[weight]!;
  }
  runStarts[distinct] = rows;
  return { order, respondentOf, runs: { weights: runWeights, starts: runStarts } };
}

function comparisonOrder(weights: Float64Array, order: Uint32Array<ArrayBufferLike>, respondentOf: Uint32Array<ArrayBufferLike>): WeightOrder {
  for (let row = 0; row < order.length; row++) order[row] = row;
  order.sort((a, b) => weights[a]! - weights[b]! || a - b);
  for (let respondent = 0; respondent < order.length; respondent++) respondentOf[order[respondent]!] = respondent;
  return { order, respondentOf };
}
