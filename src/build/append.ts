/**
 * appendRows(): a new wave of respondents added to a built dataset without reading the old
 * respondents' input again. The new rows are encoded with the dataset's dictionaries (new
 * values join them in sorted place; a numeric variable given text is refused), and every
 * buffer is extended: weights, index columns, code containers, range indexes. The design
 * and the codebook's codes are kept, and the design's counts and checks are made again.
 *
 * The old respondents keep their places (the work on them is a copy, or a byte map when new
 * values shift ranks); the new ones follow, sorted by the default weight among themselves.
 * A full build would instead sort every respondent by weight, interleaving old and new, so
 * the two files answer every query alike but their buffers (and fingerprints) differ: the
 * full build's order would move every old respondent, which is the cost of a full build.
 */
import { open, readFile, rm, stat } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { CrosstabError, ErrorCode, throwIfCancelled } from '../errors.js';
import { bitsetWords } from '../kernel/exports.js';
import { mainThreadKernel } from '../kernel/kernel.js';
import { invalidOption } from '../options.js';
import { idLikeIntegersReason, idLikeTextReason, idLikeTextValues, isIdLikeIntegers, isIntegerText, isNumberText, numberColumnProblem, staysIdLike } from '../dataset/build/classify.js';
import { type BufferSpec, paddedSize } from '../dataset/build/compile.js';
import type { BufferTable, PlacedBuffer } from '../dataset/file/writer.js';
import type { Kernel } from '../kernel/kernel.js';
import { StoredExtension } from './append-stored.js';
import { ByteArena } from './byte-arena.js';
import { mergedRanks, waveNumberProblem } from './merged-ranks.js';
import { appendTrace, type AppendTrace } from './append-trace.js';
import { refuseOutOverInput } from './build-options.js';
import { defaultBuildThreads } from '../dataset/input/build-threads.js';
import { declareDesign, type DesignOptions } from '../dataset/build/design.js';
import { weightOrder } from '../dataset/build/weight-order.js';
import { loadDataset, type LoadedDataset } from '../dataset/file/reader.js';
import { AXIS_LIMIT, BUILD_CANCELLED_HINT, BufferKind, idLikeTextLimit, RANGE_INDEX_LIMIT, type SkippedColumn, type StoredCalibration, type StoredDesign, type StoredMeta, type StoredVariable, type StoredWeighting } from '../dataset/format.js';
import { shellWord } from '../dataset/file/rebuild-command.js';
import { replicateRank } from '../stats/replicate-rank.js';
import { placedError, type Place } from '../dataset/input/input-errors.js';
import type { RawColumn, RawTable } from '../dataset/input/raw-table.js';
import type { RowIds } from '../dataset/input/row-ids.js';
import { eachAnswer, isDense, planMultiWave } from '../dataset/build/multi-response.js';
import { listBits, readIndex, remapRanks, setBits } from '../dataset/file/respondent-bits.js';
import type { SegmentCopy, WavePart } from '../dataset/file/segment-writer.js';

export interface AppendOptions {
  /** Where to write the extended dataset (written beside it and renamed; may be the dataset itself). */
  out: string;
  /**
   * Worker threads reading the new rows (as buildDataset's `threads`). Default: for a CSV of
   * 8 MiB or more (gzip'd: 2 MiB), one per core, at most 4; for a smaller CSV none (the rows
   * are read on the calling thread); for other formats the reader's default.
   */
  threads?: number;
  /**
   * Write one file of all the respondents, every buffer extended, instead of adding the wave
   * to the dataset file as a segment of its own (the default). An append writes one file
   * anyway when the dataset already has MAX_SEGMENTS segments, when the wave is larger than
   * the dataset, or when the wave is empty.
   */
  compact?: boolean;
  /** Stops the append: nothing is written. */
  signal?: AbortSignal;
  /**
   * Leave out the weights `crosstab weight` made (calibrated to population targets over the
   * old respondents; the weights file's, and those written into the dataset): they cannot be
   * extended without weighting again. Default false: such a dataset is refused.
   */
  dropCalibrated?: boolean;
}

export interface AppendReport {
  out: string;
  /** Segments of the file written (1: one file of all the respondents). */
  segments: number;
  /** Respondents now, and how many were added. */
  respondents: number;
  appended: number;
  /** Values the new rows brought that the dataset did not have, per variable. */
  newValues: Array<{ variable: string; values: string[] }>;
  bytes: number;
  checksum: string;
  /** The input reader's notes. */
  notes: string[];
  /** Weights left out (`dropCalibrated`), each with the `crosstab weight` command that makes it again. */
  dropped: Array<{ weight: string; command: string }>;
}

const APPEND_OPTIONS = ['out', 'threads', 'compact', 'signal', 'dropCalibrated'];

/**
 * Most segments of a dataset file an append writes: past them it writes one file of all the
 * respondents (compact). Each segment adds a part to most buffers, read on its own when the
 * buffer is first used; a few keep opening the dataset about as fast as one file.
 */
export const MAX_SEGMENTS = 8;

/** A variable of the extended dataset: its stored form and how to make its buffers. */
interface Extended {
  variable: StoredVariable;
  old: StoredVariable;
  /** Old rank (1-based; 0 blank) → rank now. */
  rankNow: Uint32Array;
  /** Rank now → old rank (0: a value the old respondents do not have). */
  oldRank: Uint32Array;
  /** Ranks of the new respondents, in their stored order. */
  appended: Uint32Array;
}

/**
 * Appends the respondents of `newRows` (CSV, SPSS, Parquet or Arrow, with the dataset's
 * columns and weights) to the dataset file `dataset`, writing the result to `options.out`.
 * Rejects with `invalid_input` when the new rows do not fit the dataset (a column missing
 * or unknown, a numeric variable given text, too many values), naming the column and file.
 */
export async function appendRows(dataset: string, newRows: string, options: AppendOptions): Promise<AppendReport> {
  if (typeof options !== 'object' || options === null) throw invalidOption('options', 'must be an object', 'Pass { out: "wave2.arrow" }.');
  for (const key of Object.keys(options)) {
    if (!APPEND_OPTIONS.includes(key)) throw invalidOption(`options.${key}`, 'is not an option', `The options are ${APPEND_OPTIONS.join(', ')}.`);
  }
  if (typeof options.out !== 'string' || options.out === '') throw invalidOption('out', 'must be the path of the dataset to write', 'Pass out: "survey.arrow".');
  const { signal } = options;
  const trace = appendTrace();
  trace?.mark('start (node, modules)');
  const cancelled = () => throwIfCancelled(signal, 'the append', BUILD_CANCELLED_HINT);
  cancelled();
  await stat(dirname(options.out)).catch(() => {
    throw invalidOption('out', `"${options.out}": the folder ${dirname(options.out)} does not exist`, 'Create the folder or choose another path.');
  });
  // The dataset itself may be replaced (that is a new version of it); the new rows may not.
  await refuseOutOverInput(options.out, [[newRows, 'the new rows']]);
  const kernel = mainThreadKernel();
  // Every buffer is checked against its checksum before the extended dataset is in place (a
  // damaged dataset is never extended): as it is extended, or when first read.
  const data = await loadDataset(dataset, kernel, { verify: true });
  trace?.mark('open the dataset', `${data.buffers.length} buffers`);
  const segments = data.segments ?? 1;
  // The copy of the old file a segment is written after depends on nothing of the wave: it
  // goes on in the thread pool (the kernel's copy and the sync) while the wave is read and
  // planned here. Discarded, after it settles, when the wave is not written as a segment.
  let copy: SegmentCopy | undefined;
  if (options.compact !== true && segments < MAX_SEGMENTS) {
    const { SegmentCopy } = await import('../dataset/file/segment-writer.js');
    copy = new SegmentCopy(dataset, options.out);
  }
  try {
    const dropped = calibratedWeights(dataset, newRows, data, options);
    const source = dropped.length === 0 ? data : { ...data, meta: { ...data.meta, weights: data.meta.weights.filter((weight) => !dropped.some((entry) => entry.weight === weight.name)) } };
    const meta = source.meta;
    // The old respondents' weights go into the new file: as they are (a segment's copy, checked
    // here without being read into memory), or read and extended (StoredExtension checks them).
    // A weight outside the range the engine takes is refused as a query's first read refuses it.
    if (copy !== undefined) for (const weight of meta.weights) data.checkStoredWeights(weight.buffer);
    trace?.mark('check the stored weights');
    const { readInput, sniffFormat } = await import('../dataset/input/read-input.js');
    const format = await sniffFormat(newRows);
    const threads = options.threads ?? (await waveThreads(newRows, format));
    const read = { weights: meta.weights.map((weight) => weight.name), ...(threads === undefined ? {} : { threads }) };
    // Text columns skipped as id-like are not read when their old values alone keep them
    // id-like over every row (a build of all the rows skips them whatever the new values);
    // should the new rows be too many for that, the input is read again with them.
    const idLike = idLikeColumns(meta);
    trace?.mark('load the input reader');
    let table = await readInput(newRows, { ...read, ignore: idLike.map((entry) => entry.column) });
    trace?.mark('read the new rows', `${table.rows} rows, ${threads ?? 'default'} threads`);
    cancelled();
    if (idLike.some((entry) => !staysIdLike(entry.values, meta.respondents + table.rows))) {
      table = await readInput(newRows, read);
      cancelled();
    }
    const compiled = await extend(dataset, newRows, format, source, table, (ptr, bytes) => kernel.memory.bytes(ptr, bytes), kernel, trace);
    trace?.mark('plan', `${compiled.dataset.specs.length} buffers`);
    cancelled();
    const segmented = copy !== undefined && table.rows > 0 && table.rows <= meta.respondents;
    let written: { bytes: number; checksum: string };
    if (segmented) {
      const { writeSegment } = await import('../dataset/file/segment-writer.js');
      const datasetChecksum = data.weightsFile?.datasetChecksum ?? data.checksum;
      // writeSegment takes the copy: it removes it on any failure.
      const taken = copy!;
      copy = undefined;
      if (trace !== undefined) {
        await taken.copied().catch(() => undefined);
        trace.mark('wait for the copy', 'of the old file, started at open');
      }
      written = await writeSegment(taken, datasetChecksum, table.rows, compiled.dataset.meta, compiled.dataset.specs, compiled.wave(), options.out, signal);
      trace?.mark('write the wave, sync, rename', `${written.bytes} bytes`);
    } else {
      await copy?.discard();
      copy = undefined;
      const { writeDataset } = await import('../dataset/file/writer.js');
      // Past the page cache: each buffer is made when the writer asks for it, so a slow device holds back nothing but the append.
      written = await writeDataset(compiled.dataset, options.out, signal, { direct: true });
      trace?.mark('write, sync, rename', `${written.bytes} bytes`);
    }
    // The weights file belongs to the build just replaced (its weights, left out, were of the old respondents).
    if (data.weightsFile !== undefined && dropped.length > 0 && resolve(options.out) === resolve(dataset)) await rm(data.weightsFile.path, { force: true });
    return {
      out: options.out,
      segments: segmented ? segments + 1 : 1,
      respondents: compiled.dataset.meta.respondents,
      appended: table.rows,
      newValues: compiled.newValues,
      bytes: written.bytes,
      checksum: written.checksum,
      notes: table.notes ?? [],
      dropped,
    };
  } finally {
    await copy?.discard();
    data.close();
    for (const region of data.regions) kernel.memory.release(region.ptr, region.bytes);
    trace?.done();
  }
}

/**
 * Text bytes of a CSV wave from which its fields are parsed by worker threads (gzip'd: a
 * quarter of it); a smaller CSV wave is parsed on the main thread. Starting the workers costs
 * each about as much CPU as parsing a 27,000-row ACS wave (2.8 MB of text) on the main thread:
 * on a loaded 2-core machine, paired, that wave took 0.23-0.29 s of CPU on the main thread
 * against 0.42-0.48 s with 2 workers, in less wall time too; at 11 MB of text the two were
 * about even.
 */
const WAVE_PARALLEL_CSV_BYTES = 8 << 20;

/** Worker threads reading the new rows when the caller gives none: for a CSV, 0 below WAVE_PARALLEL_CSV_BYTES and the build threads from it; otherwise undefined (the reader's default). */
export async function waveThreads(newRows: string, format: string): Promise<number | undefined> {
  if (format !== 'csv') return undefined;
  const handle = await open(newRows, 'r').catch(() => undefined);
  // The reader names the problem with the file.
  if (handle === undefined) return undefined;
  try {
    const magic = new Uint8Array(2);
    const { bytesRead } = await handle.read(magic, 0, 2, 0);
    const gzip = bytesRead === 2 && magic[0] === 0x1f && magic[1] === 0x8b;
    const { size } = await handle.stat();
    return size * (gzip ? 4 : 1) >= WAVE_PARALLEL_CSV_BYTES ? defaultBuildThreads() : 0;
  } catch {
    return undefined;
  } finally {
    await handle.close();
  }
}

/** The columns skipped as id-like text, with their distinct values (at least; exactly in a dataset of an earlier build). */
function idLikeColumns(meta: StoredMeta): Array<{ column: string; values: number }> {
  const found: Array<{ column: string; values: number }> = [];
  for (const entry of meta.skipped) {
    const values = idLikeTextCount(entry, meta);
    if (values !== undefined) found.push({ column: entry.column, values });
  }
  return found;
}

/** A skipped column's stored distinct text values when it was skipped as id-like text (not the --id column); else undefined. */
function idLikeTextCount(entry: SkippedColumn, meta: StoredMeta): number | undefined {
  return entry.column === meta.id?.column ? undefined : (entry.textValues?.count ?? idLikeTextValues(entry.reason));
}

/**
 * The skipped columns over every row, each as a build of all the rows would skip it (same
 * reason), or a refusal when the new rows might make it a variable of that build (or when
 * the dataset does not tell):
 * - id-like text: kept skipped when its old distinct values, or the new rows' alone, exceed
 *   the id-like bound of every row (more rows only add values);
 * - id-like integers: kept skipped when the new rows hold distinct integers, none blank, all
 *   below the old smallest or above the old largest (so none repeats an old one).
 */
function skippedOverAll(dataset: string, newRows: string, old: StoredMeta, columns: Map<string, RawColumn>, added: number): SkippedColumn[] {
  const rows = old.respondents + added;
  const rebuild = 'Build the whole dataset from all the rows with `crosstab build`.';
  return old.skipped.map((entry): SkippedColumn => {
    const column = columns.get(entry.column);
    const textValues = idLikeTextCount(entry, old);
    if (textValues !== undefined) {
      const bound = idLikeTextLimit(rows);
      const newValues = column === undefined ? 0 : (column.deferred?.count ?? column.dictionary.length);
      if (!staysIdLike(textValues, rows) && !staysIdLike(newValues, rows)) {
        throw unfit(
          newRows,
          `column ${entry.column} was skipped by ${dataset} as id-like (${entry.reason}): over all ${rows} rows it is id-like only with more than ${bound} distinct values, and neither its ${entry.textValues?.atLeast === true ? 'at least ' : ''}${textValues} old ones nor the ${newValues} of the new rows show that (the old values are not kept), so a build of all the rows might make it a variable`,
          rebuild,
          entry.column,
        );
      }
      return { column: entry.column, reason: idLikeTextReason(rows), textValues: { count: Math.max(textValues, newValues), atLeast: true } };
    }
    if (!isIdLikeIntegers(entry.reason)) return entry;
    if (added === 0) return entry;
    const refuse = (why: string) =>
      unfit(newRows, `column ${entry.column} was skipped by ${dataset} as id-like (${entry.reason}), but ${why}, so a build of all the rows would not skip it as one distinct integer per row`, rebuild, entry.column);
    if (column === undefined) throw refuse('the new rows lack it');
    const texts = column.dictionary;
    // As many distinct texts as rows: none blank, none twice.
    if (texts.length !== added) throw refuse('its new values are blank or repeat each other');
    const range = entry.integerRange;
    if (range === undefined) throw refuse(`${dataset} was made by an earlier build, which did not keep the column's smallest and largest value, so whether its new values repeat old ones cannot be told`);
    let min = range.min;
    let max = range.max;
    const seen = new Set<number>();
    for (const text of texts) {
      if (!isNumberText(text)) throw refuse(`its new value ${text} is not a number`);
      if (!isIntegerText(text)) throw refuse(`its new value ${text} is not an integer`);
      const value = Number(text);
      if (value >= range.min && value <= range.max) throw refuse(`its new value ${text} lies within its old values' range ${range.min} to ${range.max} and may repeat one of them`);
      // Two texts of one float (007 and 7) are one number twice.
      if (seen.has(value)) throw refuse(`its new values repeat each other (${text})`);
      seen.add(value);
      if (value < min) min = value;
      if (value > max) max = value;
    }
    return { column: entry.column, reason: idLikeIntegersReason(rows), integerRange: { min, max } };
  });
}

function unfit(file: string, what: string, hint: string, field?: string): CrosstabError {
  return new CrosstabError(ErrorCode.invalidInput, `${file}: ${what}`, { file, ...(field === undefined ? {} : { field }), hint });
}

/**
 * The weights `crosstab weight` made (every weight of the weights file; a weight of the dataset
 * file with a stored calibration): calibrated to population targets over the old respondents,
 * they have no value for the new ones, and extending them with any would leave a weight that no
 * longer meets its targets. Refused, naming the commands that append and weight again, unless
 * `dropCalibrated`: then left out, each with the command that makes it again over every row.
 */
function calibratedWeights(dataset: string, newRows: string, data: LoadedDataset, options: AppendOptions): Array<{ weight: string; command: string }> {
  const fromFile = new Set(data.weightsFile?.weights ?? []);
  const made = data.meta.weights.filter((weight) => fromFile.has(weight.name) || weight.calibration !== undefined || weight.weighting !== undefined);
  if (made.length === 0) return [];
  const dropped = made.map((weight) => ({ weight: weight.name, command: weightCommand(options.out, weight.name, weight.calibration, weight.weighting) }));
  const first = made[0]!;
  const where = fromFile.has(first.name) ? `its weights file ${data.weightsFile!.path}` : 'it';
  if (data.meta.weights[0]!.name === first.name) {
    throw unfit(dataset, `its default weight ${first.name} was calibrated to population targets (crosstab weight), which the new respondents would change`, 'Append to the dataset `crosstab weight` started from, then weight the result again.', first.name);
  }
  if (options.dropCalibrated !== true) {
    const names = made.map((weight) => weight.name);
    throw unfit(
      dataset,
      `its weight${names.length > 1 ? 's' : ''} ${names.join(', ')} ${names.length > 1 ? 'were' : 'was'} calibrated to population targets over its respondents by crosstab weight (${where} holds ${first.name}): the new respondents have no such weight, and the old ones' would no longer meet the targets with them`,
      `Append without ${names.length > 1 ? 'them' : 'it'} (dropCalibrated: \`crosstab append ${shellWord(dataset)} ${shellWord(newRows)} --out ${shellWord(options.out)} --drop-calibrated\`), then weight every respondent again with the same targets: ${dropped.map((entry) => `\`${entry.command}\``).join(', then ')}.`,
      first.name,
    );
  }
  return dropped;
}

/** The `crosstab weight` command that makes `name` again over the dataset `out` (the targets file as a placeholder: it is not stored). */
function weightCommand(out: string, name: string, calibration: StoredCalibration | undefined, weighting: StoredWeighting | undefined): string {
  const method = weighting?.method ?? (calibration?.kind === 'raking' ? 'rake' : 'METHOD');
  const parts = ['crosstab', 'weight', shellWord(out), '--targets', 'TARGETS.json', '--method', method, '--name', shellWord(name)];
  const baseWeight = weighting !== undefined ? weighting.baseWeight : calibration?.baseWeight;
  if (baseWeight === null) parts.push('--unweighted');
  else if (baseWeight !== undefined) parts.push('--base-weight', shellWord(baseWeight));
  if (weighting?.trim !== undefined) parts.push('--trim', weighting.trim.join(','));
  return parts.join(' ');
}

/** The extended dataset, planned and made buffer by buffer. */
async function extend(
  dataset: string,
  newRows: string,
  format: string,
  data: LoadedDataset,
  table: RawTable,
  bytesAt: (ptr: number, bytes: number) => Uint8Array,
  kernel: Kernel,
  trace?: AppendTrace,
): Promise<{ dataset: BufferTable & { meta: StoredMeta }; newValues: AppendReport['newValues']; wave: () => Iterable<WavePart> }> {
  const old = data.meta;
  const before = old.respondents;
  const added = table.rows;
  const rows = before + added;
  const oldWords = data.words;
  const words = bitsetWords(rows);
  const columns = new Map(table.columns.map((column) => [column.name, column]));
  const wasSkipped = new Set(old.skipped.map((entry) => entry.column));
  const known = new Set(old.variables.map((variable) => variable.name));
  if (old.id !== undefined) known.add(old.id.column);
  // A delimited multi-response column is no variable of its own.
  for (const variable of old.variables) for (const name of variable.multi?.source.columns ?? []) known.add(name);
  const unknown = table.columns.filter((column) => !known.has(column.name) && !wasSkipped.has(column.name)).map((column) => column.name);
  if (unknown.length > 0) {
    throw unfit(newRows, `has column${unknown.length > 1 ? 's' : ''} ${unknown.join(', ')} that ${dataset} does not have`, 'Drop them from the new rows, or build the whole dataset from all the rows with `crosstab build` to add a variable.', unknown[0]);
  }
  // A column left out of the dataset because it was blank would be a variable of a build of all the rows.
  const filled = old.skipped.find((entry) => entry.reason === 'every value is blank' && (columns.get(entry.column)?.dictionary.length ?? 0) > 0);
  if (filled) {
    throw unfit(newRows, `has answers in column ${filled.column}, which was blank for every respondent of ${dataset} and so is not a variable of it`, 'Build the whole dataset from all the rows with `crosstab build`, or leave the column blank in the new rows.', filled.column);
  }
  const skipped = skippedOverAll(dataset, newRows, old, columns, added);
  // The new respondents in order of the default weight among themselves (ties in input order).
  const order = weightOrder(table.weights[0]?.values, added).order;

  const newValues: AppendReport['newValues'] = [];
  const extended = old.variables.map((variable): Extended | ExtendedMulti => {
    if (variable.kind === 'multi') {
      const plan = extendMulti(dataset, newRows, variable, columns, order, before);
      if (plan.added.length > 0) newValues.push({ variable: variable.name, values: plan.added });
      return plan.extended;
    }
    const column = columns.get(variable.name);
    if (column === undefined) throw unfit(newRows, `has no column ${variable.name}, a variable of ${dataset}`, 'Give the new rows every column of the dataset (blank where a respondent has no answer).', variable.name);
    const plan = extendVariable(newRows, variable, column, order);
    if (plan.added.length > 0) newValues.push({ variable: variable.name, values: plan.added });
    return plan.extended;
  });

  // Views of the old buffers in kernel memory, used at once (nothing grows the memory in between): no copies.
  const oldBuffer = (row: number, bytes: number): Uint8Array => bytesAt(data.buffer(row).ptr, bytes);
  const oldWords32 = (row: number, count: number): Uint32Array => {
    const bytes = oldBuffer(row, count * 4);
    return new Uint32Array(bytes.buffer, bytes.byteOffset, count);
  };
  // The id texts of every input row, old then new (in the new file's order), checked unique across both.
  const idTexts = old.id === undefined ? undefined : await extendIds(dataset, newRows, format, old.id.column, oldBuffer(old.id.buffer, data.buffers[old.id.buffer]!.count), before, columns.get(old.id.column), added);

  const specs: BufferSpec[] = [];
  const add = (spec: BufferSpec): number => specs.push(spec) - 1;
  const weights = old.weights.map((weight) => ({ name: weight.name, buffer: add({ name: `weight:${weight.name}`, kind: BufferKind.weights, count: rows, bytes: words * 64 * 8 }) }));
  // As a build lays them out: the input rows and the id texts after the weights.
  const inputRows = old.inputRows === undefined ? undefined : add({ name: 'input-rows', kind: BufferKind.inputRows, count: rows, bytes: rows * 4 });
  const id = old.id === undefined ? undefined : { column: old.id.column, buffer: add({ name: `id:${old.id.column}`, kind: BufferKind.idTexts, count: idTexts!.byteLength, bytes: idTexts!.byteLength }) };
  for (const plan of extended) {
    if ('holders' in plan) {
      multiSpecs(plan.variable, add, words);
      continue;
    }
    const { variable } = plan;
    const width = variable.values.length <= 0xff ? 1 : variable.values.length <= 0xffff ? 2 : 4;
    variable.index = add({ name: `index:${variable.name}`, kind: width === 1 ? BufferKind.indexU8 : width === 2 ? BufferKind.indexU16 : BufferKind.indexU32, count: rows, bytes: words * 64 * width });
    if (variable.codes !== undefined) {
      variable.codes = variable.counts.map((count, rank) => {
        const dense = count * 4 >= words * 8;
        return add({ name: `code:${variable.name}=${variable.values[rank]}`, kind: dense ? BufferKind.dense : BufferKind.sparse, count, bytes: dense ? words * 8 : count * 4 });
      });
    }
    if (variable.atLeast !== undefined) {
      const atLeastCounts = variable.counts.slice();
      for (let rank = atLeastCounts.length - 2; rank >= 0; rank--) atLeastCounts[rank]! += atLeastCounts[rank + 1]!;
      variable.atLeast = atLeastCounts.map((count, rank) => add({ name: `atleast:${variable.name}>=${variable.values[rank]}`, kind: BufferKind.dense, count, bytes: words * 8 }));
    }
  }

  const weightValues = (name: string): Float64Array => {
    const k = old.weights.findIndex((weight) => weight.name === name);
    const values = new Float64Array(words * 64);
    const stored = oldBuffer(old.weights[k]!.buffer, before * 8);
    values.set(new Float64Array(stored.buffer, stored.byteOffset, before));
    const appended = table.weights[k]!.values;
    for (let j = 0; j < added; j++) values[before + j] = appended[order[j]!]!;
    return values;
  };
  const ranksOf = (plan: Extended): Uint32Array => {
    const ranks = new Uint32Array(rows);
    const stored = readIndex(oldBuffer(plan.old.index, oldWords * 64 * indexWidth(plan.old)), indexWidth(plan.old));
    for (let r = 0; r < before; r++) ranks[r] = plan.rankNow[stored[r]!]!;
    ranks.set(plan.appended, before);
    return ranks;
  };

  const meta: StoredMeta = {
    ...old,
    skipped,
    respondents: rows,
    weights: weights.map((weight, k) => ({ ...weight, ...(old.weights[k]!.calibration === undefined ? {} : { calibration: old.weights[k]!.calibration }) })),
    variables: extended.map((plan) => plan.variable),
    createdAt: new Date().toISOString(),
  };
  delete meta.design;
  // The input order: the old respondents' rows, then the new file's rows after them (a build
  // of the old input followed by the new rows numbers them so). A dataset of an earlier build
  // keeps none, and neither does its extension: `crosstab export` refuses it.
  if (inputRows === undefined) delete meta.inputRows;
  else meta.inputRows = inputRows;
  if (id === undefined) delete meta.id;
  else meta.id = id;
  if (old.design !== undefined) {
    // The design's counts (strata, PSUs) and checks (nesting, fpc, replicate rank) over every respondent.
    const options = designOptions(old.design);
    const degf = old.design.replicates === undefined ? undefined : replicateDegf(dataset, old.design.replicates, before, rows, weightValues);
    if (degf?.keep === true) options.degf = old.design.replicates!.degf;
    const design = declareDesign(meta, options, (variable) => ranksOf(extended.find((plan) => plan.variable.name === variable.name) as Extended), weightValues);
    // Of an earlier build whose degrees of freedom are its rank's: given or not, unknown still.
    if (degf?.given === undefined && design?.replicates !== undefined) delete design.replicates.degfGiven;
    if (design) meta.design = design;
  }

  // Buffers extended in place (StoredExtension): the old respondents' bytes are read once, from the file, where the writer writes the new buffer.
  let stored!: StoredExtension;
  const bitsKeep = Math.ceil(before / 32) * 4;
  const bitsSame = Math.floor(before / 32) * 4;
  const words32 = (bytes: Uint8Array): Uint32Array => new Uint32Array(bytes.buffer, bytes.byteOffset, bytes.byteLength / 4);

  function* buffers(): Generator<Uint8Array | PlacedBuffer> {
    stored = new StoredExtension(kernel, data, trace);
    try {
      for (let k = 0; k < old.weights.length; k++) {
        const appended = table.weights[k]!.values;
        yield stored.extend(old.weights[k]!.buffer, before * 8, before * 8, paddedSize(words * 64 * 8), (bytes) => {
          const values = new Float64Array(bytes.buffer, bytes.byteOffset, words * 64);
          for (let j = 0; j < added; j++) values[before + j] = appended[order[j]!]!;
        });
      }
      if (inputRows !== undefined) {
        yield stored.extend(old.inputRows!, before * 4, before * 4, paddedSize(rows * 4), (bytes) => {
          const rowOf = words32(bytes);
          for (let j = 0; j < added; j++) rowOf[before + j] = before + order[j]!;
        });
      }
      if (idTexts !== undefined) yield idTexts;
      for (const plan of extended) yield* 'holders' in plan ? multiVariableBuffers(plan, specs, words, oldWords, (row) => data.buffers[row]!.kind, oldWords32) : variableBuffers(plan);
      // Any old buffer not extended here (none, as the dataset is laid out) is checked all the same.
      for (let row = 0; row < data.buffers.length; row++) if (!stored.checked.has(row)) data.buffer(row);
      // The buffers were read without a look at the files' stamps each (their hashes held): once here, after the last.
      data.checkUnchanged();
    } finally {
      stored.dispose();
    }
  }

  // The loops over respondents are small functions of their own (remapRanks, setBits, byRankOf,
  // setBitsFrom, orWords): this generator runs once per buffer and stays cheap for V8 to
  // compile, where its loops inlined made it optimized again and again (about a second of
  // compiler time on a loaded machine for the ACS).
  function* variableBuffers(plan: Extended): Generator<Uint8Array | PlacedBuffer> {
    const { variable, old: was, rankNow, oldRank, appended } = plan;
    const width = specs[variable.index]!.bytes / (words * 64);
    const oldWidth = indexWidth(was);
    const identity = oldWidth === width && isIdentity(rankNow);
    if (oldWidth === width) {
      // The old ranks kept (or renumbered where they are) and the new respondents' after them.
      yield stored.extend(was.index, before * width, identity ? before * width : 0, paddedSize(words * 64 * width), (bytes) => {
        const target = readIndex(bytes, width);
        if (!identity) remapRanks(target, target, rankNow, before);
        target.set(appended, before);
      });
    } else {
      const index = new Uint8Array(words * 64 * width);
      const target = readIndex(index, width);
      remapRanks(target, readIndex(oldBuffer(was.index, oldWords * 64 * oldWidth), oldWidth), rankNow, before);
      target.set(appended, before);
      yield index;
    }
    // The new respondents by rank (a counting sort): each container then sets its own, not all of them.
    const { start, byRank } = byRankOf(appended, variable.values.length, before);
    const ofRank = (rank: number): Uint32Array => byRank.subarray(start[rank]!, start[rank + 1]!);
    if (variable.codes !== undefined) {
      for (let rank = 1; rank <= variable.values.length; rank++) {
        const spec = specs[variable.codes[rank - 1]!]!;
        const from = oldRank[rank]!;
        const oldRow = from > 0 ? was.codes![from - 1]! : -1;
        const oldKind = oldRow >= 0 ? data.buffers[oldRow]!.kind : undefined;
        const oldCount = from > 0 ? was.counts[from - 1]! : 0;
        const added = ofRank(rank);
        if (spec.kind === BufferKind.dense && oldKind !== BufferKind.sparse) {
          // The old respondents' bits as they are, the new ones' set after them.
          yield stored.extend(oldKind === undefined ? undefined : oldRow, bitsKeep, bitsSame, paddedSize(words * 8), (bytes) => setBits(words32(bytes), added));
        } else if (spec.kind === BufferKind.sparse && oldKind !== BufferKind.dense) {
          // The old respondents' list as it is, the new ones' after it.
          yield stored.extend(oldKind === undefined ? undefined : oldRow, oldCount * 4, oldCount * 4, paddedSize(spec.count * 4), (bytes) => words32(bytes).set(added, oldCount));
        } else {
          // The container changes kind (a list becomes bits, or bits a list).
          yield mergedContainer(spec, words, oldKind === undefined ? undefined : { kind: oldKind, words32: oldWords32(oldRow, oldKind === BufferKind.dense ? oldWords * 2 : oldCount) }, added);
        }
      }
    }
    if (variable.atLeast !== undefined) {
      // The new respondents of rank `rank` or more, as the words of the bitset from word
      // before/32 on: every one with a value for rank 1, then those of each rank taken out
      // after its container is made (the writer makes a buffer before it asks for the next).
      const first = before >>> 5;
      const tail = new Uint32Array(words * 2 - first);
      setBitsFrom(tail, byRank.subarray(start[1]!, start[variable.values.length + 1]!), first * 32);
      for (let rank = 1; rank <= variable.values.length; rank++) {
        // Old respondents of rank `rank` or more now: those of the first old rank that maps there or above.
        const from = firstRankAtLeast(rankNow, rank);
        yield stored.extend(from > 0 ? was.atLeast![from - 1]! : undefined, bitsKeep, bitsSame, paddedSize(words * 8), (bytes) => orWords(words32(bytes), first, tail));
        clearBitsFrom(tail, ofRank(rank), first * 32);
      }
    }
  }

  // The wave's part of each buffer (a dataset in segments): its respondents alone, numbered from the wave's first.
  const waveWords = bitsetWords(added);
  // The wave's parts all live until the segment is written: carved from one arena, not allocated one by one.
  const arena = new ByteArena();
  const asBytes = (words: Uint32Array | Float64Array): Uint8Array => new Uint8Array(words.buffer, words.byteOffset, words.byteLength);
  /** `local` as a buffer of the wave; `held`: the same respondents as a bitset of waveWords (copied when dense). */
  const container = (name: string, local: Uint32Array, from: number | undefined, held?: Uint32Array): WavePart => {
    const count = local.length;
    if (count === 0) return { name, from };
    if (!isDense(count, waveWords)) {
      const list = arena.words32(count);
      list.set(local);
      return { name, from, spec: { name, kind: BufferKind.sparse, count, bytes: count * 4 }, bytes: asBytes(list) };
    }
    const bits = arena.words32(waveWords * 2);
    if (held === undefined) setBits(bits, local);
    else bits.set(held);
    return { name, from, spec: { name, kind: BufferKind.dense, count, bytes: waveWords * 8 }, bytes: asBytes(bits) };
  };
  const local = (respondents: Uint32Array): Uint32Array => respondents.map((respondent) => respondent - before);

  function* waveParts(): Generator<WavePart> {
    for (let k = 0; k < old.weights.length; k++) {
      const values = arena.floats64(waveWords * 64);
      const appended = table.weights[k]!.values;
      for (let j = 0; j < added; j++) values[j] = appended[order[j]!]!;
      const name = specs[weights[k]!.buffer]!.name;
      yield { name, from: old.weights[k]!.buffer, spec: { name, kind: BufferKind.weights, count: added, bytes: waveWords * 64 * 8 }, bytes: asBytes(values) };
    }
    if (inputRows !== undefined) {
      const rowOf = arena.words32(added);
      for (let j = 0; j < added; j++) rowOf[j] = before + order[j]!;
      const name = specs[inputRows]!.name;
      yield { name, from: old.inputRows!, spec: { name, kind: BufferKind.inputRows, count: added, bytes: added * 4 }, bytes: asBytes(rowOf) };
    }
    if (idTexts !== undefined) {
      // The wave's offsets from its first text, then its texts.
      const offsets = new Uint32Array(idTexts.buffer, idTexts.byteOffset, rows + 1);
      const start = offsets[before]!;
      const text = idTexts.subarray((rows + 1) * 4 + start);
      const bytes = arena.take((added + 1) * 4 + text.byteLength);
      const own = new Uint32Array(bytes.buffer, bytes.byteOffset, added + 1);
      for (let j = 0; j <= added; j++) own[j] = offsets[before + j]! - start;
      bytes.set(text, (added + 1) * 4);
      const name = specs[id!.buffer]!.name;
      yield { name, from: old.id!.buffer, spec: { name, kind: BufferKind.idTexts, count: bytes.byteLength, bytes: bytes.byteLength }, bytes };
    }
    for (const plan of extended) {
      if ('holders' in plan) {
        const { variable, old: was, oldRank, holders, noAnswer } = plan;
        for (let rank = 1; rank <= variable.values.length; rank++) {
          const from = oldRank[rank]!;
          yield container(specs[variable.codes![rank - 1]!]!.name, local(holders[rank - 1]!), from > 0 ? was.codes![from - 1]! : undefined);
        }
        yield container(specs[variable.multi!.noAnswer]!.name, local(noAnswer), was.multi!.noAnswer);
        continue;
      }
      const { variable, old: was, rankNow, oldRank, appended } = plan;
      const index = specs[variable.index]!;
      const width = index.bytes / (words * 64);
      const ranks = arena.take(waveWords * 64 * width);
      readIndex(ranks, width).set(appended);
      yield { name: index.name, from: was.index, ...(isIdentity(rankNow) ? {} : { rankNow }), spec: { name: index.name, kind: index.kind, count: added, bytes: ranks.byteLength }, bytes: ranks };
      const { start, byRank } = byRankOf(appended, variable.values.length, 0);
      const ofRank = (rank: number): Uint32Array => byRank.subarray(start[rank]!, start[rank + 1]!);
      if (variable.codes !== undefined) {
        for (let rank = 1; rank <= variable.values.length; rank++) {
          const from = oldRank[rank]!;
          yield container(specs[variable.codes[rank - 1]!]!.name, ofRank(rank), from > 0 ? was.codes![from - 1]! : undefined);
        }
      }
      if (variable.atLeast !== undefined) {
        // The wave's respondents of rank `rank` or more: every one with a value, then those of each rank taken out after it.
        // One list for every rank (container copies what it keeps); a dense rank's buffer is `tail` itself, not listed.
        const tail = new Uint32Array(waveWords * 2);
        const last = variable.values.length + 1;
        setBits(tail, byRank.subarray(start[1]!, start[last]!));
        const lists = new Uint32Array(start[last]! - start[1]!);
        for (let rank = 1; rank <= variable.values.length; rank++) {
          const from = firstRankAtLeast(rankNow, rank);
          const count = start[last]! - start[rank]!;
          const atLeast = lists.subarray(0, count);
          const dense = count > 0 && isDense(count, waveWords);
          if (!dense) listBits(atLeast, 0, tail, 0);
          yield container(specs[variable.atLeast[rank - 1]!]!.name, atLeast, from > 0 ? was.atLeast![from - 1]! : undefined, dense ? tail : undefined);
          clearBitsFrom(tail, ofRank(rank), 0);
        }
      }
    }
  }

  return { dataset: { meta, specs, data: buffers }, newValues, wave: waveParts };
}

/** Whether every old rank keeps its number (no new value sorts between old ones). */
function isIdentity(rankNow: Uint32Array): boolean {
  for (let r = 1; r < rankNow.length; r++) if (rankNow[r] !== r) return false;
  return true;
}

/** ORs `from` into `bits` starting at word `at`. */
function orWords(bits: Uint32Array, at: number, from: Uint32Array): void {
  for (let w = 0; w < from.length; w++) bits[at + w]! |= from[w]!;
}

/**
 * The new respondents (numbered from `before`) grouped by rank, a counting sort of their
 * ranks `appended`: those of rank `rank` are byRank[start[rank] .. start[rank + 1]).
 */
function byRankOf(appended: Uint32Array, values: number, before: number): { start: Uint32Array; byRank: Uint32Array } {
  const added = appended.length;
  const start = new Uint32Array(values + 2);
  for (let j = 0; j < added; j++) start[appended[j]! + 1]!++;
  for (let rank = 1; rank < start.length; rank++) start[rank]! += start[rank - 1]!;
  const byRank = new Uint32Array(added);
  const next = start.slice(0, -1);
  for (let j = 0; j < added; j++) byRank[next[appended[j]!]!++] = before + j;
  return { start, byRank };
}

/** Sets the bits of `respondents` in a bitset of 32-bit words whose first is that of respondent `base` (a multiple of 32). */
function setBitsFrom(bits: Uint32Array, respondents: Uint32Array, base: number): void {
  for (let i = 0; i < respondents.length; i++) {
    const at = respondents[i]! - base;
    bits[at >>> 5]! |= 1 << (at & 31);
  }
}

/** Clears the bits of `respondents` in a bitset of 32-bit words whose first is that of respondent `base` (a multiple of 32). */
function clearBitsFrom(bits: Uint32Array, respondents: Uint32Array, base: number): void {
  for (let i = 0; i < respondents.length; i++) {
    const at = respondents[i]! - base;
    bits[at >>> 5]! &= ~(1 << (at & 31));
  }
}

/** The first old rank whose rank now is `rank` or more (0: none). */
function firstRankAtLeast(rankNow: Uint32Array, rank: number): number {
  for (let r = 1; r < rankNow.length; r++) if (rankNow[r]! >= rank) return r;
  return 0;
}

/**
 * The id column's buffer of the extended dataset: (rows + 1) u32 offsets, then the UTF-8
 * texts of the old input rows followed by the new file's, in its order. Every new row needs
 * an id, and none may be another's, old or new: the refusal names the id and where it is.
 */
async function extendIds(dataset: string, newRows: string, format: string, name: string, stored: Uint8Array, before: number, column: RawColumn | undefined, added: number): Promise<Uint8Array> {
  if (column === undefined) throw unfit(newRows, `has no column ${name}, the respondent id column of ${dataset}`, `Give every new respondent its id in column ${name}.`, name);
  const oldOffsets = new Uint32Array(stored.buffer, stored.byteOffset, before + 1);
  const oldText = stored.subarray((before + 1) * 4);
  const encoded = column.dictionary.map((text) => Buffer.from(text, 'utf8'));
  // The new ids by text, each at its first row: a repeat among them is refused at its second row.
  const rowOfId = new Int32Array(column.dictionary.length + 1).fill(-1);
  let textBytes = 0;
  for (let row = 0; row < added; row++) {
    const k = column.ids[row]!;
    if (k === 0) throw await idError(newRows, format, row, name, `column ${name} (the respondent id) is blank`, `Every respondent needs an id: fill it in.`);
    if (rowOfId[k] !== -1) {
      throw await idError(newRows, format, row, name, `the id ${JSON.stringify(column.dictionary[k - 1])} of column ${name} is also the id of ${await placeText(newRows, format, rowOfId[k]!)}`, 'An id identifies one respondent: make the ids unique.');
    }
    rowOfId[k] = row;
    textBytes += encoded[k - 1]!.byteLength;
  }
  const newIds = new Map(column.dictionary.map((text, i) => [text, i + 1]));
  const decoder = new TextDecoder();
  for (let row = 0; row < before; row++) {
    const text = decoder.decode(oldText.subarray(oldOffsets[row]!, oldOffsets[row + 1]!));
    const k = newIds.get(text);
    if (k !== undefined && rowOfId[k] !== -1) {
      throw await idError(newRows, format, rowOfId[k]!, name, `the id ${JSON.stringify(text)} of column ${name} is already the id of a respondent of ${dataset} (its input row ${row + 1})`, `An id identifies one respondent: a wave brings new respondents; give this one another id, or leave out a row ${dataset} already holds.`);
    }
  }
  const rows = before + added;
  const oldTextBytes = oldOffsets[before]!;
  const bytes = new Uint8Array((rows + 1) * 4 + oldTextBytes + textBytes);
  const offsets = new Uint32Array(bytes.buffer, 0, rows + 1);
  offsets.set(oldOffsets);
  bytes.set(oldText.subarray(0, oldTextBytes), (rows + 1) * 4);
  let at = oldTextBytes;
  for (let row = 0; row < added; row++) {
    const text = encoded[column.ids[row]! - 1]!;
    bytes.set(text, (rows + 1) * 4 + at);
    at += text.byteLength;
    offsets[before + row + 1] = at;
  }
  return bytes;
}

/** An invalid_input error at data row `row` (0-based) of the new rows: file:line for a CSV, the row for a typed file. */
async function idError(file: string, format: string, row: number, field: string, what: string, hint: string): Promise<CrosstabError> {
  const place = await placeOf(file, format, row);
  return placedError(file, place, what, hint, { field });
}

async function placeText(file: string, format: string, row: number): Promise<string> {
  const place = await placeOf(file, format, row);
  return place !== undefined && 'line' in place ? `line ${place.line}` : `row ${row + 1}`;
}

/**
 * Where data row `row` (0-based) of an input is: a CSV's physical line (found again on this
 * error path, counting the line breaks inside quoted fields), a typed file's row (1-based).
 */
async function placeOf(file: string, format: string, row: number): Promise<Place> {
  if (format !== 'csv') return { row: row + 1 };
  let bytes: Uint8Array = await readFile(file);
  if (bytes[0] === 0x1f && bytes[1] === 0x8b) bytes = gunzipSync(bytes);
  // Record 0 is the header; a record ends at a line break outside quotes.
  let record = 0;
  let line = 1;
  let quoted = false;
  for (let i = 0; i < bytes.length && record < row + 1; i++) {
    const byte = bytes[i]!;
    if (byte === 0x22) quoted = !quoted;
    else if (byte === 0x0a || byte === 0x0d) {
      if (byte === 0x0d && bytes[i + 1] === 0x0a) i++;
      line++;
      if (!quoted) record++;
    }
  }
  return { line };
}

function indexWidth(variable: StoredVariable): number {
  return variable.values.length <= 0xff ? 1 : variable.values.length <= 0xffff ? 2 : 4;
}

/** The dataset's values and the new rows' merged in sorted order, and the ranks of each. */
function extendVariable(newRows: string, variable: StoredVariable, column: RawColumn, order: Uint32Array): { extended: Extended; added: string[] } {
  const numeric = variable.kind === 'numeric';
  let oldNumbers: Float64Array | undefined;
  if (numeric) {
    const text = column.dictionary.find((value) => !isNumberText(value));
    if (text !== undefined) {
      throw unfit(newRows, `column ${variable.name} holds ${JSON.stringify(text)}, but ${variable.name} is numeric in the dataset`, 'Fix the value (a number, or blank), or build the whole dataset from all the rows with `crosstab build` to make the variable text.', variable.name);
    }
    // A build of all the rows would make the variable text (two numbers reading as one float would answer together).
    const problem = waveNumberProblem(variable.values, (oldNumbers = Float64Array.from(variable.values, Number)), column.dictionary);
    if (problem !== undefined) {
      throw unfit(newRows, `column ${variable.name} cannot stay numeric with the new rows: ${problem}`, 'Write the value as the dataset does, or build the whole dataset from all the rows with `crosstab build` (it makes the variable text).', variable.name);
    }
  }
  const { merged, added, rankNow, rankOfId } = mergedRanks(variable.values, column.dictionary, numeric, oldNumbers);
  if (variable.codes !== undefined && merged.length > AXIS_LIMIT) {
    throw unfit(newRows, `brings ${variable.name} to ${merged.length} distinct values, more than the ${AXIS_LIMIT} a variable listed value by value holds`, 'Build the whole dataset from all the rows with `crosstab build`.', variable.name);
  }
  if (variable.atLeast !== undefined && merged.length > RANGE_INDEX_LIMIT) {
    throw unfit(newRows, `brings ${variable.name} to ${merged.length} distinct values, more than the ${RANGE_INDEX_LIMIT} of its range index`, 'Build the whole dataset from all the rows with `crosstab build`, without a range index on it.', variable.name);
  }
  const oldRank = new Uint32Array(merged.length + 1);
  for (let rank = 1; rank < rankNow.length; rank++) oldRank[rankNow[rank]!] = rank;
  const counts = new Array<number>(merged.length).fill(0);
  variable.counts.forEach((count, i) => (counts[rankNow[i + 1]! - 1] = count));
  const { appended, blank } = waveRanks(column.ids, order, rankOfId, counts);
  const missing = variable.missing + blank;
  const extended: StoredVariable = { ...variable, values: merged, counts, missing };
  const valueLabels = { ...column.valueLabels, ...variable.valueLabels };
  if (Object.keys(valueLabels).length > 0) extended.valueLabels = valueLabels;
  return { extended: { variable: extended, old: variable, rankNow, oldRank, appended }, added };
}

/**
 * The new respondents' ranks in their stored order (`order[j]` is the row stored j-th), each
 * counted in `counts` (by rank − 1); `blank`: how many have none. A function of its own, so
 * that its loop over the rows is compiled small.
 */
function waveRanks(ids: RowIds, order: Uint32Array, rankOfId: Uint32Array, counts: number[]): { appended: Uint32Array; blank: number } {
  const appended = new Uint32Array(order.length);
  let blank = 0;
  for (let j = 0; j < order.length; j++) {
    const rank = rankOfId[ids[order[j]!]!]!;
    appended[j] = rank;
    if (rank === 0) blank++;
    else counts[rank - 1]!++;
  }
  return { appended, blank };
}

/**
 * A multi-response variable of the extended dataset: its values with the wave's new ones, and
 * the new respondents holding each value (a respondent may hold several) or no answer.
 */
interface ExtendedMulti {
  variable: StoredVariable;
  old: StoredVariable;
  /** Rank now → old rank (0: a value the old respondents do not have). */
  oldRank: Uint32Array;
  /** Per rank now (index rank − 1): the new respondents holding the value, ascending. */
  holders: Uint32Array[];
  /** The new respondents blank in every column of the variable. */
  noAnswer: Uint32Array;
}

/**
 * Encodes the new rows' answers to a multi-response variable with the dataset's definition
 * of it (its columns, counted value or delimiter: a wave's own sets are not consulted), the
 * new respondents in their stored order (`order[j]` is the row stored as respondent before + j).
 */
function extendMulti(dataset: string, newRows: string, variable: StoredVariable, columns: ReadonlyMap<string, RawColumn>, order: Uint32Array, before: number): { extended: ExtendedMulti; added: string[] } {
  const wave = planMultiWave(variable, columns, newRows, dataset);
  const { values, rankNow, members } = wave;
  const oldRank = new Uint32Array(values.length + 1);
  for (let rank = 1; rank < rankNow.length; rank++) oldRank[rankNow[rank]!] = rank;
  // Two passes over the wave: how many respondents hold each value, then who.
  const heldBy = new Uint32Array(values.length + 1);
  let unanswered = 0;
  const visit = (each: (rank: number, j: number) => void, none: (j: number) => void) => eachAnswer(members, order, values.length, each, none);
  visit((rank) => heldBy[rank]!++, () => unanswered++);
  const holders = Array.from({ length: values.length }, (_, i) => new Uint32Array(heldBy[i + 1]!));
  const filled = new Uint32Array(values.length + 1);
  const noAnswer = new Uint32Array(unanswered);
  let noAnswers = 0;
  visit(
    (rank, j) => (holders[rank - 1]![filled[rank]!++] = before + j),
    (j) => (noAnswer[noAnswers++] = before + j),
  );
  const counts = values.map((_, i) => (oldRank[i + 1]! > 0 ? variable.counts[oldRank[i + 1]! - 1]! : 0) + heldBy[i + 1]!);
  const extended: StoredVariable = { ...variable, values, counts, missing: variable.missing + unanswered, multi: { ...variable.multi!, numeric: wave.numeric } };
  const valueLabels = { ...wave.valueLabels, ...variable.valueLabels };
  if (Object.keys(valueLabels).length > 0) extended.valueLabels = valueLabels;
  return { extended: { variable: extended, old: variable, oldRank, holders, noAnswer }, added: wave.added };
}

/**
 * A code's container in the kind `spec` takes (bits of `words` 64-bit words, or a sorted list):
 * the old container's respondents (its bits or its list; none for a new code), then `added`,
 * who all come after them.
 */
function mergedContainer(spec: BufferSpec, words: number, old: { kind: BufferKind; words32: Uint32Array } | undefined, added: Uint32Array): Uint8Array {
  if (spec.kind === BufferKind.dense) {
    const bits = new Uint32Array(words * 2);
    if (old?.kind === BufferKind.dense) bits.set(old.words32);
    else if (old?.kind === BufferKind.sparse) for (const respondent of old.words32) bits[respondent >>> 5]! |= 1 << (respondent & 31);
    for (const respondent of added) bits[respondent >>> 5]! |= 1 << (respondent & 31);
    return new Uint8Array(bits.buffer);
  }
  const list = new Uint32Array(spec.count);
  let at = 0;
  if (old?.kind === BufferKind.sparse) {
    list.set(old.words32);
    at = old.words32.length;
  } else if (old?.kind === BufferKind.dense) {
    const bits = old.words32;
    for (let w = 0; w < bits.length; w++) {
      for (let word = bits[w]!; word !== 0; word &= word - 1) list[at++] = w * 32 + (31 - Math.clz32(word & -word));
    }
  }
  list.set(added, at);
  return new Uint8Array(list.buffer);
}

/** The buffer specs of a multi-response variable, as a build lays them out: one container per value, then its no-answer respondents'. */
function multiSpecs(variable: StoredVariable, add: (spec: BufferSpec) => number, words: number): void {
  const container = (name: string, count: number): BufferSpec =>
    isDense(count, words) ? { name, kind: BufferKind.dense, count, bytes: words * 8 } : { name, kind: BufferKind.sparse, count, bytes: count * 4 };
  variable.codes = variable.counts.map((count, rank) => add(container(`code:${variable.name}=${variable.values[rank]}`, count)));
  variable.multi = { ...variable.multi!, noAnswer: add(container(`na:${variable.name}`, variable.missing)) };
}

/**
 * A multi-response variable's containers: each value's old respondents (its old container,
 * dense or a list) with the new ones holding it, in the kind its count now takes.
 */
function* multiVariableBuffers(
  plan: ExtendedMulti,
  specs: BufferSpec[],
  words: number,
  oldWords: number,
  kindOf: (row: number) => BufferKind,
  oldWords32: (row: number, count: number) => Uint32Array,
): Generator<Uint8Array> {
  const { variable, old, oldRank, holders, noAnswer } = plan;
  const container = (row: number, oldRow: number, oldCount: number, added: Uint32Array): Uint8Array => {
    const oldKind = oldRow >= 0 ? kindOf(oldRow) : undefined;
    return mergedContainer(specs[row]!, words, oldKind === undefined ? undefined : { kind: oldKind, words32: oldWords32(oldRow, oldKind === BufferKind.dense ? oldWords * 2 : oldCount) }, added);
  };
  for (let rank = 1; rank <= variable.values.length; rank++) {
    const from = oldRank[rank]!;
    yield container(variable.codes![rank - 1]!, from > 0 ? old.codes![from - 1]! : -1, from > 0 ? old.counts[from - 1]! : 0, holders[rank - 1]!);
  }
  yield container(variable.multi!.noAnswer, old.multi!.noAnswer, old.missing, noAnswer);
}

/**
 * Whether the replicate design's degrees of freedom are kept (given at build: a build of all
 * the rows with the same --degf keeps them) or counted again over every row (the rank of the
 * replicate weights − 1, as a build of all the rows counts it). A dataset of an earlier build
 * does not say which: degrees of freedom other than its rows' rank − 1 were given; equal to it,
 * they are the same either way unless the new rows change the rank, and then the append is
 * refused rather than guess.
 */
function replicateDegf(dataset: string, replicates: NonNullable<StoredDesign['replicates']>, before: number, rows: number, weightValues: (name: string) => Float64Array): { keep: boolean; given: boolean | undefined } {
  if (replicates.degfGiven !== undefined) return { keep: replicates.degfGiven, given: replicates.degfGiven };
  const columns = replicates.weights.map(weightValues);
  const oldDefault = replicateRank(columns, before) - 1;
  if (replicates.degf !== oldDefault) return { keep: true, given: true };
  const now = replicateRank(columns, rows) - 1;
  if (now !== oldDefault) {
    throw new CrosstabError(
      ErrorCode.invalidInput,
      `${dataset}: its replicate design has ${replicates.degf} degrees of freedom, the rank of its replicate weights − 1, which the new rows make ${now}; the dataset was built by an earlier version, which did not record whether they were given (--degf) or counted`,
      { file: dataset, field: 'degf', hint: `Build the whole dataset from all the rows with \`crosstab build\` (with --degf ${replicates.degf} if it was given), or append to a dataset built by this version.` },
    );
  }
  return { keep: false, given: undefined };
}

function designOptions(design: NonNullable<StoredMeta['design']>): DesignOptions {
  const options: DesignOptions = {};
  if (design.strata !== undefined) options.strata = design.strata;
  if (design.psu !== undefined) options.psu = design.psu;
  if (design.nest === true) options.nest = true;
  if (design.fpc !== undefined) options.fpc = design.fpc;
  const replicates = design.replicates;
  if (replicates) {
    Object.assign(options, { replicateWeights: replicates.weights, replicateType: replicates.type, scale: replicates.scale, rscales: replicates.rscales, mse: replicates.mse });
    if (replicates.rho !== undefined) options.rho = replicates.rho;
  }
  return options;
}
