// Headings over a table's variables, in every format that shows them: two variables labelled
// alike (two banner variables, two stubs, a variable labelled as another is named) are each
// headed by their label and name, never by the same text; a variable whose label is unique
// keeps it (age, a stub and a banner variable at once, is one variable).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import JSZip from 'jszip';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bannerLayout, closePool, tablesToPPTX, tableStatistics, tableToHTML, tableToText, tableToXLSX, type Codebook, type Dataset, type TableResult, type TableStatistics } from '../../src/index.js';
import { makeDataset } from '../support/make-dataset.js';
import { expectTableInSheet, readWorkbook, valueAt } from '../support/xlsx-book.js';

const CODEBOOK: Codebook = {
  codes: [],
  variables: {
    q1: { label: 'Satisfaction', values: { '1': 'Low', '2': 'High' } },
    q2: { label: 'Satisfaction', values: { '1': 'Low', '2': 'High' } },
    region: { label: 'Place', values: { '1': 'North', '2': 'South' } },
    area: { label: 'Place', values: { '1': 'Urban', '2': 'Rural' } },
    // Labelled as another variable is named: told apart too.
    sex: { label: 'q3', values: { '1': 'Man', '2': 'Woman' } },
    q3: { values: { '1': 'Yes', '2': 'No' } },
    age: { label: 'Age band', values: { '1': 'Young', '2': 'Old' } },
  },
};
// Every variable's labels, as the CLI and the tab book pass them.
const LABELS = Object.fromEntries(Object.entries(CODEBOOK.variables).flatMap(([name, variable]) => (variable.label === undefined ? [] : [[name, variable.label]])));

let ds: Dataset;
let result: TableResult;
let statistics: TableStatistics;
const dir = mkdtempSync(join(tmpdir(), 'crosstab-headings-'));

beforeAll(async () => {
  const names = Object.keys(CODEBOOK.variables);
  const columns: Record<string, string[]> = Object.fromEntries(names.map((name) => [name, []]));
  for (let i = 0; i < 128; i++) for (const [bit, name] of names.entries()) columns[name]!.push(String(1 + ((i >> bit) & 1)));
  ds = await makeDataset(columns, Array.from({ length: 128 }, (_, i) => 1 + (i % 3)), CODEBOOK);
  result = await ds.table({ base: 'age=1 OR age=2', rows: [{ variable: 'q1' }, { variable: 'q2' }, { variable: 'q3' }, { variable: 'age' }], columns: [{ variable: 'region' }, { variable: 'area' }, { variable: 'sex' }, { variable: 'age' }], missing: 'hide' });
  statistics = tableStatistics(result, { stats: ['vpct'] });
});
afterAll(async () => {
  await ds.close();
  await closePool();
  rmSync(dir, { recursive: true, force: true });
});

const BANNERS = ['Place (region)', 'Place (area)', 'q3 (sex)', 'Age band'];
const STUBS = ['Satisfaction (q1)', 'Satisfaction (q2)', 'q3', 'Age band'];

describe('headings over variables labelled alike', () => {
  it('bannerLayout: banners and row headings', () => {
    const layout = bannerLayout(result, statistics, { variableLabels: LABELS });
    expect(layout.banners.map((banner) => banner.label)).toEqual(BANNERS);
    expect(layout.rows.flatMap((row) => (row.heading === undefined ? [] : [row.heading]))).toEqual(STUBS);
  });

  it('text', () => {
    const text = tableToText(result, statistics, { variableLabels: LABELS });
    writeFileSync(join(dir, 'table.txt'), text);
    const lines = text.split('\n');
    const bannerLine = lines.find((line) => line.includes('Place'))!;
    expect(bannerLine.split('│').map((cell) => cell.trim()).filter((cell) => cell !== '')).toEqual(BANNERS);
    // A heading line (no figures) where each row variable's entries start.
    const rule = lines.findIndex((line) => line.includes('┼'));
    const legend = lines.findIndex((line, i) => i > rule && line.startsWith('*'));
    expect(lines.slice(rule + 1, legend).filter((line) => line !== '' && !line.includes('│'))).toEqual(STUBS);
  });

  it('HTML', () => {
    const html = tableToHTML(result, statistics, { variableLabels: LABELS });
    const rowBanners = [...html.matchAll(/<tr class="row-banner"><th[^>]*>([^<]*)<\/th>/g)].map((match) => match[1]);
    expect(rowBanners).toEqual(STUBS);
    for (const heading of BANNERS) expect(html, heading).toContain(`>${heading}<`);
  });

  it('XLSX', async () => {
    const path = join(dir, 'table.xlsx');
    writeFileSync(path, await tableToXLSX(result, statistics, { variableLabels: LABELS }));
    const sheet = (await readWorkbook(path)).worksheets[0]!;
    const texts = new Set<unknown>();
    sheet.eachRow((row) => row.eachCell((cell) => void texts.add(valueAt(sheet, Number(row.number), Number(cell.col)))));
    for (const heading of [...BANNERS, ...STUBS]) expect(texts.has(heading), heading).toBe(true);
    expect(texts.has('Place')).toBe(false);
    expect(texts.has('Satisfaction')).toBe(false);
    // Every line in its place (title, note, then the banner at row 3): a heading line before each stub's entries, then its labels and figures.
    const stubs = new Map([['q1', STUBS[0]!], ['q2', STUBS[1]!], ['q3', STUBS[2]!], ['age', STUBS[3]!]]);
    expectTableInSheet(sheet, 3, 1, result, statistics, BANNERS, (variable) => stubs.get(variable)!);
  });

  it('PowerPoint: the banner row over each slide table', async () => {
    const zip = await JSZip.loadAsync(await tablesToPPTX([{ result, statistics, display: { variableLabels: LABELS } }]));
    const slides = Object.keys(zip.files).filter((name) => /^ppt\/slides\/slide\d+\.xml$/.test(name));
    expect(slides.length).toBeGreaterThan(0);
    for (const name of slides) {
      const xml = await zip.file(name)!.async('string');
      const texts = [...xml.matchAll(/<a:t>([^<]*)<\/a:t>/g)].map((match) => match[1]);
      for (const heading of BANNERS) expect(texts, `${name}: ${heading}`).toContain(heading);
      expect(texts).not.toContain('Place');
    }
  });
});
