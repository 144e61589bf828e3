// Table answers as POST /tables writes them: the same bytes as the whole-document writers,
// the statistics' work bounded before any is computed, the answer's size bounded as it is
// written, and the same on a worker thread (the built table-worker.js) as inline.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { CrosstabError, openDataset, TableRenderer, tableStatistics, tableToCSV, tableToJSON, type Dataset, type TableResult } from '../../src/index.js';
import { writeTableAnswer } from '../../src/report/table-answer.js';
import { repoRoot } from '../support/paths.js';

let ds: Dataset;
let table: TableResult;
const builtWorker = join(repoRoot, 'dist', 'report', 'table-worker.js');

beforeAll(async () => {
  ds = await openDataset(inject('testDatasets').gss);
  table = await ds.table({ base: 'year=2024', rows: [{ variable: 'degree' }, 'sex=2'], columns: [{ variable: 'sex' }, { variable: 'race' }] });
});

afterAll(async () => {
  await ds.close();
});

async function refusal(promise: Promise<unknown>): Promise<CrosstabError> {
  const error = await promise.then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  expect(error).toBeInstanceOf(CrosstabError);
  return error as CrosstabError;
}

describe('writeTableAnswer', () => {
  it('writes JSON piece by piece to the same bytes as JSON.stringify, and CSV as tableToCSV', async () => {
    const statistics = tableStatistics(table, { stats: ['vpct', 'sig', 'chisq'] });
    const json = await writeTableAnswer(table, { format: 'json', statistics: { stats: ['vpct', 'sig', 'chisq'] }, jsonPrefix: '{"Table":', jsonSuffix: '}' });
    expect(Buffer.from(json).toString('utf8')).toBe(`{"Table":${JSON.stringify(tableToJSON(table, statistics))}}`);
    const csv = await writeTableAnswer(table, { format: 'csv', statistics: { stats: ['vpct', 'sig'] } });
    expect(Buffer.from(csv).toString('utf8')).toBe(tableToCSV(table, tableStatistics(table, { stats: ['vpct', 'sig'] })));
  });

  it('refuses sig and chisq past their limits before computing, naming the limit', async () => {
    // degree (5 values + No answer rows, 6 tested) x (sex: 1 pair, race: 3 pairs) = 24 comparisons.
    const sig = await refusal(writeTableAnswer(table, { format: 'json', statistics: { stats: ['sig'] }, limits: { comparisons: 10 } }));
    expect(sig.details.field).toBe('limits.comparisons');
    expect(sig.details['needed']).toBeGreaterThan(10);
    expect(sig.message).toContain('at most 10 are allowed');
    const chisq = await refusal(writeTableAnswer(table, { format: 'json', statistics: { stats: ['chisq'] }, limits: { raoScottCovariance: 100 } }));
    expect(chisq.details.field).toBe('limits.raoScottCovariance');
    // Within the limits, the same statistics are written.
    const allowed = await writeTableAnswer(table, { format: 'json', statistics: { stats: ['sig', 'chisq'] }, limits: { comparisons: 1000, raoScottCovariance: 10_000 } });
    expect(JSON.parse(Buffer.from(allowed).toString('utf8')).comparisons.length).toBeGreaterThan(0);
  });

  it('stops an answer as soon as it passes maxBytes', async () => {
    const error = await refusal(writeTableAnswer(table, { format: 'json', statistics: { stats: 'all' }, maxBytes: 2048 }));
    expect(error.details.field).toBe('limits.answerBytes');
  });
});

describe('TableRenderer on the built worker', () => {
  it('answers the same bytes as inline, rebuilds a refusal, and stops when aborted', async () => {
    expect(existsSync(builtWorker), `${builtWorker} is missing: run \`npm run build\` first`).toBe(true);
    const renderer = new TableRenderer({ worker: builtWorker, threads: 1 });
    try {
      expect(renderer.offThread).toBe(true);
      const options = { format: 'json' as const, statistics: { stats: ['vpct' as const, 'sig' as const] } };
      expect(Buffer.from(await renderer.render(table, options)).equals(Buffer.from(await writeTableAnswer(table, options)))).toBe(true);
      const refused = await refusal(renderer.render(table, { ...options, limits: { comparisons: 1 } }));
      expect(refused.details.field).toBe('limits.comparisons');
      const controller = new AbortController();
      const pending = renderer.render(table, options, controller.signal);
      controller.abort();
      expect((await refusal(pending)).code).toBe('cancelled');
    } finally {
      await renderer.close();
    }
  });
});
