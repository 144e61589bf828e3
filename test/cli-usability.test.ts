// The `crosstab` command as a new user meets it: --version, examples in --help, required
// flags marked, a closed pipe, a survey file where a dataset is expected, value labels in
// `info`, near misses of --stats, and `table` without --base.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { cliPath, gssCsv, repoRoot } from './support/paths.js';

const paths = inject('testDatasets');

function crosstab(args: string[]): { status: number | null; stdout: string; stderr: string } {
  const result = spawnSync(process.execPath, [cliPath, ...args], { encoding: 'utf8', timeout: 60_000 });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

beforeAll(() => {
  expect(existsSync(cliPath), `${cliPath} is missing: run \`npm run build\` first`).toBe(true);
});

describe('crosstab CLI usability', () => {
  it('--version prints the package version', () => {
    const { version } = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as { version: string };
    expect(crosstab(['--version'])).toMatchObject({ status: 0, stdout: `${version}\n` });
  });

  it('--help shows examples; build --help marks its required flags', () => {
    expect(crosstab(['--help']).stdout).toMatch(/Examples:\n\s+\$ crosstab demo/);
    for (const command of ['query', 'table', 'build']) expect(crosstab([command, '--help']).stdout, command).toMatch(/Examples:/);
    const build = crosstab(['build', '--help']).stdout;
    for (const flag of ['--weight <column>', '--survey <code>', '--out <path>']) expect(build).toMatch(new RegExp(`${flag}\\s+\\(required\\)`));
    expect(build).not.toMatch(/--name <text>\s+\(required\)/);
  });

  it('exits quietly when the reader closes the pipe (`| head -1`)', () => {
    // `true` exits at once, so every write of `info` meets a closed pipe.
    const result = spawnSync('bash', ['-c', `set -o pipefail; "${process.execPath}" "${cliPath}" info "${paths.gss}" | true`], { encoding: 'utf8' });
    expect(result.stderr).toBe('');
    expect(result.status).toBe(0);
  });

  it('a survey file given to query says to build it first', () => {
    const result = crosstab(['query', gssCsv, '--target', 'sex=2']);
    expect(result.status).toBe(1);
    expect(result.stderr).toMatch(/is a survey file, not a compiled dataset/);
    expect(result.stderr).toMatch(/crosstab build .*gss_1972_2024_sub\.csv\.gz --weight <column> --survey <code> --out gss_1972_2024_sub\.arrow/);
  });

  it('info shows value labels', () => {
    const info = crosstab(['info', paths.gss]).stdout;
    expect(info).toMatch(/1=Male, 2=Female/);
    expect(info).toMatch(/0=Less than high school, 1=High school/);
  });

  it('--stats vpc suggests vpct', () => {
    const result = crosstab(['table', paths.gss, '--rows', 'sex', '--columns', 'degree', '--stats', 'vpc']);
    expect(result.status).toBe(1);
    expect(result.stderr).toMatch(/unknown statistic "vpc"; did you mean "vpct"\?/);
  });

  it('table defaults --base to *', () => {
    const result = crosstab(['table', paths.gss, '--rows', 'sex', '--columns', 'degree']);
    expect(result.stderr).toBe('');
    expect(result.status).toBe(0);
    expect(result.stdout).toMatch(/^base \* · /m);
  });
});
