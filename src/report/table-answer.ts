/**
 * A table and its statistics written as one answer (JSON, CSV or an XLSX workbook) into a
 * byte buffer that never grows past a limit: JSON is written piece by piece (an array
 * element at a time), never as one string, so no answer meets the engine's longest string;
 * one that would pass `maxBytes` stops as soon as it does (`invalid_option`, field
 * `limits.answerBytes`). What renderTable() runs on a worker thread.
 */
import { CrosstabError, ErrorCode } from '../errors.js';
import type { TableResult } from '../facade/types.js';
import type { DisplayOptions } from './display.js';
import type { StatisticsLimits } from './statistics-limits.js';
import { tableToCSV } from './table-csv.js';
import { tableToJSON } from './table-json.js';
import { tableStatistics, type TableStatisticsOptions } from './table-statistics.js';
import { tableToXLSX } from './table-xlsx.js';
import { formatNumber } from '../text/number-text.js';

export type TableAnswerFormat = 'json' | 'csv' | 'xlsx' | 'pptx';

/** What to write: the statistics and their limits, the format, and for JSON the text around the table. */
export interface TableAnswerOptions {
  /** Statistics as tableStatistics() takes them; none when absent or empty. */
  statistics?: TableStatisticsOptions;
  format: TableAnswerFormat;
  /** XLSX and PPTX: the title and variable labels. */
  display?: DisplayOptions;
  /** JSON: text written before and after the table document (an envelope such as `{"Table":` and `}`). */
  jsonPrefix?: string;
  jsonSuffix?: string;
  /** Most bytes of the answer; default unbounded. */
  maxBytes?: number;
  /** The statistics' work limits (TableStatisticsOptions.limits). */
  limits?: StatisticsLimits;
}

/** A byte buffer that grows by doubling up to a limit. */
class BoundedBytes {
  private bytes = new Uint8Array(64 * 1024);
  length = 0;
  constructor(private readonly max: number) {}

  write(text: string | Uint8Array): void {
    const add = typeof text === 'string' ? Buffer.byteLength(text) : text.byteLength;
    if (this.length + add > this.max) throw tooLarge(this.max);
    if (this.length + add > this.bytes.length) {
      let size = this.bytes.length;
      while (size < this.length + add) size *= 2;
      const grown = new Uint8Array(Math.min(size, Math.max(this.max, this.length + add)));
      grown.set(this.bytes.subarray(0, this.length));
      this.bytes = grown;
    }
    if (typeof text === 'string') this.length += Buffer.from(this.bytes.buffer, this.bytes.byteOffset + this.length, add).write(text, 'utf8');
    else {
      this.bytes.set(text, this.length);
      this.length += add;
    }
  }

  /** The written bytes in a buffer of their own (transferable). */
  take(): Uint8Array {
    return this.bytes.slice(0, this.length);
  }
}

function tooLarge(max: number): CrosstabError {
  return new CrosstabError(ErrorCode.invalidOption, `the answer would be larger than ${formatNumber(max, 0)} bytes`, {
    field: 'limits.answerBytes',
    limit: max,
    hint: 'Ask for fewer cells (fewer rows or columns), fewer statistics, or the CSV or XLSX format instead of JSON.',
  });
}

/** Text pieces of about this many characters are encoded at once. */
const PIECE = 1 << 20;

/**
 * `value` as JSON.stringify writes it, in pieces of about PIECE characters: each element of a
 * top-level array (and each row of `cells`) is stringified on its own, so no string holds the
 * whole document.
 */
function* jsonPieces(value: Record<string, unknown>): Generator<string> {
  let pending = '{';
  let first = true;
  for (const [key, field] of Object.entries(value)) {
    if (field === undefined) continue;
    pending += `${first ? '' : ','}${JSON.stringify(key)}:`;
    first = false;
    if (Array.isArray(field)) {
      pending += '[';
      for (let i = 0; i < field.length; i++) {
        pending += (i > 0 ? ',' : '') + (JSON.stringify(field[i]) ?? 'null');
        if (pending.length >= PIECE) {
          yield pending;
          pending = '';
        }
      }
      pending += ']';
    } else {
      pending += JSON.stringify(field);
    }
    if (pending.length >= PIECE) {
      yield pending;
      pending = '';
    }
  }
  yield `${pending}}`;
}

/** `text` in pieces of at most PIECE characters, never between the two halves of a surrogate pair. */
function* textPieces(text: string): Generator<string> {
  for (let at = 0; at < text.length; ) {
    let end = Math.min(text.length, at + PIECE);
    if (end < text.length && (text.charCodeAt(end - 1) & 0xfc00) === 0xd800) end--;
    yield text.slice(at, end);
    at = end;
  }
}

/**
 * A JSON or CSV answer ready to be written, as many times as asked: its statistics computed
 * and checked against their limits, its text produced piece by piece on each pass (so the
 * answer is never held whole), and its exact size in bytes.
 */
export interface TextAnswer {
  readonly byteLength: number;
  /** The answer's text, in pieces (the same every pass). */
  pieces(): Iterable<string>;
}

function statisticsOf(result: TableResult, options: TableAnswerOptions) {
  const wanted = options.statistics?.stats;
  return options.statistics === undefined || (Array.isArray(wanted) && wanted.length === 0)
    ? undefined
    : tableStatistics(result, { ...options.statistics, ...(options.limits === undefined ? {} : { limits: options.limits }) });
}

/**
 * A JSON or CSV answer (TextAnswer) after its statistics; throws CrosstabError `invalid_option`
 * naming `limits.comparisons`, `limits.raoScottCovariance` or `limits.answerBytes` (counted
 * before a byte is sent) when the request asks more than they allow.
 */
export function prepareTextAnswer(result: TableResult, options: TableAnswerOptions): TextAnswer {
  if (options.format !== 'json' && options.format !== 'csv') throw new CrosstabError(ErrorCode.invalidOption, `a ${options.format} answer is written whole (writeTableAnswer)`);
  const statistics = statisticsOf(result, options);
  let pieces: () => Iterable<string>;
  if (options.format === 'csv') {
    const text = tableToCSV(result, statistics);
    pieces = () => textPieces(text);
  } else {
    const document = tableToJSON(result, statistics) as unknown as Record<string, unknown>;
    const { jsonPrefix, jsonSuffix } = options;
    pieces = function* () {
      if (jsonPrefix !== undefined) yield jsonPrefix;
      yield* jsonPieces(document);
      if (jsonSuffix !== undefined) yield jsonSuffix;
    };
  }
  const max = options.maxBytes ?? Number.MAX_SAFE_INTEGER;
  let byteLength = 0;
  for (const piece of pieces()) {
    byteLength += Buffer.byteLength(piece);
    if (byteLength > max) throw tooLarge(max);
  }
  return { byteLength, pieces };
}

/**
 * The statistics (checked against their limits first) and the answer's bytes. Throws
 * CrosstabError `invalid_option` naming `limits.comparisons`, `limits.raoScottCovariance`
 * or `limits.answerBytes` when the request asks more than they allow.
 */
export async function writeTableAnswer(result: TableResult, options: TableAnswerOptions): Promise<Uint8Array> {
  const out = new BoundedBytes(options.maxBytes ?? Number.MAX_SAFE_INTEGER);
  if (options.format === 'xlsx') {
    out.write(await tableToXLSX(result, statisticsOf(result, options), options.display ?? {}));
    return out.take();
  }
  if (options.format === 'pptx') {
    const statistics = statisticsOf(result, options);
    if (statistics?.columnPct === undefined) throw new CrosstabError(ErrorCode.invalidOption, 'a deck charts the vertical % (vpct), which these statistics do not hold', { field: 'stats', hint: 'Add vpct to the statistics.' });
    const { tablesToPPTX } = await import('./table-pptx.js');
    out.write(await tablesToPPTX([{ result, statistics, ...(options.display === undefined ? {} : { display: options.display }) }]));
    return out.take();
  }
  for (const piece of prepareTextAnswer(result, options).pieces()) out.write(piece);
  return out.take();
}
