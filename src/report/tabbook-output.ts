import { extname } from 'node:path';
import { type CrosstabError, ErrorCode, fieldError } from '../errors.js';
import { writeStreamAtomically } from './atomic-file.js';
import { TABBOOK_FORMATS, TABBOOK_LAYOUTS, type Tabbook, type TabbookFormat, type TabbookLayout } from './tabbook-model.js';
import { writeTabbookCSV, writeTabbookHTML, writeTabbookJSON } from './tabbook-formats.js';

export interface WriteTabbookOptions {
  /** `xlsx`, `html`, `csv`, `json` or `pptx` (the tables' vertical % must have been computed); default from the file's extension, else `xlsx`. */
  format?: TabbookFormat;
  /** XLSX only: `sheets` (default, one sheet per table) or `long` (all tables on one sheet). */
  layout?: TabbookLayout;
}

/**
 * Writes a tab book to `path`, through a temporary file renamed into place once complete:
 * a failure leaves nothing under `path`. Rejects with `invalid_option` naming `format`,
 * `layout` or `out` (a path that cannot be written).
 */
export async function writeTabbook(book: Tabbook, path: string, options: WriteTabbookOptions = {}): Promise<{ format: TabbookFormat; layout: TabbookLayout }> {
  if (typeof path !== 'string' || path === '') throw invalid('out', 'must be a file path', 'Pass e.g. "book.xlsx".');
  const format = options.format ?? formatOfPath(path);
  if (!TABBOOK_FORMATS.includes(format)) throw invalid('format', `must be one of ${TABBOOK_FORMATS.join(', ')}; got ${JSON.stringify(format)}`, 'Leave it out to take it from the file extension.');
  const layout = options.layout ?? 'sheets';
  if (!TABBOOK_LAYOUTS.includes(layout)) throw invalid('layout', `must be one of ${TABBOOK_LAYOUTS.join(', ')}; got ${JSON.stringify(layout)}`, 'sheets: one sheet per table; long: all tables on one sheet.');
  // exceljs loads only for this format.
  const xlsx = format === 'xlsx' ? await import('./tabbook-xlsx.js') : undefined;
  // pptxgenjs builds the deck in memory, before the file is opened.
  const deck =
    format === 'pptx'
      ? await (await import('./table-pptx.js')).tablesToPPTX(book.tables.map((table) => ({ result: table.result, statistics: table.statistics, display: { title: book.title, variableLabels: book.variableLabels } })))
      : undefined;
  await writeStreamAtomically(path, 'out', async (stream) => {
    if (deck) stream.write(deck);
    else if (xlsx) await xlsx.writeTabbookXLSX(book, stream, layout);
    else if (format === 'html') await writeTabbookHTML(book, stream);
    else if (format === 'csv') await writeTabbookCSV(book, stream);
    else await writeTabbookJSON(book, stream);
  });
  return { format, layout };
}

/** The format a file name asks for: its extension when it is one of the formats, else `xlsx`. */
export function formatOfPath(path: string): TabbookFormat {
  const extension = extname(path).slice(1).toLowerCase();
  return extension === 'htm' ? 'html' : (TABBOOK_FORMATS as readonly string[]).includes(extension) ? (extension as TabbookFormat) : 'xlsx';
}

function invalid(field: string, problem: string, hint: string): CrosstabError {
  return fieldError(ErrorCode.invalidOption, field, problem, { hint });
}
