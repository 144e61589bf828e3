// A dataset file written before the build, append and weighting refused weights outside
// 0, 1e-50 .. 1e50 (src/dataset/weight-range.ts) may hold such weights: its answers would be
// wrong figures (a base of Infinity makes every percentage 0%; squares in the subnormals give
// wrong standard errors). The first read of such a weight buffer (of the dataset file, or of
// its weights file) refuses, naming the file, the weight and the first respondent outside;
// `crosstab push` refuses before it writes anything. The files are written past the input
// readers' check: compiled from a raw table (writeMadeDataset), or by writeWeightsFile.
import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { writeWeightsFile } from '../src/dataset/file/add-weight.js';
import { loadDataset } from '../src/dataset/file/reader.js';
import { CrosstabError, ErrorCode, pushDataset } from '../src/index.js';
import { mainThreadKernel } from '../src/kernel/kernel.js';
import { writeMadeDataset } from './support/make-dataset.js';
import { cliPath } from './support/paths.js';

const crosstab = (...args: string[]) => spawnSync(process.execPath, [cliPath, ...args], { encoding: 'utf8' });
const x = ['a', 'b', 'a', 'b', 'a', 'b', 'a', 'b'];
const y = ['c', 'c', 'd', 'd', 'c', 'c', 'd', 'd'];
const table = (path: string, ...more: string[]) => crosstab('table', path, '--rows', 'x', '--columns', 'y', '--stats', 'vpct,se', '--format', 'csv', ...more);

describe('weights outside the range in a stored file', () => {
  it.each([
    ['a sum past the doubles', [1, 2, 1e300, 1e300, 1, 2, 1, 2], 3, 'above 1e+50'],
    ['squares in the subnormals', [1e-170, 2e-170, 3e-170, 1e-170, 2e-170, 3e-170, 1e-170, 2e-170], 1, 'above 0 and below 1e-50'],
  ])('a dataset file with %s is refused at its first query, naming the file, the weight and the respondent', async (_, weights, respondent, problem) => {
    const path = await writeMadeDataset({ x, y }, weights);
    const run = table(path);
    expect(run.stdout).toBe('');
    expect(run.status, run.stderr).toBe(1);
    expect(run.stderr).toContain(path);
    expect(run.stderr).toContain('weight "w" of respondent ');
    expect(run.stderr).toContain(`(input row ${respondent})`);
    expect(run.stderr).toContain(problem);
    expect(run.stderr).toContain('Rebuild');
  });

  it('the same rows with weights in the range answer', async () => {
    const run = table(await writeMadeDataset({ x, y }, [1, 2, 3, 1, 2, 3, 1, 2]));
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
  });

  it("a weights file's weight outside the range is refused naming the weights file; the dataset's own weight still answers", async () => {
    const path = await writeMadeDataset({ x, y }, [1, 2, 3, 1, 2, 3, 1, 2]);
    const kernel = mainThreadKernel();
    const source = await loadDataset(path, kernel);
    try {
      await writeWeightsFile(source, kernel, 'bad', Float64Array.from([1, 1, 1, 1, 5e-320, 1, 1, 1]));
    } finally {
      source.close();
    }
    const bad = table(path, '--weight', 'bad');
    expect(bad.status, bad.stderr).toBe(1);
    expect(bad.stderr).toContain(`${path}.weights`);
    expect(bad.stderr).toContain('weight "bad" of respondent ');
    expect(bad.stderr).toContain('(input row 5)');
    expect(bad.stderr).toContain('above 0 and below 1e-50');
    const good = table(path, '--weight', 'w');
    expect(good.stderr).toBe('');
    expect(good.status).toBe(0);
  });

  it('crosstab push refuses such a file before it connects to ClickHouse', async () => {
    const path = await writeMadeDataset({ x, y }, [1, 2, 1e300, 1e300, 1, 2, 1, 2]);
    // Nothing listens on port 1: a push that read the weights after connecting fails to connect instead.
    const error = await pushDataset(path, { clickhouse: 'clickhouse://127.0.0.1:1/crosstab_test?table=t' }).then(
      () => undefined,
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(CrosstabError);
    expect((error as CrosstabError).code).toBe(ErrorCode.invalidInput);
    expect((error as CrosstabError).message).toContain('(input row 3)');
  });
});
