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
}

export interface ReadOptions {
  /** Weight column names (at least one). Each must exist; every row needs a valid value. */
  weights: string[];
  /** Columns to leave out entirely. Unknown names are an error (naming them). */
  exclude?: string[];
  /** CSV: worker threads that encode the input (0: none); default by file size (see readCsv). */
  threads?: number;
  /** Called now and then with bytes of the input consumed so far and the input size. */
  onProgress?: (doneBytes: number, totalBytes: number) => void;
}
