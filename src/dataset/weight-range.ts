/**
 * The weights the engine computes with: 0, or a number from MIN_WEIGHT to MAX_WEIGHT. The
 * statistics square sums of weights and multiply such squares (variances, design effects,
 * covariances); with at most 2^32 respondents every sum of weights in this range lies within
 * 1e-50 .. 4.3e59, so every square and every product of two squares stays within the normal
 * doubles (2.2e-308 .. 1.8e308). Past them a sum overflows (a base of Infinity makes every
 * percentage 0%) or a square falls into the subnormals, which hold fewer digits (standard
 * errors wrong in their fifth digit, or 0): figures that look like answers.
 */
/** Smallest weight above 0 the engine takes. */
export const MIN_WEIGHT = 1e-50;
/** Largest weight the engine takes. */
export const MAX_WEIGHT = 1e50;

/** How a message states the range. */
export const WEIGHT_RANGE_TEXT = `0, or from ${MIN_WEIGHT} to ${MAX_WEIGHT}`;

/** The position of the first of `count` weights the engine does not take, or -1. */
export function firstWeightOutOfRange(weights: Float64Array, count = weights.length): number {
  // A Float64Array and a bound of its own length: V8 compiles the loop about twice as fast as over any ArrayLike.
  const end = Math.min(count, weights.length);
  for (let i = 0; i < end; i++) {
    const weight = weights[i]!;
    // Most weights pass the first test; 0 and the out-of-range ones take the second.
    if (!(weight >= MIN_WEIGHT && weight <= MAX_WEIGHT) && weight !== 0) return i;
  }
  return -1;
}

/** What is wrong with `weight`, a weight outside the range: "1e+308, above 1e+50: the engine takes ...". */
export function weightRangeProblem(weight: number): string {
  const where = weight > MAX_WEIGHT ? `above ${MAX_WEIGHT}` : `above 0 and below ${MIN_WEIGHT}`;
  return `${weight}, ${where}: the engine takes weights of ${WEIGHT_RANGE_TEXT}, whose sums and statistics stay within the range of a double`;
}
