// Figures under another locale: a German one writes 1234.5 as "1.234,5", which a reader takes
// for 1.2345. The CLI's tables, info and error messages, and the REST service's error
// messages, must print the same text under LANG/LC_ALL=de_DE.UTF-8 (Node's ICU then
// defaults to de-DE) as under C, and every figure must parse back to the value it shows.
import { spawnSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { addApiKey } from '../src/http/index.js';
import { CLI, startServe, type ServeChild } from './http/serve-child.js';
import { tempDir } from './http/support.js';

const gss = inject('testDatasets').gss;
const GERMAN = { ...process.env, LANG: 'de_DE.UTF-8', LC_ALL: 'de_DE.UTF-8', LANGUAGE: 'de' };
const PLAIN = { ...process.env, LANG: 'C', LC_ALL: 'C', LANGUAGE: '' };

/** A figure as shown (`75,699.9`, `20.3%`) read back: commas group thousands, a point starts the decimals. */
const figure = (text: string): number => {
  expect(text).toMatch(/^-?\d{1,3}(,\d{3})*(\.\d+)?%?$/);
  return Number(text.replace(/[,%]/g, ''));
};

function cli(args: string[], env: NodeJS.ProcessEnv): { status: number | null; stdout: string; stderr: string } {
  return spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8', env, timeout: 60_000 });
}

describe('figures under a German locale', () => {
  it('the locale takes in a child process: Intl defaults to de-DE and would write 1234.5 as 1.234,5', () => {
    const probe = spawnSync(process.execPath, ['-e', 'console.log(Intl.DateTimeFormat().resolvedOptions().locale, (1234.5).toLocaleString())'], { encoding: 'utf8', env: GERMAN });
    expect(probe.stdout.trim()).toBe('de-DE 1.234,5');
  });

  it('crosstab table, info and a query print the same text as under C, and their figures parse back', () => {
    for (const args of [
      ['table', gss, '--rows', 'degree', '--columns', 'sex'],
      ['table', gss, '--rows', 'degree', '--columns', 'sex', '--format', 'html'],
      ['info', gss],
      ['query', gss, '--target', 'sex=2', '--base', 'year=2024'],
    ]) {
      const german = cli(args, GERMAN);
      expect(german.status, german.stderr).toBe(0);
      expect(german.stdout, args.join(' ')).toBe(cli(args, PLAIN).stdout);
    }
    const json = JSON.parse(cli(['table', gss, '--rows', 'degree', '--columns', 'sex', '--format', 'json'], GERMAN).stdout) as { total: { weighted: number; respondents: number } };
    const text = cli(['table', gss, '--rows', 'degree', '--columns', 'sex'], GERMAN).stdout;
    expect(figure(/· ([\d,.]+) respondents/.exec(text)![1]!)).toBe(json.total.respondents);
    const base = /^Base\s+weighted\s+│\s+(\S+)/m.exec(text)![1]!;
    expect(figure(base)).toBe(Math.round(json.total.weighted * 10) / 10);
    const info = JSON.parse(cli(['info', gss, '--json'], GERMAN).stdout) as { respondents: number };
    expect(figure(/: ([\d,.]+) respondents;/.exec(cli(['info', gss], GERMAN).stdout)![1]!)).toBe(info.respondents);
  });

  it("a CLI error message's figures parse back", () => {
    const expression = `(${Array.from({ length: 200 }, () => 'sex=1').join(' or ')})`;
    const failed = cli(['query', gss, '--target', expression], GERMAN);
    expect(failed.status).toBe(1);
    expect(figure(/… \(([\d,.]+) characters\)/.exec(failed.stderr)![1]!)).toBe(expression.length);
  });

  describe('the REST service', () => {
    let serve: ServeChild;
    let apiKey: string;

    beforeAll(async () => {
      const dir = tempDir();
      apiKey = (await addApiKey(`${dir}/keys.json`, { surveys: ['GSS'], groups: ['_ALL_'], name: 'locale' })).apiKey;
      serve = await startServe(['--dataset', gss, '--keys', `${dir}/keys.json`, '--ledger', `${dir}/usage.ndjson`, '--port', '0'], { cwd: dir, env: GERMAN, timeoutMs: 60_000 });
    }, 120_000);

    afterAll(async () => {
      serve?.child.kill('SIGTERM');
      await serve?.exited;
    });

    it("an error message's figures parse back: pairs compared = rows x pairs, and the limit is the server's", async () => {
      const response = await fetch(`${serve.origin}/v1/tables`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'service-engine-authorizer': apiKey },
        body: JSON.stringify({ SurveyCode: 'GSS', PopulationBaseCode: '*', Rows: [{ Variable: 'sex' }], Columns: [{ Variable: 'id' }], Statistics: ['sig'] }),
      });
      expect(response.status).toBe(400);
      const { message } = ((await response.json()) as { error: { message: string } }).error;
      const [, compared, rows, pairs, limit] = /compare ([\d,.]+) pairs of columns \(([\d,.]+) rows x ([\d,.]+) pairs.*at most ([\d,.]+) are allowed/.exec(message)!;
      expect(figure(compared!)).toBe(figure(rows!) * figure(pairs!));
      expect(figure(compared!)).toBe(20_335_590);
      expect(figure(compared!)).toBeGreaterThan(figure(limit!));
      expect(figure(limit!)).toBeGreaterThan(1000);
    });
  });
});
