// S5: 2,000 x 2,000 overlapping codes on ACS: every value code of 27 categorical
// variables (1,212 codes), a fixed list of classic nets, and seeded band schemes
// and nets on the 7 numeric variables until each axis has 2,000 codes. Both axes
// share the value codes; their range codes come from different seeds. Peers run
// an evenly spaced sample of the rows against all 2,000 columns and cells/s is
// extrapolated (stated in the output).
import { code, rangeCode, valueCode } from '../lib/codes.js';
import { mulberry32, shuffle } from '../lib/prng.js';

export const S5_VALUE_VARIABLES = [
  'SEX', 'RAC1P', 'HISP', 'CIT', 'NATIVITY', 'LANX', 'ENG', 'SCHL', 'FOD1P', 'MAR', 'FER', 'ESR', 'INDP', 'OCCP',
  'COW', 'JWTRNS', 'MIGSP', 'HICOV', 'PRIVCOV', 'PUBCOV', 'DIS', 'DEAR', 'DEYE', 'DREM', 'DPHY', 'MIL', 'SPORDER',
];
export const S5_RANGE_VARIABLES = ['AGEP', 'WKHP', 'WKWN', 'JWMNP', 'PINCP', 'WAGP', 'POVPIP'];
const CLASSIC_NETS = [
  'AGEP=..17', 'AGEP=18..', 'AGEP=18..34', 'AGEP=35..54', 'AGEP=55..64', 'AGEP=65..', 'PINCP=..0', 'PINCP=..24999',
  'PINCP=50000..', 'PINCP=100000..', 'WAGP=1..', 'WKHP=..34', 'WKHP=35..', 'WKWN=50..', 'JWMNP=..14', 'JWMNP=60..',
  'POVPIP=..99', 'POVPIP=..199', 'POVPIP=400..',
];
export const S5_SIZE = 2000;
export const S5_ROW_SEED = 20261122;
export const S5_COLUMN_SEED = 4;

function axis(store, seed) {
  const random = mulberry32(seed);
  const codes = [];
  const seen = new Set();
  const add = (c) => {
    if (codes.length < S5_SIZE && !seen.has(c.text)) { seen.add(c.text); codes.push(c); }
  };
  for (const variable of S5_VALUE_VARIABLES) for (const value of store.column(variable).distinct) add(valueCode(variable, value));
  for (const text of CLASSIC_NETS) add(code(text));
  while (codes.length < S5_SIZE) {
    const variable = S5_RANGE_VARIABLES[Math.floor(random() * S5_RANGE_VARIABLES.length)];
    const distinct = store.column(variable).distinct;
    const pick = () => distinct[Math.floor(random() * distinct.length)];
    if (random() < 0.85) {
      // A band scheme: 8-47 bands cut at values seen in the data, open at both ends.
      const bands = 8 + Math.floor(random() * 40);
      const cuts = [...new Set(Array.from({ length: bands - 1 }, pick))].sort((a, b) => a - b).filter((c) => c > distinct[0]);
      if (cuts.length === 0) continue;
      let low = null;
      for (const cut of cuts) { add(rangeCode(variable, low, cut - 1)); low = cut; }
      add(rangeCode(variable, low, null));
    } else {
      // A single net, closed or open on one side.
      const [a, b] = [pick(), pick()].sort((x, y) => x - y);
      const form = random();
      add(form < 1 / 3 ? rangeCode(variable, a, null) : form < 2 / 3 ? rangeCode(variable, null, b) : rangeCode(variable, a, b));
    }
  }
  return shuffle(codes, random);
}

export function build(store, { quick = false, s5Rows } = {}) {
  const rows = axis(store, S5_ROW_SEED);
  const columns = axis(store, S5_COLUMN_SEED);
  const sampleRows = s5Rows ?? (quick ? 10 : 50);
  const step = rows.length / sampleRows;
  const sampleIndexes = Array.from({ length: sampleRows }, (_, i) => Math.floor(i * step));
  return {
    id: 'S5',
    dataset: 'acs',
    title: `ACS base AGEP=16.., ${rows.length} x ${columns.length} overlapping value codes and range nets (seeded)`,
    kind: 'table',
    metric: 'cells/s',
    base: code('AGEP=16..'),
    rows,
    columns,
    sampleIndexes: sampleRows >= rows.length ? null : sampleIndexes,
    reps: { full: 3, quick: 1 },
    warmup: { full: 0, quick: 0 },
  };
}
