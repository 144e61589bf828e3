/*
 * The complementary error function and normal tail probabilities, after
 * W. J. Cody, "Rational Chebyshev approximations for the error function",
 * Mathematics of Computation 23 (1969) 631–637, as coded in Cody's public-domain
 * SPECFUN routine CALERF (netlib, 1985–1990): erfc(x) = exp(−x²) · erfcx(x) with
 * erfcx a rational Chebyshev approximation in three intervals (|x| ≤ 0.46875
 * through erf, ≤ 4, > 4), relative error below 1e-16 in each.
 */

const THRESHOLD = 0.46875;
/** Past this y, erfcx(y) = 1/(y√π) to double precision (CALERF's XHUGE). */
const SCALED_ASYMPTOTIC_FROM = 6.71e7;
const ONE_OVER_SQRT_PI = 0.56418958354775628695;

// |x| <= 0.46875: erf(x) = x · A(x²) / B(x²).
const A = [3.1611237438705656, 113.864154151050156, 377.485237685302021, 3209.37758913846947, 0.185777706184603153];
const B = [23.6012909523441209, 244.024637934444173, 1282.61652607737228, 2844.23683343917062];
// 0.46875 < |x| <= 4: erfc(x) = exp(−x²) · C(x) / D(x).
const C = [
  0.564188496988670089, 8.88314979438837594, 66.1191906371416295, 298.635138197400131, 881.95222124176909,
  1712.04761263407058, 2051.07837782607147, 1230.33935479799725, 2.15311535474403846e-8,
];
const D = [
  15.7449261107098347, 117.693950891312499, 537.181101862009858, 1621.38957456669019, 3290.79923573345963,
  4362.61909014324716, 3439.36767414372164, 1230.33935480374942,
];
// |x| > 4: erfc(x) = exp(−x²)/x · (1/√π − P(1/x²)/Q(1/x²) / x²).
const P = [
  0.305326634961232344, 0.360344899949804439, 0.125781726111229246, 0.0160837851487422766,
  6.58749161529837803e-4, 0.0163153871373020978,
];
const Q = [2.56852019228982242, 1.87295284992346047, 0.527905102951428412, 0.0605183413124413191, 0.00233520497626869185];

/**
 * Complementary error function erfc(x) = 1 − erf(x) = (2/√π) ∫ₓ^∞ e^(−t²) dt,
 * accurate to about 1e-16 relative for x ≥ 0 (Cody 1969, CALERF). Unlike
 * `1 − erf(x)` it keeps full relative precision in the upper tail.
 */
export function erfc(x: number): number {
  if (Number.isNaN(x)) return Number.NaN;
  const y = Math.abs(x);
  if (y <= THRESHOLD) return 1 - erfSmall(x);
  const upper = expMinusSquare(y) * scaledErfc(y);
  return x < 0 ? 2 - upper : upper;
}

/**
 * Upper tail of the standard normal: Q(z) = P(Z > z) = erfc(z / √2) / 2.
 * For |z/√2| > 0.46875 it is computed as exp(−z²/2) · erfcx(z/√2) / 2 with
 * exp(−z²/2) taken from z itself, so the rounding of z/√2 does not reach the
 * exponential: about 1e-15 relative out to z ≈ 38, where Q underflows.
 */
export function normalUpperTail(z: number): number {
  if (Number.isNaN(z)) return Number.NaN;
  const x = z / Math.SQRT2;
  const y = Math.abs(x);
  if (y <= THRESHOLD) return (1 - erfSmall(x)) / 2;
  const upper = (expMinusHalfSquare(Math.abs(z)) * scaledErfc(y)) / 2;
  return z < 0 ? 1 - upper : upper;
}

/** Standard normal CDF Φ(z) = Q(−z) (R's `pnorm(z)`). */
export function normalCdf(z: number): number {
  return normalUpperTail(-z);
}

/** Two-sided p-value of a z statistic: 2 · Q(|z|) (R: `2 * pnorm(-abs(z))`). NaN stays NaN. */
export function twoSidedPValue(z: number): number {
  return 2 * normalUpperTail(Math.abs(z));
}

/** erf(x) for |x| <= 0.46875: x · A(x²) / B(x²). */
function erfSmall(x: number): number {
  const ysq = Math.abs(x) > 1.11e-16 ? x * x : 0;
  let numerator = A[4]! * ysq;
  let denominator = ysq;
  for (let i = 0; i < 3; i++) {
    numerator = (numerator + A[i]!) * ysq;
    denominator = (denominator + B[i]!) * ysq;
  }
  return (x * (numerator + A[3]!)) / (denominator + B[3]!);
}

/** Scaled complementary error function erfcx(y) = exp(y²) · erfc(y), for y > 0.46875. */
function scaledErfc(y: number): number {
  if (y <= 4) {
    let numerator = C[8]! * y;
    let denominator = y;
    for (let i = 0; i < 7; i++) {
      numerator = (numerator + C[i]!) * y;
      denominator = (denominator + D[i]!) * y;
    }
    return (numerator + C[7]!) / (denominator + D[7]!);
  }
  if (y >= SCALED_ASYMPTOTIC_FROM) return ONE_OVER_SQRT_PI / y;
  const inverseSquare = 1 / (y * y);
  let numerator = P[5]! * inverseSquare;
  let denominator = inverseSquare;
  for (let i = 0; i < 4; i++) {
    numerator = (numerator + P[i]!) * inverseSquare;
    denominator = (denominator + Q[i]!) * inverseSquare;
  }
  const series = (inverseSquare * (numerator + P[4]!)) / (denominator + Q[4]!);
  return (ONE_OVER_SQRT_PI - series) / y;
}

/**
 * exp(−y²) without the error of rounding y² first: y is split into a part with
 * 4 fractional bits, whose square is exact, and the rest (Cody's CALERF trick).
 */
function expMinusSquare(y: number): number {
  const head = Math.trunc(y * 16) / 16;
  const rest = (y - head) * (y + head);
  return Math.exp(-head * head) * Math.exp(-rest);
}

/** exp(−z²/2), split the same way so that z² is never rounded as a whole. */
function expMinusHalfSquare(z: number): number {
  const head = Math.trunc(z * 16) / 16;
  const rest = (z - head) * (z + head);
  return Math.exp((-head * head) / 2) * Math.exp(-rest / 2);
}
