// A seeded random differential test of the statistics against R, computed live: random tables
// on GSS (weights only) and NHANES (strata SDMVSTRA, PSUs SDMVPSU, nested), written the way
// users write them (AND/OR chains of up to 8 terms, NOT, value lists mixing values and ranges,
// decimals and exponents, value labels of a codebook with odd labels, named codes, VAR=NA),
// random bases, random rows x columns of expressions and whole variables, "No answer" shown or
// hidden, total or valid percentages, every correction. Every figure tableStatistics() gives
// with its default methods (linearization SE and column test, deff "replace", the base as a
// domain of the file; not the options se: 'kish', test: 'pooled-effective', deff: 'population',
// domain: 'base')
// (cells, totals, percentages of the column / row / table, index, effective base, SEs and 95%
// margins of the proportion and of the total, design effects, column comparisons with their
// adjusted p-values, Rao–Scott tests) and crosstab()'s targets are compared with one Rscript
// process (test/support/hunt-stats.R) fed every query of the run; that script evaluates each
// condition from its tree, never from the engine's text.
//
// HUNT_STATS_RUNS (tables per dataset; default 10 GSS, 40 NHANES) and HUNT_STATS_SEED (default 20261129)
// make a longer or another hunt. Under CI=true a missing Rscript fails the test.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildDataset, openDataset, type Dataset, type TableQuery, type TableResult } from '../src/index.js';
import { tableStatistics } from '../src/report/index.js';
import { seededRandom } from './support/large-dataset.js';
import { gssCsv, nhanesCsv } from './support/paths.js';
import { sharedBuild } from './support/shared-builds.js';
import { endHunt, expand, expectAgreement, Generator, problems, rAvailable, requireR, rSuite, runR, treeText, type Case, type Generated, type Node, type RAnswer, type Survey, type Variable } from './support/hunt-stats.js';

// Per dataset: R takes about 2 s of CPU per GSS table (every variance is of a domain padded to
// the file's 75,699 respondents) and 0.2 s per NHANES one.
const RUNS = { gss: Number(process.env.HUNT_STATS_RUNS ?? 10), nhanes: Number(process.env.HUNT_STATS_RUNS ?? 40) };
const SEED = Number(process.env.HUNT_STATS_SEED ?? 20261129);
const hasR = await rAvailable();

const gssCodes: Record<string, Node> = {
  'YOUNG-W': { and: [{ var: 'sex', items: [{ value: 2 }] }, { var: 'age', items: [{ min: 18, max: 34.5 }] }] },
  'BA+': { var: 'degree', items: [{ value: 3 }, { value: 4 }] },
  'LIB-OR-NA': { or: [{ var: 'polviews', items: [{ max: 3 }] }, { var: 'polviews', missing: true }] },
};
const nhanesCodes: Record<string, Node> = {
  'ADULTS-40+': { var: 'agecat', items: [{ value: 3 }, { value: 4 }] },
  'OLD-HI': { and: [{ var: 'agecat', items: [{ min: 3.5 }] }, { var: 'HI_CHOL', items: [{ value: 1 }] }] },
};

const surveys: Survey[] = [
  {
    name: 'gss',
    csv: gssCsv,
    weight: 'wtssps',
    expand: ['race', 'sex', 'degree', 'padeg', 'madeg', 'relig', 'polviews', 'fefam', 'ballot'],
    variables: ['race', 'sex', 'degree', 'padeg', 'madeg', 'relig', 'polviews', 'fefam', 'ballot', 'age', 'year'],
    codebook: {
      variables: {
        race: { label: 'Race', values: { '1': 'White, non-"Hispanic"', '2': 'Black (and) OR mixed', '3': 'Other..misc \\ NOT' } },
        sex: { values: { '1': 'Male', '2': 'Female' } },
        degree: { values: { '0': '<HS', '1': 'High school', '2': 'Assoc./JC', '3': "Bachelor's", '4': 'Grad+ (MA, PhD)' } },
        polviews: { values: { '1': '1 extremely liberal', '4': 'Moderate, middle of the road', '7': 'Ext. conservative' } },
        fefam: { values: { '1': 'Strongly agree', '2': 'agree', '3': 'Dis-agree', '4': 'Très désaccord' } },
        relig: { values: { '4': 'None', '5': 'Other', '9': 'Muslim/Islam', '13': 'Inter-nondenominational' } },
      },
      codes: {},
    },
    codes: gssCodes,
  },
  {
    name: 'nhanes',
    csv: nhanesCsv,
    weight: 'WTMEC2YR',
    design: { strata: 'SDMVSTRA', psu: 'SDMVPSU', nest: true },
    expand: ['HI_CHOL', 'race', 'agecat', 'RIAGENDR'],
    variables: ['HI_CHOL', 'race', 'agecat', 'RIAGENDR', 'SDMVSTRA', 'SDMVPSU'],
    codebook: {
      variables: {
        HI_CHOL: { values: { '0': 'No (< 240)', '1': 'Yes, > 240 mg/dl' } },
        race: { values: { '1': 'Hispanic', '2': 'Non-Hispanic "white"', '3': 'Non-Hispanic black', '4': 'Other (incl. multi)' } },
        agecat: { values: { '1': '0..19', '2': '(19,39]', '3': '(39,59]', '4': '60+' } },
        RIAGENDR: { values: { '1': 'Male', '2': 'Female' } },
      },
      codes: {},
    },
    codes: nhanesCodes,
  },
];


const suite = rSuite(hasR, 'test/hunt-stats.test.ts');

suite(`statistics against R, live (seed ${SEED}, ${RUNS.gss} GSS and ${RUNS.nhanes} NHANES tables)`, () => {
  const cases: Case[] = [];
  let answers = new Map<string, RAnswer>();
  let dir: string;
  const opened: Dataset[] = [];

  beforeAll(async () => {
    requireR(hasR);
    dir = mkdtempSync(join(tmpdir(), 'hunt-stats-'));
    const random = seededRandom(SEED);
    for (const survey of surveys) {
      const codebook = structuredClone(survey.codebook);
      for (const [name, tree] of Object.entries(survey.codes)) codebook.codes[name] = { expr: treeText(tree), label: `code ${name}` };
      const codebookPath = join(dir, `${survey.name}.codebook.json`);
      writeFileSync(codebookPath, JSON.stringify(codebook));
      const path = await sharedBuild('hunt-stats', `${survey.name} ${JSON.stringify(codebook)}`, (out) =>
        buildDataset(survey.csv, { weights: [survey.weight], survey: survey.name, codebook: codebookPath, out, ...(survey.design ? { design: survey.design } : {}) }),
      );
      const ds = await openDataset(path);
      opened.push(ds);
      const info = new Map<string, Variable>();
      for (const v of ds.info.variables) {
        if (!v.values) continue;
        const labels: Record<string, string> = {};
        for (const value of v.values) if (value.label !== undefined) labels[value.value] = value.label;
        info.set(v.name, { name: v.name, values: v.values.map((value) => Number(value.value)), labels, missing: v.missing > 0, numeric: v.kind === 'numeric' });
      }
      const generator = new Generator(random, survey, info);
      for (let n = 0; n < RUNS[survey.name as keyof typeof RUNS]; n++) {
        const base = generator.base();
        const rows = generator.axis();
        const columns = generator.axis();
        const toItem = (item: { variable: string } | Generated) => ('variable' in item ? { variable: item.variable } : random() < 0.3 ? { expr: item.text, label: `e${n}` } : item.text);
        const query: TableQuery = {
          base: base.text,
          rows: rows.map(toItem),
          columns: columns.map(toItem),
          missing: random() < 0.7 ? 'show' : 'hide',
          percentBase: random() < 0.6 ? 'total' : 'valid',
        };
        const correction = (['none', 'bonferroni', 'holm'] as const)[Math.floor(random() * 3)]!;
        const targets = [generator.bounded(), generator.bounded(), generator.bounded()];
        const c: Case = { id: `${survey.name}-${SEED}-${n}`, survey, query, correction, targets };
        (c as Case & { trees: unknown }).trees = { base, rows, columns };
        cases.push(c);
        try {
          c.result = await ds.table(query);
          c.statistics = tableStatistics(c.result, { stats: 'all', correction });
          const crosstab = await ds.crosstab({ base: base.text, targets: targets.map((t) => t.text) });
          c.crosstab = crosstab.targets.map((cell) => ({ weighted: cell.weighted, respondents: cell.respondents }));
        } catch (error) {
          delete c.result;
          delete c.statistics;
          if (process.env.HUNT_STATS_KEEP) console.log(String((error as Error).stack));
          problems.push(`${c.id}: the engine refused base ${JSON.stringify(base.text)} rows ${JSON.stringify(query.rows)} columns ${JSON.stringify(query.columns)}: ${(error as Error).message}`);
          continue;
        }
        // The R request: entries as trees or (variable, value, missing), groups and chisq pairs from the query.
        const entryOf = (items: Array<{ variable: string } | Generated>, entries: TableResult['rows']) => {
          const out: unknown[] = [];
          let at = 0;
          for (const item of items) {
            if ('variable' in item) {
              while (at < entries.length && entries[at]!.variable === item.variable && (out.length === 0 || true)) {
                const entry = entries[at]!;
                out.push(entry.missing ? { variable: item.variable, missing: true } : { variable: item.variable, value: entry.value });
                at++;
                if (entry.missing) break;
                const next = entries[at];
                if (next && next.variable === item.variable && !next.missing && Number(next.value) <= Number(entry.value)) break; // the same variable again
              }
            } else {
              expect(entries[at]!.expr, `${c.id}: entry of ${item.text}`).toBe(item.text);
              out.push({ tree: expand(item.tree, survey.codes) });
              at++;
            }
          }
          expect(at, `${c.id}: entries consumed`).toBe(entries.length);
          return out;
        };
        const rowEntries = entryOf(rows, c.result.rows);
        const columnEntries = entryOf(columns, c.result.columns);
        const groups: number[][] = [];
        let at = 0;
        for (const item of columns) {
          if ('variable' in item) {
            const group: number[] = [];
            while (at < c.result.columns.length && c.result.columns[at]!.variable === item.variable) {
              const entry = c.result.columns[at]!;
              if (!entry.missing) group.push(at);
              at++;
              if (entry.missing) break;
              const next = c.result.columns[at];
              if (next && next.variable === item.variable && !next.missing && Number(next.value) <= Number(entry.value)) break;
            }
            if (group.length > 1) groups.push(group);
          } else at++;
        }
        const rowVariables = [...new Set(rows.filter((i): i is { variable: string } => 'variable' in i).map((i) => i.variable))];
        const columnVariables = [...new Set(columns.filter((i): i is { variable: string } => 'variable' in i).map((i) => i.variable))];
        const chisq = rowVariables.flatMap((rowVariable) => columnVariables.map((columnVariable) => ({ rowVariable, columnVariable })));
        c.request = {
          id: c.id,
          dataset: survey.name,
          base: expand(base.tree, survey.codes),
          rows: rowEntries,
          columns: columnEntries,
          expanded: [...new Set([...rowVariables, ...columnVariables])],
          percentBase: query.percentBase,
          correction,
          groups,
          chisq,
          targets: targets.map((t) => expand(t.tree, survey.codes)),
        };
      }
    }
    const request = {
      datasets: surveys.map((s) => ({ name: s.name, csv: s.csv, weight: s.weight, ...(s.design ? { strata: s.design.strata, psu: s.design.psu } : {}) })),
      queries: cases.filter((c) => c.request).map((c) => c.request),
    };
    answers = await runR(dir, request);
    if (process.env.HUNT_STATS_KEEP) {
      const plain = (value: unknown): unknown => (ArrayBuffer.isView(value) ? Array.from(value as Float64Array) : value);
      const dump = cases.map((c) => ({ id: c.id, query: c.query, rows: c.result?.rows, columns: c.result?.columns, statistics: c.statistics && Object.fromEntries(Object.entries(c.statistics).map(([k, v]) => [k, plain(v)])) }));
      writeFileSync(join(dir, 'engine.json'), JSON.stringify(dump, (_, v) => (typeof v === 'number' && !Number.isFinite(v) ? String(v) : v)));
    }
  }, Math.max(600_000, (RUNS.gss * 20 + RUNS.nhanes * 4) * 1000));

  afterAll(() => endHunt(dir, opened));

  it('every figure of every random table equals R\'s', () => {
    expectAgreement(cases, answers, dir);
  });
});
