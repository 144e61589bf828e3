/** The options of a dataset build, what it reports, and their checks at the edge. */
import { stat } from 'node:fs/promises';
import { resolve } from 'node:path';
import type { DesignOptions } from '../dataset/build/design.js';
import type { StabilityThresholds } from '../dataset/format.js';
import { invalidOption, requireSignal } from '../options.js';
import { MAX_WEIGHT, MIN_WEIGHT } from '../dataset/weight-range.js';

export interface BuildOptions {
  /** Weight column(s); the first is the default weight of queries. */
  weights: string[];
  /** Survey code (SurveyCode in the REST contract). */
  survey: string;
  /** Output dataset path (.arrow). */
  out: string;
  /** AudienceReportUnits, default 1. */
  units?: number;
  /** Human-readable name, default the survey code. */
  name?: string;
  /** Codebook JSON path: named codes, labels, authorization groups. */
  codebook?: string;
  /** Columns to leave out. */
  exclude?: string[];
  /**
   * The respondent id column: kept as given (never a variable, never queried), every row's
   * value present and unique; `crosstab export` / exportColumns() write it beside weights.
   */
  id?: string;
  /**
   * Columns holding delimited sets of values (`1;3;5`), each built as a multi-response
   * variable of the same name; an empty cell is no answer. Default delimiter `;`.
   */
  multi?: Array<{ column: string; delimiter?: string }>;
  /**
   * Numeric columns to give a range index: one stored bitset per value (respondents with that
   * value or more), so that a range (`AGEP=18..34`, `AGEP=65..`) reads one or two bitsets
   * instead of scanning the column. Costs respondents / 8 bytes per value in the file and in
   * memory once used. Default `'auto'`: the numeric variables of 10 to 256 values that fill at
   * least half of their span (ages, hours, years, scales, bands), fewest values first, within
   * half the size of the rest of the dataset (docs/scale.md); `'none'` (or `[]`): no range index;
   * a list: exactly those columns.
   */
  rangeIndex?: string[] | 'auto' | 'none';
  /** Low-base thresholds, default 60 / 30 respondents. */
  stability?: StabilityThresholds;
  /** Complex survey design: strata, PSUs, fpc, or replicate weights (see docs/statistics.md). */
  design?: DesignOptions;
  /**
   * Worker threads of the build (0: all on the calling thread): they encode a CSV input
   * (default for CSV files of 4 MiB or more, gzip'd 1 MiB) and make the variables' buffers
   * (default for 100,000 respondents or more). Default: one per core, at most 4.
   */
  threads?: number;
  /** Progress of reading the input: bytes done of total. */
  onProgress?: (doneBytes: number, totalBytes: number) => void;
  /**
   * Cancels the build: it stops at its next check (each progress step of the read, after
   * compiling, each buffer written), removes the partial output and rejects with `cancelled`.
   */
  signal?: AbortSignal;
}

export interface BuildReport {
  out: string;
  respondents: number;
  variables: number;
  codes: number;
  bytes: number;
  skipped: Array<{ column: string; reason: string }>;
  /** The input reader's notes (a Parquet column it read the slower way, and why). */
  notes: string[];
  checksum: string;
}

/** `options` checked, with errors naming the option. */
export function validateBuildOptions(options: BuildOptions): BuildOptions {
  if (typeof options !== 'object' || options === null) throw invalidOption('options', 'must be an object', 'Pass {weights, survey, out}.');
  const { weights, survey, out, units, stability, exclude } = options;
  if (!Array.isArray(weights) || weights.length === 0 || !weights.every((w) => typeof w === 'string' && w !== '')) {
    throw invalidOption('weights', 'must name at least one weight column', 'Give the weight column(s) of the input.');
  }
  if (new Set(weights).size !== weights.length) throw invalidOption('weights', 'names a column twice', 'Name each weight column once.');
  if (typeof survey !== 'string' || !/^[A-Za-z0-9_.-]{1,64}$/.test(survey)) {
    throw invalidOption('survey', 'must be 1-64 letters, digits, _ . or -', 'Give the survey code, e.g. GSS.');
  }
  if (typeof out !== 'string' || out === '') throw invalidOption('out', 'must be a file path', 'Give the path of the .arrow file to write.');
  // Weighted sums (weight-range.ts: from 1e-50 to 4.3e59) divided by units stay normal doubles: not Infinity, 0 or subnormal.
  if (units !== undefined && !(typeof units === 'number' && units >= MIN_WEIGHT && units <= MAX_WEIGHT)) {
    throw invalidOption('units', `must be a positive number from ${MIN_WEIGHT} to ${MAX_WEIGHT}`, 'Give 1000 to report in thousands.');
  }
  if (stability !== undefined) {
    const { cautionMax, veryUnstableMax } = stability;
    if (!Number.isInteger(cautionMax) || !Number.isInteger(veryUnstableMax) || veryUnstableMax < 0 || cautionMax < veryUnstableMax) {
      throw invalidOption('stability', 'needs whole numbers with 0 <= veryUnstableMax <= cautionMax', 'Give e.g. {cautionMax: 60, veryUnstableMax: 30}.');
    }
  }
  if (exclude !== undefined && (!Array.isArray(exclude) || !exclude.every((c) => typeof c === 'string'))) {
    throw invalidOption('exclude', 'must be a list of column names', 'Give the names of the columns to leave out.');
  }
  if (options.id !== undefined && (typeof options.id !== 'string' || options.id === '')) {
    throw invalidOption('id', 'must be the name of a column of the input', 'Give the respondent id column, e.g. "SEQN".');
  }
  if (options.id !== undefined && exclude?.includes(options.id)) {
    throw invalidOption('id', `"${options.id}" is also excluded`, 'Leave the id column out of exclude.');
  }
  if (options.rangeIndex !== undefined && options.rangeIndex !== 'auto' && options.rangeIndex !== 'none' && !(Array.isArray(options.rangeIndex) && options.rangeIndex.every((c) => typeof c === 'string' && c !== ''))) {
    throw invalidOption('rangeIndex', 'must be a list of column names, "auto" or "none"', 'Give the names of numeric columns, e.g. ["AGEP"], "none" for no range index, or leave it out for the automatic choice.');
  }
  if (options.threads !== undefined && !(Number.isInteger(options.threads) && options.threads >= 0 && options.threads <= 64)) {
    throw invalidOption('threads', `must be a whole number from 0 to 64, not ${String(options.threads)}`, 'Give 0 to build on one thread, or leave it out for one worker per core.');
  }
  if (options.multi !== undefined && !(Array.isArray(options.multi) && options.multi.every((entry) => typeof entry === 'object' && entry !== null && typeof entry.column === 'string' && entry.column !== '' && (entry.delimiter === undefined || (typeof entry.delimiter === 'string' && entry.delimiter !== ''))))) {
    throw invalidOption('multi', 'must be a list of {column, delimiter?} with a non-empty column name and delimiter', 'Pass e.g. multi: [{ column: "brands", delimiter: ";" }].');
  }
  if (options.onProgress !== undefined && typeof options.onProgress !== 'function') {
    throw invalidOption('onProgress', 'must be a function', 'Pass (doneBytes, totalBytes) => { ... }.');
  }
  requireSignal(options.signal, 'signal');
  if (options.design !== undefined && (typeof options.design !== 'object' || options.design === null)) {
    throw invalidOption('design', 'must be an object', 'Pass {strata, psu, nest} or {replicateWeights, replicateType}.');
  }
  return options;
}

/**
 * Refuses an `out` that is one of the files the command reads (the same path, or another name
 * of the same file): the dataset renamed over it would replace the input, the only copy of
 * those respondents' answers. `inputs` names each file as the refusal says it (`the new rows`).
 */
export async function refuseOutOverInput(out: string, inputs: ReadonlyArray<readonly [file: string, what: string]>): Promise<void> {
  const outInfo = await stat(out).catch(() => undefined);
  for (const [file, what] of inputs) {
    const same = resolve(file) === resolve(out) || (outInfo !== undefined && (await stat(file).then((info) => info.dev === outInfo.dev && info.ino === outInfo.ino, () => false)));
    if (same) throw invalidOption('out', `"${out}" is ${what} (${file}): the dataset written there would replace it`, 'Write the dataset to another file (e.g. ending in .arrow).');
  }
}
