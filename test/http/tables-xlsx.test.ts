// POST /tables answering an Excel workbook by Accept, over real HTTP on every mount: the
// workbook exceljs reads back holds the figures of the JSON answer to the same request, its
// bytes arrive as the handler made them, and it is billed once as a table.
import ExcelJS from 'exceljs';
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FIGURES } from '../../src/report/statistics.js';
import { createCrosstabHandler, type CrosstabHandler, type HandlerResponse } from '../../src/http/index.js';
import { makeKeyFile, readLedger, servedFixture, shims, tempDir, type RunningShim, type TestKeys } from './support.js';

const XLSX = 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet';
const { gss, nhanes, judge } = await servedFixture({ nhanes: true, judge: true });

const sha256 = (bytes: Uint8Array): string => createHash('sha256').update(bytes).digest('hex');

/** The real handler, keeping each response it gives to the shim (the bytes the client must receive). */
function recording(handler: CrosstabHandler): { handler: CrosstabHandler; responses: HandlerResponse[] } {
  const responses: HandlerResponse[] = [];
  return {
    responses,
    handler: {
      basePath: handler.basePath,
      maxBodyBytes: handler.maxBodyBytes,
      owns: (path) => handler.owns(path),
      close: () => handler.close(),
      async handle(request) {
        const response = await handler.handle(request);
        // A streamed body (a table answer) is read here whole and handed on as it was made.
        if (response.stream !== undefined) {
          const chunks: Uint8Array[] = [];
          for await (const chunk of response.stream) chunks.push(chunk.slice());
          const body = new Uint8Array(Buffer.concat(chunks));
          const { stream: _stream, ...whole } = response;
          responses.push({ ...whole, body });
          return { ...whole, body };
        }
        responses.push(response);
        return response;
      },
    },
  };
}

type JsonCell = Record<string, unknown> & { weighted: number; respondents: number; letters?: string };
interface JsonTable {
  units: number;
  rows: Array<{ label: string; variable?: string }>;
  columns: Array<{ label: string; letter?: string }>;
  cells: JsonCell[][];
  rowTotals: JsonCell[];
  columnTotals: JsonCell[];
  total: JsonCell;
}

/** The sheet's cell values, row by row (1-based rows and columns as in Excel). */
function sheetValues(sheet: ExcelJS.Worksheet): Array<Array<ExcelJS.CellValue>> {
  const rows: Array<Array<ExcelJS.CellValue>> = [];
  sheet.eachRow({ includeEmpty: true }, (row, number) => {
    rows[number] = Array.from({ length: sheet.columnCount + 1 }, (_, column) => (column === 0 ? null : row.getCell(column).value));
  });
  return rows;
}

/**
 * Checks every figure of the sheet against the JSON table: column labels and letters, the base
 * rows, and per row its weighted count (in units), respondents, each statistic (an undefined
 * one as `–`) and significance letters, in the layout `crosstab table --format xlsx` writes.
 */
function expectSheetEqualsJson(sheet: ExcelJS.Worksheet, table: JsonTable): void {
  const rows = sheetValues(sheet);
  const width = table.columns.length;
  const data = (line: Array<ExcelJS.CellValue>) => line.slice(4, 4 + width);
  let at = rows.findIndex((line) => line?.[1] === 'Base');
  expect(at, 'the sheet has a Base row').toBeGreaterThan(0);
  const lettered = table.columns.some((column) => column.letter !== undefined);
  const labelsRow = rows[lettered ? at - 2 : at - 1]!;
  expect(data(labelsRow)).toEqual(table.columns.map((column) => column.label));
  if (lettered) expect(data(rows[at - 1]!)).toEqual(table.columns.map((column) => (column.letter ? `(${column.letter})` : null)));
  const counts = (line: Array<ExcelJS.CellValue>, name: string, total: JsonCell, cells: JsonCell[], figure: (cell: JsonCell) => number) => {
    expect(line[2]).toBe(name);
    expect(line[3]).toBe(figure(total));
    expect(data(line)).toEqual(cells.map(figure));
  };
  counts(rows[at++]!, 'Weighted', table.total, table.columnTotals, (cell) => cell.weighted / table.units);
  counts(rows[at++]!, 'Respondents', table.total, table.columnTotals, (cell) => cell.respondents);
  const shown = FIGURES.filter((figure) => figure.field in (table.cells[0]?.[0] ?? {}));
  expect(shown.length).toBeGreaterThan(0);
  table.rows.forEach((row, r) => {
    const cells = table.cells[r]!;
    // A heading line (in A only) where a row variable's entries start.
    if (row.variable !== undefined && row.variable !== table.rows[r - 1]?.variable) {
      const heading = rows[at++]!;
      expect(String(heading[1] ?? '')).not.toBe('');
      expect(heading.slice(2, 4 + width).map((value) => value ?? null)).toEqual(Array.from({ length: 2 + width }, () => null));
    }
    expect(rows[at]![1]).toBe(row.label);
    counts(rows[at++]!, 'Weighted', table.rowTotals[r]!, cells, (cell) => cell.weighted / table.units);
    counts(rows[at++]!, 'Respondents', table.rowTotals[r]!, cells, (cell) => cell.respondents);
    for (const figure of shown) {
      const line = rows[at++]!;
      expect(line[2]).toBe(figure.label.charAt(0).toUpperCase() + figure.label.slice(1));
      expect(data(line)).toEqual(cells.map((cell) => (cell[figure.field] === null ? '–' : cell[figure.field])));
    }
    if (lettered) {
      const line = rows[at++]!;
      expect(line[2]).toBe('Significance');
      expect(data(line)).toEqual(cells.map((cell) => (cell.letters ? cell.letters : null)));
    }
  });
}

describe.each(shims)('POST /tables as XLSX over $name', (shim) => {
  let keys: TestKeys;
  let ledgerPath: string;
  let handler: CrosstabHandler;
  let responses: HandlerResponse[];
  let server: RunningShim;

  beforeAll(async () => {
    const dir = tempDir();
    keys = await makeKeyFile(dir);
    ledgerPath = join(dir, 'usage.ndjson');
    ({ handler, responses } = recording(await createCrosstabHandler({ datasets: [gss, nhanes], keys: keys.path, usage: ledgerPath })));
    server = await shim.start(handler);
  });
  afterAll(async () => {
    await server.close();
    await handler.close();
  });

  const request = {
    SurveyCode: 'GSS',
    PopulationBaseCode: 'year=2024',
    Rows: [{ Variable: 'degree' }, 'BA+'],
    Columns: [{ Variable: 'sex' }, { Expression: 'age=18..34', Label: 'young' }],
    Statistics: ['vpct', 'index', 'se', 'sig'],
  };
  const postTable = (accept: string, body: unknown = request) =>
    fetch(`${server.origin}/v1/tables`, { method: 'POST', headers: { 'service-engine-authorizer': keys.all, 'content-type': 'application/json', accept }, body: JSON.stringify(body) });

  it('answers a workbook whose cells are the JSON answer\'s figures, byte for byte as the handler made it, billed once as a table', async () => {
    const json = await postTable('application/json');
    expect(json.status).toBe(200);
    const answer = (await json.json()) as { Table: JsonTable };
    judge.check('post', '/tables', 200, answer);

    const before = readLedger(ledgerPath).length;
    const reply = await postTable(XLSX);
    const bytes = new Uint8Array(await reply.arrayBuffer());
    expect(reply.status, Buffer.from(bytes).toString('utf8').slice(0, 300)).toBe(200);
    expect(reply.headers.get('content-type')).toBe(XLSX);
    expect(reply.headers.get('content-disposition')).toBe('attachment; filename="GSS-table.xlsx"');
    expect(reply.headers.get('content-length')).toBe(String(bytes.length));
    const sent = responses.at(-1)!;
    expect(sent.body).toBeInstanceOf(Uint8Array);
    expect(sha256(bytes)).toBe(sha256(sent.body as Uint8Array));

    const ledger = readLedger(ledgerPath);
    expect(ledger.length).toBe(before + 1);
    expect(ledger.at(-1)).toMatchObject({ keyId: keys.allId, survey: 'GSS', operation: 'table', targets: answer.Table.rows.length + answer.Table.columns.length });

    const workbook = new ExcelJS.Workbook();
    await workbook.xlsx.load(Buffer.from(bytes) as unknown as ExcelJS.Buffer);
    expect(workbook.worksheets.map((sheet) => sheet.name)).toEqual(['Table']);
    expectSheetEqualsJson(workbook.worksheets[0]!, answer.Table);
  });

  it('answers a workbook of another survey\'s units (NHANES) with its figures', async () => {
    const body = { SurveyCode: 'NHANES', PopulationBaseCode: '*', Rows: [{ Variable: 'RIAGENDR' }], Columns: ['*'], Statistics: ['vpct', 'moe'] };
    const answer = (await (await postTable('application/json', body)).json()) as { Table: JsonTable };
    const reply = await postTable(`text/html, ${XLSX};q=0.9`, body);
    expect(reply.status).toBe(200);
    expect(reply.headers.get('content-disposition')).toBe('attachment; filename="NHANES-table.xlsx"');
    const workbook = new ExcelJS.Workbook();
    await workbook.xlsx.load(Buffer.from(await reply.arrayBuffer()) as unknown as ExcelJS.Buffer);
    expectSheetEqualsJson(workbook.worksheets[0]!, answer.Table);
  });

  it('lets a cross-origin script read the workbook\'s file name (Content-Disposition is an exposed header)', async () => {
    const reply = await fetch(`${server.origin}/v1/tables`, {
      method: 'POST',
      headers: { 'service-engine-authorizer': keys.all, 'content-type': 'application/json', accept: XLSX, origin: 'https://app.example' },
      body: JSON.stringify({ ...request, Statistics: [] }),
    });
    expect(reply.status).toBe(200);
    await reply.arrayBuffer();
    const exposed = (reply.headers.get('access-control-expose-headers') ?? '').split(',').map((name) => name.trim().toLowerCase());
    expect(exposed).toEqual(expect.arrayContaining(['x-request-id', 'content-disposition']));
  });

  it('declares the workbook in GET /docs: the 200 of POST /tables has the XLSX media type and Content-Disposition', async () => {
    const document = (await (await fetch(`${server.origin}/v1/docs`)).json()) as { paths: Record<string, any> };
    const ok = document.paths['/tables'].post.responses['200'];
    expect(Object.keys(ok.content)).toEqual(['application/json', 'text/csv', XLSX, 'application/vnd.openxmlformats-officedocument.presentationml.presentation']);
    expect(ok.content[XLSX].schema).toMatchObject({ type: 'string', format: 'binary' });
    expect(ok.headers).toHaveProperty('Content-Disposition');
  });

  it('refuses an Accept of none of its types with 406 naming JSON, CSV and XLSX, not billed', async () => {
    const before = readLedger(ledgerPath).length;
    const reply = await postTable('text/html, image/png');
    expect(reply.status).toBe(406);
    const body = (await reply.json()) as { error: { code: string; message: string } };
    judge.check('post', '/tables', 406, body);
    expect(body.error.code).toBe('not_acceptable');
    for (const type of ['application/json', 'text/csv', XLSX]) expect(body.error.message).toContain(type);
    expect(readLedger(ledgerPath).length).toBe(before);
  });

  it('answers errors of a workbook request as JSON error bodies, not billed', async () => {
    const before = readLedger(ledgerPath).length;
    const reply = await postTable(XLSX, { ...request, Rows: ['nosuchvariable=1'] });
    expect(reply.status).toBe(400);
    expect(reply.headers.get('content-type')).toMatch(/^application\/json/);
    expect(reply.headers.get('content-disposition')).toBeNull();
    const body = (await reply.json()) as { error: { code: string; field: string } };
    judge.check('post', '/tables', 400, body);
    expect(body.error).toMatchObject({ code: 'unknown_variable', field: 'Rows' });
    expect(readLedger(ledgerPath).length).toBe(before);
  });
});
