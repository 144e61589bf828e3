// Every query of the R reference files (test/fixtures/r/, copied from ../shared/datasets, computed with
// R's survey package outside this project) through the library and through the CLI.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { describe, expect, inject, it } from 'vitest';
import { openDataset, parseExpression, type Dataset } from '../src/index.js';
import { cliPath } from './support/paths.js';
import { normaliseTree } from './support/reference-engine.js';
import { referenceFiles, referenceQueries } from './support/reference-queries.js';

function expectClose(actual: number, expected: number) {
  if (expected === 0) expect(actual).toBe(0);
  else expect(Math.abs(actual - expected) / Math.abs(expected)).toBeLessThan(1e-9);
}

describe.each(Object.keys(referenceFiles) as Array<keyof typeof referenceFiles>)('R reference figures: %s', (name) => {
  const queries = referenceQueries(name);
  const datasetPath = () => inject('testDatasets')[name];

  it('has the queries the README promises', () => {
    expect(queries.length).toBe(name === 'gss' ? 20 : 10);
  });

  it.each(queries.map((q) => [q.id, q] as const))('%s through the library', async (_id, q) => {
    const ds: Dataset = await openDataset(datasetPath());
    try {
      const result = await ds.crosstab({ base: q.base, targets: [q.target] });
      expect(result.targets[0]!.respondents).toBe(q.respondents);
      expectClose(result.targets[0]!.weighted, q.weightedSum);
      expect(result.base.respondents).toBe(q.baseRespondents);
      expectClose(result.base.weighted, q.baseWeightedSum);
    } finally {
      ds.close();
    }
  });

  it.each(queries.map((q) => [q.id, q] as const))('%s parses to the reference tree', (_id, q) => {
    expect(normaliseTree(parseExpression(q.base))).toEqual(normaliseTree(q.baseExpr));
    expect(normaliseTree(parseExpression(q.target))).toEqual(normaliseTree(q.targetExpr));
  });

  it('every query through `crosstab query --json` prints the REST body with the same figures', () => {
    expect(existsSync(cliPath), `${cliPath} missing: run npm run build`).toBe(true);
    for (const q of queries) {
      const stdout = execFileSync(process.execPath, [cliPath, 'query', datasetPath(), '--base', q.base, '--target', q.target, '--json'], { encoding: 'utf8' });
      const body = JSON.parse(stdout);
      expect(Object.keys(body)).toEqual(['ResultCode', 'ResultDescription', 'Results', 'AudienceReportUnits']);
      expect(body.AudienceReportUnits).toBe(1);
      expect(body.Results).toHaveLength(1);
      expect(body.Results[0].Resps).toBe(q.respondents);
      expectClose(body.Results[0].WgtAud, q.weightedSum);
      expect(body.Results[0].Stbl).toBe(q.respondents <= 60 ? 1 : 0);
    }
  });
});
