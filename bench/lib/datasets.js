// Where the benchmark data lives and how each CSV column is read.
// Kinds: 'weight' (the respondent weight), 'category' (one code per value:
// bitset peers index every value), 'numeric' (queried by ranges only; kept as
// a column), 'text' (zero-padded strings, dictionary-encoded), 'skip' (ids no
// crosstab code refers to; the JS peers do not keep them, DuckDB loads them).
import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
export const repoRoot = resolve(here, '..', '..');

/** The shared data folder: $CROSSTAB_DATA, else ../shared/datasets beside the repo, else /work/shared/datasets. */
export function dataDir() {
  const candidates = [
    process.env.CROSSTAB_DATA,
    resolve(repoRoot, '..', 'shared', 'datasets'),
    '/work/shared/datasets',
  ].filter(Boolean);
  const found = candidates.find((dir) => existsSync(join(dir, 'acs_pums_2024_person.csv.gz')));
  if (!found) {
    throw new Error(`bench: ACS data not found in ${candidates.join(', ')}; set CROSSTAB_DATA to the folder holding acs_pums_2024_person.csv.gz`);
  }
  return found;
}

const ACS_COLUMNS = {
  SERIALNO: 'skip', SPORDER: 'category', STATE: 'text', PUMA: 'text', PWGTP: 'weight',
  AGEP: 'numeric', SEX: 'category', RAC1P: 'category', HISP: 'category', CIT: 'category',
  NATIVITY: 'category', LANX: 'category', ENG: 'category', SCHL: 'category', FOD1P: 'category',
  MAR: 'category', FER: 'category', ESR: 'category', INDP: 'category', OCCP: 'category',
  COW: 'category', WKHP: 'numeric', WKWN: 'numeric', JWMNP: 'numeric', JWTRNS: 'category',
  PINCP: 'numeric', WAGP: 'numeric', POVPIP: 'numeric', MIGSP: 'category', HICOV: 'category',
  PRIVCOV: 'category', PUBCOV: 'category', DIS: 'category', DEAR: 'category', DEYE: 'category',
  DREM: 'category', DPHY: 'category', MIL: 'category',
};

const GSS_COLUMNS = {
  year: 'category', id: 'numeric', ballot: 'category', age: 'numeric', race: 'category',
  sex: 'category', degree: 'category', padeg: 'category', madeg: 'category', relig: 'category',
  polviews: 'category', fefam: 'category', vpsu: 'category', vstrat: 'category',
  oversamp: 'float', formwt: 'float', wtssall: 'float', wtssps: 'weight',
  sampcode: 'category', sample: 'category',
};

/** @returns {{id:string, file:string, path:string, weight:string, rows:number, columns:Record<string,string>, rangeIndex?:string[]}} */
export function dataset(id) {
  const dir = dataDir();
  if (id === 'acs') {
    // The engine builds a range index on the numeric columns the shapes ask ranges of that
    // have at most 256 values (PINCP, WAGP and POVPIP have more, and are scanned).
    return { id, file: 'acs_pums_2024_person.csv.gz', path: join(dir, 'acs_pums_2024_person.csv.gz'), weight: 'PWGTP', weightIsInteger: true, rows: 2736891, columns: ACS_COLUMNS, rangeIndex: ['AGEP', 'SCHL', 'WKHP', 'WKWN', 'JWMNP'] };
  }
  if (id === 'gss') {
    return { id, file: 'gss_1972_2024_sub.csv.gz', path: join(dir, 'gss_1972_2024_sub.csv.gz'), weight: 'wtssps', weightIsInteger: false, rows: 75699, columns: GSS_COLUMNS };
  }
  throw new Error(`bench: unknown dataset '${id}' (known: acs, gss)`);
}
