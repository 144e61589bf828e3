// The held-in DuckDB checks on ACS: the engine's expression, and the SQL WHERE DuckDB runs
// on the same CSV. Used by test/acs.test.ts (WASM engine) and test/clickhouse/acs.test.ts.

/** [base, target, DuckDB WHERE clause for base AND target]. */
export const ACS_DUCKDB_CELLS: Array<[string, string, string]> = [
  ['AGEP=18..', 'SEX=2', 'AGEP >= 18 AND SEX = 2'],
  ['AGEP=18..', 'SCHL=21..24', 'AGEP >= 18 AND SCHL BETWEEN 21 AND 24'],
  ['ESR=1,2', 'PINCP=50000..', 'ESR IN (1, 2) AND PINCP >= 50000'],
  ['*', 'JWMNP=..15 AND NOT JWTRNS=1', 'JWMNP <= 15 AND (JWTRNS IS NULL OR JWTRNS <> 1)'],
  ['STATE=36', 'PUMA=00100,00300 OR MIL=NA', "STATE = '36' AND (PUMA IN ('00100', '00300') OR MIL IS NULL)"],
  ['HISP=2..24', 'NOT ENG=1 AND LANX=1', 'HISP BETWEEN 2 AND 24 AND (ENG IS NULL OR ENG <> 1) AND LANX = 1'],
];

/** The group-by check: OCCP x SEX over employed respondents. */
export const ACS_DUCKDB_GROUP_BY = 'SELECT OCCP, SEX, SUM(PWGTP)::DOUBLE, COUNT(*)::DOUBLE FROM acs WHERE ESR IN (1, 2) AND OCCP IS NOT NULL GROUP BY ALL';

/** The overlapping-nets table and two of its cells as DuckDB WHEREs: [row, column, where]. */
export const ACS_NETS = {
  base: 'AGEP=16..',
  rows: ['AGEP=18..34', 'AGEP=35..64', 'PINCP=50000..', 'SCHL=21..24 OR FOD1P=NA'],
  columns: ['SEX=2', 'HICOV=1', 'RAC1P=2 OR HISP=2..24', 'DIS=1', 'PUMA=00100'],
  cells: [
    [2, 2, 'AGEP >= 16 AND PINCP >= 50000 AND (RAC1P = 2 OR HISP BETWEEN 2 AND 24)'],
    [3, 4, "AGEP >= 16 AND (SCHL BETWEEN 21 AND 24 OR FOD1P IS NULL) AND PUMA = '00100'"],
  ] as Array<[number, number, string]>,
};
