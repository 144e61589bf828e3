// An input file replaced or rewritten while a build reads it: the build gives the dataset of
// one file or refuses ("changed while it was being read"), never a dataset made of both. The
// Parquet and Arrow readers' worker threads open the path again (dist/dataset/*-worker.js;
// `npm run build:ts` first), so each compares the file it opened with the reader's.
import { spawn } from 'node:child_process';
import { appendFileSync, copyFileSync, existsSync, mkdtempSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { DuckDBInstance } from '@duckdb/node-api';
import { tableFromArrays, tableToIPC } from 'apache-arrow';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
// @ts-expect-error: a plain-JavaScript bench helper without types
import { buildFingerprint } from '../bench/lib/build-fingerprint.js';
import { fileIdentity } from '../src/dataset/input/file-identity.js';
import { readTypedFile } from '../src/dataset/input/input-file.js';
import { cliPath, repoRoot } from './support/paths.js';

const dir = mkdtempSync(join(tmpdir(), 'crosstab-input-replaced-'));
const first = join(dir, 'first.parquet');
const second = join(dir, 'second.parquet');
const arrowFile = join(dir, 'first.arrow');
const rows = 400_000;

beforeAll(async () => {
  const duck = await (await DuckDBInstance.create(':memory:')).connect();
  // Same schema and layout, other values: a mixture of the two reads as a valid file.
  for (const [path, shift] of [[first, 0], [second, 5]] as const) {
    await duck.run(`COPY (SELECT (i * 7 + ${shift}) % 50 AS a, (i * 13 + ${shift}) % 90 AS b, (i + ${shift}) % 30 AS c, (i * 3 + ${shift}) % 70 AS d,
        1 + (i % 5) AS w FROM range(${rows}) r(i)) TO '${path}' (FORMAT parquet, COMPRESSION uncompressed, ROW_GROUP_SIZE 50000)`);
  }
  writeFileSync(arrowFile, tableToIPC(tableFromArrays({ a: Int32Array.from({ length: 1000 }, (_, i) => i % 7), w: Float64Array.from({ length: 1000 }, () => 1) }), 'file'));
}, 120_000);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Runs a worker of the built reader on `task`; resolves with its messages up to done or error. */
function runWorker(name: string, task: object): Promise<Array<{ done?: true; error?: { message: string } }>> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(join(repoRoot, 'dist', 'dataset', name), { workerData: task });
    const messages: Array<{ done?: true; error?: { message: string } }> = [];
    worker.on('message', (message) => {
      messages.push(message);
      if (message.done || message.error) void worker.terminate().then(() => resolve(messages));
    });
    worker.on('error', reject);
  });
}

describe('a build worker opens the file its reader opened, or refuses', () => {
  it('Parquet: the same file reads; another file at the path (renamed over it) is refused', async () => {
    const identity = fileIdentity(statSync(first));
    expect(await runWorker('parquet-worker.js', { path: first, identity, rows, columns: [] })).toEqual([{ done: true }]);
    const other = fileIdentity(statSync(second));
    const refused = await runWorker('parquet-worker.js', { path: first, identity: other, rows, columns: [] });
    expect(refused.at(-1)?.error?.message).toMatch(/changed while it was being read/);
    const gone = await runWorker('parquet-worker.js', { path: join(dir, 'absent.parquet'), identity, rows, columns: [] });
    expect(gone.at(-1)?.error?.message).toMatch(/changed while it was being read/);
  });

  it('Arrow: the same file reads; another file at the path is refused', async () => {
    const identity = fileIdentity(statSync(arrowFile));
    expect(await runWorker('arrow-worker.js', { path: arrowFile, identity, columns: [] })).toEqual([{ done: true }]);
    const refused = await runWorker('arrow-worker.js', { path: arrowFile, identity: { ...identity, ino: identity.ino + 1 }, columns: [] });
    expect(refused.at(-1)?.error?.message).toMatch(/changed while it was being read/);
  });
});

describe('a typed file rewritten in place while read', () => {
  it('is refused; read unchanged, it is the reader table', async () => {
    const path = join(dir, 'in-place.parquet');
    copyFileSync(first, path);
    const table = { rows: 1 } as never;
    await expect(readTypedFile(path, { weights: ['w'] }, 'Parquet', async () => table)).resolves.toBe(table);
    await expect(readTypedFile(path, { weights: ['w'] }, 'Parquet', async () => {
      appendFileSync(path, 'more bytes');
      return table;
    })).rejects.toThrow(/changed while it was being read/);
  });
});

function build(input: string, out: string, swap: () => void, delayMs: number): Promise<{ status: number | null; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [cliPath, 'build', input, '--weight', 'w', '--survey', 'T', '--out', out, '--threads', '2', '--quiet']);
    let stderr = '';
    child.stderr.on('data', (chunk) => (stderr += chunk));
    const timer = setTimeout(swap, delayMs);
    child.on('close', (status) => {
      clearTimeout(timer);
      resolve({ status, stderr });
    });
  });
}

describe('a Parquet file renamed over the input during a build with worker threads', () => {
  it('builds one file or the other, or refuses; never a mixture', async () => {
    const expected = new Map<string, string>();
    for (const [name, path] of [['first', first], ['second', second]] as const) {
      const out = join(dir, `${name}.built.arrow`);
      const run = await build(path, out, () => undefined, 0);
      expect(run.status, run.stderr).toBe(0);
      expected.set(await buildFingerprint(out), name);
    }
    expect(expected.size).toBe(2);
    const outcomes: string[] = [];
    for (const delayMs of [40, 80, 120, 160, 220, 300, 400, 550]) {
      const input = join(dir, 'input.parquet');
      const next = join(dir, 'next.parquet');
      copyFileSync(first, input);
      copyFileSync(second, next);
      const out = join(dir, `race-${delayMs}.arrow`);
      const run = await build(input, out, () => renameSync(next, input), delayMs);
      if (run.status === 0) {
        const built: string | undefined = expected.get(await buildFingerprint(out));
        expect(built, `a build with the file replaced after ${delayMs} ms is neither file's dataset`).toBeDefined();
        outcomes.push(`${delayMs} ms: ${built}`);
      } else {
        expect(run.stderr).toMatch(/changed while it was being read/);
        expect(existsSync(out)).toBe(false);
        outcomes.push(`${delayMs} ms: refused`);
      }
    }
    console.info(`input replaced during a build: ${outcomes.join(', ')}`);
  }, 240_000);
});
