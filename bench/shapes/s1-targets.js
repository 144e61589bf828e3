// S1: latency of one small query, the engine's `crosstab({base, targets})`.
import { ALL, code } from '../lib/codes.js';

export function build() {
  const base = code('AGEP=18..');
  const targets = [code('SEX=2'), code('SCHL=21..24')];
  return {
    id: 'S1',
    dataset: 'acs',
    title: 'ACS base AGEP=18.., targets SEX=2 and SCHL=21..24 (latency per query)',
    kind: 'targets',
    metric: 'latency',
    base,
    targets,
    // Table view: row 0 is the base itself, then one row per target.
    rows: [ALL, ...targets],
    columns: [ALL],
    reps: { full: 40, quick: 10 },
    warmup: { full: 3, quick: 2 },
  };
}
