// The second seeded random differential test against R's survey package computed live: what
// test/hunt-stats.test.ts leaves out. Random tables (its generator: AND/OR/NOT chains, value
// lists, ranges, labels, blanks; here also all(...) and none(...)) on
// - NHANES with three made-up multi-response variables (a dichotomy set `cover` with partial
//   blanks, a delimited `brands` with empty and ";" answers, a category set `pick`), seeded
//   from the run's seed, on its strata and PSUs and on the simple design: multi-response
//   rows, columns (column tests of values that share respondents), nets, none/all;
// - weights made by weightDataset() on them (rake, poststratify, linear calibration with
//   random targets): the Taylor design's SEs are R's rake()/postStratify()/calibrate()
//   design's, the simple design's those of the new weight as a fixed weight (docs/weighting.md);
// - NHANES with replicate weights (test/fixtures/r/nhanes-replicates.csv.gz; JKn, JK1,
//   bootstrap, BRR or Fay by seed, with or without mse) and the same multi-response columns;
// - GSS (simple design);
// each table run weighted, unweighted (`weight: null`) or with a made weight, and read with
// random tableStatistics() options: se 'kish', test 'pooled-effective', deff 'population',
// domain 'base' (simple designs), corrections. Every figure is compared with one Rscript
// process (test/support/hunt-stats.R) fed every table of the run, which evaluates each
// condition from its tree, multi-response answers from the CSV's columns.
//
// HUNT_STATS_RUNS (tables per dataset; default 6, GSS 1; HUNT_STATS_GSS_RUNS sets GSS's apart:
// R takes up to 30 s for one) and HUNT_STATS_SEED (default 20261130) make a longer or another
// hunt; HUNT_STATS_KEEP keeps the run's folder. Under CI=true a missing Rscript fails the test.
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync, gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildDataset, openDataset, weightDataset, type Dataset, type TableQuery, type TableResult } from '../src/index.js';
import { tableStatistics, type TableStatisticsOptions } from '../src/report/index.js';
import type { BuildOptions } from '../src/build/build-options.js';
import { seededRandom } from './support/large-dataset.js';
import { gssCsv, nhanesCsv, repoRoot } from './support/paths.js';
import { endHunt, expand, expectAgreement, Generator, problems, rAvailable, requireR, rSuite, runR, type Case, type Generated, type Node, type RAnswer, type Survey, type Variable, treeText } from './support/hunt-stats.js';
import { designFixture } from './design/support.js';

const RUNS = Number(process.env.HUNT_STATS_RUNS ?? 6);
const GSS_RUNS = Number(process.env.HUNT_STATS_GSS_RUNS ?? process.env.HUNT_STATS_RUNS ?? 1);
const SEED = Number(process.env.HUNT_STATS_SEED ?? 20261130);
const hasR = await rAvailable();

// ---------------------------------------------------------------- the datasets
const MULTI = [
  { name: 'cover', columns: ['c1', 'c2', 'c3'], counted: '1', label: 'Cover' },
  { name: 'pick', columns: ['p1', 'p2'], label: 'Picked' },
];
const DELIMITED = { name: 'brands', columns: ['brands'], delimiter: ';' };
const multiCodebook = {
  variables: {
    c1: { label: 'Private, "employer"' },
    c2: { label: 'Public (Medicare) OR other' },
    c3: { label: 'none..of these' },
    p1: { values: { '1': 'Cola', '2': 'Lemon, lime', '3': 'Root beer', '4': 'Ginger' } },
    race: { values: { '1': 'Hispanic', '2': 'Non-Hispanic "white"', '3': 'Non-Hispanic black', '4': 'Other (incl. multi)' } },
    agecat: { values: { '1': '0..19', '2': '(19,39]', '3': '(39,59]', '4': '60+' } },
    RIAGENDR: { values: { '1': 'Male', '2': 'Female' } },
  },
  multi: MULTI,
  codes: {},
};

/**
 * A copy of a CSV with the made-up multi-response columns appended as text (so the engine and
 * R read the same numbers): each answer's chance depends on race and age group.
 */
function withMultiColumns(csv: string, out: string, random: () => number): void {
  const lines = gunzipSync(readFileSync(csv)).toString('utf8').trimEnd().split('\n');
  const header = lines[0]!.split(',');
  const race = header.indexOf('race');
  const age = header.indexOf('agecat');
  const outLines = [`${lines[0]},c1,c2,c3,brands,p1,p2`];
  for (const line of lines.slice(1)) {
    const fields = line.split(',');
    const r = Number(fields[race]);
    const a = Number(fields[age]);
    const noCover = random() < 0.05;
    const dummy = (chance: number) => (noCover || random() < 0.04 ? '' : random() < chance ? '1' : '2');
    const c = [dummy(0.25 + 0.1 * a), dummy(0.15 + 0.12 * r), dummy(0.3)];
    const u = random();
    const brands = u < 0.06 ? '' : u < 0.1 ? ';' : [1, 2, 3, 4, 5].filter((v) => random() < (v === r ? 0.6 : 0.2 + 0.05 * a)).join(random() < 0.8 ? ';' : ' ; ');
    const p1 = random() < 0.1 ? '' : String(1 + Math.floor(random() * (a === 1 ? 2 : 4)));
    const p2 = random() < 0.5 ? '' : String(1 + Math.floor(random() * 4));
    outLines.push(`${line},${c.join(',')},${brands},${p1},${p2}`);
  }
  writeFileSync(out, gzipSync(outLines.join('\n') + '\n'));
}

type Kind = 'taylor' | 'simple' | 'replicate' | 'gss';
interface Calibration {
  name: string;
  method: 'rake' | 'poststratify' | 'linear';
  total?: number;
  margins: Array<{ variable: string; proportions: Record<string, number> }>;
}
interface HuntSurvey extends Survey {
  kind: Kind;
  build: Omit<BuildOptions, 'out'>;
  calibrations: Calibration[];
  /** Multi-response variables, for R. */
  multi: Array<{ name: string; columns: string[]; counted?: string; delimiter?: string }>;
  replicate?: { type: string; columns: string[]; scale: number; rscales: number[]; mse: boolean; rho?: number };
}

const nhanesVariables = ['HI_CHOL', 'race', 'agecat', 'RIAGENDR', 'SDMVSTRA', 'cover', 'brands', 'pick'];
const nhanesCodes: Record<string, Node> = {
  'COVER-ALL2': { var: 'cover', every: [1, 2] },
  'OLD-BRAND3': { and: [{ var: 'agecat', items: [{ min: 3.5 }] }, { var: 'brands', items: [{ value: 3 }] }] },
};

/** Random targets for a weighting of the NHANES file: proportions near the file's own. */
function calibrationOf(name: string, method: Calibration['method'], random: () => number): Calibration {
  const shares: Record<string, number[]> = { race: [0.17, 0.62, 0.13, 0.08], agecat: [0.27, 0.27, 0.28, 0.18], RIAGENDR: [0.49, 0.51] };
  const variables = method === 'poststratify' ? [random() < 0.5 ? 'race' : 'agecat'] : random() < 0.5 ? ['race', 'agecat'] : ['race', 'agecat', 'RIAGENDR'];
  const margins = variables.map((variable) => {
    const raw = shares[variable]!.map((share) => share * (0.8 + 0.4 * random()));
    const sum = raw.reduce((a, b) => a + b, 0);
    const proportions: Record<string, number> = {};
    raw.forEach((value, k) => (proportions[String(k + 1)] = value / sum));
    // Proportions summing to 1 within rounding: the last takes what is left.
    const keys = Object.keys(proportions);
    proportions[keys[keys.length - 1]!] = 1 - keys.slice(0, -1).reduce((a, k) => a + proportions[k]!, 0);
    return { variable, proportions };
  });
  return { name, method, ...(random() < 0.5 ? { total: Math.round(2e8 + 1e8 * random()) } : {}), margins };
}

// ---------------------------------------------------------------- the hunt
const suite = rSuite(hasR, 'test/hunt-stats-designs.test.ts');

interface DesignCase extends Case {
  options: TableStatisticsOptions;
  weight: string | null | undefined;
}

suite(`multi-response, weighting, replicate designs and statistics options against R, live (seed ${SEED}, ${RUNS} tables per NHANES design, ${GSS_RUNS} GSS)`, () => {
  const cases: DesignCase[] = [];
  let answers = new Map<string, RAnswer>();
  let dir: string;
  const opened: Dataset[] = [];

  beforeAll(async () => {
    requireR(hasR);
    dir = mkdtempSync(join(tmpdir(), 'hunt-stats-designs-'));
    const random = seededRandom(SEED);
    const nhanesMulti = join(dir, 'nhanes-multi.csv.gz');
    withMultiColumns(nhanesCsv, nhanesMulti, random);
    const replicatesMulti = join(dir, 'nhanes-replicates-multi.csv.gz');
    withMultiColumns(join(repoRoot, 'test', 'fixtures', 'r', 'nhanes-replicates.csv.gz'), replicatesMulti, random);
    const types = ['JKn', 'JK1', 'bootstrap', 'BRR', 'Fay'];
    const type = types[Math.floor(random() * types.length)]!;
    const mse = random() < 0.35;
    const fixture = designFixture.tables.find((t) => t.build.replicateType === type && !t.build.givenDegf)!.build;
    const multiR = [...MULTI, DELIMITED];
    const nhanesBase = { weight: 'WTMEC2YR', expand: ['HI_CHOL', 'race', 'agecat', 'RIAGENDR', 'cover', 'brands', 'pick'], variables: nhanesVariables, codes: nhanesCodes, extended: true, multi: multiR };
    const surveys: HuntSurvey[] = [
      {
        ...nhanesBase,
        name: 'taylor',
        kind: 'taylor',
        csv: nhanesMulti,
        design: { strata: 'SDMVSTRA', psu: 'SDMVPSU', nest: true },
        build: { weights: ['WTMEC2YR'], survey: 'NHANES', design: { strata: 'SDMVSTRA', psu: 'SDMVPSU', nest: true }, multi: [{ column: 'brands', delimiter: ';' }] },
        codebook: structuredClone(multiCodebook),
        calibrations: [calibrationOf('wt_rake', 'rake', random), calibrationOf('wt_post', 'poststratify', random), calibrationOf('wt_lin', 'linear', random)],
      },
      {
        ...nhanesBase,
        name: 'simple',
        kind: 'simple',
        csv: nhanesMulti,
        build: { weights: ['WTMEC2YR'], survey: 'NHANES', multi: [{ column: 'brands', delimiter: ';' }] },
        codebook: structuredClone(multiCodebook),
        calibrations: [calibrationOf('wt_rake', 'rake', random)],
      },
      {
        ...nhanesBase,
        name: 'replicate',
        kind: 'replicate',
        csv: replicatesMulti,
        build: {
          weights: ['WTMEC2YR'],
          survey: 'NHANES',
          multi: [{ column: 'brands', delimiter: ';' }],
          design: { replicateWeights: fixture.replicateWeights!, replicateType: type as 'JKn', scale: fixture.scale!, rscales: fixture.rscales!, mse, ...(fixture.rho !== undefined ? { rho: fixture.rho } : {}) },
        },
        codebook: structuredClone(multiCodebook),
        calibrations: [],
        replicate: { type, columns: fixture.replicateWeights!, scale: fixture.scale!, rscales: fixture.rscales!, mse, ...(fixture.rho !== undefined ? { rho: fixture.rho } : {}) },
      },
      {
        name: 'gss',
        kind: 'gss',
        csv: gssCsv,
        weight: 'wtssps',
        expand: ['race', 'sex', 'degree', 'polviews', 'ballot'],
        variables: ['race', 'sex', 'degree', 'padeg', 'polviews', 'fefam', 'ballot', 'age', 'year'],
        codebook: { variables: { degree: { values: { '0': '<HS', '1': 'High school', '2': 'Assoc./JC', '3': "Bachelor's", '4': 'Grad+ (MA, PhD)' } } }, codes: {} },
        codes: {},
        extended: true,
        build: { weights: ['wtssps'], survey: 'GSS' },
        calibrations: [],
        multi: [],
      },
    ];
    for (const survey of surveys) {
      const codebookPath = join(dir, `${survey.name}.codebook.json`);
      const codebook = structuredClone(survey.codebook);
      for (const [name, tree] of Object.entries(survey.codes)) codebook.codes[name] = { expr: treeText(tree), label: `code ${name}` };
      writeFileSync(codebookPath, JSON.stringify(codebook));
      const path = join(dir, `${survey.name}.arrow`);
      await buildDataset(survey.csv, { ...survey.build, codebook: codebookPath, out: path });
      for (const calibration of survey.calibrations) {
        const { name, method, ...targets } = calibration;
        const report = await weightDataset(path, { targets, method, name });
        expect(report.sets.every((set) => set.converged), `${survey.name} ${name} converged`).toBe(true);
      }
      const ds = await openDataset(path);
      opened.push(ds);
      const info = new Map<string, Variable>();
      for (const v of ds.info.variables) {
        if (!v.values) continue;
        const labels: Record<string, string> = {};
        for (const value of v.values) if (value.label !== undefined) labels[value.value] = value.label;
        info.set(v.name, { name: v.name, values: v.values.map((value) => Number(value.value)), labels, missing: v.missing > 0, numeric: v.kind === 'numeric' || v.kind === 'multi', multi: v.kind === 'multi' });
      }
      const generator = new Generator(random, survey, info);
      const runs = survey.kind === 'gss' ? GSS_RUNS : RUNS;
      for (let n = 0; n < runs; n++) {
        const base = generator.base();
        const rows = generator.axis();
        const columns = generator.axis();
        const toItem = (item: { variable: string } | Generated) => ('variable' in item ? { variable: item.variable } : random() < 0.3 ? { expr: item.text, label: `e${n}` } : item.text);
        const multiOnAxis = [...rows, ...columns].some((item) => 'variable' in item && info.get(item.variable)!.multi);
        const multiColumns = columns.some((item) => 'variable' in item && info.get(item.variable)!.multi);
        const weights: Array<string | null | undefined> = [undefined, null, ...survey.calibrations.map((c) => c.name)];
        const weight = weights[Math.floor(random() * weights.length)];
        const query: TableQuery = {
          base: base.text,
          rows: rows.map(toItem),
          columns: columns.map(toItem),
          missing: random() < 0.7 ? 'show' : 'hide',
          // Valid percentages add up a variable's entries: refused with a multi-response variable on an axis.
          percentBase: !multiOnAxis && random() < 0.4 ? 'valid' : 'total',
          ...(weight !== undefined ? { weight } : {}),
        };
        const correction = (['none', 'bonferroni', 'holm'] as const)[Math.floor(random() * 3)]!;
        const se = random() < 0.3 ? 'kish' : 'linearization';
        // The pooled test is refused on columns that share respondents.
        const test = multiColumns ? 'linearization' : se === 'kish' ? (random() < 0.8 ? 'pooled-effective' : 'linearization') : random() < 0.2 ? 'pooled-effective' : 'linearization';
        const deff = random() < 0.4 ? 'population' : 'replace';
        const domain = (survey.kind === 'simple' || survey.kind === 'gss') && random() < 0.4 ? 'base' : 'file';
        const options: TableStatisticsOptions = { stats: 'all', correction, se, test, deff, domain };
        const targets = [generator.bounded(), generator.bounded(), generator.bounded()];
        const c: DesignCase = { id: `${survey.name}-${SEED}-${n}`, survey, query, correction, targets, options, weight };
        cases.push(c);
        try {
          c.result = await ds.table(query);
          c.statistics = tableStatistics(c.result, options);
          const crosstab = await ds.crosstab({ base: base.text, targets: targets.map((t) => t.text), ...(weight !== undefined ? { weight } : {}) });
          c.crosstab = crosstab.targets.map((cell) => ({ weighted: cell.weighted, respondents: cell.respondents }));
        } catch (error) {
          delete c.result;
          delete c.statistics;
          if (process.env.HUNT_STATS_KEEP) console.log(String((error as Error).stack));
          problems.push(`${c.id}: the engine refused base ${JSON.stringify(base.text)} rows ${JSON.stringify(query.rows)} columns ${JSON.stringify(query.columns)} options ${JSON.stringify(options)}: ${(error as Error).message}`);
          continue;
        }
        const walk = (items: Array<{ variable: string } | Generated>, entries: TableResult['rows']) => {
          const out: unknown[] = [];
          const groups: Array<{ columns: number[]; overlap: boolean }> = [];
          let at = 0;
          for (const item of items) {
            if (!('variable' in item)) {
              expect(entries[at]!.expr, `${c.id}: entry of ${item.text}`).toBe(item.text);
              out.push({ tree: expand(item.tree, survey.codes) });
              at++;
              continue;
            }
            // A variable's entries: its values in increasing order, then its net (multi-response), then its "No answer".
            const values: number[] = [];
            let last = -Infinity;
            let net = false;
            while (at < entries.length && entries[at]!.variable === item.variable) {
              const entry = entries[at]!;
              if (entry.missing) {
                out.push({ variable: item.variable, missing: true });
                at++;
                break;
              }
              if (entry.net) {
                if (net) break;
                net = true;
                out.push({ variable: item.variable, net: true });
              } else {
                if (net || Number(entry.value) <= last) break;
                last = Number(entry.value);
                values.push(at);
                out.push({ variable: item.variable, value: entry.value });
              }
              at++;
            }
            if (values.length > 1) groups.push({ columns: values, overlap: info.get(item.variable)!.multi === true });
          }
          expect(at, `${c.id}: entries consumed`).toBe(entries.length);
          return { entries: out, groups };
        };
        const rowWalk = walk(rows, c.result.rows);
        const columnWalk = walk(columns, c.result.columns);
        const single = (items: Array<{ variable: string } | Generated>) => [...new Set(items.filter((i): i is { variable: string } => 'variable' in i && !info.get(i.variable)!.multi).map((i) => i.variable))];
        const rowVariables = single(rows);
        const columnVariables = single(columns);
        const chisq = rowVariables.flatMap((rowVariable) => columnVariables.map((columnVariable) => ({ rowVariable, columnVariable })));
        // Rao–Scott is not defined for a multi-response variable: the engine gives no test for it.
        const multiVariables = new Set([...rows, ...columns].filter((i): i is { variable: string } => 'variable' in i && info.get(i.variable)!.multi === true).map((i) => i.variable));
        for (const t of c.statistics.raoScott ?? []) if (multiVariables.has(t.rowVariable) || multiVariables.has(t.columnVariable)) problems.push(`${c.id}: a Rao-Scott test of ${t.rowVariable} x ${t.columnVariable}, a multi-response variable`);
        c.request = {
          id: c.id,
          dataset: survey.name,
          base: expand(base.tree, survey.codes),
          rows: rowWalk.entries,
          columns: columnWalk.entries,
          expanded: [...new Set([...rows, ...columns].filter((i): i is { variable: string } => 'variable' in i).map((i) => i.variable))],
          percentBase: query.percentBase,
          correction,
          groups: columnWalk.groups,
          chisq,
          targets: targets.map((t) => expand(t.tree, survey.codes)),
          ...(weight === null ? { unweighted: true } : weight !== undefined ? { weight } : {}),
          se,
          test,
          deff,
          domain,
        };
      }
    }
    const request = {
      datasets: surveys.map((s) => ({
        name: s.name,
        csv: s.csv,
        weight: s.weight,
        ...(s.design ? { strata: s.design.strata, psu: s.design.psu } : {}),
        ...(s.replicate ? { replicate: s.replicate } : {}),
        multi: s.multi,
        calibrations: s.calibrations,
        text: s.multi.some((m) => m.delimiter) ? ['brands'] : undefined,
      })),
      queries: cases.filter((c) => c.request).map((c) => c.request),
    };
    answers = await runR(dir, request);
  }, Math.max(600_000, (RUNS * 3 * 4 + GSS_RUNS * 20) * 1000));

  afterAll(() => endHunt(dir, opened));

  it("every figure of every random table equals R's", () => {
    expectAgreement(cases, answers, dir);
  });
});
