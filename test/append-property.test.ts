// appendRows() on random small waves: a dataset built from the first rows and extended with the
// rest (in one or two waves) answers every query as a build of all the rows, for the shapes
// users write: numbers spelled several ways (2, 2.0, 2e0, 20e-1, -0), text that sorts between
// old values (accents, case, astral characters), blanks, zero weights, a range index and
// codebook codes. Info and random expressions, against the full build and a row-by-row reference.
import fc from 'fast-check';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Float64, Int32, Int64, Table, tableToIPC, Utf8, vectorFromArray } from 'apache-arrow';
import { parquetWriteBuffer } from 'hyparquet-writer';
import { afterAll, describe, expect, it } from 'vitest';
import { appendRows, buildDataset, openDataset, type Dataset } from '../src/index.js';
import type { Expr } from '../src/query/ast.js';
import { toText } from './support/expression-text.js';
import { matches, type ReferenceTable } from './support/reference-engine.js';

const dir = mkdtempSync(join(tmpdir(), 'crosstab-append-property-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let serial = 0;
const file = (name: string) => join(dir, `${serial++}-${name}`);

const NUMBERS = ['0', '-0', '1', '2', '2.0', '2e0', '20e-1', '0.5', '5e-1', '-3', '1e3', '1000', '7', '12', '3.25'];
const TEXTS = ['a', 'b', 'A', 'é', 'e\u0301', '06', '6', 'x y', 'q"t', 'a,b', '1..2', '日本', '😀', '\uff21', 'z'];
const ANSWERS = ['b', 'a', 'c', 'z z', 'é'];
const GROUPS = ['1', '2', '3', '4', '5', '6', '7', '8', '9', '10', '11', '12'];

interface Rows {
  num: string[];
  txt: string[];
  grp: string[];
  /** A multi-response column: answers joined by ';' (a numeric code spelled two ways among them). */
  m: string[];
  w: number[];
}

const cell = (text: string) => (/[",\n\r]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text);

function csv(rows: Rows, from: number, to: number): string {
  const path = file('part.csv');
  const lines = ['num,txt,grp,m,w'];
  for (let r = from; r < to; r++) lines.push([rows.num[r]!, rows.txt[r]!, rows.grp[r]!, rows.m[r]!, String(rows.w[r]!)].map(cell).join(','));
  writeFileSync(path, `${lines.join('\n')}\n`);
  return path;
}

type Format = 'csv' | 'parquet' | 'arrow';

/** Rows from..to as a typed file: num a double, grp an integer, txt text (blank: null, or an empty string). */
function typed(rows: Rows, from: number, to: number, format: Format, emptyText: boolean): string {
  if (format === 'csv') return csv(rows, from, to);
  const num = rows.num.slice(from, to).map((text) => (text === '' ? null : Number(text)));
  const txt = rows.txt.slice(from, to).map((text) => (text === '' ? (emptyText ? '' : null) : text));
  const grp = rows.grp.slice(from, to).map(Number);
  const m = rows.m.slice(from, to).map((text) => (text === '' ? null : text));
  const w = rows.w.slice(from, to);
  const path = file(`part.${format}`);
  if (format === 'parquet') {
    writeFileSync(path, Buffer.from(parquetWriteBuffer({ columnData: [
      { name: 'num', data: num, type: 'DOUBLE' },
      { name: 'txt', data: txt, type: 'STRING' },
      { name: 'grp', data: grp.map(BigInt), type: 'INT64' },
      { name: 'm', data: m, type: 'STRING' },
      { name: 'w', data: w, type: 'DOUBLE' },
    ] })));
  } else {
    const table = new Table({ num: vectorFromArray(num, new Float64()), txt: vectorFromArray(txt, new Utf8()), grp: vectorFromArray(grp, new Int32()), m: vectorFromArray(m, new Utf8()), w: vectorFromArray(w, new Float64()) });
    writeFileSync(path, tableToIPC(table, 'file'));
  }
  return path;
}

const rowsArb = fc.integer({ min: 3, max: 60 }).chain((n) =>
  fc.record({
    num: fc.array(fc.oneof(fc.constant(''), fc.constantFrom(...NUMBERS)), { minLength: n, maxLength: n }),
    txt: fc.array(fc.oneof(fc.constant(''), fc.constantFrom(...TEXTS)), { minLength: n, maxLength: n }),
    grp: fc.array(fc.constantFrom(...GROUPS), { minLength: n, maxLength: n }),
    m: fc.array(fc.subarray(ANSWERS, { maxLength: 3 }).map((answers) => answers.join(';')), { minLength: n, maxLength: n }),
    w: fc.array(fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 50 }), fc.double({ min: 0.001, max: 100, noNaN: true })), { minLength: n, maxLength: n }),
  }),
);

function exprArb(rows: Rows): fc.Arbitrary<Expr> {
  const leaves: Array<fc.Arbitrary<Expr>> = [fc.constant({ all: true } as Expr)];
  for (const name of ['num', 'txt', 'grp'] as const) {
    const seen = [...new Set(rows[name].filter((v) => v !== ''))];
    if (seen.length === 0) continue;
    leaves.push(fc.constant({ var: name, missing: true } as Expr));
    leaves.push(fc.subarray(seen, { minLength: 1 }).map((list) => ({ var: name, in: list }) as Expr));
    if (name !== 'txt') {
      const bound = fc.option(fc.constantFrom('-3', '-0', '0', '1', '2', '2.5', '5', '7', '1000', '12'), { nil: undefined });
      leaves.push(
        fc.tuple(bound, bound)
          .filter(([min, max]) => min !== undefined || max !== undefined)
          .map(([min, max]) => (min !== undefined && max !== undefined && Number(min) > Number(max) ? [max, min] : [min, max]))
          .map(([min, max]) => ({ var: name, ...(min !== undefined ? { min } : {}), ...(max !== undefined ? { max } : {}) }) as Expr),
      );
    }
  }
  const answers = [...new Set(rows.m.flatMap((text) => (text === '' ? [] : text.split(';'))))];
  if (answers.length > 0) {
    leaves.push(fc.constant({ var: 'm', missing: true } as Expr));
    const some = fc.subarray(answers, { minLength: 1, maxLength: Math.min(3, answers.length) });
    leaves.push(some.map((list) => ({ var: 'm', in: list }) as Expr), some.map((list) => ({ var: 'm', every: list }) as Expr), some.map((list) => ({ var: 'm', none: list }) as Expr));
  }
  return fc.letrec<{ expr: Expr }>((tie) => ({
    expr: fc.oneof(
      { depthSize: 'small' },
      ...leaves,
      tie('expr').map((inner) => ({ not: inner }) as Expr),
      fc.array(tie('expr'), { minLength: 2, maxLength: 4 }).map((items) => ({ and: items }) as Expr),
      fc.array(tie('expr'), { minLength: 2, maxLength: 4 }).map((items) => ({ or: items }) as Expr),
    ),
  })).expr;
}

/** The row-by-row reference: a multi-response leaf holds for a row by its answers (none: has answers, none of those). */
function holds(table: ReferenceTable, answers: string[][], expr: Expr, row: number): boolean {
  if ('and' in expr) return expr.and.every((item) => holds(table, answers, item, row));
  if ('or' in expr) return expr.or.some((item) => holds(table, answers, item, row));
  if ('not' in expr) return !holds(table, answers, expr.not, row);
  if (!('var' in expr) || expr.var !== 'm') return matches(table, expr, row);
  const given = answers[row]!;
  if ('missing' in expr) return given.length === 0;
  if ('in' in expr) return expr.in.some((value) => given.includes(value));
  if ('every' in expr) return expr.every.every((value) => given.includes(value));
  if ('none' in expr) return given.length > 0 && !expr.none.some((value) => given.includes(value));
  throw new Error('no range on m');
}

function referenceCount(table: ReferenceTable, answers: string[][], base: Expr, target: Expr): number {
  let respondents = 0;
  for (let row = 0; row < table.weights.length; row++) if (holds(table, answers, base, row) && holds(table, answers, target, row)) respondents++;
  return respondents;
}

/** The info both datasets give, without what differs by design (times, sources, checksums). */
function comparable(ds: Dataset): unknown {
  const { createdAt: _a, source: _s, checksum: _c, ...info } = ds.info;
  return info;
}

describe('appendRows on random waves', () => {
  it('one or two waves appended equal the build of every row: info and random expressions', async () => {
    let compared = 0;
    await fc.assert(
      fc.asyncProperty(
        rowsArb.chain((rows) => {
          const n = rows.w.length;
          return fc.tuple(
            fc.constant(rows),
            fc.integer({ min: 1, max: n - 1 }).chain((a) => fc.tuple(fc.constant(a), fc.option(fc.integer({ min: a, max: n }), { nil: undefined }))),
            fc.array(exprArb(rows), { minLength: 1, maxLength: 5 }),
            exprArb(rows),
            fc.boolean(),
            fc.constantFrom<Format>('csv', 'parquet', 'arrow'),
            fc.boolean(),
          );
        }),
        async ([given, [cut, cut2], targets, base, ranged, format, emptyText]) => {
          // A typed wave writes a number as its float prints: so does the build of every row here.
          const rows = format === 'csv' ? given : { ...given, num: given.num.map((text, r) => (r >= cut && text !== '' ? String(Number(text)) : text)) };
          const n = rows.w.length;
          const options = { weights: ['w'], survey: 'T', rangeIndex: ranged ? ['grp'] : ('none' as const), multi: [{ column: 'm', delimiter: ';' }] };
          const whole = file('whole.arrow');
          const first = file('first.arrow');
          const out = file('appended.arrow');
          const firstReport = await buildDataset(csv(rows, 0, cut), { ...options, out: first }).catch((error: unknown) => error);
          const wholeReport = await buildDataset(csv(rows, 0, n), { ...options, out: whole }).catch((error: unknown) => error);
          if (firstReport instanceof Error) return; // a part of the rows no build takes (every weight zero, ...)
          if (wholeReport instanceof Error) throw wholeReport;
          let appended: unknown;
          if (cut2 === undefined || cut2 === cut || cut2 === n) appended = await appendRows(first, typed(rows, cut, n, format, emptyText), { out }).catch((error: unknown) => error);
          else {
            const middle = file('middle.arrow');
            appended = await appendRows(first, typed(rows, cut, cut2, format, emptyText), { out: middle }).catch((error: unknown) => error);
            if (!(appended instanceof Error)) appended = await appendRows(middle, typed(rows, cut2, n, format, emptyText), { out }).catch((error: unknown) => error);
          }
          if (appended instanceof Error) {
            // A refusal is allowed only where the build of every row differs in kind (a variable text there, numeric here).
            expect((appended as { code?: string }).code, String(appended)).toBe('invalid_input');
            expect(String(appended)).toMatch(/which was blank for every respondent of|but (num|txt|grp) is numeric in the dataset|cannot stay numeric/);
            return;
          }
          const [a, w] = [await openDataset(out, { cellCache: 0 }), await openDataset(whole, { cellCache: 0 })];
          try {
            expect(comparable(a)).toEqual(comparable(w));
            const numeric = new Set(w.info.variables.filter((v) => v.kind === 'numeric').map((v) => v.name));
            const table: ReferenceTable = { columns: { num: rows.num, txt: rows.txt, grp: rows.grp }, weights: rows.w, numeric };
            const answers = rows.m.map((text) => (text === '' ? [] : text.split(';')));
            const query = { base: toText(base), targets: targets.map(toText) };
            const [ra, rw] = await Promise.all([a.crosstab(query).catch((e: unknown) => e), w.crosstab(query).catch((e: unknown) => e)]);
            if (rw instanceof Error) {
              expect(ra, String(rw)).toBeInstanceOf(Error);
              expect((ra as { code?: string }).code).toBe((rw as { code?: string }).code);
              return;
            }
            const ca = ra as Awaited<ReturnType<Dataset['crosstab']>>;
            const cw = rw as Awaited<ReturnType<Dataset['crosstab']>>;
            [ca.base, ...ca.targets].forEach((got, i) => {
              const want = [cw.base, ...cw.targets][i]!;
              const reference = referenceCount(table, answers, base, i === 0 ? { all: true } : targets[i - 1]!);
              expect(got.respondents, `${query.base} | ${i === 0 ? '*' : query.targets[i - 1]}`).toBe(want.respondents);
              expect(want.respondents, `reference: ${query.base} | ${i === 0 ? '*' : query.targets[i - 1]}`).toBe(reference);
              expect(Math.abs(got.weighted - want.weighted)).toBeLessThanOrEqual(1e-9 * Math.max(1, want.weighted));
            });
            compared++;
          } finally {
            await Promise.all([a.close(), w.close()]);
          }
        },
      ),
      { numRuns: 40, seed: 20261129 },
    );
    expect(compared).toBeGreaterThan(15);
  }, 120_000);
});
