/** Survey weighting over cells of categorical targets: pure statistics, as R's survey package computes them. */
export type { CellMargin, CellProblem, CellSolution } from './cells.js';
export { marginTotals } from './cells.js';
export { postStratify, rake } from './rake.js';
export type { RakeOptions } from './rake.js';
export { calibrate } from './calibrate.js';
export type { CalibrateOptions } from './calibrate.js';
export type { Bounds } from './calibration-functions.js';
export { trimWeights } from './trim.js';
export { spreadOf, weightSpread } from './weight-summary.js';
export type { WeightSpread } from './weight-summary.js';
