// Text that reads as OOXML's character escape _xHHHH_ (a label '_x0041_', which Excel shows as
// 'A') is written to a deck's charts so that it reads back as the dataset holds it: each chart's
// embedded data sheet's shared strings, read as the OOXML spec reads them and by LibreOffice
// (soffice --headless, the data sheet to CSV).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import JSZip from 'jszip';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tableChart, tablesToPPTX, tableStatistics, type Dataset, type TableResult, type TableStatistics } from '../../src/index.js';
import { seriesLabel } from '../../src/report/table-chart.js';
import { makeDataset } from '../support/make-dataset.js';
import { officeSheets, skipOffice } from '../support/libreoffice.js';

/** Texts a reader of the escape would change: one escape, two sharing an underscore, the escaped underscore, an escaped CR, hex in lower case. */
const ESCAPED = ['_x0041_', 'a_x0041_x0042_b', '_x005F_', '_x005F_x0041_', 'line_x000D_', '_x00e9_ ', 'not _X0041_ nor _x41_'];

/** An ST_Xstring's text as the OOXML spec reads it: entities, then each _xHHHH_ (left to right) as its character. */
function readXstring(xml: string): string {
  const text = xml.replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&quot;/g, '"').replace(/&apos;/g, "'").replace(/&amp;/g, '&');
  return text.replace(/_x([0-9A-Fa-f]{4})_/g, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)));
}
/** A shared string item's text: its <t>s (the one of a plain item, or each run's) joined. */
const itemText = (item: string) => [...item.matchAll(/<t(?: [^>]*)?>([^<]*)<\/t>/g)].map((match) => readXstring(match[1]!)).join('');

describe('PPTX chart text that looks like the _xHHHH_ escape', () => {
  let ds: Dataset;
  let work: string;
  let result: TableResult;
  let statistics: TableStatistics;
  let deck: JSZip;

  beforeAll(async () => {
    work = mkdtempSync(join(tmpdir(), 'crosstab-pptx-escape-'));
    const rows = 120;
    const columns: Record<string, string[]> = { v: [], g: [] };
    for (let i = 0; i < rows; i++) {
      columns.v!.push(String((i % 4) + 1));
      columns.g!.push(String((i % 3) + 1));
    }
    const codebook = {
      variables: {
        v: { label: 'Brand', values: { '1': ESCAPED[0]!, '2': ESCAPED[1]!, '3': ESCAPED[2]!, '4': ESCAPED[3]! } },
        g: { label: 'Group', values: { '1': ESCAPED[4]!, '2': ESCAPED[5]!, '3': ESCAPED[6]! } },
      },
      codes: [],
    };
    ds = await makeDataset(columns, Array.from({ length: rows }, (_, i) => 1 + (i % 5) / 4), codebook as never);
    // Two banner entries: grouped bars, a series per banner column over the row categories.
    result = await ds.table({ base: '*', rows: [{ variable: 'v' }], columns: [{ variable: 'g' }, { expr: 'v=1', label: ESCAPED[1]! }] });
    expect(result.rows.map((row) => row.label)).toEqual(ESCAPED.slice(0, 4));
    expect(result.columns.map((column) => column.label)).toEqual([...ESCAPED.slice(4), ESCAPED[1]]);
    statistics = tableStatistics(result, { stats: ['vpct'] });
    const bytes = await tablesToPPTX([{ result, statistics }]);
    writeFileSync(join(work, 'deck.pptx'), bytes);
    deck = await JSZip.loadAsync(bytes);
  });
  afterAll(async () => {
    await ds?.close();
    if (work) rmSync(work, { recursive: true, force: true });
  });

  /** The series names and category labels the chart shows, as the deck's table has them. */
  const expectedNames = () => tableChart(result, statistics).series.map((series) => seriesLabel(series));
  const expectedLabels = () => result.rows.map((row) => row.label);

  it('writes the data sheet\'s shared strings so that they read back as written', async () => {
    const book = await JSZip.loadAsync(await deck.file(Object.keys(deck.files).find((file) => file.endsWith('.xlsx'))!)!.async('uint8array'));
    const strings = await book.file('xl/sharedStrings.xml')!.async('string');
    expect([...strings.matchAll(/<si>([\s\S]*?)<\/si>/g)].map((match) => itemText(match[1]!))).toEqual(['', ...expectedNames(), ...expectedLabels()]);
  });

  it.skipIf(skipOffice)('shows the data sheet\'s names and labels as written (LibreOffice)', { timeout: 180_000 }, async () => {
    const book = await deck.file(Object.keys(deck.files).find((file) => file.endsWith('.xlsx'))!)!.async('uint8array');
    const path = join(work, 'chart-data.xlsx');
    writeFileSync(path, book);
    const [sheet] = [...officeSheets(path, work).values()];
    expect(sheet![0]!.slice(1)).toEqual(expectedNames());
    expect(sheet!.slice(1).map((row) => row[0])).toEqual(expectedLabels());
  });
});
