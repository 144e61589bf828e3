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
  return new CrosstabError(ErrorCode.invalidOption, `the answer would be larger than ${max.toLocaleString('en-US')} bytes`, {
    field: 'limits.answerBytes',
    limit: max,
    hint: 'Ask for fewer cells (fewer rows or columns), fewer statistics, or the CSV or XLSX format instead of JSON.',
  });
}

/** Text pieces of about this many characters are encoded at once. */
const PIECE = 1 << 20;

/**
 * Writes `value` as JSON.stringify would, but each element of a top-level array (and each
 * row of `cells`) on its own, so no string holds the whole document.
 */
function writeJson(value: Record<string, unknown>, out: BoundedBytes): void {
  let pending = '{';
  const flush = (force = false) => {
    if (force || pending.length >= PIECE) {
      out.write(pending);
      pending = '';
    }
  };
  let first = true;
  for (const [key, field] of Object.entries(value)) {
    if (field === undefined) continue;
    pending += `${first ? '' : ','}${JSON.stringify(key)}:`;
    first = false;
    if (Array.isArray(field)) {
      pending += '[';
      field.forEach((element, i) => {
        pending += (i > 0 ? ',' : '') + (JSON.stringify(element) ?? 'null');
        flush();
      });
      pending += ']';
    } else {
      pending += JSON.stringify(field);
    }
    flush();
  }
  pending += '}';
  flush(true);
}

/**
 * The statistics (checked against their limits first) and the answer's bytes. Throws
 * CrosstabError `invalid_option` naming `limits.comparisons`, `limits.raoScottCovariance`
 * or `limits.answerBytes` when the request asks more than they allow.
 */
export async function writeTableAnswer(result: TableResult, options: TableAnswerOptions): Promise<Uint8Array> {
  const wanted = options.statistics?.stats;
  const statistics =
    options.statistics === undefined || (Array.isArray(wanted) && wanted.length === 0)
      ? undefined
      : tableStatistics(result, { ...options.statistics, ...(options.limits === undefined ? {} : { limits: options.limits }) });
  const out = new BoundedBytes(options.maxBytes ?? Number.MAX_SAFE_INTEGER);
  if (options.format === 'xlsx') {
    out.write(await tableToXLSX(result, statistics, options.display ?? {}));
  } else if (options.format === 'pptx') {
    if (statistics?.columnPct === undefined) throw new CrosstabError(ErrorCode.invalidOption, 'a deck charts the vertical % (vpct), which these statistics do not hold', { field: 'stats', hint: 'Add vpct to the statistics.' });
    const { tablesToPPTX } = await import('./table-pptx.js');
    out.write(await tablesToPPTX([{ result, statistics, ...(options.display === undefined ? {} : { display: options.display }) }]));
  } else if (options.format === 'csv') {
    const text = tableToCSV(result, statistics);
    for (let at = 0; at < text.length; ) {
      let end = Math.min(text.length, at + PIECE);
      // Never between the two halves of a surrogate pair.
      if (end < text.length && (text.charCodeAt(end - 1) & 0xfc00) === 0xd800) end--;
      out.write(text.slice(at, end));
      at = end;
    }
  } else {
    if (options.jsonPrefix !== undefined) out.write(options.jsonPrefix);
    writeJson(tableToJSON(result, statistics) as unknown as Record<string, unknown>, out);
    if (options.jsonSuffix !== undefined) out.write(options.jsonSuffix);
  }
  return out.take();
}
