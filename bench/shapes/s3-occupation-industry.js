// S3: a big sparse two-variable table, every OCCP value by every INDP value.
import { code, valueCode } from '../lib/codes.js';

export function build(store) {
  const rows = store.column('OCCP').distinct.map((value) => valueCode('OCCP', value));
  const columns = store.column('INDP').distinct.map((value) => valueCode('INDP', value));
  return {
    id: 'S3',
    dataset: 'acs',
    title: `ACS base ESR=1,2, OCCP x INDP (${rows.length} x ${columns.length} cells)`,
    kind: 'table',
    metric: 'cells/s',
    base: code('ESR=1,2'),
    rows,
    columns,
    reps: { full: 5, quick: 1 },
    warmup: { full: 1, quick: 0 },
  };
}
