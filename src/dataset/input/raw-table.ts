import type { RowIds } from './row-ids.js';

/**
 * What an input reader (CSV, later SPSS .sav / Parquet / Arrow) hands to the dataset
 * compiler: every column dictionary-encoded, weights parsed and validated.
 */

export interface RawColumn {
  /** Column name as in the header. */
  name: string;
  /**
   * Distinct non-blank values, as text exactly as in the file, in first-seen order.
   * Row id `k` (k >= 1) means `dictionary[k - 1]`; id 0 means blank (missing).
   */
  dictionary: string[];
  /**
   * Set while `dictionary` is not made yet (an id-like text column's values kept as bytes,
   * see deferred-texts.ts): how many values it has and the first of them. Reading
   * `dictionary` makes it (and removes this).
   */
  deferred?: { count: number; first: string };
  /**
   * Set when the reader stopped numbering the column's values past the id-like bound
   * (ReadOptions.skipIdLike): `deferred.count` is then a lower bound, and the ids and counts
   * of the rows after that point are blank. Such a column is skipped as id-like.
   */
  partly?: true;
  /**
   * Rows per id (`counts[k]` rows have id k; index 0 unused), when the reader counted them
   * as it read: the compiler then need not pass over the ids to count.
   */
  counts?: Uint32Array;
  /** One id per row, `ids.length === rows`, in the narrowest array that holds the ids. */
  ids: RowIds;
  /** Variable label (from a labelled input such as .sav), if any. */
  label?: string;
  /** Value labels keyed by the value's text, if any. */
  valueLabels?: Record<string, string>;
}

export interface RawWeight {
  name: string;
  /** One non-negative finite weight per row. */
  values: Float64Array;
}

export interface RawTable {
  /** Path of the input file, for messages. */
  source: string;
  rows: number;
  /** Every column except weight columns and excluded ones, in header order. */
  columns: RawColumn[];
  /** The requested weight columns, in the order requested. */
  weights: RawWeight[];
  /** Multi-response variables the input itself defines (an SPSS file's multiple-response sets). */
  multiSets?: MultiSpec[];
  /** What the reader wants the user to know that does not stop the build (a column read the slow way). */
  notes?: string[];
}

export interface ReadOptions {
  /** Weight column names (at least one). Each must exist; every row needs a valid value. */
  weights: string[];
  /** Columns to leave out entirely. Unknown names are an error (naming them). */
  exclude?: string[];
  /** Columns to leave out when the input has them (not read; a name it lacks is no error). */
  ignore?: string[];
  /**
   * Worker threads that read the input (0: none). CSV: they encode it, default by file size
   * (see readCsv); Parquet and Arrow IPC files: each reads a share of the columns while this
   * thread reads the rest, default one per core (at most 4) from 100,000 rows.
   */
  threads?: number;
  /**
   * Lets the reader stop numbering a text column's values once it holds more than
   * idLikeCountLimit(rows) of them and its first is not a number: the build skips such a
   * column as id-like whatever its other rows hold, and its note states that bound, not the
   * count (see RawColumn.partly). Columns named in `except` (the respondent id column,
   * multi-response members) are read whole. Parquet text columns of PLAIN pages do this;
   * other columns and readers are read whole.
   */
  skipIdLike?: { except: string[] };
  /** Called now and then with bytes of the input consumed so far and the input size. */
  onProgress?: (doneBytes: number, totalBytes: number) => void;
}

/**
 * A multi-response variable to build from input columns, in one of three shapes:
 * - dichotomies (`counted` set): one column per value; a respondent holds value i (1-based)
 *   when column i has the counted value. Labels are the columns' labels.
 * - categories (neither set): each column holds one chosen value; a respondent holds every
 *   value found in any of the columns.
 * - delimited (`delimiter` set, one column): each cell lists values (`1;3;5`); the column
 *   becomes the multi-response variable instead of a text variable.
 * A respondent blank in every column gave no answer (`VAR=NA`); one with an answer but none
 * of the values (a 0 in every dichotomy, a cell of only delimiters) holds no value.
 */
export interface MultiSpec {
  name: string;
  columns: string[];
  counted?: string;
  delimiter?: string;
  label?: string;
  group?: string;
  /** Value labels keyed by value (for dichotomies, by position "1", "2"...). */
  valueLabels?: Record<string, string>;
  /** Where the spec was written, for messages (`codebook.json`, `--multi`, `file.sav`). */
  from: string;
}

