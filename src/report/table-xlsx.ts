import { Writable } from 'node:stream';
import type { TableResult } from '../facade/types.js';
import type { DisplayOptions } from './display.js';
import type { TableStatistics } from './table-statistics.js';

/**
 * One table as the bytes of a one-sheet XLSX workbook, the sheet `crosstab table --format
 * xlsx` writes: title and base note, banner, base rows, per row its weighted and respondent
 * counts and each requested statistic (numbers under number formats), significance letters,
 * footnotes. Built in memory (a table has at most a few hundred thousand cells); rejects,
 * never resolves with part of a workbook, when it cannot be written. exceljs loads on the
 * first call.
 */
export async function tableToXLSX(result: TableResult, statistics?: TableStatistics, display: DisplayOptions = {}): Promise<Uint8Array> {
  const { writeTableXLSX } = await import('./tabbook-xlsx.js');
  const chunks: Buffer[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      chunks.push(chunk);
      done();
    },
  });
  await writeTableXLSX(result, statistics, display, sink);
  return Buffer.concat(chunks);
}
