// What an embedder meets in errors: messages that echo at most a bounded part of the input,
// the class's own name, and errors recognised across the ESM and CommonJS builds.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import ts from 'typescript';
import { describe, expect, inject, it } from 'vitest';
import { CrosstabError, ErrorCode, openDataset, type Dataset } from '../src/index.js';
import { repoRoot } from './support/paths.js';
import { rejection } from './support/rejection.js';

const LONG = 100_000;
/** A message may quote 200 characters of each input it echoes, plus its own words. */
const MAX_MESSAGE = 1_000;

describe('a 100,000-character input is echoed in part, with its length', () => {
  let ds: Dataset;
  const long = (unit: string) => unit.repeat(Math.ceil(LONG / unit.length)).slice(0, LONG);
  const cases: Array<[string, (ds: Dataset) => Promise<unknown>]> = [
    ['an unknown code as target', (ds) => ds.crosstab({ base: '*', targets: [long('x')] })],
    ['an unknown variable', (ds) => ds.crosstab({ base: '*', targets: [`${long('Q')}=1`] })],
    ['a value that is not a number', (ds) => ds.crosstab({ base: '*', targets: [`sex=${long('a')}`] })],
    ['an unknown value', (ds) => ds.crosstab({ base: '*', targets: [`sex=${long('9')}`] })],
    ['an unknown text value', (ds) => ds.crosstab({ base: '*', targets: [`zz=${long('9')}`] })],
    ['trailing text', (ds) => ds.crosstab({ base: '*', targets: [`sex=1 ${long('y')}`] })],
    ['an unterminated quote', (ds) => ds.crosstab({ base: '*', targets: [`sex="${long('2')}`] })],
    ['a long base', (ds) => ds.crosstab({ base: long('(sex=1 OR '), targets: ['*'] })],
    ['an unknown weight', (ds) => ds.crosstab({ base: '*', targets: ['*'], weight: long('w') })],
    ['an unknown option', (ds) => ds.crosstab({ base: '*', targets: ['*'], [long('k')]: 1 } as never)],
    ['an unknown axis variable', (ds) => ds.table({ base: '*', rows: [{ variable: long('v') }], columns: ['*'] })],
    ['a long path', () => openDataset(long('/x'))],
    ['a long execution', () => openDataset(inject('testDatasets').gss, { execution: long('p') as never })],
  ];

  it.each(cases)('%s', async (_name, call) => {
    ds ??= await openDataset(inject('testDatasets').gss, { execution: 'inline' });
    const error = await rejection(call(ds));
    expect(error.message.length).toBeLessThan(MAX_MESSAGE);
    // details.file keeps the path as given (a path is at most 4,096 bytes on Linux); the rest is bounded too.
    const { file: _file, ...details } = error.details;
    expect(JSON.stringify(details).length).toBeLessThan(MAX_MESSAGE * 4);
    // Where the input is quoted at all, it is cut and its length said.
    if (/(.)\1{199}/.test(error.message)) expect(error.message).toMatch(/(.)\1{199}… \(100,000 characters\)/);
    expect(error.details.hint ?? '').not.toBe('');
  });
});

describe('cellCache errors say what was passed', () => {
  it.each([
    [Number.NaN, /got number NaN/],
    [Number.POSITIVE_INFINITY, /got number Infinity/],
    [1.5, /got number 1\.5/],
    ['10', /got a string \("10"\)/],
  ])('cellCache %s', async (cellCache, message) => {
    const error = await rejection(openDataset(inject('testDatasets').gss, { cellCache: cellCache as never }));
    expect(error.code).toBe(ErrorCode.invalidOption);
    expect(error.details.field).toBe('cellCache');
    expect(error.message).toMatch(message);
  });
});

/** Runs `script` (ESM) with node in the repository, where `crosstab-engine` names the built package (dist/). */
function runBuilt(script: string): string {
  const result = spawnSync(process.execPath, ['--input-type=module', '-e', script], { cwd: repoRoot, encoding: 'utf8' });
  expect(result.stderr, 'run `npm run build:ts` first').toBe('');
  return result.stdout;
}

describe('the built package (dist/): the error class across its ESM and CommonJS builds', () => {
  it('is named CrosstabError in both builds, and each build recognises the errors of the other', () => {
    const gss = inject('testDatasets').gss;
    const out = runBuilt(`
      import { createRequire } from 'node:module';
      const esm = await import('crosstab-engine');
      const cjs = createRequire(import.meta.url)('crosstab-engine');
      const fail = (engine) => engine.openDataset(${JSON.stringify(gss)}).then((ds) => ds.crosstab({ base: '*', targets: ['nope=1'] })).catch((e) => e);
      const [fromEsm, fromCjs] = [await fail(esm), await fail(cjs)];
      process.stdout.write(JSON.stringify({
        names: [esm.CrosstabError.name, cjs.CrosstabError.name, fromEsm.constructor.name, fromCjs.constructor.name, fromCjs.name],
        stack: fromCjs.stack.split('\\n')[0],
        codes: [fromEsm.code, fromCjs.code],
        esmKnowsCjs: [esm.isCrosstabError(fromCjs), fromCjs instanceof esm.CrosstabError],
        cjsKnowsEsm: [cjs.isCrosstabError(fromEsm), fromEsm instanceof cjs.CrosstabError],
        others: [esm.isCrosstabError(new Error('x')), cjs.isCrosstabError({ code: 'internal', message: 'x' }), new TypeError('x') instanceof esm.CrosstabError],
      }));
      await esm.closePool(); await cjs.closePool();
    `);
    const seen = JSON.parse(out) as Record<string, unknown>;
    expect(seen.names).toEqual(['CrosstabError', 'CrosstabError', 'CrosstabError', 'CrosstabError', 'CrosstabError']);
    expect(seen.stack).toMatch(/^CrosstabError: /);
    expect(seen.codes).toEqual([ErrorCode.unknownVariable, ErrorCode.unknownVariable]);
    expect(seen.esmKnowsCjs).toEqual([true, true]);
    expect(seen.cjsKnowsEsm).toEqual([true, true]);
    expect(seen.others).toEqual([false, false, false]);
  });
});

describe('the public types (dist/index.d.ts) under the strictest compiler options', () => {
  it('take readonly arrays and `as const` values for targets, rows and columns', () => {
    const dir = mkdtempSync(join(tmpdir(), 'crosstab-types-'));
    const file = join(dir, 'consumer.ts');
    writeFileSync(
      file,
      `import { openDataset, type CrosstabQuery, type TableQuery } from 'crosstab-engine';
const targets = ['sex=1', 'sex=2'] as const;
const rows: readonly string[] = ['degree=3..4'];
const columns = [{ variable: 'sex' }, { expr: 'sex=2', label: 'Women' }, 'F18-34'] as const;
const groups: readonly string[] = ['core'];
export const query: CrosstabQuery = { base: '*', targets, allowedGroups: groups };
export const table: TableQuery = { base: '*', rows, columns };
export async function run(): Promise<number> {
  const ds = await openDataset('gss.arrow');
  const cells = await ds.crosstab({ base: '*', targets });
  const result = await ds.table({ base: '*', rows, columns: ['sex=1'] as const });
  return cells.targets.length + result.rows.length;
}
`,
    );
    const program = ts.createProgram([file], {
      strict: true,
      exactOptionalPropertyTypes: true,
      noUncheckedIndexedAccess: true,
      noImplicitAny: true,
      // The consumer's code is checked against the declarations; checking the declarations themselves (and @types/node) would take most of the time.
      skipLibCheck: true,
      target: ts.ScriptTarget.ES2022,
      module: ts.ModuleKind.NodeNext,
      moduleResolution: ts.ModuleResolutionKind.NodeNext,
      noEmit: true,
      types: ['node'],
      typeRoots: [join(repoRoot, 'node_modules', '@types')],
      baseUrl: dir,
      paths: { 'crosstab-engine': [join(repoRoot, 'dist', 'index.d.ts')] },
    });
    const problems = ts.getPreEmitDiagnostics(program).map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'));
    rmSync(dir, { recursive: true, force: true });
    expect(problems).toEqual([]);
  }, 120_000);
});

describe('hints name options the way each front end does', () => {
  it('labelledHint replaces the backquoted options the hint lists, and nothing else', async () => {
    const { labelledHint } = await import('../src/index.js');
    const { flagOf } = await import('../src/cli/flag-labels.js');
    const error = new CrosstabError(ErrorCode.invalidOption, 'the database folder is gone', {
      hint: 'Point `database` at the folder; a new database starts empty. `exclude` is not listed.',
      hintOptions: ['database'],
    });
    expect(labelledHint(error, flagOf)).toBe('Point --database at the folder; a new database starts empty. `exclude` is not listed.');
    // A front end without a name for it, and an error without hintOptions, keep the library's words.
    expect(labelledHint(error, () => undefined)).toBe(error.details.hint);
    expect(labelledHint(new CrosstabError(ErrorCode.invalidOption, 'x', { hint: '`database`' }), flagOf)).toBe('`database`');
  });
});
