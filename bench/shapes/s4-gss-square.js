// S4: a square table of overlapping codes on GSS (the same codes on both axes,
// so the diagonal blocks hold one variable against itself).
import { code, valueCode } from '../lib/codes.js';

export const S4_VARIABLES = ['degree', 'padeg', 'madeg', 'relig', 'polviews', 'fefam', 'race', 'sex', 'ballot'];

export function build(store) {
  const codes = S4_VARIABLES.flatMap((variable) => store.column(variable).distinct.map((value) => valueCode(variable, value)));
  return {
    id: 'S4',
    dataset: 'gss',
    title: `GSS base year=2000.., ${codes.length} x ${codes.length} square of all codes of ${S4_VARIABLES.join(', ')}`,
    kind: 'table',
    metric: 'cells/s',
    base: code('year=2000..'),
    rows: codes,
    columns: codes,
    reps: { full: 15, quick: 5 },
    warmup: { full: 2, quick: 1 },
  };
}
