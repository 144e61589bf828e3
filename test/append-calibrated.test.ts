// appendRows() on a dataset with weights made by `crosstab weight` (calibrated to population
// targets over the old respondents): such a weight cannot be extended to a wave without
// weighting every respondent again, so the append is refused, naming the weight and the
// commands to run, and nothing is touched; with dropCalibrated the weight is left out (the
// weights file of a replaced build removed), and weighting the result with the command given
// and the same targets gives the weight a build of every row weighted so gets.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { afterAll, describe, expect, it } from 'vitest';
import { appendRows, buildDataset, CrosstabError, ErrorCode, openDataset, weightDataset, type WeightOptions } from '../src/index.js';
import { cliPath, nhanesCsv } from './support/paths.js';

const dir = mkdtempSync(join(tmpdir(), 'crosstab-append-calibrated-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let serial = 0;
const file = (name: string) => join(dir, `${serial++}-${name}`);

/** NHANES in two parts (a wave of every 7th row and half the oldest age group, so it shifts the margins), and all of it. */
function parts(): { first: string; rest: string; all: string } {
  const [header, ...rows] = gunzipSync(readFileSync(nhanesCsv)).toString('utf8').trimEnd().split('\n');
  const isSecond = rows.map((line, row) => row % 7 === 0 || (line.split(',')[5] === '4' && row % 2 === 0));
  const write = (name: string, lines: string[]) => {
    const path = file(name);
    writeFileSync(path, `${[header, ...lines].join('\n')}\n`);
    return path;
  };
  const first = rows.filter((_, row) => !isSecond[row]);
  const rest = rows.filter((_, row) => isSecond[row]);
  return { first: write('first.csv', first), rest: write('rest.csv', rest), all: write('all.csv', [...first, ...rest]) };
}

const TARGETS: WeightOptions['targets'] = {
  margins: [
    { variable: 'RIAGENDR', proportions: { '1': 0.49, '2': 0.51 } },
    { variable: 'agecat', proportions: { '1': 0.26, '2': 0.27, '3': 0.28, '4': 0.19 } },
  ],
};
const BY_GENDER: WeightOptions['targets'] = {
  groupBy: 'RIAGENDR',
  groups: {
    '1': { margins: [{ variable: 'agecat', proportions: { '1': 0.27, '2': 0.27, '3': 0.28, '4': 0.18 } }] },
    '2': { margins: [{ variable: 'agecat', proportions: { '1': 0.25, '2': 0.26, '3': 0.29, '4': 0.2 } }] },
  },
};

async function checksumOf(path: string): Promise<string> {
  const dataset = await openDataset(path);
  try {
    return dataset.info.checksum;
  } finally {
    await dataset.close();
  }
}

describe('appendRows with weights made by crosstab weight', () => {
  it('refuses a dataset whose weights file holds calibrated weights (with a stored calibration or not), naming them and the commands to run; touches nothing', async () => {
    const { first, rest } = parts();
    const dataset = file('tracker.arrow');
    await buildDataset(first, { weights: ['WTMEC2YR'], survey: 'NHANES', out: dataset });
    await weightDataset(dataset, { targets: TARGETS, method: 'rake', name: 'wt_rake' });
    // Weighted by groups: no calibration is stored with it, but it is of the old respondents all the same.
    await weightDataset(dataset, { targets: BY_GENDER, method: 'rake', name: 'wt_age', baseWeight: null });
    const before = await checksumOf(dataset);
    const weights = readFileSync(`${dataset}.weights`);
    const error = (await appendRows(dataset, rest, { out: dataset }).catch((e: unknown) => e)) as CrosstabError;
    expect(error).toBeInstanceOf(CrosstabError);
    expect(error.code).toBe(ErrorCode.invalidInput);
    expect(error.message).toMatch(/its weights wt_rake, wt_age were calibrated to population targets over its respondents by crosstab weight \(its weights file .*tracker\.arrow\.weights holds wt_rake\)/);
    expect(error.details.field).toBe('wt_rake');
    expect(error.details.hint).toContain('--drop-calibrated');
    expect(error.details.hint).toContain(`crosstab weight ${dataset} --targets TARGETS.json --method rake --name wt_rake --base-weight WTMEC2YR`);
    expect(error.details.hint).toContain(`crosstab weight ${dataset} --targets TARGETS.json --method rake --name wt_age --unweighted`);
    expect(await checksumOf(dataset)).toBe(before);
    expect(readFileSync(`${dataset}.weights`).equals(weights)).toBe(true);
  });

  it('dropCalibrated over the dataset itself: the weights file removed, the base weight extended; weighting again as told equals the build of every row weighted so', async () => {
    const { first, rest, all } = parts();
    const [dataset, whole] = [file('tracker.arrow'), file('whole.arrow')];
    await buildDataset(first, { weights: ['WTMEC2YR'], survey: 'NHANES', out: dataset });
    await weightDataset(dataset, { targets: TARGETS, method: 'rake', name: 'wt_rake' });
    const report = await appendRows(dataset, rest, { out: dataset, dropCalibrated: true });
    expect(report.dropped).toEqual([{ weight: 'wt_rake', command: `crosstab weight ${dataset} --targets TARGETS.json --method rake --name wt_rake --base-weight WTMEC2YR` }]);
    expect(existsSync(`${dataset}.weights`)).toBe(false);
    const appended = await openDataset(dataset);
    expect(appended.info.weights).toEqual(['WTMEC2YR']);
    await appended.close();
    // The command given, with the same targets, on the appended dataset and on a build of every row.
    await weightDataset(dataset, { targets: TARGETS, method: 'rake', name: 'wt_rake', baseWeight: 'WTMEC2YR' });
    await buildDataset(all, { weights: ['WTMEC2YR'], survey: 'NHANES', out: whole });
    await weightDataset(whole, { targets: TARGETS, method: 'rake', name: 'wt_rake' });
    const [a, e] = [await openDataset(dataset, { cellCache: 0 }), await openDataset(whole, { cellCache: 0 })];
    try {
      expect(a.info.respondents).toBe(e.info.respondents);
      for (const columns of ['agecat', 'race', 'HI_CHOL']) {
        const query = { base: '*', rows: [{ variable: 'RIAGENDR' }], columns: [{ variable: columns }], weight: 'wt_rake' };
        const [x, y] = [await a.table(query), await e.table(query)];
        expect([...x.respondents]).toEqual([...y.respondents]);
        for (let i = 0; i < y.weighted.length; i++) expect(Math.abs(x.weighted[i]! - y.weighted[i]!)).toBeLessThanOrEqual(Math.abs(y.weighted[i]!) * 1e-9);
      }
      // The margins met over every respondent: 49% men.
      const [men] = (await a.crosstab({ base: '*', targets: ['RIAGENDR=1'], weight: 'wt_rake' })).targets;
      const total = (await a.crosstab({ base: '*', targets: ['*'], weight: 'wt_rake' })).targets[0]!.weighted;
      expect(men!.weighted / total).toBeCloseTo(0.49, 9);
    } finally {
      await Promise.all([a.close(), e.close()]);
    }
  });

  it('a calibrated weight written into the dataset (weight --out): refused, or left out with dropCalibrated to another file, the old dataset untouched', async () => {
    const { first, rest } = parts();
    const [plain, calibrated, out] = [file('plain.arrow'), file('calibrated.arrow'), file('out.arrow')];
    await buildDataset(first, { weights: ['WTMEC2YR'], survey: 'NHANES', out: plain });
    await weightDataset(plain, { targets: TARGETS, method: 'linear', name: 'wt_lin', baseWeight: null, out: calibrated });
    const before = await checksumOf(calibrated);
    const error = (await appendRows(calibrated, rest, { out }).catch((e: unknown) => e)) as CrosstabError;
    expect(error.message).toMatch(/its weight wt_lin was calibrated to population targets over its respondents by crosstab weight \(it holds wt_lin\)/);
    expect(error.details.hint).toContain(`crosstab weight ${out} --targets TARGETS.json --method linear --name wt_lin --unweighted`);
    expect(existsSync(out)).toBe(false);
    const report = await appendRows(calibrated, rest, { out, dropCalibrated: true });
    expect(report.dropped.map((entry) => entry.weight)).toEqual(['wt_lin']);
    const appended = await openDataset(out);
    expect(appended.info.weights).toEqual(['WTMEC2YR']);
    expect(appended.info.respondents).toBe(report.respondents);
    await appended.close();
    expect(await checksumOf(calibrated)).toBe(before);
  });

  it.each([
    ['by groups', { targets: BY_GENDER, method: 'rake', name: 'wt_age', baseWeight: null }, '--method rake --name wt_age --unweighted'],
    ['trimmed', { targets: TARGETS, method: 'rake', name: 'wt_trim', baseWeight: null, trim: [0.8, 1.3] }, '--method rake --name wt_trim --unweighted --trim 0.8,1.3'],
  ] as const)('a weight made %s written into the dataset (weight --out, no stored calibration): refused as calibrated, or left out with dropCalibrated', async (_how, options, command) => {
    const { first, rest } = parts();
    const [plain, weighted, out] = [file('plain.arrow'), file('weighted.arrow'), file('out.arrow')];
    await buildDataset(first, { weights: ['WTMEC2YR'], survey: 'NHANES', out: plain });
    const made = await weightDataset(plain, { ...options, trim: 'trim' in options ? [...options.trim] : undefined, out: weighted } as WeightOptions);
    if ('trim' in options) expect(made.trimmed).toBeGreaterThan(0);
    const before = await checksumOf(weighted);
    const error = (await appendRows(weighted, rest, { out }).catch((e: unknown) => e)) as CrosstabError;
    expect(error).toBeInstanceOf(CrosstabError);
    expect(error.code).toBe(ErrorCode.invalidInput);
    expect(error.message).toMatch(new RegExp(`its weight ${options.name} was calibrated to population targets over its respondents by crosstab weight \\(it holds ${options.name}\\)`));
    expect(error.details.field).toBe(options.name);
    expect(error.details.hint).toContain('--drop-calibrated');
    expect(error.details.hint).toContain(`crosstab weight ${out} --targets TARGETS.json ${command}`);
    expect(existsSync(out)).toBe(false);
    const report = await appendRows(weighted, rest, { out, dropCalibrated: true });
    expect(report.dropped).toEqual([{ weight: options.name, command: `crosstab weight ${out} --targets TARGETS.json ${command}` }]);
    const appended = await openDataset(out);
    expect(appended.info.weights).toEqual(['WTMEC2YR']);
    expect(appended.info.respondents).toBe(report.respondents);
    await appended.close();
    expect(await checksumOf(weighted)).toBe(before);
  });

  it('crosstab append: the refusal names --drop-calibrated; with it, the note gives the crosstab weight command', async () => {
    const { first, rest } = parts();
    const dataset = file('cli.arrow');
    await buildDataset(first, { weights: ['WTMEC2YR'], survey: 'NHANES', out: dataset });
    await weightDataset(dataset, { targets: TARGETS, method: 'rake', name: 'wt_rake' });
    const run = (...args: string[]) => spawnSync(process.execPath, [cliPath, 'append', dataset, rest, '--out', dataset, ...args], { encoding: 'utf8', timeout: 60_000 });
    const refused = run();
    expect(refused.status).not.toBe(0);
    expect(refused.stderr).toMatch(/wt_rake was calibrated/);
    expect(refused.stderr).toMatch(/--drop-calibrated/);
    const done = run('--drop-calibrated');
    expect(done.status, done.stderr).toBe(0);
    expect(done.stderr).toContain(`note: weight wt_rake left out (made by crosstab weight for the old respondents); make it again with: crosstab weight ${dataset} --targets TARGETS.json --method rake --name wt_rake --base-weight WTMEC2YR`);
  });
});
