// Checks a table's derived figures (from the library or from `crosstab table --format json`)
// against R's figures in test/fixtures/r/tables.reference.json: every cell, every comparison.
import { expect } from 'vitest';
import type { TableResult } from '../../src/index.js';
import type { TableJson } from '../../src/report/index.js';
import type { TableStatistics } from '../../src/report/index.js';
import type { Correction, ErrorLedger, RTable } from './support.js';

type Figure = number | null | undefined;

/** One run's figures, whatever the path: cells by (row, column) and comparisons by (row, columnA, columnB). */
export interface Figures {
  rows: Array<{ expr: string }>;
  columns: Array<{ variable?: string; value?: string; letter?: string | null }>;
  cell(row: number, column: number): Record<string, Figure | string>;
  comparison(row: number, columnA: number, columnB: number): Record<string, Figure> | undefined;
  comparisonCount: number;
}

export function figuresFromLibrary(result: TableResult, statistics: TableStatistics): Figures {
  const width = result.columns.length;
  const fields = ['columnPct', 'rowPct', 'tablePct', 'index', 'effectiveBase', 'designEffect', 'columnPctSE', 'columnPctMoE'] as const;
  const byPair = new Map((statistics.comparisons ?? []).map((pair) => [`${pair.row}/${pair.columnA}/${pair.columnB}`, pair]));
  return {
    rows: result.rows,
    columns: result.columns.map((column, c) => ({ ...column, letter: statistics.columnLetters[c] })),
    cell(r, c) {
      const at = r * width + c;
      const out: Record<string, Figure | string> = {};
      for (const field of fields) out[field] = statistics[field]?.[at];
      out['letters'] = statistics.letters?.[at];
      return out;
    },
    comparison(r, a, b) {
      const pair = byPair.get(`${r}/${a}/${b}`);
      return pair && { ...pair, significant: undefined };
    },
    comparisonCount: byPair.size,
  };
}

export function figuresFromJson(json: TableJson): Figures {
  const byPair = new Map((json.comparisons ?? []).map((pair) => [`${pair.row}/${pair.columnA}/${pair.columnB}`, pair]));
  return {
    rows: json.rows,
    columns: json.columns,
    cell: (r, c) => json.cells[r]![c]! as unknown as Record<string, Figure | string>,
    comparison(r, a, b) {
      const pair = byPair.get(`${r}/${a}/${b}`);
      return pair && { ...pair, significant: undefined };
    },
    comparisonCount: byPair.size,
  };
}

export type Run = 'linearization' | 'bonferroni' | 'holm' | 'kish' | 'population';

const TOLERANCE = 1e-9;

/**
 * Compares one run with R. `linearization`: percentages, index, effective base, deff
 * ("replace"), SE, MoE, letters and z/p without correction; `bonferroni` / `holm`:
 * letters and adjusted p; `kish`: Kish SE and the pooled effective-base z/p;
 * `population`: deff = TRUE.
 */
export function checkRun(table: RTable, figures: Figures, run: Run, ledger: ErrorLedger, path: string): void {
  const rowIndex = (id: string) => figures.rows.findIndex((row) => row.expr === id);
  const columnIndex = (variable: string, code: number) => figures.columns.findIndex((column) => column.variable === variable && Number(column.value) === code);
  const near = (statistic: string, ours: Figure | string, reference: number | null, where: string) => {
    const error = ledger.add(`${statistic} (${path})`, ours as Figure, reference);
    expect(error, `${table.id} ${where} ${statistic}: ours ${String(ours)} vs R ${String(reference)}`).toBeLessThanOrEqual(TOLERANCE);
  };
  for (const expected of table.cells) {
    const r = rowIndex(expected.row);
    const c = columnIndex(expected.columnVariable, expected.column);
    expect(r, `row ${expected.row}`).toBeGreaterThanOrEqual(0);
    expect(c, `column ${expected.columnVariable}=${expected.column}`).toBeGreaterThanOrEqual(0);
    const cell = figures.cell(r, c);
    const where = `${expected.row} x ${expected.columnVariable}=${expected.column}`;
    expect(figures.columns[c]!.letter, `${where} column letter`).toBe(expected.letter);
    if (run === 'linearization') {
      near('column proportion', cell['columnPct'], expected.proportion, where);
      near('vertical % (R verticalPct / 100)', cell['columnPct'], expected.verticalPct / 100, where);
      near('horizontal % (R horizontalPct / 100)', cell['rowPct'], expected.horizontalPct / 100, where);
      near('table % (R tablePct / 100)', cell['tablePct'], expected.tablePct / 100, where);
      near('index', cell['index'], expected.index, where);
      near('Kish effective base', cell['effectiveBase'], expected.kishEffectiveBase, where);
      near('deff (deff = "replace")', cell['designEffect'], expected.deffReplacement, where);
      near('SE, linearization', cell['columnPctSE'], expected.se, where);
      near('95% MoE, linearization', cell['columnPctMoE'], expected.marginOfError95, where);
      expect(cell['letters'], `${where} letters (none)`).toBe(expected.letters.none);
    } else if (run === 'bonferroni' || run === 'holm') {
      expect(cell['letters'], `${where} letters (${run})`).toBe(expected.letters[run as Correction]);
    } else if (run === 'kish') {
      near('SE, Kish', cell['columnPctSE'], expected.kishSE, where);
      near('95% MoE, Kish', cell['columnPctMoE'], 1.9599639845400536 * expected.kishSE, where);
    } else {
      near('deff (deff = TRUE)', cell['designEffect'], expected.deff, where);
    }
  }
  if (run === 'population') return;
  for (const expected of table.comparisons) {
    const r = rowIndex(expected.row);
    const a = columnIndex(expected.columnVariable, expected.columnA);
    const b = columnIndex(expected.columnVariable, expected.columnB);
    const pair = figures.comparison(r, a, b);
    const where = `${expected.row} ${expected.columnVariable} ${expected.columnA} vs ${expected.columnB}`;
    expect(pair, `${table.id} ${where}: comparison missing`).toBeDefined();
    if (run === 'linearization') {
      near('difference of proportions', pair!['difference'], expected.difference, where);
      near('SE of difference', pair!['standardError'], expected.se, where);
      near('z, linearization', pair!['z'], expected.z, where);
      near('p, linearization', pair!['pValue'], expected.p, where);
      near('adjusted p (none)', pair!['adjustedPValue'], expected.p, where);
    } else if (run === 'bonferroni') {
      near('p, Bonferroni', pair!['adjustedPValue'], expected.pBonferroni, where);
    } else if (run === 'holm') {
      near('p, Holm', pair!['adjustedPValue'], expected.pHolm, where);
    } else {
      near('z, pooled effective', pair!['z'], expected.pooledEffectiveZ, where);
      near('p, pooled effective', pair!['pValue'], expected.pooledEffectiveP, where);
    }
  }
  // No pair beyond R's: every comparison is within one column variable.
  expect(figures.comparisonCount).toBe(table.comparisons.length);
}
