import { ErrorCode, fieldError } from '../errors.js';
import type { PercentBase, TableResult } from '../facade/types.js';

/**
 * Refuses valid percentages on a table with a multi-response variable on an axis: their base
 * adds up the other axis's entries, which overlap for such a variable (a respondent may be in
 * several of them). Column tests and the Rao-Scott test are not refused: the tests count the
 * respondents in both of two overlapping columns, and the Rao-Scott test is said not defined
 * (TableStatistics.raoScottNotDefined).
 */
export function refuseOnMultiAxes(result: TableResult, percentBase: PercentBase): void {
  if (percentBase !== 'valid') return;
  const entry = [...result.rows, ...result.columns].find((candidate) => candidate.multi === true);
  if (entry === undefined) return;
  const variable = entry.variable ?? entry.expr;
  throw fieldError(ErrorCode.invalidOption, 'percentBase', `"valid" adds up each variable's entries, which overlap for the multi-response variable ${variable}`, {
    hint: 'Use percentBase "total" (percentages of every base respondent), or write the base without its no-answer respondents (NOT VAR=NA).',
  });
}
