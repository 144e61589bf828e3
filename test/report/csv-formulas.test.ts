// A label a spreadsheet would run as a formula comes out of every text/csv answer as text:
// POST /v1/tables with Accept: text/csv (tableToCSV) writes it with a leading "'"; plain
// numbers (-5, +3) and every other label are written as they are.
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { openDataset, tableToCSV, type Dataset } from '../../src/index.js';

describe('CSV answers hold no live formula', () => {
  let gss: Dataset;
  beforeAll(async () => {
    gss = await openDataset(inject('testDatasets').gss);
  });
  afterAll(() => gss?.close());

  it('writes a label starting with =, +, -, @, tab or CR as text, and numbers as they are', async () => {
    const labels = ['=HYPERLINK("http://evil.example","x")', '+1+1', '-2+3', '@SUM(A1)', '\t=1', '-5', '+3', '1.5e3', 'Men'];
    const result = await gss.table({ base: '*', rows: labels.map((label) => ({ expr: 'sex=1', label })), columns: [{ expr: 'sex=2', label: '=1+1' }] });
    const csv = tableToCSV(result);
    const fields = csv.split('\n').slice(1, -1).map((line) => line.match(/("([^"]|"")*"|[^,]*)(,|$)/g)!.map((field) => field.replace(/,$/, '').replace(/^"|"$/g, '').replace(/""/g, '"')));
    expect(fields.map((line) => line[1])).toEqual(["'=HYPERLINK(\"http://evil.example\",\"x\")", "'+1+1", "'-2+3", "'@SUM(A1)", "'\t=1", '-5', '+3', '1.5e3', 'Men']);
    for (const line of fields) expect(line[4]).toBe("'=1+1");
    // Nothing a spreadsheet reads as a formula starts a field.
    for (const line of fields) for (const field of line) expect(field).not.toMatch(/^[=@]|^[+-](?![\d.]+(e[+-]?\d+)?$)/i);
  });

  it('reads back: a label starting with quotes before a formula character gets one more, so it is not taken for a guarded one', async () => {
    const labels = ["'=1+1", '=1+1', "''@x", "'-5", "'abc", "'", "'+1+1"];
    const result = await gss.table({ base: '*', rows: labels.map((label) => ({ expr: 'sex=1', label })), columns: [{ expr: 'sex=2' }] });
    const fields = tableToCSV(result).split('\n').slice(1, -1).map((line) => line.split(',')[1]!);
    expect(fields).toEqual(["''=1+1", "'=1+1", "'''@x", "'-5", "'abc", "'", "''+1+1"]);
    // The reading rule: a field whose quotes come before a formula character, not a plain number, loses its first quote.
    const unguard = (field: string) => (/^'+[=+\-@\t\r]/.test(field) && !/^'+[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(field) ? field.slice(1) : field);
    expect(fields.map(unguard)).toEqual(labels);
  });
});
