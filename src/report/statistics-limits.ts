/**
 * What the statistics of a table cost beyond its cells, counted before any is computed:
 * `sig` compares every pair of columns of a group in every tested row (one comparison
 * each), and `chisq` builds, per Rao–Scott test, a covariance matrix of its cells squared
 * and works over it in cells cubed. TableStatisticsOptions.limits bounds both.
 */
import { CrosstabError, ErrorCode } from '../errors.js';
import type { TableResult } from '../facade/types.js';
import { columnGroups, type ColumnGroup } from './column-groups.js';
import type { StatName } from './statistics.js';
import { formatNumber } from '../text/number-text.js';

/** Bounds on the work of tableStatistics(); absent fields are unbounded. */
export interface StatisticsLimits {
  /** Most column comparisons (`sig`): tested rows x pairs of columns within each group. */
  comparisons?: number;
  /** Most covariance entries of all Rao–Scott tests (`chisq`) together: the sum of each test's cells squared. */
  raoScottCovariance?: number;
}

/** The work of the requested statistics of a table. */
export interface StatisticsWork {
  /** `sig`: tested rows x pairs within groups (0 without `sig`). */
  comparisons: number;
  /** `chisq`: Σ cells² over the Rao–Scott tests (0 without `chisq`). */
  raoScottCovariance: number;
  /** `chisq`: cells of the largest Rao–Scott test. */
  largestRaoScottTest: number;
}

/** Pairs within the groups, C(k, 2) each. */
export function groupPairs(groups: readonly { columns: readonly number[] }[]): number {
  return groups.reduce((sum, group) => sum + (group.columns.length * (group.columns.length - 1)) / 2, 0);
}

/**
 * Counts the work of `stats` on `result` with its column `groups`, an upper bound of what
 * tableStatistics() does (a Rao–Scott test is counted over every value of its variables,
 * present in the base or not).
 */
export function statisticsWork(result: TableResult, stats: readonly StatName[], groups: readonly ColumnGroup[]): StatisticsWork {
  const work: StatisticsWork = { comparisons: 0, raoScottCovariance: 0, largestRaoScottTest: 0 };
  if (stats.includes('sig')) {
    const testedRows = result.rows.filter((row) => !row.missing).length;
    work.comparisons = testedRows * groupPairs(groups);
  }
  if (stats.includes('chisq')) {
    const rowGroups = columnGroups(result.rows).filter((group) => !group.columns.some((r) => result.rows[r]!.multi));
    for (const rowGroup of rowGroups) {
      for (const group of groups) {
        if (group.variable === null || rowGroup.columns.length < 2 || group.columns.length < 2) continue;
        const cells = rowGroup.columns.length * group.columns.length;
        work.raoScottCovariance += cells * cells;
        work.largestRaoScottTest = Math.max(work.largestRaoScottTest, cells);
      }
    }
  }
  return work;
}

/**
 * Throws CrosstabError `invalid_option` (field `limits.comparisons` or
 * `limits.raoScottCovariance`, with `details.limit` and `details.needed`) when the work
 * exceeds a limit.
 */
export function checkStatisticsLimits(work: StatisticsWork, limits: StatisticsLimits | undefined, columns: number): void {
  if (limits === undefined) return;
  if (limits.comparisons !== undefined && work.comparisons > limits.comparisons) {
    throw new CrosstabError(
      ErrorCode.invalidOption,
      `significance letters (sig) would compare ${formatNumber(work.comparisons, 0)} pairs of columns; at most ${formatNumber(limits.comparisons, 0)} are allowed`,
      {
        field: 'limits.comparisons',
        limit: limits.comparisons,
        needed: work.comparisons,
        hint: `Each tested row compares every pair of columns of one variable (k values make k(k-1)/2 pairs; the table has ${columns} columns): leave sig out, or put fewer values or fewer rows in the table (expressions such as VAR=1..10 instead of a whole variable).`,
      },
    );
  }
  if (limits.raoScottCovariance !== undefined && work.raoScottCovariance > limits.raoScottCovariance) {
    throw new CrosstabError(
      ErrorCode.invalidOption,
      `the Rao–Scott tests (chisq) would need ${formatNumber(work.raoScottCovariance, 0)} covariance entries (each test its cells squared; the largest has ${formatNumber(work.largestRaoScottTest, 0)} cells); at most ${formatNumber(limits.raoScottCovariance, 0)} are allowed`,
      {
        field: 'limits.raoScottCovariance',
        limit: limits.raoScottCovariance,
        needed: work.raoScottCovariance,
        hint: `A test of r row values by c column values has r x c cells: leave chisq out, or test variables with fewer values (at most ${formatNumber(Math.floor(Math.sqrt(limits.raoScottCovariance)), 0)} cells in one test).`,
      },
    );
  }
}
