// Complex designs through `crosstab table --format json`: every figure of
// test/fixtures/r/design.reference.json on both execution paths, plus the build and info commands.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TableJson } from '../../src/report/index.js';
import { requireBuiltCli, runTable } from '../report/support.js';
import { cliPath } from '../support/paths.js';
import { checkDesignTable, datasetOf, designFixture, ErrorLedger, inputOf, type DesignFigures } from './support.js';

const ledger = new ErrorLedger();
afterAll(() => console.log(`max relative error vs R, complex designs, CLI (statistic, compared, error):\n${ledger.table()}`));
beforeAll(() => requireBuiltCli());

function figuresFromJson(json: TableJson): DesignFigures {
  const pairs = new Map((json.comparisons ?? []).map((pair) => [`${pair.row}/${pair.columnA}/${pair.columnB}`, pair]));
  return {
    rows: json.rows,
    columns: json.columns,
    cell: (r, c) => {
      const cell = json.cells[r]![c]!;
      return { columnPct: cell.columnPct ?? null, columnPctSE: cell.columnPctSE ?? null, weighted: cell.weighted, weightedSE: cell.weightedSE ?? null, designEffect: cell.designEffect ?? null };
    },
    comparison: (r, a, b) => pairs.get(`${r}/${a}/${b}`),
    chisq: (rowVariable, columnVariable) => {
      const test = json.raoScott?.find((t) => t.rowVariable === rowVariable && t.columnVariable === columnVariable);
      return test && { statistic: test.statistic!, ndf: test.ndf!, ddf: test.ddf!, pValue: test.pValue! };
    },
  };
}

const cases = (['inline', 'pool'] as const).flatMap((execution) => designFixture.tables.map((table) => [execution, table.id, table] as const));

describe.each(cases)('%s: crosstab table on R design table %s', (execution, _id, table) => {
  // The dataset is built (once per run, shared with the other design files) before the case.
  let dataset: string;
  beforeAll(async () => {
    dataset = await datasetOf(table);
  });

  it('prints R figures to 1e-9 in --format json', async () => {
    const chisqRows = [...new Set(table.chisq.map((test) => test.rowVariable))];
    const args = [
      dataset,
      '--base', table.base,
      ...table.rows.flatMap((row) => ['--row', row]),
      ...chisqRows.flatMap((variable) => ['--rows', variable]),
      ...table.columns.flatMap((variable) => ['--columns', variable]),
      '--stats', 'all', '--format', 'json', '--execution', execution, '--lonely-psu', table.lonelyPsu,
    ];
    const run = await runTable(args);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    const json = JSON.parse(run.stdout.toString()) as TableJson;
    expect(json.statistics!.variance).toBe(table.build.replicateWeights ? 'replicate' : table.build.psu ? 'taylor' : 'simple');
    checkDesignTable(table, figuresFromJson(json), ledger, 'CLI');
  });
});

describe('crosstab build / info with a design', () => {
  const dir = mkdtempSync(join(tmpdir(), 'crosstab-design-cli-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const cli = (...args: string[]) => spawnSync(process.execPath, [cliPath, ...args], { encoding: 'utf8', maxBuffer: 1 << 28 });

  it('builds the R Taylor design from flags and info shows it', () => {
    const out = join(dir, 'taylor.arrow');
    const built = cli('build', inputOf('nhanes'), '--weight', 'WTMEC2YR', '--survey', 'NHANES', '--strata', 'SDMVSTRA', '--psu', 'SDMVPSU', '--nest', '--out', out, '--quiet');
    expect(built.stderr).toBe('');
    expect(built.status).toBe(0);
    const info = cli('info', out);
    expect(info.stdout).toContain('design: Taylor linearization: strata SDMVSTRA, PSU SDMVPSU (nested in strata)');
    const json = JSON.parse(cli('info', out, '--json').stdout);
    expect(json.design).toMatchObject({ kind: 'taylor', strata: 'SDMVSTRA', psu: 'SDMVPSU', nest: true, strataCount: 15, psuCount: 31 });
  });

  it('builds a JKn replicate design with --rscales and info shows it', () => {
    const jkn = designFixture.tables.find((table) => table.id === 'nhanes-JKn')!;
    const out = join(dir, 'jkn.arrow');
    const built = cli('build', inputOf('nhanes-replicates'), '--weight', 'WTMEC2YR', '--survey', 'NHANES', '--replicate-weights', ...jkn.build.replicateWeights!,
      '--replicate-type', 'JKn', '--rscales', jkn.build.rscales!.join(','), '--out', out, '--quiet');
    expect(built.stderr).toBe('');
    const json = JSON.parse(cli('info', out, '--json').stdout);
    expect(json.design.kind).toBe('replicate');
    expect(json.design.replicates).toMatchObject({ type: 'JKn', scale: 1, rscales: jkn.build.rscales, mse: false });
    expect(cli('info', out).stdout).toContain(`design: replicate weights: JKn, ${jkn.build.replicateWeights!.length} replicates`);
    // A build of 8,591 rows x 200 columns: a minute or more when the machine is shared.
  }, 180_000);

  it('refuses a design without --nest whose PSU numbers restart in each stratum, naming the column', () => {
    const run = cli('build', inputOf('nhanes'), '--weight', 'WTMEC2YR', '--survey', 'NHANES', '--strata', 'SDMVSTRA', '--psu', 'SDMVPSU', '--out', join(dir, 'x.arrow'));
    expect(run.status).toBe(1);
    expect(run.stderr).toMatch(/PSU "1" of column "SDMVPSU" appears in more than one stratum of "SDMVSTRA"/);
    expect(run.stderr).toContain('--nest');
  });
});
