import type { StatName, TableStatistics } from './table-statistics.js';

/** A per-cell numeric statistic and the field that carries it in every machine format. */
export interface FigureField {
  stat: StatName;
  field: 'columnPct' | 'rowPct' | 'tablePct' | 'index' | 'effectiveBase' | 'designEffect' | 'columnPctSE' | 'columnPctMoE' | 'weightedSE' | 'weightedMoE';
}

/** Numeric statistics in output order; `sig` (letters) is a string and handled apart. */
export const FIGURE_FIELDS: readonly FigureField[] = [
  { stat: 'vpct', field: 'columnPct' },
  { stat: 'hpct', field: 'rowPct' },
  { stat: 'tpct', field: 'tablePct' },
  { stat: 'index', field: 'index' },
  { stat: 'ebase', field: 'effectiveBase' },
  { stat: 'deff', field: 'designEffect' },
  { stat: 'se', field: 'columnPctSE' },
  { stat: 'moe', field: 'columnPctMoE' },
  { stat: 'se', field: 'weightedSE' },
  { stat: 'moe', field: 'weightedMoE' },
];

/** The figure arrays a statistics object actually holds, in output order. */
export function presentFigures(statistics: TableStatistics | undefined): Array<FigureField & { values: Float64Array }> {
  if (statistics === undefined) return [];
  return FIGURE_FIELDS.flatMap((figure) => {
    const values = statistics[figure.field];
    return values ? [{ ...figure, values }] : [];
  });
}

/** JSON has no NaN: undefined figures become null. */
export function finiteOrNull(value: number): number | null {
  return Number.isFinite(value) ? value : null;
}
