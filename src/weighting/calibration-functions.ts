/**
 * The calibration distance functions of R's survey package (`cal.linear`, `cal.logit`,
 * `cal.raking`), written as R writes them so that an iteration here takes the same steps:
 * `adjust(u)` is g - 1 for the linear predictor u, `derivative(u)` its slope.
 */
export interface CalibrationFunction {
  name: 'linear' | 'logit' | 'raking';
  adjust(u: number): number;
  derivative(u: number): number;
}

export interface Bounds {
  lower: number;
  upper: number;
}

export function calibrationFunction(name: CalibrationFunction['name'], bounds: Bounds): CalibrationFunction {
  const { lower, upper } = bounds;
  switch (name) {
    case 'linear':
      return {
        name,
        adjust: (u) => Math.min(Math.max(u + 1, lower), upper) - 1,
        derivative: (u) => (u < upper - 1 && u > lower - 1 ? 1 : 0),
      };
    case 'raking':
      return {
        name,
        adjust: (u) => Math.min(Math.max(Math.exp(u), lower), upper) - 1,
        derivative: (u) => (u < upper - 1 && u > lower - 1 ? Math.exp(u) : 0),
      };
    case 'logit': {
      const L = lower;
      const U = upper;
      const A = (U - L) / ((U - 1) * (1 - L));
      return {
        name,
        adjust: (u) => {
          const eAu = Math.exp(A * u);
          return (L * (U - 1) + U * (1 - L) * eAu) / (U - 1 + (1 - L) * eAu) - 1;
        },
        derivative: (u) => {
          const eAu = Math.exp(A * u);
          const denominator = U - 1 + (1 - L) * eAu;
          return (U * (1 - L) * eAu * A) / denominator - ((L * (U - 1) + U * (1 - L) * eAu) * ((1 - L) * eAu * A)) / denominator ** 2;
        },
      };
    }
  }
}
