import { once } from 'node:events';
import type { Writable } from 'node:stream';
import { tabbookTitle, type Tabbook } from './tabbook-model.js';
import { inertText, tableCSVLines } from './table-csv.js';
import { escapeHTML, htmlPage, tableToHTMLSection } from './table-html.js';
import { tableToJSON } from './table-json.js';

/**
 * The tab book as one HTML page: an index of links, then each table as `crosstab table
 * --format html` draws it (heat map, letters, legend), under an anchor `#table-N`.
 */
export async function writeTabbookHTML(book: Tabbook, stream: Writable): Promise<void> {
  const index = book.tables.map((table) => `<li><a href="#table-${table.number}">Table ${table.number}: ${escapeHTML(tabbookTitle(table))}</a></li>`);
  const skipped = book.skipped.map((skip) => `<li>${escapeHTML(`${skip.variable}: ${skip.reason}`)}</li>`);
  const page = htmlPage(book.title, '\u0000');
  const [head, tail] = page.split('\u0000') as [string, string];
  await put(stream, `${head}<h1>${escapeHTML(book.title)}</h1>\n<nav class="index"><ol>\n${index.join('\n')}\n</ol></nav>\n`);
  if (skipped.length > 0) await put(stream, `<p>Not tabulated:</p>\n<ul>\n${skipped.join('\n')}\n</ul>\n`);
  for (const table of book.tables) {
    const section = tableToHTMLSection(table.result, table.statistics, { title: `Table ${table.number}: ${tabbookTitle(table)}`, variableLabels: book.variableLabels });
    await put(stream, `<section id="table-${table.number}">\n${section}\n</section>\n`);
  }
  await put(stream, tail);
}

/**
 * The tab book as one long CSV: `table` (its number) and `stub` (the stub variable), then
 * the columns of `crosstab table --format csv`, one line per cell of every table.
 */
export async function writeTabbookCSV(book: Tabbook, stream: Writable): Promise<void> {
  for (const [i, table] of book.tables.entries()) {
    // Record by record: a label's line break is inside a quoted field, not between records.
    const { header, lines } = tableCSVLines(table.result, table.statistics);
    if (i === 0) await put(stream, `table,stub,${header}\n`);
    const prefix = `${table.number},${csvField(table.stub)},`;
    await put(stream, lines.map((line) => `${prefix}${line}\n`).join(''));
  }
}

/**
 * The tab book as one JSON document: `{title, base, weight, banner, skipped, tables}`, each
 * table `{number, stub, title, table}` with `table` as `crosstab table --format json` gives it.
 */
export async function writeTabbookJSON(book: Tabbook, stream: Writable): Promise<void> {
  const head = { title: book.title, base: book.base, weight: book.weight, banner: book.banner, skipped: book.skipped };
  await put(stream, `${JSON.stringify(head).slice(0, -1)},"tables":[`);
  for (const [i, table] of book.tables.entries()) {
    const entry = { number: table.number, stub: table.stub, title: table.title, table: tableToJSON(table.result, table.statistics) };
    await put(stream, `${i === 0 ? '' : ','}${JSON.stringify(entry)}`);
  }
  await put(stream, ']}\n');
}

function csvField(text: string): string {
  const field = inertText(text);
  return /[",\r\n]|^\s|\s$/.test(field) ? `"${field.replace(/"/g, '""')}"` : field;
}

/** Writes, waiting for the stream to drain when its buffer is full. */
async function put(stream: Writable, text: string): Promise<void> {
  if (!stream.write(text)) await once(stream, 'drain');
}
