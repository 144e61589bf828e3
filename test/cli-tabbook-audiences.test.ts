// `crosstab tabbook` with saved audiences (`@name`) in --banner and --base, from --audiences
// FILE and from an account in the access database (embedded PGlite): the book equals the one
// made with the audiences' expressions written out; cycles, unknown names, bad files refused.
// Spawns dist/cli/main.js: run `npm run build:ts` first.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { addAccount, addUser, createAudience, openDatabase, parseLicences } from '../src/access/index.js';
import { requireBuiltCli } from './report/support.js';
import { cliPath } from './support/paths.js';
import { newEmbeddedFolder } from './support/embedded-template.js';

const dir = mkdtempSync(join(tmpdir(), 'crosstab-tabbook-audiences-'));
const gss = () => inject('testDatasets').gss;
beforeAll(() => requireBuiltCli());
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let serial = 0;

function tabbook(args: string[]): { status: number | null; stderr: string; book: unknown } {
  const out = join(dir, `book-${serial++}.json`);
  const run = spawnSync(process.execPath, [cliPath, 'tabbook', gss(), '--stubs', 'relig,race', '--out', out, ...args], { encoding: 'utf8', timeout: 120_000 });
  return { status: run.status, stderr: run.stderr, book: run.status === 0 ? JSON.parse(readFileSync(out, 'utf8')) : undefined };
}

function file(name: string, text: string): string {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
}

describe('crosstab tabbook with saved audiences', () => {
  const written = ['--banner', 'sex,((degree=3,4) AND (age=18..34)),(age=18..34)', '--base', '(year=2010..)'];

  it('--audiences FILE: @names in the banner and the base (one using another) give the book of their expressions', () => {
    const audiences = file('audiences.txt', '# GSS audiences\nyoung=age=18..34\n\ngrads-young=(degree=3,4) AND @young\n@recent = year=2010..\n');
    const expected = tabbook(written);
    expect(expected.status, expected.stderr).toBe(0);
    const used = tabbook(['--audiences', audiences, '--banner', 'sex,@grads-young,@young', '--base', '@recent']);
    expect(used.status, used.stderr).toBe(0);
    expect(used.book).toEqual(expected.book);
  });

  it('refuses a cycle, an unknown audience, a bad file line, an @name without a source, and --audiences with --account', () => {
    const cycle = file('cycle.txt', 'a=sex=1 AND @b\nb=@a OR race=1\n');
    const plain = file('plain.txt', 'young=age=18..34\n');
    const cases: Array<[string[], RegExp]> = [
      [['--audiences', cycle, '--banner', 'sex,@a'], /--banner: banner\[1\] "@a": audience @a uses itself \(@a -> @b -> @a\)/],
      [['--audiences', plain, '--banner', 'sex', '--base', '@old'], /--base: base "@old": no audience @old[^]*Define it in .*plain\.txt/],
      [['--audiences', file('bad.txt', 'young=age=18..34\nYoung=sex=1\n'), '--banner', '@young'], /bad\.txt:2: "Young" is not an audience name/],
      [['--audiences', file('twice.txt', 'young=age=18..34\n\nyoung=sex=1\n'), '--banner', '@young'], /twice\.txt:3: audience young is defined again \(first on line 1\)/],
      [['--banner', 'sex,@young'], /--banner: banner\[1\] "@young": no audience @young[^]*--audiences FILE .* --account NAME/],
      [['--audiences', plain, '--account', 'acme', '--banner', 'sex'], /--audiences and --account cannot be used together/],
    ];
    for (const [args, message] of cases) {
      const run = tabbook(args);
      expect(run.status, args.join(' ')).not.toBe(0);
      expect(run.stderr).toMatch(message);
    }
  });

  it('--database DIR --account NAME (--user EMAIL): the account\'s shared audiences, and the user\'s own', async () => {
    const database = await newEmbeddedFolder(join(dir, 'db'));
    const db = await openDatabase(database);
    try {
      const account = await addAccount(db, 'acme', parseLicences(['GSS'], ['GSS:_ALL_']));
      const alice = (await addUser(db, 'acme', 'alice@acme.example')).user;
      const audience = (name: string, expression: string, shared: boolean, userId?: string) => createAudience(db, { accountId: account.id, ...(userId === undefined ? {} : { userId }) }, { survey: 'GSS', name, expression, label: null, shared });
      await audience('young', 'age=18..34', true);
      await audience('grads-young', '(degree=3,4) AND @young', true);
      await audience('recent', 'year=2010..', false, alice.id);
    } finally {
      await db.close();
    }
    const expected = tabbook(written);
    const used = tabbook(['--database', database, '--account', 'acme', '--user', 'alice@acme.example', '--banner', 'sex,@grads-young,@young', '--base', '@recent']);
    expect(used.status, used.stderr).toBe(0);
    expect(used.book).toEqual(expected.book);
    // Without --user, alice's private audience is not there; the hint lists what is.
    const shared = tabbook(['--database', database, '--account', 'acme', '--banner', 'sex,@young', '--base', '@recent']);
    expect(shared.status).not.toBe(0);
    expect(shared.stderr).toMatch(/--base: base "@recent": no audience @recent[^]*shared in account acme for survey GSS are: @grads-young, @young/);
    const nobody = tabbook(['--database', database, '--account', 'acme', '--user', 'bob@acme.example', '--banner', '@young']);
    expect(nobody.stderr).toMatch(/--user bob@acme\.example: no user of account acme has this email/);
  }, 300_000);
});
