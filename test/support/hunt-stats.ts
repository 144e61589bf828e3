// The shared parts of the live R differential tests (test/hunt-stats.test.ts,
// test/hunt-stats-designs.test.ts): expressions as trees and their random generator, the
// shapes of the R scripts' answers, the Rscript run and the comparison of every figure with R's.
import { execFile } from 'node:child_process';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect } from 'vitest';
import type { Dataset, TableResult } from '../../src/index.js';
import { FIGURES } from '../../src/report/statistics.js';
import { tableToJSON, type TableStatistics } from '../../src/report/index.js';
import type { TableQuery } from '../../src/index.js';
import { repoRoot } from './paths.js';

/** Relative tolerance of sums and counts, and of standard errors, tests and derived figures. */
export const SUMS = 1e-9;
export const STATS = 1e-7;

// ---------------------------------------------------------------- expressions as trees
export type Item = { value: number; text?: string } | { min?: number; max?: number };
export type Node =
  | { all: true }
  | { and: Node[] }
  | { or: Node[] }
  | { not: Node }
  | { var: string; missing: true }
  | { var: string; items: Item[] }
  /** Holds every one of the values (a multi-response variable). */
  | { var: string; every: number[] }
  /** Answered, and holds none of the values. */
  | { var: string; none: number[] }
  | { code: string };

export interface Variable {
  name: string;
  values: number[];
  labels: Record<string, string>;
  missing: boolean;
  numeric: boolean;
  /** A multi-response variable (each value a set of its own). */
  multi?: boolean;
}
export interface Survey {
  name: string;
  /** Expressions also use all(...) on multi-response variables and none(...) on any (left out of the first hunt, whose seeds keep their tables). */
  extended?: boolean;
  csv: string;
  weight: string;
  design?: { strata: string; psu: string; nest: true };
  /** Variables tables expand whole. */
  expand: string[];
  /** Variables expressions use (values, ranges, blanks). */
  variables: string[];
  codebook: { variables: Record<string, { label?: string; values?: Record<string, string> }>; codes: Record<string, { expr: string; label: string }> };
  codes: Record<string, Node>;
}

// Labels made to trip a parser: quotes, backslashes, commas, '..', parentheses, keywords,
// leading digits, a label that is a number of another value's spelling, non-ASCII text.

export const NAME = /^[\p{L}\p{N}_.\-:#$@+]+$/u;
export const quote = (text: string) => `"${text.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;
// A label is written bare only when it cannot read as anything else: not a keyword, NA, a
// number or a range (the label "0..19" unquoted is the range 0..19).
export const bare = (text: string) => (NAME.test(text) && !/^(and|or|not|na)$/i.test(text) && !text.startsWith('@') && !text.includes('..') && !/^-?[0-9]/.test(text) ? text : quote(text));

/** A number as users write it: 2, 2.0, 2e0, 20e-1, 0.2E1, 1.75e+1. */
export function numberText(value: number, random: () => number): string {
  const pick = Math.floor(random() * 7);
  if (pick === 1 && Number.isInteger(value)) return `${value}.0`;
  if (pick === 2) return `${value}e0`;
  if (pick === 3) return `${value * 10}e-1`;
  if (pick === 4 && value !== 0) return value.toExponential().replace('e', random() < 0.5 ? 'e' : 'E');
  if (pick === 5 && Number.isInteger(value) && value > 0) return `${value / 10}E1`;
  return String(value);
}

export interface Generated {
  tree: Node;
  text: string;
}

export class Generator {
  constructor(
    private readonly random: () => number,
    private readonly survey: Survey,
    private readonly info: Map<string, Variable>,
  ) {}

  private pick<T>(list: readonly T[]): T {
    return list[Math.floor(this.random() * list.length)]!;
  }

  private leaf(): Generated {
    const r = this.random();
    const codes = Object.keys(this.survey.codes);
    if (r < 0.06 && codes.length > 0) {
      const code = this.pick(codes);
      return { tree: { code }, text: code };
    }
    const variable = this.info.get(this.pick(this.survey.variables))!;
    const name = variable.name;
    if (r < 0.14 && variable.missing) return { tree: { var: name, missing: true }, text: `${name}=NA` };
    if (this.survey.extended && r < 0.24) {
      const chosen = [...new Set([this.pick(variable.values), this.pick(variable.values), this.pick(variable.values)].slice(0, 1 + Math.floor(this.random() * 3)))];
      const texts = chosen.map((value) => this.valueText(variable, value)).join(',');
      const keyword = this.random() < 0.8 ? '' : 'upper';
      if (variable.multi && r < 0.19) return { tree: { var: name, every: chosen }, text: `${name}=${keyword ? 'ALL' : 'all'}(${texts})` };
      return { tree: { var: name, none: chosen }, text: `${name}=${keyword ? 'NONE' : 'none'}(${texts})` };
    }
    const count = 1 + Math.floor(this.random() * (this.random() < 0.7 ? 2 : 4));
    const items: Item[] = [];
    const texts: string[] = [];
    for (let i = 0; i < count; i++) {
      if (variable.numeric && this.random() < 0.4) {
        const [item, text] = this.range(variable);
        items.push(item);
        texts.push(text);
      } else {
        const value = this.pick(variable.values);
        items.push({ value });
        texts.push(this.valueText(variable, value));
      }
    }
    return { tree: { var: name, items }, text: `${name}=${texts.join(',')}` };
  }

  private valueText(variable: Variable, value: number): string {
    const label = variable.labels[String(value)];
    if (label !== undefined && this.random() < 0.45) {
      const cased = this.random() < 0.3 ? (this.random() < 0.5 ? label.toUpperCase() : label.toLowerCase()) : label;
      return bare(cased);
    }
    return numberText(value, this.random);
  }

  private range(variable: Variable): [Item, string] {
    const values = variable.values;
    const a = this.pick(values);
    const b = this.pick(values);
    const fractions = [0, 0, 0, -0.5, 0.25, 0.001, -0.75];
    let lo = Math.min(a, b) + this.pick(fractions);
    let hi = Math.max(a, b) + this.pick(fractions);
    if (lo > hi) [lo, hi] = [hi, lo];
    const shape = this.random();
    if (shape < 0.15) return [{ min: lo }, `${numberText(lo, this.random)}..`];
    if (shape < 0.3) return [{ max: hi }, `..${numberText(hi, this.random)}`];
    // Labels as range bounds (degree=Bachelor's..Graduate) when both ends are labelled values.
    const loLabel = variable.labels[String(lo)];
    const hiLabel = variable.labels[String(hi)];
    // (A quoted label cannot be a range bound: the grammar reads `"a".."b"` as an error.)
    if (loLabel !== undefined && hiLabel !== undefined && bare(loLabel) === loLabel && bare(hiLabel) === hiLabel && this.random() < 0.5) return [{ min: lo, max: hi }, `${bare(loLabel)}..${bare(hiLabel)}`];
    return [{ min: lo, max: hi }, `${numberText(lo, this.random)}..${numberText(hi, this.random)}`];
  }

  expression(depth = 0): Generated {
    const r = this.random();
    if (depth >= 3 || r < (depth === 0 ? 0.25 : 0.5)) return this.leaf();
    if (r < 0.47) {
      const inner = this.expression(depth + 1);
      const compound = 'and' in inner.tree || 'or' in inner.tree;
      return { tree: { not: inner.tree }, text: `${this.random() < 0.8 ? 'NOT' : 'not'} ${compound ? `(${inner.text})` : inner.text}` };
    }
    const op = r < 0.75 ? 'and' : 'or';
    // 2..8 terms at the top, 2..3 below it (an expression takes at most 100 terms).
    const size = 2 + Math.floor(this.random() * (depth <= 1 ? 7 : 2));
    const parts: Generated[] = [];
    for (let i = 0; i < size; i++) parts.push(this.expression(depth + 1));
    const keyword = this.random() < 0.85 ? op.toUpperCase() : op;
    const text = parts
      .map((part) => {
        // AND inside OR binds tighter: sometimes left bare; OR inside AND always needs parentheses.
        const needs = 'or' in part.tree || ('and' in part.tree && (op === 'and' || this.random() < 0.5));
        return needs ? `(${part.text})` : part.text;
      })
      .join(` ${keyword} `);
    return { tree: op === 'and' ? { and: parts.map((p) => p.tree) } : { or: parts.map((p) => p.tree) }, text };
  }

  /** An expression of at most `limit` terms (values, ranges, blanks, codes): the grammar refuses more than 100. */
  bounded(limit = 60): Generated {
    for (;;) {
      const candidate = this.expression(0);
      if (terms(candidate.tree) <= limit) return candidate;
    }
  }

  base(): Generated {
    const r = this.random();
    if (r < 0.15) return { tree: { all: true }, text: '*' };
    if (this.survey.name === 'gss' && r < 0.45) {
      const from = 1972 + Math.floor(this.random() * 52);
      const to = Math.min(2024, from + Math.floor(this.random() * 12));
      return { tree: { var: 'year', items: [{ min: from, max: to }] }, text: `year=${from}..${to}` };
    }
    return this.bounded(40);
  }

  /** One to three items, at most 9 entries (R's deff costs grow with the square of a column's rows). */
  axis(): Array<{ variable: string } | Generated> {
    const items: Array<{ variable: string } | Generated> = [];
    const count = 1 + Math.floor(this.random() * 3);
    let entries = 0;
    for (let i = 0; i < count; i++) {
      if (this.random() < 0.55) {
        const variable = this.info.get(this.pick(this.survey.expand))!;
        const size = variable.values.length + (variable.missing ? 1 : 0);
        if (entries + size > 9) continue;
        entries += size;
        items.push({ variable: variable.name });
      } else if (entries < 9) {
        entries++;
        items.push(this.bounded(30));
      }
    }
    if (items.length === 0) items.push(this.bounded(30));
    return items;
  }
}

export function terms(node: Node): number {
  if ('and' in node) return node.and.reduce((sum, n) => sum + terms(n), 0);
  if ('or' in node) return node.or.reduce((sum, n) => sum + terms(n), 0);
  if ('not' in node) return terms(node.not);
  if ('items' in node) return node.items.length;
  if ('every' in node) return node.every.length;
  if ('none' in node) return node.none.length;
  return 1;
}

/** Replaces named codes by their trees (R knows no codes). */
export function expand(node: Node, codes: Record<string, Node>): Node {
  if ('code' in node) return codes[node.code]!;
  if ('and' in node) return { and: node.and.map((n) => expand(n, codes)) };
  if ('or' in node) return { or: node.or.map((n) => expand(n, codes)) };
  if ('not' in node) return { not: expand(node.not, codes) };
  return node;
}

/** Code texts for the codebook (the engine's side of the same trees). */
export function treeText(node: Node): string {
  if ('all' in node) return '*';
  if ('code' in node) return node.code;
  if ('and' in node) return node.and.map((n) => `(${treeText(n)})`).join(' AND ');
  if ('or' in node) return node.or.map((n) => `(${treeText(n)})`).join(' OR ');
  if ('not' in node) return `NOT (${treeText(node.not)})`;
  if ('missing' in node) return `${node.var}=NA`;
  if ('every' in node) return `${node.var}=all(${node.every.join(',')})`;
  if ('none' in node) return `${node.var}=none(${node.none.join(',')})`;
  return `${node.var}=${node.items.map((item) => ('value' in item ? String(item.value) : `${item.min ?? ''}..${item.max ?? ''}`)).join(',')}`;
}

// ---------------------------------------------------------------- the R side's shapes
export interface RCell {
  weighted: number; respondents: number; sumSq: number; total: number; totalSE: number; totalMoE: number;
  columnPct: number; columnPctSE: number; columnPctMoE: number; linSE?: number; deff: number; ebase: number; index: number; rowPct: number; tablePct: number;
}
export interface RAnswer {
  id: string;
  error?: string;
  base: { weighted: number; respondents: number };
  rowShare: number[];
  rowTotals: Array<{ weighted: number; respondents: number }>;
  columnTotals: Array<{ weighted: number; respondents: number }>;
  expanded: Array<{ variable: string; values: number[] | number; baseBlanks: number }>;
  cells: RCell[];
  comparisons: Array<{ row: number; columnA: number; columnB: number; difference: number; se: number; z: number; p: number; adjusted: number }>;
  chisq: Array<{ rowVariable: string; columnVariable: string; statistic: number; ndf: number; ddf: number; p: number }>;
  targets: Array<{ weighted: number; respondents: number }>;
}

export interface Case {
  id: string;
  survey: Survey;
  query: TableQuery;
  correction: 'none' | 'bonferroni' | 'holm';
  result?: TableResult;
  statistics?: TableStatistics;
  targets: Generated[];
  crosstab?: Array<{ weighted: number; respondents: number }>;
  baseCell?: { weighted: number; respondents: number };
  /** The R request of this case. */
  request?: unknown;
}

// jsonlite writes R's non-finite numbers as strings: "NA", "NaN", "Inf", "-Inf".
export const rNumber = (value: unknown): number =>
  value === 'NA' || value === 'NaN' || value === null || value === undefined ? Number.NaN : value === 'Inf' ? Infinity : value === '-Inf' ? -Infinity : typeof value === 'string' ? Number(value) : (value as number);

/** The worst relative error and the number of values compared, per figure. */
export const ledger = new Map<string, { worst: number; count: number }>();
export const ledgerTable = () => [...ledger].map(([name, { worst, count }]) => `${name.padEnd(28)} ${String(count).padStart(6)}  ${worst.toExponential(1)}`).join('\n');
export const problems: string[] = [];

export function agree(what: string, ours: number | null | undefined, reference: unknown, tolerance: number, where: string, scale = 0): void {
  const r = rNumber(reference);
  const o = ours === null || ours === undefined ? Number.NaN : ours;
  if (Number.isNaN(r) || Number.isNaN(o) || !Number.isFinite(r) || !Number.isFinite(o)) {
    if (!(Number.isNaN(r) && Number.isNaN(o)) && o !== r) problems.push(`${where} ${what}: ours ${o}, R ${r}`);
    return;
  }
  const error = o === r ? 0 : Math.abs(o - r) / Math.max(Math.abs(r), Math.abs(o), scale);
  const entry = ledger.get(what) ?? { worst: 0, count: 0 };
  entry.count++;
  entry.worst = Math.max(entry.worst, error);
  ledger.set(what, entry);
  if (error > tolerance && Math.abs(o - r) > 1e-15) problems.push(`${where} ${what}: ours ${o}, R ${r} (relative ${error.toExponential(2)})`);
}

/**
 * The table JSON document (what `crosstab table --format json` and the REST API serve) holds
 * the very figures compared with R: every per-cell figure, comparison and Rao–Scott test,
 * NaN as null, after a trip through JSON text.
 */
export function checkJson(c: Case): void {
  const result = c.result!;
  const s = c.statistics!;
  const json = JSON.parse(JSON.stringify(tableToJSON(result, s))) as ReturnType<typeof tableToJSON>;
  const same = (what: string, fromJson: number | null | undefined, ours: number) => {
    const expected = Number.isFinite(ours) ? ours : null;
    if (fromJson !== expected) problems.push(`${c.id} table JSON ${what}: ${fromJson}, statistics ${ours}`);
  };
  const width = result.columns.length;
  json.cells.forEach((row, r) =>
    row.forEach((cell, col) => {
      const at = r * width + col;
      same(`weighted [${r}][${col}]`, cell.weighted, result.weighted[at]!);
      same(`respondents [${r}][${col}]`, cell.respondents, result.respondents[at]!);
      for (const figure of FIGURES) same(`${figure.field} [${r}][${col}]`, (cell as unknown as Record<string, number | null>)[figure.field], (s as unknown as Record<string, Float64Array>)[figure.field]![at]!);
    }),
  );
  (s.comparisons ?? []).forEach((pair, k) => {
    const j = json.comparisons![k]!;
    if (j.row !== pair.row || j.columnA !== pair.columnA || j.columnB !== pair.columnB) problems.push(`${c.id} table JSON comparison ${k}: ${JSON.stringify(j)}`);
    same(`comparison ${k} difference`, j.difference, pair.difference);
    same(`comparison ${k} standardError`, j.standardError, pair.standardError);
    same(`comparison ${k} z`, j.z, pair.z);
    same(`comparison ${k} pValue`, j.pValue, pair.pValue);
    same(`comparison ${k} adjustedPValue`, j.adjustedPValue, pair.adjustedPValue);
  });
  (s.raoScott ?? []).forEach((test, k) => {
    const j = json.raoScott![k]!;
    same(`Rao-Scott ${k} statistic`, j.statistic, test.statistic);
    same(`Rao-Scott ${k} ndf`, j.ndf, test.ndf);
    same(`Rao-Scott ${k} ddf`, j.ddf, test.ddf);
    same(`Rao-Scott ${k} p`, j.pValue, test.pValue);
  });
}

export function compare(c: Case, r: RAnswer): void {
  checkJson(c);
  const result = c.result!;
  const s = c.statistics!;
  const where = `${c.id} (base ${JSON.stringify(c.query.base)}, ${c.query.percentBase}, missing ${c.query.missing})`;
  agree('base weighted', result.total.weighted, r.base.weighted, SUMS, where);
  agree('base respondents', result.total.respondents, r.base.respondents, 0, where);
  for (const e of r.expanded) {
    const values = Array.isArray(e.values) ? e.values : [e.values];
    for (const axis of [result.rows, result.columns]) {
      const entries = axis.filter((entry) => entry.variable === e.variable);
      if (entries.length === 0) continue;
      const shown = [...new Set(entries.filter((entry) => !entry.missing && !entry.net).map((entry) => Number(entry.value)))];
      if (JSON.stringify(shown) !== JSON.stringify(values)) problems.push(`${where} ${e.variable}: entries ${shown}, R's values ${values}`);
      const blank = entries.some((entry) => entry.missing);
      if (blank !== (c.query.missing === 'show' && e.baseBlanks > 0)) problems.push(`${where} ${e.variable}: "No answer" entry ${blank}, base blanks ${e.baseBlanks}`);
    }
  }
  const width = result.columns.length;
  result.rowTotals.forEach((cell, i) => {
    agree('row total weighted', cell.weighted, r.rowTotals[i]!.weighted, SUMS, `${where} row ${i}`);
    agree('row total respondents', cell.respondents, r.rowTotals[i]!.respondents, 0, `${where} row ${i}`);
    agree('row share', s.rowShare[i], r.rowShare[i], STATS, `${where} row ${i}`);
  });
  result.columnTotals.forEach((cell, j) => {
    agree('column total weighted', cell.weighted, r.columnTotals[j]!.weighted, SUMS, `${where} column ${j}`);
    agree('column total respondents', cell.respondents, r.columnTotals[j]!.respondents, 0, `${where} column ${j}`);
  });
  r.cells.forEach((cell, k) => {
    const at = `${where} cell ${result.rows[Math.floor(k / width)]!.expr} x ${result.columns[k % width]!.expr}`;
    agree('weighted', result.weighted[k], cell.weighted, SUMS, at);
    agree('respondents', result.respondents[k], cell.respondents, 0, at);
    agree('sum of squared weights', result.sumSqWeights[k], cell.sumSq, SUMS, at);
    agree('svytotal', result.weighted[k], cell.total, SUMS, at);
    // A calibrated design's total of a target category has an SE near 0, the rounding of its
    // residuals (5e-9 on totals of 5e7, 1e-16 of them, both sides): an SE is compared relative
    // to at least 1e-8 of its total, so within 1e-15 of the total (the totals themselves agree
    // to 1e-14).
    const floor = Math.abs(result.weighted[k]!) * 1e-8;
    agree('SE of the total', s.weightedSE![k], cell.totalSE, STATS, at, floor);
    agree('MoE of the total', s.weightedMoE![k], cell.totalMoE, STATS, at, floor);
    agree('column %', s.columnPct![k], cell.columnPct, SUMS, at);
    agree('SE of column %', s.columnPctSE![k], cell.columnPctSE, STATS, at, 1e-12);
    agree('MoE of column %', s.columnPctMoE![k], cell.columnPctMoE, STATS, at, 1e-12);
    // The design effect of a proportion of exactly 0 or 1 is 0/0 (the engine's NaN); R's is
    // its rounding noise over p(1-p) of 1e-16 (5e32 seen), so it is compared only elsewhere.
    const proportionOfWhole = (s.columnPct![k] === 0 || s.columnPct![k] === 1) && rNumber(cell.linSE ?? cell.columnPctSE) < 1e-12;
    if (!proportionOfWhole) agree('design effect', s.designEffect![k], cell.deff, STATS, at);
    agree('effective base', s.effectiveBase![k], cell.ebase, SUMS, at);
    agree('index', s.index![k], cell.index, SUMS, at);
    agree('row %', s.rowPct![k], cell.rowPct, SUMS, at);
    agree('table %', s.tablePct![k], cell.tablePct, SUMS, at);
  });
  const ours = new Map((s.comparisons ?? []).map((pair) => [`${pair.row}/${pair.columnA}/${pair.columnB}`, pair]));
  for (const pair of r.comparisons) {
    const key = `${pair.row}/${pair.columnA}/${pair.columnB}`;
    const o = ours.get(key);
    ours.delete(key);
    const at = `${where} comparison row ${pair.row} columns ${pair.columnA}-${pair.columnB}`;
    if (!o) {
      if (!Number.isNaN(rNumber(pair.z))) problems.push(`${at}: not tested by the engine, R z ${pair.z}`);
      continue;
    }
    const scale = Math.max(Math.abs(s.columnPct![pair.row * width + pair.columnA]!), Math.abs(s.columnPct![pair.row * width + pair.columnB]!));
    // Proportions of exactly 0 or 1 in both columns: R's SE is rounding noise (6e-18 from
    // 1 - 1.1e-16), its z of 17 meaningless; the engine's SE is 0 and the pair untestable.
    if (o && o.standardError === 0 && rNumber(pair.se) < 1e-12) {
      agree('difference', o.difference, pair.difference, SUMS, at, 1);
      if (!Number.isNaN(o.z)) problems.push(`${at}: SE 0 but z ${o.z}`);
      continue;
    }
    agree('difference', o.difference, pair.difference, SUMS, at, scale);
    agree('SE of difference', o.standardError, pair.se, STATS, at, 1e-12);
    agree('z', o.z, pair.z, STATS, at, 1e-6);
    agree('p', o.pValue, pair.p, STATS, at);
    agree('adjusted p', o.adjustedPValue, pair.adjusted, STATS, at);
    const adjusted = rNumber(pair.adjusted);
    if (!Number.isNaN(adjusted) && Math.abs(adjusted - 0.05) > 1e-6 && o.significant !== adjusted < 0.05) problems.push(`${at}: significant ${o.significant}, R adjusted p ${adjusted}`);
  }
  for (const [key, pair] of ours) if (!Number.isNaN(pair.z)) problems.push(`${where} comparison ${key}: tested by the engine (z ${pair.z}), not by R`);
  for (const test of r.chisq) {
    const o = s.raoScott?.find((t) => t.rowVariable === test.rowVariable && t.columnVariable === test.columnVariable);
    const at = `${where} Rao-Scott ${test.rowVariable} x ${test.columnVariable}`;
    if (!o) {
      if (!Number.isNaN(rNumber(test.statistic))) problems.push(`${at}: no test from the engine, R F ${test.statistic}`);
      continue;
    }
    agree('Rao-Scott F', o.statistic, test.statistic, STATS, at);
    agree('Rao-Scott ndf', o.ndf, test.ndf, STATS, at);
    agree('Rao-Scott ddf', o.ddf, test.ddf, STATS, at);
    agree('Rao-Scott p', o.pValue, test.p, STATS, at);
  }
  c.crosstab!.forEach((cell, t) => {
    const at = `${where} crosstab target ${JSON.stringify(c.targets[t]!.text)}`;
    agree('target weighted', cell.weighted, r.targets[t]!.weighted, SUMS, at);
    agree('target respondents', cell.respondents, r.targets[t]!.respondents, 0, at);
  });
}


// ---------------------------------------------------------------- running R
const rscript = ['/usr/bin/Rscript', 'Rscript'].find((path) => path === 'Rscript' || existsSync(path))!;
const needR = 'Rscript with the survey and jsonlite packages';
const installR = 'apt-get install -y r-base-core r-cran-survey r-cran-jsonlite';

/** Whether Rscript runs here with the survey and jsonlite packages. */
export const rAvailable = (): Promise<boolean> =>
  promisify(execFile)(rscript, ['-e', 'suppressMessages({library(survey); library(jsonlite)})']).then(
    () => true,
    () => false,
  );

/**
 * The hunt's describe: run where R is, and under CI=true also where it is not (its beforeAll's
 * requireR then fails the run); elsewhere skipped with a warning naming the file.
 */
export function rSuite(hasR: boolean, file: string): typeof describe {
  if (hasR || process.env.CI === 'true') return describe;
  console.warn(`\n*** SKIPPED ${file}: ${needR} is not installed (${installR}). CI runs it. ***\n`);
  return describe.skip as typeof describe;
}

/** Fails the run where R is missing (under CI=true, where rSuite does not skip). */
export function requireR(hasR: boolean): void {
  expect(hasR, `${needR} is required under CI=true (${installR})`).toBe(true);
}

/**
 * Runs test/support/hunt-stats.R once over every query of the run (written to dir/queries.json,
 * answered in dir/r.json) and gives R's answers by case id.
 */
export async function runR(dir: string, request: { datasets: unknown[]; queries: unknown[] }): Promise<Map<string, RAnswer>> {
  writeFileSync(join(dir, 'queries.json'), JSON.stringify(request));
  await promisify(execFile)(rscript, [join(repoRoot, 'test', 'support', 'hunt-stats.R'), join(dir, 'queries.json'), join(dir, 'r.json')], { maxBuffer: 64 << 20 });
  const answers = new Map<string, RAnswer>();
  for (const answer of JSON.parse(readFileSync(join(dir, 'r.json'), 'utf8')) as RAnswer[]) answers.set(answer.id, answer);
  return answers;
}

/**
 * A hunt's afterAll: closes its datasets, removes its folder (kept under HUNT_STATS_KEEP) and
 * prints the worst relative error of every figure compared.
 */
export async function endHunt(dir: string | undefined, opened: Dataset[]): Promise<void> {
  for (const ds of opened) await ds.close();
  if (dir && !process.env.HUNT_STATS_KEEP) rmSync(dir, { recursive: true, force: true });
  if (dir && process.env.HUNT_STATS_KEEP) console.log(`kept ${dir}`);
  console.log(`max relative error vs R, random tables (statistic, compared, error):\n${ledgerTable()}`);
}

/**
 * Compares every case's figures with R's answer and fails with the first 40 disagreements
 * (all of them in dir/problems.txt under HUNT_STATS_KEEP); every case must have been answered.
 */
export function expectAgreement(cases: Case[], answers: Map<string, RAnswer>, dir: string): void {
  for (const c of cases) {
    if (!c.result || !c.statistics) continue;
    const r = answers.get(c.id)!;
    expect(r, c.id).toBeDefined();
    compare(c, r);
  }
  if (process.env.HUNT_STATS_KEEP) writeFileSync(join(dir, 'problems.txt'), problems.join('\n'));
  if (problems.length > 0) {
    const shown = problems.slice(0, 40).join('\n');
    expect.fail(`${problems.length} disagreements with R:\n${shown}`);
  }
  expect(cases.filter((c) => c.result).length).toBe(cases.length);
}
