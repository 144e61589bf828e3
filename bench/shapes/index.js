// The benchmark shapes, in run order. Each builder takes the harness's column
// store of its dataset (for the value lists) and returns a shape:
// {id, dataset, title, kind, metric, base, rows, columns, targets?, reps:{full,quick}, warmup:{full,quick}, sampleIndexes?}
// (the untimed answer-check run comes before the warmup runs).
// where every code is {text, expr}. A cell (r, c) = base AND rows[r] AND columns[c].
import { build as s1 } from './s1-targets.js';
import { build as s2 } from './s2-banner.js';
import { build as s3 } from './s3-occupation-industry.js';
import { build as s4 } from './s4-gss-square.js';
import { build as s5 } from './s5-many-codes.js';

export const SHAPES = [
  { id: 'S1', dataset: 'acs', build: s1 },
  { id: 'S2', dataset: 'acs', build: s2 },
  { id: 'S3', dataset: 'acs', build: s3 },
  { id: 'S4', dataset: 'gss', build: s4 },
  { id: 'S5', dataset: 'acs', build: s5 },
];
