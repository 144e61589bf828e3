/** A tab book's XLSX as bytes in memory (the service's answer), and the plain form a worker thread is sent. */
import { Writable } from 'node:stream';
import type { WriteStream } from 'node:fs';
import { CrosstabError, ErrorCode } from '../errors.js';
import type { Tabbook, TabbookLayout } from './tabbook-model.js';
import { plainTable, revivedTable, type PlainTable } from './table-render-task.js';

/** A tab book as structured clone carries it: its tables without `cell()`. */
export type PlainTabbook = Omit<Tabbook, 'tables'> & { tables: Array<Omit<Tabbook['tables'][number], 'result'> & { result: PlainTable }> };

/** What a worker is sent to write a tab book's workbook. */
export interface TabbookTask {
  book: PlainTabbook;
  layout: TabbookLayout;
  maxBytes: number;
}

export const plainTabbook = (book: Tabbook): PlainTabbook => ({ ...book, tables: book.tables.map((table) => ({ ...table, result: plainTable(table.result) })) });
export const revivedTabbook = (book: PlainTabbook): Tabbook => ({ ...book, tables: book.tables.map((table) => ({ ...table, result: revivedTable(table.result) })) });

/**
 * The XLSX `crosstab tabbook` writes for `book`, as bytes; rejects with `invalid_option`
 * naming `limits.answerBytes` as soon as it passes `maxBytes` (nothing more is kept).
 */
export async function tabbookXLSXBytes(book: Tabbook, layout: TabbookLayout, maxBytes = Number.MAX_SAFE_INTEGER): Promise<Uint8Array> {
  const { writeTabbookXLSX } = await import('./tabbook-xlsx.js');
  const chunks: Buffer[] = [];
  let bytes = 0;
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      bytes += chunk.length;
      if (bytes > maxBytes) {
        done(new CrosstabError(ErrorCode.invalidOption, `the tab book's workbook is larger than ${maxBytes} bytes`, { field: 'limits.answerBytes', hint: 'Ask for fewer stubs, fewer banner columns or fewer statistics.' }));
        return;
      }
      chunks.push(chunk);
      done();
    },
  });
  const finished = new Promise<void>((resolve, reject) => {
    sink.on('finish', resolve);
    sink.on('error', reject);
  });
  await writeTabbookXLSX(book, sink as unknown as WriteStream, layout);
  await finished;
  return new Uint8Array(Buffer.concat(chunks));
}
