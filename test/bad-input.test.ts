// Bad input gets a clear error naming what and where, and leaves nothing behind.
import { execFileSync, spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { tableFromIPC, tableToIPC } from 'apache-arrow';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import fc from 'fast-check';
import { buildDataset, CrosstabError, Dataset, ErrorCode, openDataset, type TableResult } from '../src/index.js';
import { compileDataset } from '../src/dataset/build/compile.js';
import { readInput } from '../src/dataset/input/read-input.js';
import { writeDataset } from '../src/dataset/file/writer.js';
import { cliPath } from './support/paths.js';
import { rejection } from './support/rejection.js';

const dir = mkdtempSync(join(tmpdir(), 'crosstab-bad-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('dataset files', () => {
  let good: Buffer;
  beforeAll(() => {
    good = readFileSync(inject('testDatasets').gss);
  });

  function write(name: string, bytes: Uint8Array): string {
    const path = join(dir, name);
    writeFileSync(path, bytes);
    return path;
  }

  it('a missing file is file_not_found naming the path', async () => {
    const error = await rejection(openDataset(join(dir, 'nope.arrow')));
    expect(error.code).toBe(ErrorCode.fileNotFound);
    expect(error.message).toContain('nope.arrow');
  });

  it('a truncated file is corrupt_dataset saying truncated', async () => {
    const error = await rejection(openDataset(write('truncated.arrow', good.subarray(0, Math.floor(good.length / 2)))));
    expect(error.code).toBe(ErrorCode.corruptDataset);
    expect(error.message).toMatch(/truncated/);
  });

  it('a file cut inside the footer is corrupt_dataset', async () => {
    const cut = Buffer.concat([good.subarray(0, good.length - 40), Buffer.from('ARROW1')]);
    const error = await rejection(openDataset(write('footer.arrow', cut)));
    expect(error.code).toBe(ErrorCode.corruptDataset);
  });

  it('a flipped byte in a bitset fails the checksum when a query reads it, and at open with verify full', async () => {
    const damaged = Buffer.from(good);
    damaged[Math.floor(damaged.length / 2)]! ^= 0x10;
    const error = await rejection(openDataset(write('flipped.arrow', damaged), { verify: 'full' }));
    expect(error.code).toBe(ErrorCode.corruptDataset);
    expect(error.message).toMatch(/checksum/);
  });

  it('a CSV passed as a dataset is corrupt_dataset (no Arrow signature)', async () => {
    const error = await rejection(openDataset(write('not.arrow', Buffer.from('a,b\n1,2\n'))));
    expect(error.code).toBe(ErrorCode.corruptDataset);
    expect(error.message).toMatch(/Arrow IPC file signature/);
  });

  it('another format version is unsupported_version', async () => {
    const table = tableFromIPC(good);
    table.schema.metadata.set('crosstab.format', 'crosstab-engine/99');
    const error = await rejection(openDataset(write('future.arrow', tableToIPC(table, 'file'))));
    expect(error.code).toBe(ErrorCode.unsupportedVersion);
    expect(error.message).toContain('crosstab-engine/99');
  });

  it('an Arrow file that is not a dataset says so', async () => {
    const table = tableFromIPC(good);
    table.schema.metadata.delete('crosstab.format');
    const error = await rejection(openDataset(write('plain.arrow', tableToIPC(table, 'file'))));
    expect(error.code).toBe(ErrorCode.corruptDataset);
    expect(error.message).toMatch(/not a crosstab-engine dataset/);
  });
});

describe('expressions and query options', () => {
  let ds: Dataset;
  beforeAll(async () => {
    ds = await openDataset(inject('testDatasets').gss);
    return () => ds.close();
  });
  const query = (base: string, target: string) => ds.crosstab({ base, targets: [target] });

  it.each([
    ['Sex=2', ErrorCode.unknownVariable, /unknown variable "Sex"; did you mean "sex"/],
    ['degre=3', ErrorCode.unknownVariable, /did you mean "degree"/],
    ['sex=3', ErrorCode.unknownValue, /no respondent has sex=3/],
    ['relig=99', ErrorCode.unknownValue, /relig=99/],
    ['F18-35', ErrorCode.unknownCode, /unknown code "F18-35"; did you mean "F18-34"/],
    ['sex', ErrorCode.unknownCode, /unknown code "sex"/],
    ["sex=abc", ErrorCode.invalidExpression, /sex is numeric, but its value "abc" is neither a number nor a value label/],
    ['age=18..x', ErrorCode.invalidExpression, /upper bound "x" is not a number/],
    ['sex=2 AND', ErrorCode.invalidExpression, /ends where a term was expected/],
    ['(sex=2', ErrorCode.invalidExpression, /missing "\)"/],
    ['sex=2 degree=3', ErrorCode.invalidExpression, /unexpected "degree=3"/],
    ['sex=', ErrorCode.invalidExpression, /a value is missing after "sex="/],
    ['age=..', ErrorCode.invalidExpression, /at least one bound/],
    ['sex="2', ErrorCode.invalidExpression, /unterminated/],
    ['('.repeat(200) + 'sex=2' + ')'.repeat(200), ErrorCode.invalidExpression, /nesting deeper/],
  ])('target %s is %s', async (target, code, message) => {
    const error = await rejection(query('*', target));
    expect(error.code).toBe(code);
    expect(error.message).toMatch(message);
    expect(error.details.field).toBe('targets[0]');
    expect(error.details.hint).toBeTruthy();
  });

  it('a base error names the base', async () => {
    const error = await rejection(query('yeer=2024', 'sex=2'));
    expect(error.details.field).toBe('base');
    expect(error.details.suggestions).toContain('year');
  });

  it.each([
    [{ base: 1, targets: ['*'] }, 'base'],
    [{ base: '*', targets: [] }, 'targets'],
    [{ base: '*', targets: 'sex=2' }, 'targets'],
    [{ base: '*', targets: [2] }, 'targets[0]'],
    [{ base: '*', targets: ['*'], weight: 'nope' }, 'weight'],
    [{ base: '*', targets: ['*'], allowedGroups: 'core' }, 'allowedGroups'],
    [null, 'query'],
    // Holes of sparse arrays are refused where they are, never skipped.
    [{ base: '*', targets: [, 'sex=1'] }, 'targets[0]'],
    [{ base: '*', targets: ['sex=1', , 'sex=2'] }, 'targets[1]'],
    [{ base: '*', targets: new Array(2) }, 'targets[0]'],
    [{ base: '*', targets: ['*'], allowedGroups: [, 'core'] }, 'allowedGroups[0]'],
    [{ base: '*', targets: ['*'], wieght: null }, 'query.wieght'],
    ['sex=2', 'query'],
  ])('option error %# names %s', async (options, field) => {
    const error = await rejection(ds.crosstab(options as never));
    expect(error.code).toBe(ErrorCode.invalidOption);
    expect(error.details.field).toBe(field);
  });

  it.each([
    [{ base: '*', rows: [, 'sex=1'], columns: ['*'] }, 'rows[0]'],
    [{ base: '*', rows: ['*'], columns: new Array(2) }, 'columns[0]'],
    [{ base: '*', rows: ['*'], columns: [{ variable: 'sex' }, , 'sex=1'] }, 'columns[1]'],
    [{ base: '*', rows: [{ expr: 'sex=1', label: 3 }], columns: ['*'] }, 'rows[0].label'],
    [{ base: '*', rows: [{ variable: 'sex', expr: 'sex=1' }], columns: ['*'] }, 'rows[0].expr'],
    [{ base: '*', rows: ['*'], columns: ['*'], colums: ['sex=1'] }, 'query.colums'],
    [['*'], 'query'],
  ])('table option error %# names %s', async (options, field) => {
    const error = await rejection(ds.table(options as never));
    expect(error.code).toBe(ErrorCode.invalidOption);
    expect(error.details.field).toBe(field);
    expect(error.details.hint).toBeTruthy();
  });

  it('a misspelt option suggests the one meant', async () => {
    const error = await rejection(ds.crosstab({ base: '*', targets: ['*'], wieght: null } as never));
    expect(error.message).toMatch(/query\.wieght is not an option; did you mean "weight"\?/);
    expect(error.details.suggestions).toEqual(['weight']);
  });

  it('an already-aborted signal rejects with cancelled, as an abort mid-query does, not with a DOMException', async () => {
    const error = await rejection(ds.crosstab({ base: '*', targets: ['sex=2'], signal: AbortSignal.abort() }));
    expect(error.code).toBe(ErrorCode.cancelled);
    expect(error.message).toBe('the query was cancelled');
    const table = await rejection(ds.table({ base: '*', rows: [{ variable: 'sex' }], columns: ['*'], signal: AbortSignal.abort() }));
    expect(table.code).toBe(ErrorCode.cancelled);
    const notASignal = await rejection(ds.crosstab({ base: '*', targets: ['sex=2'], signal: 'stop' as never }));
    expect(notASignal.details.field).toBe('signal');
  });

  it('an error whose message starts with its field carries the rest as details.problem', async () => {
    const error = await rejection(ds.table({ base: '*', rows: [{ variable: 'nope' }], columns: ['*'] }));
    expect(error.details.field).toBe('rows[0]');
    expect(error.message).toBe(`rows[0]: ${error.details.problem}`);
    const option = await rejection(ds.crosstab({ base: '*', targets: ['*'], weight: 'nope' }));
    expect(option.details.problem).toMatch(/^must be one of "wtssps"/);
  });

  it('a variable outside allowedGroups is refused as a made-up name is, naming nothing of its group', async () => {
    const error = await rejection(ds.crosstab({ base: '*', targets: ['relig=4'], allowedGroups: ['demographics'] }));
    const madeUp = await rejection(ds.crosstab({ base: '*', targets: ['relix=4'], allowedGroups: ['demographics'] }));
    expect(error.code).toBe(ErrorCode.unknownVariable);
    expect({ code: madeUp.code, message: madeUp.message.replace('relix', 'relig'), field: madeUp.details.field }).toEqual({ code: error.code, message: error.message, field: error.details.field });
    expect(error.message).not.toMatch(/attitudes/);
  });
});

describe('openDataset arguments', () => {
  it('a directory is file_not_found naming the path, not a plain EISDIR error', async () => {
    const error = await rejection(openDataset(tmpdir()));
    expect(error.code).toBe(ErrorCode.fileNotFound);
    expect(error.details.field).toBe('path');
    expect(error.message).toContain(tmpdir());
    expect(error.message).toMatch(/directory/);
  });

  it.each([
    [null, 'options'],
    ['inline', 'options'],
    [['inline'], 'options'],
    [42, 'options'],
    [{ executon: 'pool' }, 'options.executon'],
    [{ execution: 'fast' }, 'execution'],
    [{ cellCache: -1 }, 'cellCache'],
  ])('options %j are refused naming %s', async (options, field) => {
    const error = await rejection(openDataset(inject('testDatasets').gss, options as never));
    expect(error.code).toBe(ErrorCode.invalidOption);
    expect(error.details.field).toBe(field);
    expect(error.details.hint).toBeTruthy();
  });

  it.each([[undefined], [{}]])('options %j open the dataset', async (options) => {
    const ds = await openDataset(inject('testDatasets').gss, options);
    expect(ds.info.survey).toBe('GSS');
    await ds.close();
  });
});

describe('builds', () => {
  function csv(name: string, text: string, gzip = false): string {
    const path = join(dir, name);
    writeFileSync(path, gzip ? gzipSync(text) : text);
    return path;
  }
  const leftovers = (folder: string) => readdirSync(folder).filter((name) => name.includes('.tmp') || name === 'out.arrow');

  it.each([
    ['ragged.csv', 'a,w\n1,2\n3\n', /ragged\.csv:3/],
    ['weight.csv', 'a,w\n1,2\n3,abc\n', /weight\.csv:3.*"w".*abc|weight\.csv:3.*abc/],
    ['negative.csv', 'a,w\n1,-2\n', /negative\.csv:2/],
    ['blank-weight.csv', 'a,w\n1,\n', /blank-weight\.csv:2/],
    ['dupes.csv', 'a,a,w\n1,2,3\n', /dupes\.csv:1.*"a"|"a".*dupes\.csv:1/],
    ['empty.csv', '', /empty\.csv/],
    ['noweight.csv', 'a,W\n1,2\n', /"w".*did you mean "W"|did you mean "W"/],
  ])('%s fails with file:line and leaves no dataset', async (name, text, message) => {
    const folder = mkdtempSync(join(dir, 'build-'));
    const error = await rejection(buildDataset(csv(name, text), { weights: ['w'], survey: 'T', out: join(folder, 'out.arrow') }));
    expect(error.code).toBe(ErrorCode.invalidInput);
    expect(error.message).toMatch(message);
    expect(leftovers(folder)).toEqual([]);
  });

  describe('a cancelled build rejects with cancelled and leaves nothing behind', () => {
    const gssCsv = 'datasets/gss_1972_2024_sub.csv.gz';
    const options = (folder: string, signal: AbortSignal) => ({ weights: ['wtssps'], survey: 'GSS', out: join(folder, 'out.arrow'), signal });

    it('with a signal aborted before it starts', async () => {
      const folder = mkdtempSync(join(dir, 'cancel-'));
      const error = await rejection(buildDataset(gssCsv, options(folder, AbortSignal.abort())));
      expect(error.code).toBe(ErrorCode.cancelled);
      expect(error.message).toBe('the build was cancelled');
      expect(readdirSync(folder)).toEqual([]);
    });

    it('aborted while it reads the input', async () => {
      const folder = mkdtempSync(join(dir, 'cancel-'));
      const controller = new AbortController();
      let progress = 0;
      const build = buildDataset(gssCsv, { ...options(folder, controller.signal), onProgress: () => progress++ === 0 && controller.abort() });
      const error = await rejection(build);
      expect(error.code).toBe(ErrorCode.cancelled);
      expect(progress).toBe(1); // the read stopped at the next progress step
      expect(readdirSync(folder)).toEqual([]);
    });

    it('aborted while it writes the dataset: the partial file is removed and an older dataset kept', async () => {
      const folder = mkdtempSync(join(dir, 'cancel-'));
      const out = join(folder, 'out.arrow');
      copyFileSync(inject('testDatasets').nhanes, out);
      const before = readFileSync(out);
      const controller = new AbortController();
      const compiled = compileDataset(await readInput(gssCsv, { weights: ['wtssps'] }), { survey: 'GSS' });
      // Aborts once the writer has taken its first buffer, so the temporary file exists then.
      const aborting = {
        meta: compiled.meta,
        specs: compiled.specs,
        *data() {
          for (const buffer of compiled.data() as Iterable<Uint8Array>) {
            yield buffer;
            controller.abort();
          }
        },
      } as unknown as typeof compiled;
      const error = await rejection(writeDataset(aborting, out, controller.signal));
      expect(error.code).toBe(ErrorCode.cancelled);
      expect(readdirSync(folder)).toEqual(['out.arrow']);
      expect(readFileSync(out).equals(before)).toBe(true);
    });
  });

  it('a failed rebuild keeps the previous dataset intact', async () => {
    const folder = mkdtempSync(join(dir, 'keep-'));
    const out = join(folder, 'out.arrow');
    copyFileSync(inject('testDatasets').nhanes, out);
    const before = readFileSync(out);
    await rejection(buildDataset(csv('bad-rebuild.csv', 'a,w\n1,x\n'), { weights: ['w'], survey: 'T', out }));
    expect(readFileSync(out).equals(before)).toBe(true);
    expect(readdirSync(folder)).toEqual(['out.arrow']);
  });

  it.each([
    [{ weights: [], survey: 'T' }, 'weights'],
    [{ weights: ['w'], survey: 'bad survey!' }, 'survey'],
    [{ weights: ['w'], survey: 'T', units: 0 }, 'units'],
    [{ weights: ['w'], survey: 'T', stability: { cautionMax: 10, veryUnstableMax: 20 } }, 'stability'],
  ])('option error %# names %s', async (options, field) => {
    const error = await rejection(buildDataset(csv('ok.csv', 'a,w\n1,2\n'), { out: join(dir, 'x.arrow'), ...options } as never));
    expect(error.code).toBe(ErrorCode.invalidOption);
    expect(error.details.field).toBe(field);
  });

  it('an output folder that does not exist is named', async () => {
    const error = await rejection(buildDataset(csv('ok2.csv', 'a,w\n1,2\n'), { weights: ['w'], survey: 'T', out: join(dir, 'no', 'such', 'x.arrow') }));
    expect(error.details.field).toBe('out');
  });

  it.each([
    ['not JSON', '{', /not valid JSON/],
    ['code without expr', '{"codes": {"X": {"label": "x"}}}', /code "X" needs an "expr"/],
    ['unknown variable', '{"variables": {"nope": {"group": "g"}}}', /variable "nope" is not a column/],
    ['bad code expression', '{"codes": {"X": {"expr": "a=9"}}}', /code "X" \(a=9\) is invalid: no respondent has a=9/],
    ['circular codes', '{"codes": {"X": {"expr": "Y"}, "Y": {"expr": "X"}}}', /refers to itself/],
    ['unknown key', '{"codes": {}, "extra": 1}', /unknown top-level key "extra"/],
  ])('a codebook with %s fails naming the file and entry', async (_what, json, message) => {
    const codebook = join(dir, `codebook-${Math.random()}.json`);
    writeFileSync(codebook, json);
    const folder = mkdtempSync(join(dir, 'cb-'));
    const error = await rejection(buildDataset(csv('cb.csv', 'a,w\n1,2\n2,3\n'), { weights: ['w'], survey: 'T', out: join(folder, 'out.arrow'), codebook }));
    expect(error.code).toBe(ErrorCode.invalidCodebook);
    expect(error.message).toMatch(message);
    expect(error.message).toContain(codebook);
    expect(leftovers(folder)).toEqual([]);
  });
});

describe('the CLI reports errors on stderr with a hint and a non-zero exit', () => {
  it('crosstab build on a ragged file', () => {
    const folder = mkdtempSync(join(dir, 'cli-'));
    const input = join(folder, 'in.csv');
    writeFileSync(input, 'a,w\n1,1\n2\n');
    const run = spawnSync(process.execPath, [cliPath, 'build', input, '--weight', 'w', '--survey', 'T', '--out', join(folder, 'out.arrow')], { encoding: 'utf8' });
    expect(run.status).toBe(1);
    expect(run.stderr).toMatch(/error \[invalid_input\]: .*in\.csv:3/);
    expect(run.stderr).toMatch(/hint: /);
    expect(existsSync(join(folder, 'out.arrow'))).toBe(false);
  });

  it('crosstab query with an unknown variable', () => {
    const run = spawnSync(process.execPath, [cliPath, 'query', inject('testDatasets').gss, '--target', 'sexx=2'], { encoding: 'utf8' });
    expect(run.status).toBe(1);
    expect(run.stderr).toMatch(/unknown variable "sexx"; did you mean "sex"/);
  });

  it('crosstab build with a missing required flag names it', () => {
    const run = spawnSync(process.execPath, [cliPath, 'build', 'x.csv', '--survey', 'T', '--out', 'y.arrow'], { encoding: 'utf8' });
    expect(run.status).not.toBe(0);
    expect(run.stderr).toMatch(/--weight/);
  });

  it('crosstab query --json on a good query exits 0', () => {
    const out = execFileSync(process.execPath, [cliPath, 'query', inject('testDatasets').gss, '--target', 'sex=2', '--json'], { encoding: 'utf8' });
    expect(JSON.parse(out).ResultCode).toBe(0);
  });
});

describe('random malformed input (fast-check): a CrosstabError naming the field, never a result missing an entry', () => {
  let ds: Dataset;
  beforeAll(async () => {
    ds = await openDataset(inject('testDatasets').gss, { execution: 'inline' });
    return () => ds.close();
  });
  const expression = fc.constantFrom('*', 'sex=1', 'sex=2', 'degree=3..4', 'F18-34');
  /** The first hole of a sparse array, or -1. */
  const firstHole = (items: unknown[]) => Array.from({ length: items.length }, (_, i) => i).find((i) => !(i in items)) ?? -1;

  it('sparse targets: every hole is refused as targets[i]; a dense array gets one cell per target', async () => {
    await fc.assert(
      fc.asyncProperty(fc.sparseArray(expression, { maxLength: 6 }), async (targets) => {
        const outcome = await ds.crosstab({ base: '*', targets }).then(
          (result) => ({ result }),
          (error: unknown) => ({ error }),
        );
        const hole = firstHole(targets);
        if (targets.length > 0 && hole < 0) {
          expect('result' in outcome && outcome.result.targets.length).toBe(targets.length);
          return;
        }
        expect('error' in outcome && outcome.error).toBeInstanceOf(CrosstabError);
        const error = (outcome as { error: CrosstabError }).error;
        expect(error.code).toBe(ErrorCode.invalidOption);
        expect(error.details.field).toBe(targets.length === 0 ? 'targets' : `targets[${hole}]`);
      }),
      { numRuns: 150 },
    );
  });

  it('sparse rows and columns: every hole is refused as rows[i] / columns[i]; a dense axis keeps every entry', async () => {
    const axis = fc.sparseArray(fc.oneof(expression, fc.constant({ variable: 'sex' }), fc.record({ expr: expression, label: fc.string() })), { maxLength: 5 });
    await fc.assert(
      fc.asyncProperty(axis, axis, async (rows, columns) => {
        const outcome = await ds.table({ base: '*', rows, columns }).then(
          (result) => ({ result }),
          (error: unknown) => ({ error }),
        );
        // { variable: 'sex' } is Male, Female and "No answer" (the file has respondents with no sex).
        const width = (items: unknown[]) => items.reduce<number>((n, item) => n + (typeof item === 'object' && item !== null && 'variable' in item ? 3 : 1), 0);
        const problem = [['rows', rows], ['columns', columns]].map(([name, items]) => {
          const list = items as unknown[];
          if (list.length === 0) return name as string;
          const hole = firstHole(list);
          return hole >= 0 ? `${name as string}[${hole}]` : undefined;
        }).find((field) => field !== undefined);
        if (problem === undefined) {
          expect('result' in outcome).toBe(true);
          const result = (outcome as { result: TableResult }).result;
          expect([result.rows.length, result.columns.length]).toEqual([width(rows), width(columns)]);
          return;
        }
        expect('error' in outcome && outcome.error).toBeInstanceOf(CrosstabError);
        expect((outcome as { error: CrosstabError }).error.details.field).toBe(problem);
      }),
      { numRuns: 150 },
    );
  });

  it('anything as a query or as openDataset options: a CrosstabError with a code and a field', async () => {
    const path = inject('testDatasets').gss;
    await fc.assert(
      fc.asyncProperty(fc.anything({ withSparseArray: true, withNullPrototype: true, withBoxedValues: true, maxDepth: 2 }), async (value) => {
        const query = await ds.crosstab(value as never).then(
          () => undefined,
          (e: unknown) => e,
        );
        expect(query).toBeInstanceOf(CrosstabError);
        expect((query as CrosstabError).details.field).toBeTruthy();
        const opened = await openDataset(path, value as never).then(
          (dataset) => dataset,
          (e: unknown) => e,
        );
        if (opened instanceof Dataset) {
          // Only no options at all, or an object with no keys, opens.
          expect(value === undefined || (typeof value === 'object' && value !== null && !Array.isArray(value) && Object.keys(value).length === 0)).toBe(true);
          await opened.close();
          return;
        }
        expect(opened).toBeInstanceOf(CrosstabError);
        expect((opened as CrosstabError).code).toBe(ErrorCode.invalidOption);
        expect((opened as CrosstabError).details.field).toBeTruthy();
      }),
      { numRuns: 200 },
    );
  });
});
