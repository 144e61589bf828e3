// "No answer" entries and the percent base in every output format, the codebook's
// missingLabel, and the CLI's --missing / --percent-base. Spawns dist/cli/main.js: run
// `npm run build:ts` first.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { tableFromIPC } from 'apache-arrow';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { buildDataset, CrosstabError, ErrorCode, openDataset, parseCodebook, type Dataset, type TableResult } from '../src/index.js';
import { TABLE_METADATA_KEY, tableStatistics, tableToArrowIPC, tableToCSV, tableToHTML, tableToJSON, tableToText, type TableJson } from '../src/report/index.js';
import { requireBuiltCli, runTable } from './report/support.js';

describe('every format carries the "No answer" entries and says what percentages are of', () => {
  let ds: Dataset;
  let result: TableResult;
  beforeAll(async () => {
    ds = await openDataset(inject('testDatasets').gss);
    result = await ds.table({ base: 'year=2024', rows: [{ variable: 'sex' }], columns: [{ variable: 'race' }] });
    return () => ds.close();
  });

  it.each(['total', 'valid'] as const)('%s percentages', (percentBase) => {
    const statistics = tableStatistics(result, { stats: ['vpct', 'sig'], percentBase });
    const note = percentBase === 'valid' ? 'valid percentages: of the base respondents who answered' : 'percentages of every base respondent';

    const text = tableToText(result, statistics);
    expect(text.split('\n')[1]).toContain(note);
    expect(text).toMatch(/^No answer +weighted +│ +16\.1/m);
    expect(text).toMatch(/White +Black +Other +No answer/);

    const csv = tableToCSV(result, statistics).trimEnd().split('\n');
    expect(csv.length).toBe(1 + 3 * 4);
    expect(csv.filter((line) => line.split(',')[2] === 'sex=NA' && line.split(',')[1] === 'No answer')).toHaveLength(4);
    expect(csv.filter((line) => line.split(',')[5] === 'race=NA' && line.split(',')[4] === 'No answer')).toHaveLength(3);

    const json = JSON.parse(JSON.stringify(tableToJSON(result, statistics))) as TableJson;
    expect(json.rows.at(-1)).toEqual({ label: 'No answer', expr: 'sex=NA', variable: 'sex', missing: true });
    expect(json.columns.at(-1)).toEqual({ label: 'No answer', expr: 'race=NA', variable: 'race', missing: true });
    expect([json.missing, json.percentBase, json.statistics!.percentBase]).toEqual(['show', percentBase, percentBase]);
    expect(json.missingNote).toContain(note);
    expect(json.cells[2]![0]!.respondents).toBe(11);
    if (percentBase === 'valid') expect(json.cells[2]![0]!.columnPct).toBeNull();
    else expect(json.cells[2]![0]!.columnPct).toBeGreaterThan(0);

    const html = tableToHTML(result, statistics);
    expect(html).toContain('<th scope="row" title="sex=NA">No answer</th>');
    expect(html).toContain('<th class="column" title="race=NA">No answer</th>');
    expect(html).toContain(note);

    const arrow = tableFromIPC(tableToArrowIPC(result, statistics));
    expect(arrow.numRows).toBe(12);
    const rowExprs = arrow.getChild('rowExpr')!.toArray() as string[];
    const columnExprs = arrow.getChild('columnExpr')!.toArray() as string[];
    expect(rowExprs.filter((expr) => expr === 'sex=NA')).toHaveLength(4);
    expect(columnExprs.filter((expr) => expr === 'race=NA')).toHaveLength(3);
    const context = JSON.parse(arrow.schema.metadata.get(TABLE_METADATA_KEY)!);
    expect([context.missing, context.percentBase, context.statistics.percentBase]).toEqual(['show', percentBase, percentBase]);
    expect(context.rows.at(-1)).toEqual({ label: 'No answer', expr: 'sex=NA', variable: 'sex', missing: true });
    expect(context.missingNote).toContain(note);
  });

  it('hide says so, and no format has a "No answer" entry', async () => {
    const hidden = await ds.table({ base: 'year=2024', rows: [{ variable: 'sex' }], columns: [{ variable: 'race' }], missing: 'hide' });
    const statistics = tableStatistics(hidden, { stats: ['vpct'] });
    // CSV has no header beyond its column names: it only lacks the entries.
    expect(tableToCSV(hidden, statistics)).not.toContain('=NA');
    for (const output of [tableToText(hidden, statistics), tableToHTML(hidden, statistics), JSON.stringify(tableToJSON(hidden, statistics))]) {
      expect(output).not.toContain('=NA');
      expect(output).toContain('not shown as an entry');
    }
  });
});

describe('the codebook names the "No answer" entry; the dataset file keeps it', () => {
  const folder = mkdtempSync(join(tmpdir(), 'crosstab-missing-'));
  const build = async (codebook: object | undefined, name: string) => {
    const csv = join(folder, `${name}.csv`);
    writeFileSync(csv, 'w,q,k\n1,1,1\n2,,1\n1.5,2,2\n1,,2\n');
    const out = join(folder, `${name}.arrow`);
    const codebookPath = codebook === undefined ? undefined : join(folder, `${name}.codebook.json`);
    if (codebookPath) writeFileSync(codebookPath, JSON.stringify(codebook));
    await buildDataset(csv, { weights: ['w'], survey: 'T', out, ...(codebookPath ? { codebook: codebookPath } : {}) });
    return out;
  };
  beforeAll(() => () => rmSync(folder, { recursive: true, force: true }));

  it('uses missingLabel from the codebook, and "No answer" without one', async () => {
    const labelledPath = await build({ missingLabel: 'Keine Angabe', variables: { q: { values: { '1': 'Ja', '2': 'Nein' } } } }, 'labelled');
    const labelled = await openDataset(labelledPath);
    const plain = await openDataset(await build(undefined, 'plain'));
    try {
      expect(labelled.info.missingLabel).toBe('Keine Angabe');
      expect(plain.info.missingLabel).toBe('No answer');
      const table = await labelled.table({ base: '*', rows: [{ variable: 'q' }], columns: [{ variable: 'k' }] });
      expect(table.rows.map((row) => row.label)).toEqual(['Ja', 'Nein', 'Keine Angabe']);
      expect(table.rows.map((row) => row.expr)).toEqual(['q=1', 'q=2', 'q=NA']);
      expect(table.rowTotals.map((cell) => cell.weighted)).toEqual([1, 1.5, 3]);
      // k has no blank: no entry.
      expect(table.columns.map((column) => column.expr)).toEqual(['k=1', 'k=2']);
      expect(tableToText(table, tableStatistics(table, { stats: ['vpct'] }))).toContain('"Keine Angabe": base respondents with a blank');
      expect((await plain.table({ base: '*', rows: [{ variable: 'q' }], columns: ['*'] })).rows.at(-1)!.label).toBe('No answer');
      // `crosstab info` says what the blank answers are called.
      const { spawnSync } = await import('node:child_process');
      const info = spawnSync(process.execPath, ['dist/cli/main.js', 'info', labelledPath], { encoding: 'utf8' });
      expect(info.stderr).toBe('');
      expect(info.stdout).toMatch(/^blank answers: shown in tables as "Keine Angabe" \(VAR=NA\)/m);
    } finally {
      await labelled.close();
      await plain.close();
    }
  });

  it('refuses a missingLabel that is not a non-empty string', () => {
    for (const missingLabel of [3, '', ['No answer']]) {
      const error = (() => {
        try {
          parseCodebook({ missingLabel, codes: {} }, 'book.json');
        } catch (caught) {
          return caught;
        }
      })();
      expect(error).toBeInstanceOf(CrosstabError);
      expect((error as CrosstabError).code).toBe(ErrorCode.invalidCodebook);
      expect((error as CrosstabError).message).toContain('"missingLabel" must be a non-empty string');
    }
  });
});

describe('crosstab table --missing, --percent-base', () => {
  beforeAll(() => requireBuiltCli());
  const args = () => [inject('testDatasets').gss, '--base', 'year=2024', '--rows', 'sex', '--columns', 'race', '--format', 'json'];

  it('shows "No answer" by default; --missing hide leaves it out; --percent-base valid', async () => {
    const shown = JSON.parse((await runTable(args())).stdout.toString()) as TableJson;
    expect(shown.rows.map((row) => row.label)).toEqual(['Male', 'Female', 'No answer']);
    expect(shown.percentBase).toBe('total');
    const hidden = JSON.parse((await runTable([...args(), '--missing', 'hide'])).stdout.toString()) as TableJson;
    expect(hidden.rows.map((row) => row.label)).toEqual(['Male', 'Female']);
    expect(hidden.missing).toBe('hide');
    const valid = JSON.parse((await runTable([...args(), '--percent-base', 'valid'])).stdout.toString()) as TableJson;
    expect(valid.statistics!.percentBase).toBe('valid');
    expect(valid.cells[0]![0]!.columnPct! + valid.cells[1]![0]!.columnPct!).toBeCloseTo(1, 12);
    expect(valid.cells[2]![0]!.columnPct).toBeNull();
  });

  it.each([
    ['--missing', 'omit', /--missing must be show, hide; not "omit"/],
    ['--percent-base', 'answered', /--percent-base must be total, valid; not "answered"/],
  ])('%s %s is refused', async (flag, value, message) => {
    const { code, stdout, stderr } = await runTable([...args(), flag, value]);
    expect(code).toBe(1);
    expect(stdout.toString()).toBe('');
    expect(stderr.toString()).toMatch(message);
  });
});
