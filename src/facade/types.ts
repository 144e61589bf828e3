/** Public types of the crosstab() facade. */
import type { CodeInfo, StabilityThresholds, StoredDesign } from '../dataset/format.js';
import type { PlanName } from '../query/table.js';
import type { TableDesign } from '../stats/table-variance.js';

export type { CodeInfo, StabilityThresholds } from '../dataset/format.js';

/**
 * Low-base stability of a cell, from its respondent count and the dataset's thresholds
 * (MRI-Simmons convention by default: `caution` for 31-60 respondents, `very-unstable`
 * for 30 or fewer).
 */
export type StabilityLevel = 'stable' | 'caution' | 'very-unstable';

/** One cell: respondents matching base AND target. */
export interface Cell {
  /** Sum of the weights of the matching respondents (raw, not divided by units). */
  weighted: number;
  /** Unweighted count of matching respondents. */
  respondents: number;
  /** Sum of squared weights (for Kish effective bases and standard errors). */
  sumSqWeights: number;
  /** Low-base flag derived from `respondents`. */
  stability: StabilityLevel;
}

export interface CrosstabQuery {
  /** Population base expression (`*` for everyone). */
  base: string;
  /** Target expressions; one result per target, in order. */
  targets: readonly string[];
  /** Weight column; defaults to the dataset's first weight. `null` = unweighted. */
  weight?: string | null;
  /**
   * Authorization groups the caller may use. When given, a variable or code of another group
   * is to the query a name the dataset does not have: refused as `unknown_variable` or
   * `unknown_code` exactly as a made-up name, its suggestions only of these groups, so no
   * error tells a hidden name from a made-up one or names anything of another group.
   */
  allowedGroups?: readonly string[];
  /** Cancels the query. */
  signal?: AbortSignal;
}

export interface CrosstabResult {
  /** The base itself (base AND everyone). */
  base: Cell;
  /** One cell per target (base AND target), in request order. */
  targets: Cell[];
  /** The weight column used, `null` when unweighted. */
  weight: string | null;
  /** AudienceReportUnits of the dataset. */
  units: number;
}

export interface ValueInfo {
  /** The value as it appears in expressions (`2`, `06`). */
  value: string;
  /** Label from the codebook, when it has one. */
  label?: string;
  /** Respondents with this value. */
  respondents: number;
}

export interface VariableInfo {
  name: string;
  label?: string;
  /**
   * `numeric` variables answer ranges (`AGEP=18..`); `text` ones only value lists; `multi`
   * (multi-response) ones hold any number of their values per respondent (`cover=2,3` is
   * any of them, `cover=all(2,3)` all, `cover=none(2,3)` none).
   */
  kind: 'numeric' | 'text' | 'multi';
  /** Authorization group. */
  group: string;
  /** Number of distinct non-blank values. */
  distinct: number;
  /** Respondents with a blank (multi: with no answer at all, `VAR=NA`). */
  missing: number;
  /** Multi-response variables: what they were built from, and whether their values are numbers (then ranges apply). */
  multi?: { numeric: boolean; columns: string[]; counted?: string; delimiter?: string };
  min?: number;
  max?: number;
  /** Present (true) when the dataset was built with a range index on the variable: a range of its values reads one or two stored bitsets. */
  rangeIndex?: true;
  /** Values with their counts, when the variable has at most 5,000 distinct values. */
  values?: ValueInfo[];
}

export interface DatasetInfo {
  format: string;
  survey: string;
  name: string;
  /** AudienceReportUnits. */
  units: number;
  respondents: number;
  /** Weight columns, the first being the default. */
  weights: string[];
  stability: StabilityThresholds;
  variables: VariableInfo[];
  codes: CodeInfo[];
  /** Every authorization group used by a variable or code. */
  groups: string[];
  /** Columns skipped at build time, with the reason. */
  skipped: Array<{ column: string; reason: string }>;
  /** The input the dataset was built from (file name only). */
  source: string;
  createdAt: string;
  /** sha256 of the stored buffers and metadata. */
  checksum: string;
  /** The survey design variances use: `simple`, or the declared strata/PSUs/fpc or replicate weights. */
  design: DesignInfo;
  /** Label of the "No answer" entries of tables (codebook `missingLabel`; default "No answer"). */
  missingLabel: string;
  /** The respondent id column kept at build (`crosstab build --id`), for `crosstab export`; never a variable. */
  idColumn?: string;
}

/**
 * The design of a dataset, as declared at build time (`crosstab build --strata/--psu/--replicate-weights`):
 * the stored design (strata, PSUs, fpc, replicate weights, counted strata and PSUs) with its kind and
 * a one-line description.
 */
export interface DesignInfo extends StoredDesign {
  kind: 'simple' | 'taylor' | 'replicate';
  /** One line for humans. */
  description: string;
}

/**
 * An axis entry of a table: an expression (optionally labelled), or a whole variable,
 * which expands to one entry per value, labelled from the codebook.
 */
export type AxisItem = string | { expr: string; label?: string } | { variable: string };

export interface TableQuery {
  base: string;
  rows: readonly AxisItem[];
  columns: readonly AxisItem[];
  /** Weight column; default the dataset's first; `null` = unweighted. */
  weight?: string | null;
  allowedGroups?: readonly string[];
  signal?: AbortSignal;
  /** Called as rows complete, with cells done and cells in all. */
  onProgress?: (doneCells: number, totalCells: number) => void;
  /**
   * Respondents of the base with a blank on an expanded variable (`{ variable }`):
   * `show` (default) adds one entry after the variable's values, labelled with the
   * dataset's `missingLabel` ("No answer" unless the codebook says otherwise), whose
   * expression is `VAR=NA`, whenever the base has any such respondent; then the entries
   * of the variable add up to the base. `hide` leaves it out (the table as before).
   */
  missing?: MissingMode;
  /**
   * What percentages are of: `total` (default) every base respondent of the column / row /
   * table; `valid` only those who answered the variable of the other axis (SPSS's and
   * Crunch's valid percentages): the values of an expanded variable then add up to 100%.
   * tableStatistics() reads it from the result; its own `percentBase` option overrides it.
   */
  percentBase?: PercentBase;
  /**
   * Groups of columns to compare in significance tests, as indexes of the table's columns
   * (after "No answer" entries are added: use expression columns, or `missing: 'hide'`, to
   * know them in advance); tableStatistics() uses them unless told otherwise. Columns of a
   * group may share respondents (`HICOV=1`, `PRIVCOV=1`, `PUBCOV=1`): the table then also
   * counts base AND row AND A AND B for each pair that may (`overlaps`), and the tests use
   * the covariance those respondents make. Default: each run of one expanded variable's
   * values, which never overlap.
   */
  columnGroups?: readonly (readonly number[])[];
}

/** Whether a table shows the "No answer" entry of each expanded variable (TableQuery.missing). */
export type MissingMode = 'show' | 'hide';
/** What a table's percentages are of (TableQuery.percentBase). */
export type PercentBase = 'total' | 'valid';

/** Label of the "No answer" entry when the dataset's codebook gives none. */
export const DEFAULT_MISSING_LABEL = 'No answer';

export interface AxisEntry {
  label: string;
  expr: string;
  /** Set when the entry came from expanding a whole variable. */
  variable?: string;
  /** The value of `variable` (absent on the "No answer" entry). */
  value?: string;
  /**
   * `true` on the "No answer" entry of an expanded variable: the base's respondents with a
   * blank on `variable` (`expr` is `VAR=NA`). Never compared in significance tests.
   */
  missing?: true;
  /**
   * `true` on every entry of an expanded multi-response variable (its values, its net and its
   * "No answer"): the entries overlap, so they do not add up to the base.
   */
  multi?: true;
  /** `true` on the net entry of an expanded multi-response variable: respondents holding any of its values. */
  net?: true;
}

/**
 * The sums over base AND row AND column A AND column B, for each counted pair of columns:
 * `weighted[row * pairs.length + k]` and so on (row-major like the table's cells), and
 * `totals[k]` = base AND A AND B.
 */
export interface ColumnOverlaps {
  /** Table column indexes (a < b) of each counted pair. */
  pairs: Array<[number, number]>;
  weighted: Float64Array;
  respondents: Float64Array;
  sumSqWeights: Float64Array;
  totals: Cell[];
}

/** A table of base AND row AND column cells, stored row-major in typed arrays. */
export interface TableResult {
  base: string;
  rows: AxisEntry[];
  columns: AxisEntry[];
  /** Sum of weights per cell, index row * columns.length + column. */
  weighted: Float64Array;
  respondents: Float64Array;
  sumSqWeights: Float64Array;
  /** base AND row, whatever the columns (honest for overlapping codes). */
  rowTotals: Cell[];
  /** base AND column. */
  columnTotals: Cell[];
  /** The base. */
  total: Cell;
  weight: string | null;
  units: number;
  stability: StabilityThresholds;
  /** Whether "No answer" entries were added (TableQuery.missing). */
  missing: MissingMode;
  /** What the percentages are of (TableQuery.percentBase), unless tableStatistics() is told otherwise. */
  percentBase: PercentBase;
  /** How the cells were computed: one group-by pass, or bitset rows x columns; `sql` on ClickHouse. */
  plan: PlanName | 'sql';
  /** Where the cells were computed: the calling thread, the worker pool, or ClickHouse. */
  execution: 'inline' | 'pool' | 'clickhouse';
  /** One cell as an object. */
  cell(row: number, column: number): Cell;
  /**
   * What the variances need beyond the cells' sums: the whole file's respondent count
   * (simple design), per-PSU sums (strata and PSUs) or the cells under every replicate
   * weight. Absent in a hand-made result: variances then treat the base as the design.
   */
  design?: TableDesign;
  /** The query's `columnGroups`, when it gave some. */
  columnGroups?: number[][];
  /** The sums over respondents in both columns of each pair of `columnGroups` that may share respondents. */
  overlaps?: ColumnOverlaps;
}
