/**
 * Trims weights to [lower, upper] as R's survey::trimWeights() does (strict = FALSE): every
 * weight outside is set to the bound it crossed and the amount trimmed is shared equally
 * (the same amount added to each) among the weights that were inside, so the total is kept.
 * One pass: a shared amount can take a weight past a bound again. Returns how many were trimmed.
 */
export function trimWeights(weights: Float64Array, lower: number, upper: number): number {
  const outside = new Uint8Array(weights.length);
  let trimmed = 0;
  let trimmings = 0;
  for (let r = 0; r < weights.length; r++) {
    const weight = weights[r]!;
    if (weight < lower || weight > upper) {
      const bounded = Math.max(lower, Math.min(weight, upper));
      trimmings += weight - bounded;
      weights[r] = bounded;
      outside[r] = 1;
      trimmed++;
    }
  }
  const kept = weights.length - trimmed;
  if (trimmed === 0 || kept === 0) return trimmed;
  const share = trimmings / kept;
  for (let r = 0; r < weights.length; r++) if (outside[r] === 0) weights[r]! += share;
  return trimmed;
}
