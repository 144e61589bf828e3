/**
 * The on-disk dataset format: one Arrow IPC file holding a table of buffers.
 *
 * Each row of the table is one buffer: `data` (Binary; the bytes, zero-padded to 64 bytes
 * so that once a record batch's value buffer is read into kernel memory at a 64-byte
 * boundary, every buffer starts on a cache line), `name` (for humans), `kind`
 * (BufferKind), `count` (respondents set / listed) and `hash` (XXH64 of the stored bytes,
 * 16 hex digits). The schema metadata carries:
 * - `crosstab.format`: FORMAT_VERSION; a reader refuses any other value.
 * - `crosstab.meta`: StoredMeta as JSON (survey, variables with dictionaries, codebook...).
 * - `crosstab.checksum`: sha256 of the format, the meta JSON and every column of every row
 *   of the buffer table but the bytes themselves, which their `hash` covers
 *   (see buffer-table.ts). Version 1 hashed the bytes and the meta but not `kind`/`count`.
 *
 * Respondent-level layouts (see assembly/index.ts): with W = bitsetWords(respondents),
 * a dense bitset is W u64 words, a weight vector W*64 f64, an index column W*64 ranks of
 * 1, 2 or 4 bytes, a sparse code a sorted u32 list of `count` respondent numbers.
 */
/** Low-base thresholds stored with a dataset. */
export interface StabilityThresholds {
  /** A cell with this many respondents or fewer is `caution` (default 60). */
  cautionMax: number;
  /** A cell with this many respondents or fewer is `very-unstable` (default 30). */
  veryUnstableMax: number;
}

/** A named expression from the codebook (`F18-34`). */
export interface CodeInfo {
  /** Name used in expressions (`F18-34`). */
  name: string;
  expr: string;
  label?: string;
  group: string;
}


export const FORMAT_VERSION = 'crosstab-engine/2';
/**
 * The format of a dataset holding multi-response variables (StoredVariable.multi): version 2
 * plus those variables, so that a reader of version 2 only refuses such a file instead of
 * misreading it. A dataset without them is still written as FORMAT_VERSION.
 */
export const MULTI_FORMAT_VERSION = 'crosstab-engine/3';
/**
 * The format of a dataset file in segments (an appended wave: `crosstab append` without
 * `--compact`): the file of the dataset before the wave, byte for byte up to its footer,
 * then the wave's buffers, then a footer whose `crosstab.segments` (StoredSegments) says
 * which stored buffers (parts) make each buffer of the dataset. `crosstab.meta` is the
 * dataset's metadata as a file of all the respondents has it (its `format` is that file's).
 * A reader of the earlier versions refuses such a file instead of misreading it; a dataset
 * that is not in segments is still written as FORMAT_VERSION or MULTI_FORMAT_VERSION.
 */
export const SEGMENTED_FORMAT_VERSION = 'crosstab-engine/4';
/** Formats this version reads. */
export const READABLE_FORMATS: readonly string[] = [FORMAT_VERSION, MULTI_FORMAT_VERSION, SEGMENTED_FORMAT_VERSION];
/** Schema metadata of a file in segments: StoredSegments as JSON. */
export const SEGMENTS_KEY = 'crosstab.segments';

/**
 * The segment table of a dataset file in segments. Respondents are numbered across the
 * segments: segment s holds `respondents[s]` of them, after those of the segments before it
 * (segment 0 is the dataset as first written; each later one an appended wave). Each buffer
 * of the dataset (the buffer rows StoredMeta points at) is `buffers[row]`: its kind and count
 * as a file of all the respondents stores it, and its parts, at most one per segment in
 * segment order, each a stored buffer (a row of the file's buffer table) over that segment's
 * respondents alone: bits and slots numbered from the segment's first respondent, lists of
 * respondents numbered so, the id column's offsets from its first text. A segment without a
 * part holds none of a container's respondents. An index column's part stored with ranks of
 * an earlier dictionary names in `map` the entry of `maps` that takes each stored rank to
 * the rank now (maps[m][stored rank]; 0 stays blank).
 */
export interface StoredSegments {
  respondents: number[];
  buffers: Array<{ name: string; kind: BufferKind; count: number; parts: Array<{ segment: number; row: number; map?: number }> }>;
  maps: number[][];
}
export const META_KEY = 'crosstab.meta';
export const FORMAT_KEY = 'crosstab.format';
export const CHECKSUM_KEY = 'crosstab.checksum';
/** Buffers are padded to this many bytes inside the Arrow value buffer. */
export const BUFFER_ALIGN = 64;
/**
 * Most values of one variable the engine handles value by value, and so most entries of one
 * table axis or one crosstab's targets (MAX_AXIS, MAX_TARGETS): a variable with at most this
 * many distinct values gets one code container per value, lists its values in `info`, and
 * expands into one axis entry per value; a text column with more (and more than a tenth of
 * its rows) is skipped as id-like. The one place the number is written.
 */
export const AXIS_LIMIT = 5000;
/**
 * A text column with more distinct values than this in `rows` rows is skipped as id-like
 * (see AXIS_LIMIT): max(AXIS_LIMIT, rows / 10), whole.
 */
export function idLikeTextLimit(rows: number): number {
  return Math.floor(Math.max(AXIS_LIMIT, rows / 10));
}
/**
 * The most distinct values of an id-like text column a build counts (SkippedColumn.textValues);
 * past it a reader may stop counting (ReadOptions.skipIdLike). The id-like bound of twice the
 * rows: an append of up to as many rows again still knows from the count that the column
 * stays id-like, without reading it from the new rows.
 */
export function idLikeCountLimit(rows: number): number {
  return idLikeTextLimit(2 * rows);
}
/**
 * Most values of a variable given a range index (StoredVariable.atLeast): it stores one
 * bitset per value, an eighth of a byte per respondent each.
 */
export const RANGE_INDEX_LIMIT = 256;
/** Default stability thresholds: MRI-Simmons low-base convention. */
export const DEFAULT_STABILITY: StabilityThresholds = { cautionMax: 60, veryUnstableMax: 30 };
export const DEFAULT_GROUP = 'default';

export const BufferKind = {
  weights: 1,
  indexU8: 2,
  indexU16: 3,
  indexU32: 4,
  dense: 5,
  sparse: 6,
  /** Per respondent, the 0-based input row it was read from (u32, `count` respondents): the input's order back. */
  inputRows: 7,
  /**
   * The respondent id column (`crosstab build --id`), per input row: `count` is the buffer's
   * byte length, (rows + 1) u32 offsets into the UTF-8 text that follows them.
   */
  idTexts: 8,
} as const;
export type BufferKind = (typeof BufferKind)[keyof typeof BufferKind];

export interface StoredVariable {
  name: string;
  label?: string;
  /**
   * `multi`: a multi-response variable; a respondent holds any number of its values (codes),
   * each a code container of its own, and it has no index column (`index` is -1).
   */
  kind: 'numeric' | 'text' | 'multi';
  group: string;
  /** Distinct non-blank values as text, sorted (numerically for numeric variables); rank = position + 1. */
  values: string[];
  /** Respondents per rank (same order as `values`). */
  counts: number[];
  /** Respondents with a blank (multi: respondents who gave no answer at all). */
  missing: number;
  valueLabels?: Record<string, string>;
  /** Buffer row of the index column; -1 for a multi-response variable, which has none. */
  index: number;
  /** Buffer row of each value's code container, when the variable has at most AXIS_LIMIT values (always, for multi). */
  codes?: number[];
  /**
   * A range index (numeric single-coded variables built with one): `atLeast[r - 1]` is the
   * buffer row of the dense bitset of respondents whose rank is r or more, for r = 1..values.length.
   * A range of ranks is then one stored bitset, or one AND NOT of two, instead of a scan of
   * the index column. A reader that does not know it ignores it and scans.
   */
  atLeast?: number[];
  /** Multi-response variables only. */
  multi?: StoredMulti;
}

/** What a multi-response variable stores besides its values and code containers. */
export interface StoredMulti {
  /** Whether every value is a number (then sorted numerically, and ranges apply). */
  numeric: boolean;
  /** Buffer row of the container of respondents who gave no answer at all (`VAR=NA`). */
  noAnswer: number;
  /** Where the variable came from, for `info`: `columns` (dichotomies or categories) or a delimited column. */
  source: { columns: string[]; counted?: string; delimiter?: string };
}

/** Replicate-weight methods (R's `svrepdesign(type = ...)`). */
export const REPLICATE_TYPES = ['JK1', 'JKn', 'BRR', 'Fay', 'bootstrap', 'SDR'] as const;
export type ReplicateType = (typeof REPLICATE_TYPES)[number];

/** The design as stored in the dataset metadata. */
export interface StoredDesign {
  strata?: string;
  psu?: string;
  nest?: boolean;
  fpc?: string;
  /** Strata and PSUs in the sample (Taylor designs), counted at build so that open need not. */
  strataCount?: number;
  psuCount?: number;
  /**
   * `degfGiven`: whether `degf` was given at build (`--degf`; kept as it is when rows are
   * appended) or is the rank of the replicate weights − 1 (counted again over every row).
   * Absent in datasets of earlier builds.
   */
  replicates?: { weights: string[]; type: ReplicateType; scale: number; rscales: number[]; mse: boolean; rho?: number; degf: number; degfGiven?: boolean };
}

/**
 * How a weight was calibrated to population targets (written by `crosstab weight`), so that
 * variances with it are those of the calibrated design (docs/weighting.md § Standard errors).
 */
export interface StoredCalibration {
  /** `raking`: R's rake() linearization; `regression`: calibrate()'s and postStratify()'s. */
  kind: 'raking' | 'regression';
  /** The weight the calibration started from; null: unit weights (every respondent 1). */
  baseWeight: string | null;
  /** The target variables, by name. */
  variables: string[];
  /** Per cell (a combination of the target variables' values): each variable's value rank (0 = blank). */
  cells: number[][];
  /** Per margin: its number of categories and each cell's category (0-based; the first is R's reference level). */
  margins: Array<{ categories: number; category: number[] }>;
  /** `raking`: per margin, each cell's weight / base weight right after that margin in the last pass. */
  steps?: number[][];
}

/**
 * A column a build left out, with the reason shown to users, and what an append needs to
 * decide that a build of all the rows would leave it out too (not shown in info; absent in
 * datasets of earlier builds).
 */
export interface SkippedColumn {
  column: string;
  reason: string;
  /**
   * An id-like text column: its distinct values, counted up to idLikeCountLimit(rows) + 1
   * (`atLeast`: there are this many or more; always so after an append).
   */
  textValues?: { count: number; atLeast?: true };
  /** An id-like integer column (one distinct integer per row): its smallest and largest value. */
  integerRange?: { min: number; max: number };
}

/**
 * How `crosstab weight` made a weight, stored with every weight it makes (with or without a
 * StoredCalibration: weights made by groups or trimmed have none): calibrated to targets over
 * the respondents it saw, the weight is refused or left out by an append.
 */
export interface StoredWeighting {
  /** rake, poststratify, linear or logit. */
  method: string;
  /** The weight it started from; null: unit weights. */
  baseWeight: string | null;
  /** The variable whose groups had target sets of their own. */
  groupBy?: string;
  /** The bounds the weights were trimmed to. */
  trim?: [number, number];
}

/** One weight of a dataset or weights file; `buffer` is its buffer row. */
export interface StoredWeight {
  name: string;
  buffer: number;
  calibration?: StoredCalibration;
  weighting?: StoredWeighting;
}

export interface StoredMeta {
  format: string;
  survey: string;
  name: string;
  units: number;
  respondents: number;
  weights: StoredWeight[];
  stability: StabilityThresholds;
  variables: StoredVariable[];
  codes: CodeInfo[];
  skipped: SkippedColumn[];
  source: string;
  createdAt: string;
  /** Complex survey design (strata, PSUs, fpc or replicate weights); absent for a simple design. */
  design?: StoredDesign;
  /** Label of tables' "No answer" entries, from the codebook's `missingLabel`; absent: "No answer". */
  missingLabel?: string;
  /**
   * How the build chose numeric columns. `float-collisions`: a column of decimal numbers is
   * numeric unless two of its different numbers read as the same 64-bit float or one lies
   * beyond the float range, so a numeric variable may hold values written with more digits
   * than a float holds (`0.33333333333333331`), each standing for its float alone. Absent
   * (datasets of earlier builds): a numeric variable holds only values a float holds exactly,
   * and one holding any other was built when a float could stand for several numbers.
   */
  numberRule?: 'float-collisions';
  /**
   * Buffer row of the respondents' input rows (BufferKind.inputRows): how `crosstab export`
   * writes columns in the input's row order. Absent in datasets of earlier builds.
   */
  inputRows?: number;
  /** The respondent id column (`--id`): kept as given, never a variable, unique; its buffer (BufferKind.idTexts). */
  id?: { column: string; buffer: number };
}

/**
 * A dataset's weights file (`crosstab weight` without `--out`): an Arrow IPC file with the
 * dataset's buffer table, holding only weight buffers, beside the dataset as its path plus
 * WEIGHTS_SUFFIX. Its `crosstab.format` is WEIGHTS_FORMAT_VERSION, its `crosstab.meta` a
 * StoredWeightsFile, its `crosstab.checksum` computed as a dataset's (datasetChecksum()).
 * It names the checksum of the dataset it was made from: a reader refuses it beside any
 * other build of that file.
 */
export const WEIGHTS_FORMAT_VERSION = 'crosstab-engine-weights/1';
export const WEIGHTS_SUFFIX = '.weights';

/** The metadata of a weights file. */
export interface StoredWeightsFile {
  format: string;
  /** The dataset the weights belong to: its checksum (crosstab.checksum), respondents and file name when they were made. */
  dataset: { checksum: string; respondents: number; file: string };
  /** The weights, in order; `buffer` is a buffer row of this file. */
  weights: StoredWeight[];
  createdAt: string;
}

/** The hint of a cancelled build's error: what was left behind (nothing) and what to do. */
export const BUILD_CANCELLED_HINT = 'Nothing was written (the partial output was removed); run the build again to make the dataset.';
