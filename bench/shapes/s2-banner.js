// S2: one row (the base) by every value of nine demographic variables.
import { ALL, code, valueCode } from '../lib/codes.js';

export const S2_VARIABLES = ['SEX', 'RAC1P', 'SCHL', 'MAR', 'ESR', 'CIT', 'HICOV', 'DIS', 'MIL'];

export function build(store) {
  const columns = S2_VARIABLES.flatMap((variable) => store.column(variable).distinct.map((value) => valueCode(variable, value)));
  return {
    id: 'S2',
    dataset: 'acs',
    title: `ACS base AGEP=16.., 1 row x ${columns.length} columns (every value of ${S2_VARIABLES.join(', ')})`,
    kind: 'table',
    metric: 'cells/s',
    base: code('AGEP=16..'),
    rows: [ALL],
    columns,
    reps: { full: 15, quick: 5 },
    warmup: { full: 2, quick: 1 },
  };
}
