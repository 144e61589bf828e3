// POST /tables (JSON, CSV, XLSX) and POST /tabbooks over real HTTP, with saved audiences on the
// embedded accounts database, checked against figures computed here from the CSV rows the
// dataset was built from (csv-parse, weights summed in f64), never from the engine's output:
// odd names and values, blanks, weights 0 and 1e-3, a multi-response variable as stub and as
// banner, valid percent bases, the low-base marks at their thresholds, a base of nobody.
import ExcelJS from 'exceljs';
import { parse } from 'csv-parse/sync';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addAccount, addKey, addUser, DbAudienceStore, DbKeyStore, DbUsageSink, openDatabase, parseLicences, type Database } from '../../src/access/index.js';
import { createCrosstabHandler, listen, type RunningServer } from '../../src/http/index.js';
import { buildDataset, openDataset, type Dataset } from '../../src/index.js';
import { tempDir } from './support.js';

const XLSX = 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet';

// Respondents by region: 61 (stable), 60 (caution at its edge), 31 (caution), 30 (very unstable at its edge).
const REGION_SIZES = [61, 60, 31, 30];
const WEIGHTS = ['1.5', '0', '0.001', '2.25', '0.1', '3', '1', '0.7'];
const Q_ONE = ['1', '', '2', '3', '1', '', '2', '1', '3'];
const CITIES = ['Roma', 'Milano', 'Saint "Q"', "O'Brien, Jr.", 'Zürich'];
const CODES = ['007', '1e3', '-0', '', '7', '007'];
const NUMS = ['1e3', '1000', '-0', '0', '7', ''];
const BRANDS = ['1;3', '2', '', ';', '1;2;3', '3', '2;3'];

/** The CSV of the survey, made here, and its rows as csv-parse reads them. */
function surveyCsv(): { text: string; rows: Array<Record<string, string>> } {
  const header = ['w', 'region', 'sex', 'q one', 'città', 'code', 'num', 'brands'];
  const lines: string[][] = [];
  let i = 0;
  REGION_SIZES.forEach((size, r) => {
    for (let k = 0; k < size; k++, i++) {
      lines.push([WEIGHTS[i % WEIGHTS.length]!, String(r + 1), String(1 + ((i * 7) % 3 === 0 ? 1 : 0)), Q_ONE[i % Q_ONE.length]!, CITIES[(i * 3) % CITIES.length]!, CODES[i % CODES.length]!, NUMS[(i * 5) % NUMS.length]!, BRANDS[(i * 2) % BRANDS.length]!]);
    }
  });
  const field = (value: string) => (/[",\n]/.test(value) ? `"${value.replace(/"/g, '""')}"` : value);
  const text = [header, ...lines].map((line) => line.map(field).join(',')).join('\n') + '\n';
  return { text, rows: parse(text, { columns: true }) as Array<Record<string, string>> };
}

type Row = Record<string, string>;
type Predicate = (row: Row) => boolean;
const { text: CSV_TEXT, rows: ROWS } = surveyCsv();
const brandsOf = (row: Row) => row['brands']!.split(';').map((part) => part.trim()).filter((part) => part !== '');

interface Sums {
  weighted: number;
  respondents: number;
}
/** Σw and the count of the rows matching every predicate, weights as doubles, summed in f64. */
function sums(...predicates: Predicate[]): Sums {
  let weighted = 0;
  let respondents = 0;
  for (const row of ROWS) {
    if (!predicates.every((predicate) => predicate(row))) continue;
    weighted += Number(row['w']);
    respondents++;
  }
  return { weighted, respondents };
}
function stabilityOf(respondents: number): string {
  return respondents <= 30 ? 'very-unstable' : respondents <= 60 ? 'caution' : 'stable';
}
const ratio = (part: number, whole: number) => (whole === 0 ? null : part / whole);
const all: Predicate = () => true;

/** Compares a figure with a relative tolerance (sums in another order differ in the last bits); null with null. */
function expectFigure(actual: number | null | undefined, expected: number | null, what: string): void {
  if (expected === null) {
    expect(actual ?? null, what).toBe(null);
    return;
  }
  expect(typeof actual, what).toBe('number');
  expect(Math.abs((actual as number) - expected), `${what}: ${actual} against ${expected}`).toBeLessThanOrEqual(1e-12 * Math.max(1, Math.abs(expected)));
}

/** What a table entry of the answer selects, from its variable and value as the answer names them. */
function entryPredicate(entry: { variable?: string; value?: string; missing?: true; net?: true; multi?: true; expr: string; label: string }, byExpression: Record<string, Predicate>): Predicate {
  if (entry.variable === undefined) {
    // An entry written with @name keeps it as its label; its expr is the expanded expression.
    const predicate = byExpression[entry.label] ?? byExpression[entry.expr];
    if (predicate === undefined) throw new Error(`no predicate written for the entry ${entry.expr}`);
    return predicate;
  }
  const variable = entry.variable;
  if (entry.multi) {
    if (entry.missing) return (row) => row[variable] === '';
    if (entry.net) return (row) => brandsOf(row).length > 0;
    return (row) => brandsOf(row).some((brand) => Number(brand) === Number(entry.value));
  }
  if (entry.missing) return (row) => row[variable] === '';
  const numeric = ROWS.every((row) => row[variable] === '' || /^-?\d+(\.\d+)?(e[-+]?\d+)?$/i.test(row[variable]!)) && !ROWS.some((row) => /^-?0\d/.test(row[variable]!));
  return numeric ? (row) => row[variable] !== '' && Number(row[variable]) === Number(entry.value) : (row) => row[variable] === entry.value;
}

let db: Database;
let server: RunningServer;
let dataset: Dataset;
let key = '';

beforeAll(async () => {
  const dir = tempDir('crosstab-tables-independent-');
  const csv = join(dir, 'odd.csv');
  writeFileSync(csv, CSV_TEXT);
  await buildDataset(csv, { weights: ['w'], survey: 'ODD', out: join(dir, 'odd.arrow'), multi: [{ column: 'brands' }] });
  dataset = await openDataset(join(dir, 'odd.arrow'));
  db = await openDatabase(join(dir, 'db'));
  await addAccount(db, 'acme', parseLicences(['ODD'], ['ODD:_ALL_']));
  const analyst = (await addUser(db, 'acme', 'analyst@acme.example')).user;
  key = (await addKey(db, { account: 'acme', name: 'analyst', userId: analyst.id })).apiKey;
  const handler = await createCrosstabHandler({ datasets: [dataset], keys: new DbKeyStore(db, { ttlMs: 0 }), usage: new DbUsageSink(db), audiences: new DbAudienceStore(db) });
  server = await listen(handler, { port: 0 });
});
afterAll(async () => {
  await server?.close();
  await db?.close();
  await dataset?.close();
});

async function call(path: string, body: unknown, accept = 'application/json'): Promise<{ status: number; text: string; bytes: ArrayBuffer; json: any }> {
  const response = await fetch(`${server.url}${path}`, { method: 'POST', headers: { 'service-engine-authorizer': key, 'content-type': 'application/json', accept }, body: JSON.stringify(body) });
  const bytes = await response.arrayBuffer();
  const text = Buffer.from(bytes).toString('utf8');
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: response.status, text, bytes, json };
}
const table = (body: Record<string, unknown>, accept?: string) => call('/tables', { SurveyCode: 'ODD', ...body }, accept);

// The saved audiences and what they select, written here from their definitions.
const NORTH: Predicate = (row) => row['region'] === '1' || row['region'] === '2';
const NORTH_WOMEN: Predicate = (row) => NORTH(row) && row['sex'] === '2';

describe('tables over REST against the CSV rows', () => {
  beforeAll(async () => {
    const north = await call('/audiences', { SurveyCode: 'ODD', Name: 'north', Expression: 'region=1,2' });
    expect(north.status, north.text).toBe(201);
    const nested = await call('/audiences', { SurveyCode: 'ODD', Name: 'north-women', Expression: '@north AND sex=2' });
    expect(nested.status, nested.text).toBe(201);
  });

  /** Checks every cell, margin, percentage and stability mark of a JSON table against the rows. */
  function expectTable(answer: any, base: Predicate, byExpression: Record<string, Predicate>, percentBase: 'total' | 'valid'): void {
    const t = answer.Table;
    const rows = t.rows.map((entry: any) => entryPredicate(entry, byExpression));
    const columns = t.columns.map((entry: any) => entryPredicate(entry, byExpression));
    const total = sums(base);
    expectFigure(t.total.weighted, total.weighted, 'total weighted');
    expect(t.total.respondents).toBe(total.respondents);
    // The valid base of a whole variable's entry: the base's respondents who answered that variable (counted once).
    const answered = (entry: any): Predicate | undefined => (entry.variable === undefined ? undefined : (row) => row[entry.variable] !== '');
    t.columns.forEach((entry: any, c: number) => {
      const expected = sums(base, columns[c]);
      expectFigure(t.columnTotals[c].weighted, expected.weighted, `column ${entry.label} weighted`);
      expect(t.columnTotals[c].respondents, `column ${entry.label} respondents`).toBe(expected.respondents);
      expect(t.columnTotals[c].stability, `column ${entry.label} stability`).toBe(stabilityOf(expected.respondents));
    });
    t.rows.forEach((rowEntry: any, r: number) => {
      const rowTotal = sums(base, rows[r]);
      expectFigure(t.rowTotals[r].weighted, rowTotal.weighted, `row ${rowEntry.label} weighted`);
      expect(t.rowTotals[r].respondents, `row ${rowEntry.label} respondents`).toBe(rowTotal.respondents);
      t.columns.forEach((columnEntry: any, c: number) => {
        const what = `cell ${rowEntry.label} x ${columnEntry.label}`;
        const cell = t.cells[r][c];
        const expected = sums(base, rows[r], columns[c]);
        expectFigure(cell.weighted, expected.weighted, `${what} weighted`);
        expect(cell.respondents, `${what} respondents`).toBe(expected.respondents);
        expect(cell.stability, `${what} stability`).toBe(stabilityOf(expected.respondents));
        if ('columnPct' in cell) {
          const rowAnswered = answered(rowEntry);
          const denominator = percentBase === 'valid' && rowAnswered ? (rowEntry.missing ? null : sums(base, columns[c], rowAnswered).weighted) : sums(base, columns[c]).weighted;
          expectFigure(cell.columnPct, denominator === null ? null : ratio(expected.weighted, denominator), `${what} vertical %`);
        }
        if ('rowPct' in cell) {
          const columnAnswered = answered(columnEntry);
          const denominator = percentBase === 'valid' && columnAnswered ? (columnEntry.missing ? null : sums(base, rows[r], columnAnswered).weighted) : rowTotal.weighted;
          expectFigure(cell.rowPct, denominator === null ? null : ratio(expected.weighted, denominator), `${what} horizontal %`);
        }
        if ('tablePct' in cell && percentBase === 'total') expectFigure(cell.tablePct, ratio(expected.weighted, total.weighted), `${what} table %`);
        if ('index' in cell) {
          // 100 x the column's share of the row over the row's share of the base (valid: of those who answered the row variable).
          const rowAnswered = answered(rowEntry);
          const share = percentBase === 'valid' && rowAnswered ? (rowEntry.missing ? null : ratio(rowTotal.weighted, sums(base, rowAnswered).weighted)) : ratio(rowTotal.weighted, total.weighted);
          const columnShare = percentBase === 'valid' && rowAnswered ? (rowEntry.missing ? null : ratio(expected.weighted, sums(base, columns[c], rowAnswered).weighted)) : ratio(expected.weighted, sums(base, columns[c]).weighted);
          const index = share === null || columnShare === null || share === 0 ? null : (100 * columnShare) / share;
          expectFigure(cell.index, index, `${what} index`);
        }
      });
    });
  }

  it('a whole variable with blanks by region and audiences (one using another, one AND a value), total and valid percentages', async () => {
    const request = {
      PopulationBaseCode: '*',
      Rows: [{ Variable: 'q one' }],
      Columns: [{ Variable: 'region' }, '@north-women', '@north AND region=3', { Expression: '@north AND region=2', Label: 'north 2' }],
      Statistics: ['vpct', 'hpct', 'tpct', 'index'],
    };
    const byExpression: Record<string, Predicate> = {
      '@north-women': NORTH_WOMEN,
      '@north AND region=3': (row) => NORTH(row) && row['region'] === '3',
      'north 2': (row) => NORTH(row) && row['region'] === '2',
    };
    for (const percentBase of ['total', 'valid'] as const) {
      const answer = await table({ ...request, PercentBase: percentBase });
      expect(answer.status, answer.text).toBe(200);
      expect(answer.json.Table.rows.map((entry: any) => entry.value ?? null)).toEqual(['1', '2', '3', null]);
      expect(answer.json.Table.columns.map((entry: any) => entry.value ?? entry.label)).toEqual(['1', '2', '3', '4', '@north-women', '@north AND region=3', 'north 2']);
      expectTable(answer.json, all, byExpression, percentBase);
    }
    // Turned round: the variable with blanks on the columns (valid horizontal %), audiences on the rows, and its "No answer" hidden.
    for (const [percentBase, missing] of [['valid', 'show'], ['valid', 'hide'], ['total', 'hide']] as const) {
      const answer = await table({ PopulationBaseCode: 'NOT region=3', Rows: [{ Variable: 'region' }, '@north-women'], Columns: [{ Variable: 'q one' }, { Variable: 'città' }], Statistics: ['vpct', 'hpct', 'tpct'], PercentBase: percentBase, Missing: missing });
      expect(answer.status, answer.text).toBe(200);
      expect(answer.json.Table.columns.some((entry: any) => entry.missing === true)).toBe(missing === 'show');
      expectTable(answer.json, (row) => row['region'] !== '3', byExpression, percentBase);
    }
  });

  it('the low-base marks at their thresholds: 61 stable, 60 caution, 31 caution, 30 very unstable', async () => {
    const answer = await table({ PopulationBaseCode: '*', Rows: ['*'], Columns: [{ Variable: 'region' }] });
    expect(answer.status, answer.text).toBe(200);
    expect(answer.json.Table.cells[0].map((cell: any) => [cell.respondents, cell.stability])).toEqual([
      [61, 'stable'],
      [60, 'caution'],
      [31, 'caution'],
      [30, 'very-unstable'],
    ]);
    // The same edges through POST /crosstab's Stbl.
    const crosstab = await call('/crosstab', { SurveyCode: 'ODD', PopulationBaseCode: '*', TargetCodes: ['region=1', 'region=2'] });
    expect(crosstab.json.Results.map((result: any) => [result.Resps, result.Stbl])).toEqual([
      [61, 0],
      [60, 1],
    ]);
    const edge = await call('/crosstab', { SurveyCode: 'ODD', PopulationBaseCode: '@north', TargetCodes: ['region=3', 'region=2 AND @north'] });
    expect(edge.json.Results.map((result: any) => [result.Resps, result.Stbl])).toEqual([
      [0, 1],
      [60, 1],
    ]);
  });

  it('a multi-response variable as stub and as banner: each respondent once in every base', async () => {
    for (const [rows, columns] of [
      [[{ Variable: 'brands' }], [{ Variable: 'region' }, '@north']],
      [[{ Variable: 'sex' }, { Variable: 'q one' }], [{ Variable: 'brands' }]],
      [[{ Variable: 'brands' }], [{ Variable: 'brands' }]],
    ]) {
      const answer = await table({ PopulationBaseCode: 'NOT region=4', Rows: rows, Columns: columns, Statistics: ['vpct', 'hpct', 'tpct'] });
      expect(answer.status, answer.text).toBe(200);
      const entries = [...answer.json.Table.rows, ...answer.json.Table.columns].filter((entry: any) => entry.variable === 'brands');
      expect(entries.map((entry: any) => entry.net ? 'net' : entry.missing ? 'NA' : entry.value).slice(0, 5)).toEqual(['1', '2', '3', 'net', 'NA']);
      expectTable(answer.json, (row) => row['region'] !== '4', { '@north': NORTH }, 'total');
    }
  });

  it('odd names and values: spaces, quotes, unicode, 007 / 1e3 / -0 as text and as numbers, a long OR chain', async () => {
    const orChain = Array.from({ length: 40 }, (_, i) => `region=${(i % 4) + 1}`).join(' OR ');
    const answer = await table({
      PopulationBaseCode: orChain,
      Rows: [{ Variable: 'città' }, { Variable: 'code' }],
      Columns: ['"q one"=1', 'città="Saint \\"Q\\""', 'code=007', 'code=1e3', 'code=-0', 'num=1000', 'num=-0', 'num=0'],
      Statistics: ['vpct'],
    });
    expect(answer.status, answer.text).toBe(200);
    const byExpression: Record<string, Predicate> = {
      '"q one"=1': (row) => row['q one'] === '1',
      'città="Saint \\"Q\\""': (row) => row['città'] === 'Saint "Q"',
      'code=007': (row) => row['code'] === '007',
      'code=1e3': (row) => row['code'] === '1e3',
      'code=-0': (row) => row['code'] === '-0',
      'num=1000': (row) => row['num'] !== '' && Number(row['num']) === 1000,
      'num=-0': (row) => row['num'] !== '' && Number(row['num']) === 0,
      'num=0': (row) => row['num'] !== '' && Number(row['num']) === 0,
    };
    expect(answer.json.Table.rows.filter((entry: any) => entry.variable === 'città').map((entry: any) => entry.value ?? null).sort()).toEqual([...new Set(CITIES)].sort());
    expect(answer.json.Table.rows.filter((entry: any) => entry.variable === 'code').map((entry: any) => entry.value ?? null).sort()).toEqual(['-0', '007', '1e3', '7', null].sort());
    expectTable(answer.json, all, byExpression, 'total');
    // Each row's expression as the answer writes it selects its respondents (POST /crosstab, no table in between).
    for (const entry of answer.json.Table.rows) {
      const expected = sums(entryPredicate(entry, {}));
      const one = await call('/crosstab', { SurveyCode: 'ODD', PopulationBaseCode: '*', TargetCodes: [entry.expr] });
      expect(one.status, `${entry.expr}: ${one.text}`).toBe(200);
      expect(one.json.Results[0].Resps, entry.expr).toBe(expected.respondents);
      expectFigure(one.json.Results[0].WgtAud, expected.weighted, entry.expr);
    }
  });

  it('a base of nobody is a clear answer: zeros, no percentage, no NaN, not a 500', async () => {
    for (const base of ['region=1 AND region=2', '@north AND region=3']) {
      const answer = await table({ PopulationBaseCode: base, Rows: [{ Variable: 'q one' }], Columns: [{ Variable: 'region' }], Statistics: ['vpct', 'hpct', 'tpct', 'index', 'se'] });
      expect(answer.status, answer.text).toBe(200);
      expect(answer.text).not.toMatch(/NaN|Infinity/);
      expect(answer.json.Table.total).toMatchObject({ weighted: 0, respondents: 0 });
      for (const line of answer.json.Table.cells) for (const cell of line) expect(cell).toMatchObject({ weighted: 0, respondents: 0, columnPct: null, rowPct: null, tablePct: null });
      const crosstab = await call('/crosstab', { SurveyCode: 'ODD', PopulationBaseCode: base, TargetCodes: ['sex=1'] });
      expect(crosstab.status).toBe(200);
      expect(crosstab.json).toMatchObject({ ResultCode: 1, Results: [{ WgtAud: 0, Resps: 0, Stbl: 1 }] });
    }
  });

  it('weights 0 and 1e-3: the zero-weight respondents are respondents, the thousandths add up', async () => {
    const answer = await table({ PopulationBaseCode: '*', Rows: [{ Expression: 'sex=1' }, { Expression: 'sex=2' }], Columns: ['region=1', 'region=2'], Statistics: ['vpct'] });
    expect(answer.status, answer.text).toBe(200);
    expectTable(answer.json, all, { 'sex=1': (row) => row['sex'] === '1', 'sex=2': (row) => row['sex'] === '2', 'region=1': (row) => row['region'] === '1', 'region=2': (row) => row['region'] === '2' }, 'total');
    expect(ROWS.some((row) => row['w'] === '0') && ROWS.some((row) => row['w'] === '0.001')).toBe(true);
    // Unweighted (Weight null): every respondent counts 1, the zero-weight ones too.
    const unweighted = await table({ PopulationBaseCode: '*', Rows: [{ Variable: 'q one' }], Columns: [{ Variable: 'region' }], Weight: null, Statistics: ['vpct'] });
    expect(unweighted.status, unweighted.text).toBe(200);
    const t = unweighted.json.Table;
    t.rows.forEach((rowEntry: any, r: number) =>
      t.columns.forEach((columnEntry: any, c: number) => {
        const expected = sums(entryPredicate(rowEntry, {}), entryPredicate(columnEntry, {}));
        expect([t.cells[r][c].weighted, t.cells[r][c].respondents]).toEqual([expected.respondents, expected.respondents]);
        expectFigure(t.cells[r][c].columnPct, ratio(expected.respondents, sums(entryPredicate(columnEntry, {})).respondents), `unweighted ${rowEntry.label} x ${columnEntry.label}`);
      }),
    );
  });

  it('the CSV answer holds the figures of the rows', async () => {
    const request = { PopulationBaseCode: '@north-women OR region=4', Rows: [{ Variable: 'q one' }, { Variable: 'brands' }], Columns: [{ Variable: 'region' }, '@north'], Statistics: ['vpct'] };
    const json = await table(request);
    const csv = await table(request, 'text/csv');
    expect(csv.status, csv.text).toBe(200);
    const lines = parse(csv.text, { columns: true }) as Array<Record<string, string>>;
    const base: Predicate = (row) => NORTH_WOMEN(row) || row['region'] === '4';
    const t = json.json.Table;
    const rows = t.rows.map((entry: any) => entryPredicate(entry, {}));
    const columns = t.columns.map((entry: any) => entryPredicate(entry, { '@north': NORTH }));
    expect(lines.length).toBeGreaterThanOrEqual(t.rows.length * t.columns.length);
    let checked = 0;
    t.rows.forEach((rowEntry: any, r: number) =>
      t.columns.forEach((columnEntry: any, c: number) => {
        const line = lines.find((candidate) => candidate['rowExpr'] === rowEntry.expr && candidate['columnExpr'] === columnEntry.expr);
        expect(line, `${rowEntry.expr} x ${columnEntry.expr}`).toBeDefined();
        // A label a spreadsheet would run as a formula (`@north`) is written after a guarding `'`.
        const unguarded = (text: string) => text.replace(/^'(?=['=+\-@\t\r])/, '');
        expect([line!['row'], line!['column'], unguarded(line!['rowLabel']!), unguarded(line!['columnLabel']!)]).toEqual([String(r), String(c), rowEntry.label, columnEntry.label]);
        const expected = sums(base, rows[r], columns[c]);
        expectFigure(Number(line!['weighted']), expected.weighted, `CSV ${rowEntry.expr} x ${columnEntry.expr}`);
        expect(Number(line!['respondents'])).toBe(expected.respondents);
        expect(line!['stability']).toBe(stabilityOf(expected.respondents));
        const pct = line!['columnPct'];
        expectFigure(pct === '' ? null : Number(pct), ratio(expected.weighted, sums(base, columns[c]).weighted), `CSV vpct ${rowEntry.expr} x ${columnEntry.expr}`);
        checked++;
      }),
    );
    expect(checked).toBe(t.rows.length * t.columns.length);
  });

  it('the XLSX answer holds the figures of the rows', async () => {
    const request = { PopulationBaseCode: 'NOT "q one"=NA', Rows: [{ Variable: 'brands' }], Columns: [{ Variable: 'region' }, '@north-women'], Statistics: ['vpct'] };
    const json = await table(request);
    const answer = await table(request, XLSX);
    expect(answer.status, answer.text).toBe(200);
    const workbook = new ExcelJS.Workbook();
    await workbook.xlsx.load(answer.bytes);
    const sheet = workbook.getWorksheet('Table')!;
    const value = (row: number, column: number) => sheet.getRow(row).getCell(column).value;
    const base: Predicate = (row) => row['q one'] !== '';
    const t = json.json.Table;
    const columns = t.columns.map((entry: any) => entryPredicate(entry, { '@north-women': NORTH_WOMEN }));
    let at = 1;
    while (value(at, 1) !== 'Base' && at < 200) at++;
    expect(value(at, 1)).toBe('Base');
    const total = sums(base);
    expectFigure(value(at, 3) as number, total.weighted, 'XLSX base weighted');
    expect(value(at + 1, 3)).toBe(total.respondents);
    t.columns.forEach((_: unknown, c: number) => expectFigure(value(at, 4 + c) as number, sums(base, columns[c]).weighted, `XLSX column ${c} base`));
    for (const rowEntry of t.rows) {
      while (value(at, 1) !== rowEntry.label && at < 400) at++;
      expect(value(at, 1)).toBe(rowEntry.label);
      const rowPredicate = entryPredicate(rowEntry, {});
      expectFigure(value(at, 3) as number, sums(base, rowPredicate).weighted, `XLSX ${rowEntry.label} total`);
      t.columns.forEach((columnEntry: any, c: number) => {
        const expected = sums(base, rowPredicate, columns[c]);
        expectFigure(value(at, 4 + c) as number, expected.weighted, `XLSX ${rowEntry.label} x ${columnEntry.label} weighted`);
        expect(value(at + 1, 4 + c)).toBe(expected.respondents);
        const pct = ratio(expected.weighted, sums(base, columns[c]).weighted);
        expectFigure(value(at + 2, 4 + c) === '–' ? null : (value(at + 2, 4 + c) as number), pct, `XLSX ${rowEntry.label} x ${columnEntry.label} vertical %`);
      });
      at++;
    }
  });
  it('a tab book with an audience and a multi-response variable in the banner and the stubs holds the figures of the rows', async () => {
    const answer = await call('/tabbooks', { SurveyCode: 'ODD', PopulationBaseCode: '@north-women OR region=4', Banner: ['region', '@north', 'brands'], Stubs: ['q one', 'brands'], Statistics: ['vpct'] }, XLSX);
    expect(answer.status, answer.text).toBe(200);
    const workbook = new ExcelJS.Workbook();
    await workbook.xlsx.load(answer.bytes);
    const base: Predicate = (row) => NORTH_WOMEN(row) || row['region'] === '4';
    // What a label of a variable's entry selects, written here from the CSV's columns.
    const labelled = (variable: string | null, label: string): Predicate => {
      if (variable === null) {
        expect(label).toBe('(region=1,2)');
        return NORTH;
      }
      if (label === 'No answer') return (row) => row[variable] === '';
      if (variable === 'brands') return label === 'Any (net)' ? (row) => brandsOf(row).length > 0 : (row) => brandsOf(row).includes(label);
      return (row) => row[variable] === label;
    };
    const stubs = ['q one', 'brands'];
    let checked = 0;
    let expectedChecks = 0;
    stubs.forEach((stub, t) => {
      const sheet = workbook.worksheets[t + 1]!;
      const value = (row: number, column: number) => sheet.getRow(row).getCell(column).value;
      expect(String(value(1, 1))).toContain(stub === 'q one' ? '"q one"' : stub);
      const columns: Predicate[] = [all];
      for (let column = 4; value(4, column) !== null && value(4, column) !== undefined; column++) columns.push(labelled(value(3, column) === null ? null : String(value(3, column)), String(value(4, column))));
      // A "No answer" entry only where the base has blanks on the variable.
      const noAnswer = (variable: string) => (ROWS.some((row) => base(row) && row[variable] === '') ? ['No answer'] : []);
      const bannerLabels = ['1', '2', '3', '4', '(region=1,2)', '1', '2', '3', 'Any (net)', ...noAnswer('brands')];
      expect(Array.from({ length: columns.length - 1 }, (_, c) => String(value(4, 4 + c)))).toEqual(bannerLabels);
      expect(value(5, 1)).toBe('Base');
      const check = (line: number, row: Predicate, what: string) => {
        columns.forEach((column, c) => {
          const expected = sums(base, row, column);
          // C is the Total column (the base alone), D on the banner's.
          expectFigure(value(line, 3 + c) as number, expected.weighted, `${what} weighted, column ${c}`);
          expect(value(line + 1, 3 + c), `${what} respondents, column ${c}`).toBe(expected.respondents);
          if (row === all) return;
          const pct = ratio(expected.weighted, sums(base, column).weighted);
          const shown = value(line + 2, 3 + c);
          expectFigure(shown === '–' ? null : (shown as number), pct, `${what} vertical %, column ${c}`);
          checked++;
        });
      };
      check(5, all, `${stub} base`);
      let line = 7;
      const labels = [...(stub === 'brands' ? ['1', '2', '3', 'Any (net)'] : ['1', '2', '3']), ...noAnswer(stub)];
      for (const label of labels) {
        expect(value(line, 1)).toBe(label);
        check(line, labelled(stub, label), `${stub} ${label}`);
        expectedChecks += columns.length;
        line += 3;
      }
    });
    expect(checked).toBe(expectedChecks);
    expect(checked).toBeGreaterThan(60);
  });
});
