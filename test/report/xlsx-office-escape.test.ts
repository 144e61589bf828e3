// Text that reads as OOXML's character escape _xHHHH_ (a label '_x0041_', which Excel shows as
// 'A') is written to XLSX so that it reads back as the dataset holds it: a table's workbook
// (title, base, banner heading, column and row labels) and a tab book's sheets (index, titles,
// banner, stubs' rows), opened by LibreOffice (soffice --headless, every sheet to CSV).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import JSZip from 'jszip';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tabbook, tableStatistics, tableToXLSX, writeTabbook, type Dataset } from '../../src/index.js';
import { makeDataset } from '../support/make-dataset.js';
import { officeSheets, skipOffice } from '../support/libreoffice.js';

/** Texts a reader of the escape would change: one escape, two sharing an underscore, the escaped underscore, an escaped CR, hex in lower case. */
const ESCAPED = ['_x0041_', 'a_x0041_x0042_b', '_x005F_', '_x005F_x0041_', 'line_x000D_', '_x00e9_ ', 'not _X0041_ nor _x41_'];

describe('XLSX text that looks like the _xHHHH_ escape', () => {
  let ds: Dataset;
  let work: string;

  beforeAll(async () => {
    work = mkdtempSync(join(tmpdir(), 'crosstab-xlsx-escape-'));
    const rows = 120;
    const columns: Record<string, string[]> = { v_x0041_: [], g: [] };
    for (let i = 0; i < rows; i++) {
      columns.v_x0041_!.push(String((i % 4) + 1));
      columns.g!.push(String((i % 3) + 1));
    }
    const codebook = {
      variables: {
        v_x0041_: { label: 'Brand _x0041_ seen', values: { '1': ESCAPED[0]!, '2': ESCAPED[1]!, '3': ESCAPED[2]!, '4': ESCAPED[3]! } },
        g: { label: ESCAPED[3]!, values: { '1': ESCAPED[4]!, '2': ESCAPED[5]!, '3': ESCAPED[6]! } },
      },
      codes: [],
    };
    ds = await makeDataset(columns, Array.from({ length: rows }, (_, i) => 1 + (i % 5) / 4), codebook as never);
  });
  afterAll(async () => {
    await ds?.close();
    if (work) rmSync(work, { recursive: true, force: true });
  });

  it('writes the lead underscore of each escape-like sequence as _x005F_ in an inline string, every other text as it is', async () => {
    const result = await ds.table({ base: '*', rows: [{ variable: 'g' }], columns: [{ expr: 'g=1', label: 'plain_x_label' }] });
    const zip = await JSZip.loadAsync(await tableToXLSX(result));
    const sheet = await zip.file('xl/worksheets/sheet1.xml')!.async('string');
    expect(sheet).toContain('<t>line_x005F_x000D_</t>');
    expect(sheet).toContain('<t xml:space="preserve">_x005F_x00e9_ </t>');
    // Only a sequence of 4 hex digits between '_x' and '_' is an escape: the rest is written as given.
    expect(sheet).toContain('>not _X0041_ nor _x41_<');
    expect(sheet).toContain('>plain_x_label<');
  });

  it.skipIf(skipOffice)('a table\'s workbook shows every label, the title and the base as the dataset has them (LibreOffice)', { timeout: 180_000 }, async () => {
    const result = await ds.table({ base: 'v_x0041_=1..4', rows: [{ variable: 'v_x0041_' }, { expr: 'g=1', label: ESCAPED[6]! }], columns: [{ variable: 'g' }, { expr: 'v_x0041_=1', label: ESCAPED[1]! }] });
    const path = join(work, 'table.xlsx');
    const variableLabels = { v_x0041_: 'Brand _x0041_ seen', g: ESCAPED[3]! };
    writeFileSync(path, await tableToXLSX(result, tableStatistics(result, { stats: ['vpct'] }), { title: `Title ${ESCAPED[0]}`, variableLabels }));
    const [sheet] = [...officeSheets(path, work).values()];
    const cells = new Set(sheet!.flat());
    for (const text of [`Title ${ESCAPED[0]}`, ESCAPED[3]!, ...result.rows.map((row) => row.label), ...result.columns.map((column) => column.label)]) expect(cells, JSON.stringify(text)).toContain(text);
    expect(sheet!.flat().some((cell) => cell.startsWith('Base: v_x0041_=1..4'))).toBe(true);
    expect(ESCAPED.filter((text) => cells.has(text))).toEqual(ESCAPED);
  });

  it.skipIf(skipOffice)('a tab book shows its index, titles, banner and rows as the dataset has them (LibreOffice)', { timeout: 180_000 }, async () => {
    const book = await tabbook(ds, { banner: ['g', { expr: 'v_x0041_=1', label: ESCAPED[1]! }], stubs: ['v_x0041_', 'g'], base: 'v_x0041_=1..4', stats: ['vpct'] });
    const path = join(work, 'book.xlsx');
    await writeTabbook(book, path);
    const sheets = officeSheets(path, work);
    expect(sheets.size).toBe(3);
    const all = new Set([...sheets.values()].flatMap((rows) => rows.flat()));
    for (const table of book.tables) {
      expect(all, table.title).toContain(table.title);
      for (const row of table.result.rows) expect(all, JSON.stringify(row.label)).toContain(row.label);
    }
    for (const column of book.banner) expect(all, JSON.stringify(column.label)).toContain(column.label);
    expect(ESCAPED.filter((text) => all.has(text))).toEqual(ESCAPED);
  });
});
