/**
 * Rao–Scott second-order corrected chi-square test of independence of a two-way table
 * under a survey design, as R's `svychisq(~row + column, design, statistic = "F")`
 * (survey 4.1; Rao & Scott 1984, "On chi-squared tests for multiway contingency tables
 * with cell proportions estimated from survey data", Annals of Statistics 12:46).
 *
 * With π the r·c cell proportions (rows varying fastest), V their design covariance, N
 * the design's respondents and ν its degrees of freedom (PSUs − strata):
 *   X² = N Σ (π_ij − π_i· π_·j)² / (π_i· π_·j)            (Pearson on the table scaled to N)
 *   Δ  = (Cᵀ D⁻¹ C / N)⁻¹ (Cᵀ D⁻¹ V D⁻¹ C),  D = diag(π)  (D⁻¹ = 0 where π = 0)
 *   F  = X² / tr Δ,  d₀ = (tr Δ)² / tr(Δ²),  p = P(F(d₀, d₀ ν) > F)
 * C is any basis of the interaction contrasts (orthogonal to the main effects); traces of
 * Δ do not depend on the basis. Here C = (e_j − e_c) ⊗ (e_i − e_r).
 */
import { fUpperTail } from './f-distribution.js';

export interface RaoScottResult {
  /** Pearson X² of the proportions scaled to N. */
  pearson: number;
  /** X² / tr Δ: the F statistic. */
  statistic: number;
  ndf: number;
  ddf: number;
  pValue: number;
}

/**
 * The test for an r × c table from its cell proportions `pi` (index i + r·j), their
 * covariance `covariance` (row-major, (r·c)²), the design's respondents and degrees of freedom.
 */
export function raoScott(rows: number, columns: number, pi: ArrayLike<number>, covariance: ArrayLike<number>, designRespondents: number, degreesOfFreedom: number): RaoScottResult {
  const cells = rows * columns;
  const rowShare = new Float64Array(rows);
  const columnShare = new Float64Array(columns);
  for (let j = 0; j < columns; j++) {
    for (let i = 0; i < rows; i++) {
      rowShare[i]! += pi[i + rows * j]!;
      columnShare[j]! += pi[i + rows * j]!;
    }
  }
  let pearson = 0;
  for (let j = 0; j < columns; j++) {
    for (let i = 0; i < rows; i++) {
      const expected = rowShare[i]! * columnShare[j]!;
      const gap = pi[i + rows * j]! - expected;
      pearson += (gap * gap) / expected;
    }
  }
  pearson *= designRespondents;

  // C: one column per interaction contrast (i < r−1, j < c−1).
  const m = (rows - 1) * (columns - 1);
  const contrast = new Float64Array(cells * m);
  let k = 0;
  for (let j = 0; j < columns - 1; j++) {
    for (let i = 0; i < rows - 1; i++, k++) {
      const set = (row: number, column: number, value: number) => (contrast[(row + rows * column) * m + k] = value);
      set(i, j, 1);
      set(rows - 1, j, -1);
      set(i, columns - 1, -1);
      set(rows - 1, columns - 1, 1);
    }
  }
  const inverse = Float64Array.from({ length: cells }, (_, a) => (pi[a] === 0 ? 0 : 1 / pi[a]!));
  // G = D⁻¹ C (cells × m); denominator = Cᵀ G / N; numerator = Gᵀ V G.
  const scaled = new Float64Array(cells * m);
  for (let a = 0; a < cells; a++) for (let q = 0; q < m; q++) scaled[a * m + q] = inverse[a]! * contrast[a * m + q]!;
  const denominator = new Float64Array(m * m);
  const numerator = new Float64Array(m * m);
  const vg = new Float64Array(cells * m);
  for (let a = 0; a < cells; a++) {
    for (let q = 0; q < m; q++) {
      let sum = 0;
      for (let b = 0; b < cells; b++) sum += covariance[a * cells + b]! * scaled[b * m + q]!;
      vg[a * m + q] = sum;
    }
  }
  for (let p = 0; p < m; p++) {
    for (let q = 0; q < m; q++) {
      let den = 0;
      let num = 0;
      for (let a = 0; a < cells; a++) {
        den += contrast[a * m + p]! * scaled[a * m + q]!;
        num += scaled[a * m + p]! * vg[a * m + q]!;
      }
      denominator[p * m + q] = den / designRespondents;
      numerator[p * m + q] = num;
    }
  }
  const delta = solve(denominator, numerator, m);
  let trace = 0;
  let traceSquare = 0;
  for (let p = 0; p < m; p++) {
    trace += delta[p * m + p]!;
    for (let q = 0; q < m; q++) traceSquare += delta[p * m + q]! * delta[q * m + p]!;
  }
  const statistic = pearson / trace;
  const ndf = (trace * trace) / traceSquare;
  const ddf = ndf * degreesOfFreedom;
  return { pearson, statistic, ndf, ddf, pValue: fUpperTail(statistic, ndf, ddf) };
}

/** A⁻¹ B for m × m matrices (row-major) by Gaussian elimination with partial pivoting; NaN when A is singular. */
function solve(a: Float64Array, b: Float64Array, m: number): Float64Array {
  const left = a.slice();
  const right = b.slice();
  for (let col = 0; col < m; col++) {
    let pivot = col;
    for (let row = col + 1; row < m; row++) if (Math.abs(left[row * m + col]!) > Math.abs(left[pivot * m + col]!)) pivot = row;
    if (left[pivot * m + col] === 0) return right.fill(Number.NaN);
    if (pivot !== col) {
      for (let q = 0; q < m; q++) {
        [left[col * m + q], left[pivot * m + q]] = [left[pivot * m + q]!, left[col * m + q]!];
        [right[col * m + q], right[pivot * m + q]] = [right[pivot * m + q]!, right[col * m + q]!];
      }
    }
    for (let row = 0; row < m; row++) {
      if (row === col) continue;
      const factor = left[row * m + col]! / left[col * m + col]!;
      if (factor === 0) continue;
      for (let q = 0; q < m; q++) {
        left[row * m + q]! -= factor * left[col * m + q]!;
        right[row * m + q]! -= factor * right[col * m + q]!;
      }
    }
  }
  for (let row = 0; row < m; row++) {
    const diagonal = left[row * m + row]!;
    for (let q = 0; q < m; q++) right[row * m + q]! /= diagonal;
  }
  return right;
}
