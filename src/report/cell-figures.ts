import { FIGURES, type Figure } from './statistics.js';
import type { TableStatistics } from './table-statistics.js';

/** The figure arrays a statistics object actually holds, in output order. */
export function presentFigures(statistics: TableStatistics | undefined): Array<Figure & { values: Float64Array }> {
  if (statistics === undefined) return [];
  return FIGURES.flatMap((figure) => {
    const values = statistics[figure.field];
    return values ? [{ ...figure, values }] : [];
  });
}

/** JSON has no NaN: undefined figures become null. */
export function finiteOrNull(value: number): number | null {
  return Number.isFinite(value) ? value : null;
}
