// Shared helpers of the table report tests: the R fixture, error measures, running `crosstab table`.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { cliPath, repoRoot } from '../support/paths.js';

export interface Sums {
  weighted: number;
  respondents: number;
  sumSqWeights: number;
}
type Nullable = number | null;
export type Correction = 'none' | 'bonferroni' | 'holm';

export interface RCell {
  row: string;
  columnVariable: string;
  column: number;
  letter: string;
  cell: Sums;
  columnTotal: Sums;
  proportion: number;
  verticalPct: number;
  horizontalPct: number;
  tablePct: number;
  index: number;
  se: number;
  seFullFileDesign: number;
  marginOfError95: number;
  deff: Nullable;
  deffReplacement: Nullable;
  kishEffectiveBase: number;
  kishSE: number;
  letters: Record<Correction, string>;
}

export interface RComparison {
  row: string;
  columnVariable: string;
  columnA: number;
  columnB: number;
  difference: number;
  se: number;
  z: Nullable;
  p: Nullable;
  pooledEffectiveZ: Nullable;
  pooledEffectiveP: Nullable;
  pBonferroni: Nullable;
  pHolm: Nullable;
}

export interface RTable {
  id: string;
  dataset: string;
  base: string;
  weight: string;
  designRespondents: number;
  fileRespondents: number;
  rows: Array<{ id: string }>;
  columnVariables: Array<{ variable: string; columns: Array<{ code: number; letter: string }> }>;
  cells: RCell[];
  comparisons: RComparison[];
}

export const fixture = JSON.parse(readFileSync(join(repoRoot, 'test', 'fixtures', 'r', 'tables.reference.json'), 'utf8')) as {
  tables: RTable[];
};

export const datasetKey = (table: RTable) => (table.dataset.startsWith('gss') ? 'gss' : 'nhanes');

/** Relative error, or absolute error when R's value is within 1e-12 of zero (as docs/statistics.md measures). */
export function relativeError(ours: number, reference: number): number {
  return Math.abs(reference) <= 1e-12 ? Math.abs(ours - reference) : Math.abs(ours - reference) / Math.abs(reference);
}

/** Worst error per statistic, for the summary the suite prints. */
export class ErrorLedger {
  readonly worst = new Map<string, { error: number; count: number }>();
  /** Records one comparison; an R null must be our NaN/null (undefined statistic). */
  add(statistic: string, ours: number | null | undefined, reference: number | null): number {
    const entry = this.worst.get(statistic) ?? { error: 0, count: 0 };
    this.worst.set(statistic, entry);
    if (reference === null) {
      if (ours !== null && ours !== undefined && !Number.isNaN(ours)) return Number.POSITIVE_INFINITY;
      return 0;
    }
    if (ours === null || ours === undefined) return Number.POSITIVE_INFINITY;
    const error = relativeError(ours, reference);
    entry.error = Math.max(entry.error, Number.isNaN(error) ? Number.POSITIVE_INFINITY : error);
    entry.count++;
    return Number.isNaN(error) ? Number.POSITIVE_INFINITY : error;
  }
  table(): string {
    return [...this.worst].map(([name, { error, count }]) => `${name.padEnd(34)} ${String(count).padStart(5)}  ${error.toExponential(1)}`).join('\n');
  }
}

export interface CliRun {
  code: number | null;
  stdout: Buffer;
  stderr: string;
}

/** Fails loudly when dist/cli/main.js is missing or predates the `table` command. */
export function requireBuiltCli(): void {
  const help = existsSync(cliPath) ? spawnSync(process.execPath, [cliPath, 'table', '--help']) : undefined;
  if (help?.status !== 0) throw new Error(`${cliPath} has no \`table\` command: run \`npm run build:ts\` first`);
}

/** Runs `crosstab table ARGS…`; stdout is kept as bytes (Arrow). */
export async function runTable(args: string[]): Promise<CliRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [cliPath, 'table', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => out.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, stdout: Buffer.concat(out), stderr }));
  });
}
