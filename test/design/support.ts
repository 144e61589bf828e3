// Shared helpers of the complex-design tests: the R fixture of make-design-reference.R, the
// datasets it describes (built once per test run and design, shared by the files that use
// them), and the check of a table's figures.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'vitest';
import { buildDataset } from '../../src/build/build.js';
import type { BuildOptions } from '../../src/build/build-options.js';
import { openDataset, type Dataset, type TableResult } from '../../src/index.js';
import type { TableStatistics } from '../../src/report/index.js';
import { nhanesCsv, repoRoot } from '../support/paths.js';
import { sharedBuild } from '../support/shared-builds.js';
import { ErrorLedger } from '../report/support.js';

export interface DesignCell {
  row: string;
  columnVariable: string;
  column: number;
  proportion: number;
  se: number;
  total: number;
  totalSE: number;
  /** svyby(svymean, deff = "replace"); null for replicate designs (not computed). */
  deffReplacement: number | null;
}
export interface DesignComparison {
  row: string;
  columnVariable: string;
  columnA: number;
  columnB: number;
  difference: number;
  se: number;
}
export interface DesignChisq {
  rowVariable: string;
  columnVariable: string;
  /** R's degf() of the design the test ran on: subset(design, base), or the design itself. */
  degf: number;
  statistic: number;
  ndf: number;
  ddf: number;
  p: number;
}
export interface DesignBuild {
  weight: string;
  strata?: string;
  psu?: string;
  nest?: boolean;
  fpc?: string;
  replicateWeights?: string[];
  replicateType?: 'JK1' | 'JKn' | 'BRR' | 'Fay' | 'bootstrap' | 'SDR';
  scale?: number;
  rscales?: number[];
  mse?: boolean;
  rho?: number;
  /** R's degf() of the replicate design: not passed to the build, checked against the engine's default. */
  degf?: number;
  /** Degrees of freedom given to the build (`--degf`): R's design holds them, its subset() recomputes. */
  givenDegf?: number;
}
export interface DesignTable {
  id: string;
  file: 'nhanes' | 'nhanes-fpc' | 'nhanes-lonely' | 'nhanes-replicates' | 'gss-design';
  build: DesignBuild;
  base: string;
  lonelyPsu: 'fail' | 'adjust' | 'certainty' | 'remove';
  rows: string[];
  columns: string[];
  cells: DesignCell[];
  comparisons: DesignComparison[];
  chisq: DesignChisq[];
}

export const designFixture = JSON.parse(readFileSync(join(repoRoot, 'test', 'fixtures', 'r', 'design.reference.json'), 'utf8')) as {
  meta: { lonelyFailMessage: string };
  tables: DesignTable[];
  /** Random domains (R seed 20261125) of the replicate designs, with and without mse. */
  randomDomains: DesignTable[];
};

export function inputOf(file: DesignTable['file']): string {
  return file === 'nhanes' ? nhanesCsv : join(repoRoot, 'test', 'fixtures', 'r', `${file}.csv.gz`);
}

/** The build options of a fixture table (R's design as `crosstab build` flags). */
export function buildOptionsOf(table: DesignTable, out: string): BuildOptions {
  const { weight, degf: _rDegreesOfFreedom, givenDegf, ...design } = table.build;
  const options: BuildOptions = { weights: [weight], survey: table.file.startsWith('gss') ? 'GSS' : 'NHANES', out };
  if (Object.keys(design).length > 0) options.design = givenDegf === undefined ? design : { ...design, degf: givenDegf };
  return options;
}

/**
 * Builds (once per test run, for every file of the run that asks: the replicate-weight builds
 * are the slowest part of these tests) the dataset of a fixture table and gives its path.
 */
export function datasetOf(table: DesignTable): Promise<string> {
  return sharedBuild('design', `${table.file} ${JSON.stringify(table.build)}`, (out) => buildDataset(inputOf(table.file), buildOptionsOf(table, out)));
}

/** This file's datasets opened so far, by path and execution path. */
const opened = new Map<string, Promise<Dataset>>();

/**
 * The dataset of a fixture table opened on `execution`, once per test file (a pool's worker
 * threads start once, not per table) and without a cell cache, so that every table is still
 * computed by the kernel (inline) or the pool, never answered from an earlier table's cells.
 * closeDesignDatasets() closes them (in the file's afterAll).
 */
export async function openDesignDataset(table: DesignTable, execution: 'inline' | 'pool'): Promise<Dataset> {
  const path = await datasetOf(table);
  const key = `${execution} ${path}`;
  let dataset = opened.get(key);
  if (dataset === undefined) {
    dataset = openDataset(path, { execution, cellCache: 0 });
    opened.set(key, dataset);
  }
  return dataset;
}

export async function closeDesignDatasets(): Promise<void> {
  const all = [...opened.values()];
  opened.clear();
  await Promise.all(all.map(async (dataset) => (await dataset).close()));
}

/** Figures of one run, however obtained (library or CLI JSON). */
export interface DesignFigures {
  rows: Array<{ expr: string }>;
  columns: Array<{ variable?: string; value?: string }>;
  cell(row: number, column: number): { columnPct: number | null; columnPctSE: number | null; weighted: number; weightedSE: number | null; designEffect: number | null };
  comparison(row: number, a: number, b: number): { difference: number | null; standardError: number | null } | undefined;
  chisq(rowVariable: string, columnVariable: string): { statistic: number; ndf: number; ddf: number; pValue: number } | undefined;
}

/** The figures of a library run: `ds.table` and `tableStatistics(result, { stats: 'all' })`. */
export function figuresFromLibrary(result: TableResult, statistics: TableStatistics): DesignFigures {
  const width = result.columns.length;
  const pairs = new Map((statistics.comparisons ?? []).map((pair) => [`${pair.row}/${pair.columnA}/${pair.columnB}`, pair]));
  return {
    rows: result.rows,
    columns: result.columns,
    cell: (r, c) => ({
      columnPct: statistics.columnPct![r * width + c]!,
      columnPctSE: statistics.columnPctSE![r * width + c]!,
      weighted: result.weighted[r * width + c]!,
      weightedSE: statistics.weightedSE![r * width + c]!,
      designEffect: statistics.designEffect![r * width + c]!,
    }),
    comparison: (r, a, b) => pairs.get(`${r}/${a}/${b}`),
    chisq: (rowVariable, columnVariable) => statistics.raoScott?.find((test) => test.rowVariable === rowVariable && test.columnVariable === columnVariable),
  };
}

const TOLERANCE = 1e-9;

/** Every cell, pair and Rao–Scott test of `table` against R, to relative 1e-9. */
export function checkDesignTable(table: DesignTable, figures: DesignFigures, ledger: ErrorLedger, path: string): void {
  const rowOf = (expr: string) => figures.rows.findIndex((row) => row.expr === expr);
  const columnOf = (variable: string, code: number) => figures.columns.findIndex((c) => c.variable === variable && c.value === String(code));
  const check = (what: string, ours: number | null | undefined, reference: number, where = '') => {
    const error = ledger.add(`${what} (${path})`, ours ?? null, reference);
    if (error > TOLERANCE) expect.fail(`${table.id} ${what} ${where}: ours ${ours}, R ${reference} (relative error ${error})`);
  };
  for (const cell of table.cells) {
    const r = rowOf(cell.row);
    const c = columnOf(cell.columnVariable, cell.column);
    expect(r, `row ${cell.row}`).toBeGreaterThanOrEqual(0);
    expect(c, `column ${cell.columnVariable}=${cell.column}`).toBeGreaterThanOrEqual(0);
    const ours = figures.cell(r, c);
    const where = `${cell.row} x ${cell.columnVariable}=${cell.column}`;
    check('proportion', ours.columnPct, cell.proportion, where);
    check('SE', ours.columnPctSE, cell.se, where);
    check('total', ours.weighted, cell.total, where);
    check('total SE', ours.weightedSE, cell.totalSE, where);
    if (cell.deffReplacement !== null) check('deff (replace)', ours.designEffect, cell.deffReplacement, where);
  }
  for (const pair of table.comparisons) {
    const r = rowOf(pair.row);
    const ours = figures.comparison(r, columnOf(pair.columnVariable, pair.columnA), columnOf(pair.columnVariable, pair.columnB));
    expect(ours, `pair ${pair.row} ${pair.columnVariable} ${pair.columnA}-${pair.columnB}`).toBeDefined();
    check('difference', ours!.difference, pair.difference);
    check('SE of difference', ours!.standardError, pair.se);
  }
  for (const test of table.chisq) {
    const ours = figures.chisq(test.rowVariable, test.columnVariable);
    expect(ours, `Rao-Scott ${test.rowVariable} x ${test.columnVariable}`).toBeDefined();
    check('Rao-Scott F', ours!.statistic, test.statistic);
    check('Rao-Scott ndf', ours!.ndf, test.ndf);
    check('Rao-Scott ddf', ours!.ddf, test.ddf);
    check('Rao-Scott p', ours!.pValue, test.p);
  }
}

export { ErrorLedger };
