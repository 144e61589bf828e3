/** What one POST /tables may ask: the operator's limits and their defaults. */

/** Most cells (rows x columns, after whole variables are expanded) one table may have, by default. */
export const MAX_TABLE_CELLS = 250_000;

/**
 * What one POST /tables may ask, checked before its work starts (the answer's size as it is
 * written): the operator's `tableLimits` (handler option; `crosstab serve --max-table-*`).
 */
export interface TableLimits {
  /** Rows x columns after whole variables are expanded. Default 250,000. */
  cells: number;
  /** `sig`: tested rows x pairs of columns within each compared variable. Default 250,000. */
  comparisons: number;
  /** `chisq`: the cells of each Rao–Scott test squared, summed over the tests. Default 1,000,000. */
  raoScottCovariance: number;
  /** Bytes of one answer (JSON, CSV or XLSX). Default 128 MiB. */
  answerBytes: number;
}

export const DEFAULT_TABLE_LIMITS: Readonly<TableLimits> = { cells: MAX_TABLE_CELLS, comparisons: 250_000, raoScottCovariance: 1_000_000, answerBytes: 128 * 1024 * 1024 };
