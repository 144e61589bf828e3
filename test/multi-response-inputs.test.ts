// Building multi-response variables from the command line (`--multi COL[:DELIM]`) and the
// codebook, `crosstab info` listing them with expressions that read back as the respondents
// they count, and the errors of misuse: each names what is wrong and says what to do.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { buildDataset, CrosstabError, ErrorCode, openDataset, parseCodebook } from '../src/index.js';
import { cliPath } from './support/paths.js';

const dir = mkdtempSync(join(tmpdir(), 'multi-inputs-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function cli(...args: string[]) {
  const result = spawnSync(process.execPath, [cliPath, ...args], { encoding: 'utf8', timeout: 60_000 });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

const csv = join(dir, 'shops.csv');
writeFileSync(
  csv,
  [
    'w,"shops visited",pets,x1,x2',
    '1,"New York|a,b",dog;cat,1,0',
    '2,"a b|q""uote|NA",,0,0',
    '3,,cat,,',
    '4,|,dog,1,1',
    '2.5,New York,fish;dog;cat,0,1',
  ].join('\n') + '\n',
);

async function refusal(run: () => Promise<unknown>): Promise<CrosstabError> {
  try {
    await run();
  } catch (error) {
    expect(error).toBeInstanceOf(CrosstabError);
    return error as CrosstabError;
  }
  throw new Error('accepted');
}

describe('crosstab build --multi and crosstab info', () => {
  it('builds delimited columns and prints every value as an expression that reads back', () => {
    const out = join(dir, 'shops.arrow');
    const built = cli('build', csv, '--weight', 'w', '--survey', 'SHOPS', '--out', out, '--multi', 'shops visited:|', '--multi', 'pets', '--quiet');
    expect(built.status, built.stderr).toBe(0);
    const info = cli('info', out);
    expect(info.status, info.stderr).toBe(0);
    expect(info.stdout).toContain('"shops visited": multi-response, from column "shops visited" split at "|"');
    // Each printed line `EXPR  label  respondents` of the multi-response listings.
    const printed = [...info.stdout.matchAll(/^((?:"shops visited"|pets)=(?:"(?:[^"\\]|\\.)*"|[^\s"]+))\s.*?(\d+)$/gm)].map((match) => ({ expr: match[1]!, respondents: Number(match[2]) }));
    expect(printed.map((entry) => entry.expr)).toEqual([
      '"shops visited"="NA"', '"shops visited"="New York"', '"shops visited"="a b"', '"shops visited"="a,b"', '"shops visited"="q\\"uote"', '"shops visited"=NA',
      'pets=cat', 'pets=dog', 'pets=fish', 'pets=NA',
    ]);
    for (const { expr, respondents } of printed) {
      const query = cli('query', out, '--target', expr, '--unweighted', '--json');
      expect(query.status, `${expr}: ${query.stderr}`).toBe(0);
      expect({ expr, respondents: JSON.parse(query.stdout).Results[0].Resps }).toEqual({ expr, respondents });
    }
    expect(printed.find((entry) => entry.expr === '"shops visited"=NA')!.respondents).toBe(1);
  });

  it('refuses an empty delimiter with the form to write', () => {
    const built = cli('build', csv, '--weight', 'w', '--survey', 'SHOPS', '--out', join(dir, 'x.arrow'), '--multi', 'pets:');
    expect(built.status).not.toBe(0);
    expect(built.stderr).toContain('COLUMN:DELIMITER');
  });
});

describe('errors of misuse', () => {
  it('a --multi column the input lacks', async () => {
    const error = await refusal(() => buildDataset(csv, { weights: ['w'], survey: 'S', out: join(dir, 'e1.arrow'), multi: [{ column: 'petz' }] }));
    expect(error.code).toBe(ErrorCode.invalidOption);
    expect(error.message).toContain('"petz"');
  });
  it('a codebook set naming a column the input lacks', async () => {
    const codebook = join(dir, 'bad.json');
    writeFileSync(codebook, JSON.stringify({ multi: { name: 'xs', columns: ['x1', 'x3'], counted: '1' } }));
    const error = await refusal(() => buildDataset(csv, { weights: ['w'], survey: 'S', out: join(dir, 'e2.arrow'), codebook }));
    expect(error.code).toBe(ErrorCode.invalidInput);
    expect(error.message).toContain('multi-response variable "xs" names column "x3"');
  });
  it('a set named as a column', async () => {
    const codebook = join(dir, 'clash.json');
    writeFileSync(codebook, JSON.stringify({ multi: { name: 'x1', columns: ['x1', 'x2'], counted: '1' } }));
    const error = await refusal(() => buildDataset(csv, { weights: ['w'], survey: 'S', out: join(dir, 'e3.arrow'), codebook }));
    expect(error.message).toContain('"x1" has the name of a column');
  });
  it('malformed codebook entries name the entry and the key', () => {
    const bad = (multi: unknown) => {
      try {
        parseCodebook({ multi }, 'cb.json');
      } catch (error) {
        return (error as CrosstabError).message;
      }
      throw new Error('accepted');
    };
    expect(bad({ columns: ['a'] })).toContain('"multi" needs a "name" string');
    expect(bad({ name: 'm', columns: [] })).toContain('"columns" must be a non-empty list');
    expect(bad({ name: 'm', columns: ['a', 'a'] })).toContain('names a column twice');
    expect(bad([{ name: 'm', columns: ['a'] }, { name: 'm', columns: ['b'] }])).toContain('is defined twice');
    expect(bad({ name: 'm', columns: ['a'], count: '1' })).toContain('unknown key "count"');
    expect(parseCodebook({ multi: { name: 'm', columns: ['a'], counted: 1 } }).multi).toEqual([{ name: 'm', columns: ['a'], counted: '1' }]);
  });
  it('a range on a text multi-response variable', async () => {
    const out = join(dir, 'ok.arrow');
    await buildDataset(csv, { weights: ['w'], survey: 'S', out, multi: [{ column: 'pets' }] });
    const ds = await openDataset(out);
    try {
      const error = await refusal(() => ds.crosstab({ base: '*', targets: ['pets=a..c'] }));
      expect(error.code).toBe(ErrorCode.invalidExpression);
      expect(error.message).toContain('pets is a multi-response variable with text values');
      expect(error.details.hint).toContain('pets=all(v1,v2)');
    } finally {
      ds.close();
    }
  });
});
