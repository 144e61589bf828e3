// The mounting snippets of docs/http.md, taken from the page as written: type-checked and run
// against the built package (imported by its name, `crosstab-engine/http`), then called over
// real HTTP. A snippet that stops compiling or working, or that listens beyond 127.0.0.1,
// fails here. Needs `npm run build:ts` after a change in src/.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { dirname, join } from 'node:path';
import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { repoRoot } from '../support/paths.js';
import { makeKeyFile, tempDir, type TestKeys } from './support.js';

const paths = inject('testDatasets');

/** Each mount's snippet: a bold title line, then a ```ts block that listens on port 8080. */
function mountSnippets(): Array<{ title: string; code: string }> {
  const page = readFileSync(join(repoRoot, 'docs', 'http.md'), 'utf8');
  const start = page.indexOf('\n## Mounting in an application');
  const section = page.slice(start, page.indexOf('\n## ', start + 1));
  return [...section.matchAll(/^\*\*([^*\n]+)\*\*[^\n]*\n(?:[^\n]+\n)*\n```ts\n([\s\S]*?)```/gm)]
    .map((match) => ({ title: match[1] as string, code: match[2] as string }))
    .filter((snippet) => /\b8080\b/.test(snippet.code));
}

/** What every snippet's `handler` is: the page's own first snippet shows how to make one. */
const PREAMBLE = `import { openDataset } from 'crosstab-engine';
import { createCrosstabHandler } from 'crosstab-engine/http';
const handler = await createCrosstabHandler({ datasets: [await openDataset(process.env['SNIPPET_DATASET'] as string)], keys: process.env['SNIPPET_KEYS'] as string, usage: process.env['SNIPPET_LEDGER'] as string });
`;

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });
}

/** A folder whose node_modules has the package by its name and the frameworks, as an application has them. */
function applicationDir(): string {
  const dir = tempDir('crosstab-snippets-');
  const link = (name: string, target: string): void => {
    mkdirSync(dirname(join(dir, 'node_modules', name)), { recursive: true });
    symlinkSync(target, join(dir, 'node_modules', name), 'dir');
  };
  link('crosstab-engine', repoRoot);
  for (const name of ['fastify', 'express', 'hono', '@hono/node-server', '@types']) link(name, join(repoRoot, 'node_modules', name));
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ type: 'module' }));
  return dir;
}

const snippets = mountSnippets();

describe('docs/http.md mounting snippets', () => {
  let dir: string;
  let keys: TestKeys;
  const files = new Map<string, string>();
  const children: ChildProcess[] = [];

  beforeAll(async () => {
    dir = applicationDir();
    keys = await makeKeyFile(dir);
    snippets.forEach((snippet, index) => files.set(snippet.title, join(dir, `snippet-${index}.mts`)));
    for (const snippet of snippets) writeFileSync(files.get(snippet.title) as string, `${PREAMBLE}${snippet.code}`);
  });
  afterAll(async () => {
    for (const child of children) {
      if (child.exitCode === null && child.signalCode === null) {
        const exited = new Promise((resolve) => child.once('exit', resolve));
        child.kill('SIGKILL');
        await exited;
      }
    }
  });

  it('shows one snippet per mount', () => {
    expect(snippets.map((snippet) => snippet.title)).toEqual(['node:http', '`listen()`', 'Fastify', 'Express', 'Hono']);
  });

  it('type-checks as written against the built package', () => {
    const program = ts.createProgram([...files.values()], {
      module: ts.ModuleKind.NodeNext,
      moduleResolution: ts.ModuleResolutionKind.NodeNext,
      target: ts.ScriptTarget.ES2022,
      strict: true,
      noEmit: true,
      skipLibCheck: true,
      types: ['node'],
    });
    const problems = ts.getPreEmitDiagnostics(program).map((diagnostic) => {
      const where = diagnostic.file ? `${diagnostic.file.fileName}:${diagnostic.file.getLineAndCharacterOfPosition(diagnostic.start ?? 0).line + 1}` : '';
      return `${where} ${ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n')}`;
    });
    expect(problems).toEqual([]);
  }, 60_000);

  it.each(snippets.map((snippet) => [snippet.title]))('%s: serves the API on 127.0.0.1 only', async (title) => {
    const source = readFileSync(files.get(title) as string, 'utf8');
    const port = await freePort();
    const compiled = ts.transpileModule(source.replace(/\b8080\b/g, String(port)), { compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 } }).outputText;
    const file = (files.get(title) as string).replace(/\.mts$/, '.mjs');
    writeFileSync(file, compiled);
    const child = spawn(process.execPath, [file], {
      cwd: dir,
      env: { ...process.env, SNIPPET_DATASET: paths.gss, SNIPPET_KEYS: keys.path, SNIPPET_LEDGER: join(dir, `usage-${port}.ndjson`) },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    children.push(child);
    let output = '';
    child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const docs = async (): Promise<number | string> => {
      if (child.exitCode !== null) return `exited ${child.exitCode}: ${output}`;
      return fetch(`http://127.0.0.1:${port}/v1/docs`).then(
        (response) => response.status,
        () => 'not listening yet',
      );
    };
    await expect.poll(docs, { timeout: 20_000, interval: 100 }).toBe(200);
    const reply = await fetch(`http://127.0.0.1:${port}/v1/crosstab`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'service-engine-authorizer': keys.all },
      body: JSON.stringify({ SurveyCode: 'GSS', PopulationBaseCode: 'year=2024', TargetCodes: ['sex=2'] }),
    });
    expect(reply.status).toBe(200);
    expect(((await reply.json()) as { Results: unknown[] }).Results).toHaveLength(1);
    // Bound to 127.0.0.1 alone: another loopback address (every 127.x.y.z is loopback on Linux)
    // is refused, where a server on 0.0.0.0 or :: would answer.
    const elsewhere = await fetch(`http://127.0.0.2:${port}/v1/docs`).then(
      (response) => `answered ${response.status}`,
      (error: Error & { cause?: { code?: string } }) => error.cause?.code ?? error.message,
    );
    expect(elsewhere).toBe('ECONNREFUSED');
  }, 60_000);
});
