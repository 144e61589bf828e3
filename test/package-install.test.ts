// The package as a user gets it: `npm pack` of the built tree, installed from the tarball into
// a fresh project elsewhere, then used from there: the CLI (`npx crosstab demo`, `serve`), ESM
// and CommonJS entry points, and TypeScript consumers (`.cts` and `.mts`, module node16).
// Needs `npm run build` first and the npm registry (or a cache holding the dependencies).
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { tempDir } from './http/support.js';
import { repoRoot } from './support/paths.js';

let project: string;
const version = (name: string): string => (JSON.parse(readFileSync(join(repoRoot, 'node_modules', name, 'package.json'), 'utf8')) as { version: string }).version;

function run(command: string, args: string[]): { status: number | null; stdout: string; stderr: string } {
  const result = spawnSync(command, args, { cwd: project, encoding: 'utf8', timeout: 120_000 });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

beforeAll(() => {
  const dir = tempDir('crosstab-package-');
  // --ignore-scripts: pack the tree `npm run build` made (prepare would rebuild it all).
  const tarball = execFileSync('npm', ['pack', '--ignore-scripts', '--silent', '--pack-destination', dir], { cwd: repoRoot, encoding: 'utf8' }).trim().split('\n').at(-1) as string;
  project = join(dir, 'consumer');
  mkdirSync(project);
  writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'consumer', private: true }));
  // The same TypeScript and @types/node as this repository, so the npm cache usually has them.
  execFileSync('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', join(dir, tarball), `typescript@${version('typescript')}`, `@types/node@${version('@types/node')}`], {
    cwd: project,
    stdio: 'pipe',
    timeout: 300_000,
  });
});

describe('crosstab-engine installed from its tarball into another project', () => {
  it('`npx crosstab demo` answers from the bundled datasets', () => {
    const demo = run('npx', ['crosstab', 'demo']);
    expect(demo.stderr).not.toMatch(/ENOENT|Error/);
    expect(demo.status).toBe(0);
    expect(demo.stdout).toMatch(/General Social Survey 1972-2024 \(subset\)/);
  });

  it('`npx crosstab serve` serves the bundled datasets', async () => {
    // The bin npx runs, started directly so that SIGTERM reaches the server itself.
    const child = spawn(join(project, 'node_modules', '.bin', 'crosstab'), ['serve', '--port', '0'], { cwd: project, stdio: ['ignore', 'pipe', 'pipe'] });
    try {
      let output = '';
      const url = await new Promise<string>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`serve did not start:\n${output}`)), 30_000);
        const onData = (chunk: Buffer): void => {
          output += chunk.toString();
          const match = /listening on (http:\/\/\S+)/.exec(output);
          if (match) {
            clearTimeout(timer);
            resolve(match[1] as string);
          }
        };
        child.stdout.on('data', onData);
        child.stderr.on('data', onData);
        child.once('exit', (code) => reject(new Error(`serve exited with ${code}:\n${output}`)));
      });
      expect(output).toMatch(/GSS, NHANES listening/);
      expect((await fetch(`${url}/docs`)).status).toBe(200);
    } finally {
      child.kill('SIGTERM');
    }
  });

  it('require() and import() give the same exports, for the root and for /http', () => {
    const script = `
      const cjs = [require('crosstab-engine'), require('crosstab-engine/http')].map((m) => Object.keys(m).sort());
      Promise.all([import('crosstab-engine'), import('crosstab-engine/http')]).then((esm) => {
        process.stdout.write(JSON.stringify({ cjs, esm: esm.map((m) => Object.keys(m).filter((k) => k !== 'default').sort()) }));
      });`;
    const result = run(process.execPath, ['-e', script]);
    expect(result.stderr).toBe('');
    const { cjs, esm } = JSON.parse(result.stdout) as { cjs: string[][]; esm: string[][] };
    expect(cjs).toEqual(esm);
    expect(cjs[0]).toContain('openDataset');
    expect(cjs[1]).toContain('createCrosstabHandler');
  });

  it('require() and import() each build, open and answer a pooled table (readers, writer and pool load on first use)', () => {
    const csv = join(project, 'node_modules', 'crosstab-engine', 'datasets', 'nhanes_2009_2010_survey.csv.gz');
    const script = `
      const { join } = require('node:path');
      async function use(engine, name) {
        const out = join(process.cwd(), name + '.arrow');
        const report = await engine.buildDataset(${JSON.stringify(csv)}, { weights: ['WTMEC2YR'], survey: 'N', out });
        const ds = await engine.openDataset(out, { execution: 'pool' });
        const table = await ds.table({ base: '*', rows: ['RIAGENDR=1', 'RIAGENDR=2'], columns: ['*'] });
        ds.close();
        await engine.closePool();
        return [report.respondents, table.execution, table.cell(0, 0).respondents + table.cell(1, 0).respondents];
      }
      (async () => {
        const cjs = await use(require('crosstab-engine'), 'cjs');
        const esm = await use(await import('crosstab-engine'), 'esm');
        process.stdout.write(JSON.stringify({ cjs, esm }));
      })();`;
    const result = run(process.execPath, ['-e', script]);
    expect(result.stderr).toBe('');
    const { cjs, esm } = JSON.parse(result.stdout) as { cjs: unknown[]; esm: unknown[] };
    expect(cjs[1]).toBe('pool');
    expect(cjs[2]).toBe(cjs[0]);
    expect(esm).toEqual(cjs);
  });

  it('type-checks CommonJS (.cts) and ESM (.mts) consumers under module node16', () => {
    writeFileSync(
      join(project, 'check.cts'),
      `import engine = require('crosstab-engine');
import http = require('crosstab-engine/http');
export const open: (path: string) => Promise<engine.Dataset> = engine.openDataset;
export const make: typeof http.createCrosstabHandler = http.createCrosstabHandler;
`,
    );
    writeFileSync(
      join(project, 'check.mts'),
      `import { openDataset, type CrosstabResult } from 'crosstab-engine';
import { createCrosstabHandler, type CrosstabHandler } from 'crosstab-engine/http';
const dataset = await openDataset('x.arrow');
export const result: CrosstabResult = await dataset.crosstab({ base: '*', targets: ['sex=2'] });
export const handler: CrosstabHandler = await createCrosstabHandler({ datasets: [dataset], keys: 'k.json', usage: 'u.ndjson' });
`,
    );
    const options = { module: 'node16', moduleResolution: 'node16', target: 'es2022', strict: true, noEmit: true, types: ['node'] };
    writeFileSync(join(project, 'tsconfig.json'), JSON.stringify({ compilerOptions: options, files: ['check.cts', 'check.mts'] }));
    const tsc = run(process.execPath, [join(project, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', project]);
    expect(tsc.stdout + tsc.stderr).toBe('');
    expect(tsc.status).toBe(0);
  });
});
