// A tab book's index, read back from the written files: every table is its own entry linking
// to its own table, and banner items or stubs that share a label are told apart by what they
// are (variable name, expression), in the XLSX (both layouts) and in the PowerPoint deck's
// slide titles.
import { readFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import JSZip from 'jszip';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closePool, tabbook, writeTabbook, type Codebook, type Dataset, type Tabbook } from '../../src/index.js';
import { makeDataset } from '../support/make-dataset.js';
import { findRow, internalLinks, readWorkbook, valueAt } from '../support/xlsx-book.js';

// Two stubs labelled alike, two banner variables labelled alike, two banner expressions labelled alike.
const CODEBOOK: Codebook = {
  codes: [],
  variables: {
    q1: { label: 'Satisfaction', values: { '1': 'Low', '2': 'High' } },
    q2: { label: 'Satisfaction', values: { '1': 'Low', '2': 'High' } },
    region: { label: 'Place', values: { '1': 'North', '2': 'South' } },
    area: { label: 'Place', values: { '1': 'Urban', '2': 'Rural' } },
  },
};
const BANNER = ['region', 'area', { expr: 'q1=1', label: 'Low' }, { expr: 'q2=1', label: 'Low' }];
const STUBS = ['q1', 'q2'];

let ds: Dataset;
let book: Tabbook;
const dir = mkdtempSync(join(tmpdir(), 'crosstab-tabbook-index-'));

beforeAll(async () => {
  // Every combination of the four answers, so no table or column is empty.
  const columns: Record<string, string[]> = { q1: [], q2: [], region: [], area: [] };
  for (let i = 0; i < 64; i++) for (const [bit, name] of Object.keys(columns).entries()) columns[name]!.push(String(1 + ((i >> bit) & 1)));
  ds = await makeDataset(columns, Array.from({ length: 64 }, (_, i) => 1 + (i % 3)), CODEBOOK);
  book = await tabbook(ds, { banner: BANNER, stubs: STUBS, stats: ['vpct'] });
});
afterAll(async () => {
  await ds.close();
  await closePool();
  rmSync(dir, { recursive: true, force: true });
});

describe('XLSX index', () => {
  it.each(['sheets', 'long'] as const)('%s layout: one banner entry per item, each told apart, and one entry per table linking to its own table', async (layout) => {
    const out = join(dir, `book-${layout}.xlsx`);
    await writeTabbook(book, out, { layout });
    const workbook = await readWorkbook(out);
    const index = workbook.getWorksheet('Index')!;
    const first = findRow(index, 'Banner:');
    const items: unknown[] = [];
    for (let row = first; valueAt(index, row, 2) !== null; row++) items.push(valueAt(index, row, 2));
    expect(items).toEqual(['Total', 'Place (region)', 'Place (area)', 'Low (q1=1)', 'Low (q2=1)']);

    const header = findRow(index, 'Table');
    const links = await internalLinks(out);
    expect(links.size).toBe(STUBS.length);
    const titles: unknown[] = [];
    for (const [i, stub] of STUBS.entries()) {
      const row = header + 1 + i;
      expect([valueAt(index, row, 1), valueAt(index, row, 2)]).toEqual([`Table ${i + 1}`, stub]);
      titles.push(valueAt(index, row, 3));
      const [, sheetName, cell] = /^'(.+)'!A(\d+)$/.exec(links.get(`A${row}`)!)!;
      // The link lands on the title of this table, whose rows are this stub's.
      expect(valueAt(workbook.getWorksheet(sheetName!)!, Number(cell), 1)).toBe(`Table ${i + 1}: Satisfaction (${stub})`);
    }
    expect(titles).toEqual(['Satisfaction (q1)', 'Satisfaction (q2)']);
  });
});

describe('PowerPoint', () => {
  it('each slide title says which stub and which banner items it holds, none reading as another', async () => {
    const out = join(dir, 'book.pptx');
    await writeTabbook(book, out);
    const zip = await JSZip.loadAsync(readFileSync(out));
    const slides = Object.keys(zip.files)
      .flatMap((name) => /^ppt\/slides\/slide(\d+)\.xml$/.exec(name)?.slice(1) ?? [])
      .map(Number)
      .sort((a, b) => a - b);
    expect(slides).toHaveLength(STUBS.length);
    const titles: string[] = [];
    for (const slide of slides) {
      const xml = await zip.file(`ppt/slides/slide${slide}.xml`)!.async('string');
      titles.push(/<a:t>([^<]*)<\/a:t>/.exec(xml)![1]!);
    }
    const banner = 'Place (region), Place (area), Low (q1=1), Low (q2=1)';
    expect(titles).toEqual([`Satisfaction (q1) by ${banner}`, `Satisfaction (q2) by ${banner}`]);
  });
});
