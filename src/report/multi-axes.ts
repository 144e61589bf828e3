import { ErrorCode, fieldError } from '../errors.js';
import type { PercentBase, TableResult } from '../facade/types.js';

/**
 * Refuses the statistics that assume a variable's entries do not overlap, on a table with a
 * multi-response variable on an axis (a respondent may be in several of its rows): the
 * Rao-Scott test and column significance letters (they treat the entries as disjoint
 * categories), and valid percentages (their base adds up the variable's entries).
 */
export function refuseOnMultiAxes(result: TableResult, stats: readonly string[], percentBase: PercentBase): void {
  const entry = [...result.rows, ...result.columns].find((candidate) => candidate.multi === true);
  if (entry === undefined) return;
  const variable = entry.variable ?? entry.expr;
  for (const stat of ['chisq', 'sig'] as const) {
    if (!stats.includes(stat)) continue;
    const what = stat === 'chisq' ? 'the Rao-Scott chi-square test' : 'column significance letters';
    throw fieldError(ErrorCode.invalidOption, 'stats', `asks for ${what}, which takes each variable's entries as disjoint categories, but ${variable} is multi-response (a respondent may hold several of its values)`, {
      hint: `Leave "${stat}" out of the statistics for a table with ${variable} on an axis, or put a single-coded variable there.`,
    });
  }
  if (percentBase === 'valid') {
    throw fieldError(ErrorCode.invalidOption, 'percentBase', `"valid" adds up each variable's entries, which overlap for the multi-response variable ${variable}`, {
      hint: 'Use percentBase "total" (percentages of every base respondent), or write the base without its no-answer respondents (NOT VAR=NA).',
    });
  }
}
