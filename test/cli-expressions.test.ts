// The `crosstab` command on columns people really have: numbers written with an exponent,
// names with spaces and accents. What `info` and `table` print can be typed back; near
// misses are suggested; counts are printed with thousands separators.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { cliPath } from './support/paths.js';

const paths = inject('testDatasets');
const dir = mkdtempSync(join(tmpdir(), 'cli-expressions-'));

function crosstab(args: string[]): { status: number | null; stdout: string; stderr: string } {
  const result = spawnSync(process.execPath, [cliPath, ...args], { encoding: 'utf8', timeout: 60_000 });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

function build(name: string, csv: string): string {
  const source = join(dir, `${name}.csv`);
  const out = join(dir, `${name}.arrow`);
  writeFileSync(source, csv);
  const result = crosstab(['build', source, '--weight', 'w', '--survey', 'T', '--out', out, '--quiet']);
  expect(result.stderr).toBe('');
  return out;
}

let exponent: string;
let odd: string;

beforeAll(() => {
  exponent = build('exponent', 'x,g,w\n1e-7,a,1\n2,a,2\n1e-7,b,4\n1E3,b,8\n');
  odd = build('odd', 'two words,età,w\n1,São Paulo,1\n2,Roma,2\n1,Roma,4\n');
});

describe('numbers written with an exponent', () => {
  it('table --rows x answers, one row per value, and its entries read back', () => {
    const table = crosstab(['table', exponent, '--rows', 'x', '--columns', 'g', '--format', 'json']);
    expect(table.stderr).toBe('');
    const result = JSON.parse(table.stdout) as { rows: Array<{ expr: string; label: string }> };
    expect(result.rows.map((row) => row.expr)).toEqual(['x=1e-7', 'x=2', 'x=1E3']);
    const query = crosstab(['query', exponent, '--target', 'x=1e-7', '--target', 'x=0.0000001', '--target', 'x=1e3', '--json']);
    expect(query.stderr).toBe('');
    const figures = JSON.parse(query.stdout) as { Results: Array<{ Resps: number; WgtAud: number }> };
    expect(figures.Results.map((cell) => [cell.Resps, cell.WgtAud])).toEqual([[2, 5], [2, 5], [1, 8]]);
  });

  it('info prints a range that can be typed back', () => {
    const info = crosstab(['info', exponent]).stdout;
    const range = /^x\s+numeric.*?(\S+\.\.\S+)/m.exec(info)?.[1];
    expect(range).toBe('1e-7..1000');
    const query = crosstab(['table', exponent, '--row', `x=${range}`, '--column', '*', '--format', 'csv']);
    expect(query.stderr).toBe('');
    expect(query.status).toBe(0);
  });
});

describe('names with spaces and accents', () => {
  it('table --rows "two words" answers with the quoted expressions it generates, which read back', () => {
    const table = crosstab(['table', odd, '--rows', 'two words', '--columns', 'età', '--format', 'json']);
    expect(table.stderr).toBe('');
    const result = JSON.parse(table.stdout) as { rows: Array<{ expr: string }>; columns: Array<{ expr: string }> };
    expect(result.rows.map((row) => row.expr)).toEqual(['"two words"=1', '"two words"=2']);
    expect(result.columns.map((column) => column.expr)).toEqual(['età=Roma', 'età="São Paulo"']);
    const typed = crosstab(['table', odd, '--row', '"two words"=1', '--column', 'età="São Paulo"', '--format', 'csv']);
    expect(typed.stderr).toBe('');
  });

  it('--rows takes the name as it is or quoted as info prints it', () => {
    const plain = crosstab(['table', odd, '--rows', 'two words', '--columns', 'età', '--format', 'csv']);
    const quoted = crosstab(['table', odd, '--rows', '"two words"', '--columns', '"età"', '--format', 'csv']);
    expect(quoted.stderr).toBe('');
    expect(quoted.stdout).toBe(plain.stdout);
  });

  it('info shows each name as an expression reads it', () => {
    const info = crosstab(['info', odd]).stdout;
    expect(info).toMatch(/^"two words"\s+numeric/m);
    expect(info).toMatch(/^età\s+text/m);
    expect(info).toContain('Roma, "São Paulo"');
  });
});

describe('near misses and counts on the GSS', () => {
  it.each([
    [['--rows', 'yaer', '--columns', 'sex'], /did you mean "year"\?/],
    [['--rows', 'relgion', '--columns', 'sex'], /did you mean "relig"\?/],
    [['--rows', 'sex', '--columns', 'race', '--base', 'sex=Femal'], /did you mean "Female"\?/],
    [['--rows', 'sex', '--columns', 'race', '--weight', 'wtssall'], /did you mean "wtssps"\?/],
  ])('table %j', (args, suggestion) => {
    const result = crosstab(['table', paths.gss, ...args]);
    expect(result.status).toBe(1);
    expect(result.stderr).toMatch(suggestion);
  });

  it('an error about a 100,000-character value neither hangs nor prints it whole', () => {
    const result = crosstab(['table', paths.gss, '--rows', 'sex', '--columns', 'race', '--base', `sex=${'F'.repeat(100_000)}`]);
    expect(result.status).toBe(1);
    expect(result.stderr).toMatch(/^crosstab: error \[invalid_expression\]: --base "sex=F+…": sex is numeric/);
    expect(result.stderr.length).toBeLessThan(1000);
  });

  it('an unknown variable points to crosstab info', () => {
    expect(crosstab(['table', paths.gss, '--rows', 'sexx', '--columns', 'race']).stderr).toMatch(/hint: .*`crosstab info DATASET` lists the variables\./);
  });

  it('info and query print respondent counts with thousands separators, as weights are', () => {
    expect(crosstab(['info', paths.gss]).stdout).toMatch(/75,699 respondents/);
    expect(crosstab(['info', paths.gss]).stdout).toMatch(/^id\s+numeric\s+design\s+4,510\s/m);
    expect(crosstab(['query', paths.gss, '--target', 'sex=2']).stdout).toMatch(/\b75,699\b/);
  });
});
