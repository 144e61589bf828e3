/** Statistics of weighted crosstab cells: pure functions over Σw, n and Σw². See docs/statistics.md. */
export type { CellSums } from './types.js';
export { columnProportion, horizontalPercent, index, tablePercent, verticalPercent } from './proportions.js';
export {
  NORMAL_CRITICAL_95,
  designEffect,
  kishDesignEffect,
  kishEffectiveBase,
  kishStandardError,
  linearizationStandardError,
  linearizationVariance,
  marginOfError,
  proportionStandardError,
  totalStandardError,
} from './standard-error.js';
export type { DesignEffectOptions, StandardErrorMethod, StandardErrorOptions } from './standard-error.js';
export { overlapCovariance } from './overlap-covariance.js';
export { erfc, normalCdf, normalUpperTail, twoSidedPValue } from './normal.js';
export { adjustPValues, columnLetter, compareProportions, testColumns } from './significance.js';
export type {
  ColumnCell,
  ColumnTestOptions,
  ColumnTestResult,
  ComparisonMethod,
  ComparisonOptions,
  Correction,
  PairResult,
  ProportionComparison,
} from './significance.js';
export { LONELY_PSU, replicateCovariance, replicateVariance, taylorCovariance, taylorVariance } from './design-variance.js';
export type { LonelyPsu, PsuStructure, ReplicateSettings } from './design-variance.js';
export { TableVariance, simpleProportionCovariance } from './table-variance.js';
export type { PsuSums, ReplicateTable, Slot, TableDesign, TableSums } from './table-variance.js';
export { raoScott } from './rao-scott.js';
export type { RaoScottResult } from './rao-scott.js';
export { fUpperTail, incompleteBeta, logGamma } from './f-distribution.js';
