// Every sh and ts block of README.md and docs/*.md runs as written, against the built
// package (dist/, datasets/build/: `npm run build` first), and any error fails the page.
// Each page runs in a folder of its own, as a reader would in a terminal: `npx crosstab`
// resolves to the built CLI (and nothing else: a bare `crosstab` is not on PATH),
// `import 'crosstab-engine'` to the built package, and `datasets/` holds the checkout's
// inputs and the datasets `npm run build` compiled. The page's sh blocks run in one bash
// (set -euo pipefail: an unset variable is an error too), its ts blocks as one program,
// type-checked first. A block serving HTTP (`<!-- serves: PORT -->`) runs on a free port
// instead of PORT (every block of the page below it says that port), must answer on
// 127.0.0.1 and not beyond it, and is stopped when the page ends. The markers are
// described in test/support/doc-blocks.ts; `<!-- fragment: WHY -->` skips a block that
// needs what no block can start here (a ClickHouse cluster, an identity provider).
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runnableBlocks, type DocBlock } from './support/doc-blocks.js';
import { cliPath, repoRoot } from './support/paths.js';

const blocks = runnableBlocks(repoRoot);
const pages = [...new Set(blocks.filter((block) => !('fragment' in block.markers)).map((block) => block.page))];
const PAGE_TIMEOUT_MS = 300_000;

interface Program {
  /** The .mts file (type-checked) beside the .mjs one that runs. */
  file: string;
  /** Program line (1-based) → `page:line` of the block line it came from. */
  origin: string[];
}

interface PreparedPage {
  dir: string;
  programs: Program[];
}

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

/** A folder set up as a project that installed the package: node_modules/crosstab-engine, its bin, the web frameworks, the checkout's datasets/. */
function projectDir(root: string, page: string): string {
  const dir = join(root, page.replace(/[^a-z0-9]+/gi, '-'));
  const link = (path: string, target: string): void => {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    symlinkSync(target, join(dir, path));
  };
  link('node_modules/crosstab-engine', repoRoot);
  link('node_modules/.bin/crosstab', cliPath);
  // Each package linked alone (never a scope folder: a tool that prunes node_modules would empty the checkout's).
  for (const name of ['fastify', 'express', 'hono', '@hono/node-server', '@types/node', '@types/express']) link(`node_modules/${name}`, join(repoRoot, 'node_modules', name));
  for (const name of readdirSync(join(repoRoot, 'datasets'))) {
    if (name !== 'build') link(`datasets/${name}`, join(repoRoot, 'datasets', name));
  }
  for (const name of ['gss.arrow', 'nhanes.arrow']) link(`datasets/build/${name}`, join(repoRoot, 'datasets', 'build', name));
  writeFileSync(join(dir, 'package.json'), `${JSON.stringify({ name: 'docs-reader', private: true, type: 'module' })}\n`);
  return dir;
}

const SHELL_PRELUDE = String.raw`set -euo pipefail -m
set -a
__servers=()
__stop() { local pid; for pid in "${'$'}{__servers[@]}"; do kill -- "-$pid" 2>/dev/null || true; done; }
trap __stop EXIT
__at() { printf '%s\n' "$1" > .docs-block; }
# __serve PORT LOG COMMAND...: runs COMMAND in the background and waits until it answers HTTP on 127.0.0.1:PORT (and not on 127.0.0.2).
__serve() {
  local port=$1 log=$2 i; shift 2
  "$@" > "$log" 2>&1 &
  local pid=$!
  __servers+=("$pid")
  for i in $(seq 1 600); do
    if ! kill -0 "$pid" 2>/dev/null; then echo "it stopped before answering on port $port:" >&2; cat "$log" >&2; return 1; fi
    if curl -s -o /dev/null --max-time 2 "http://127.0.0.1:$port/"; then
      if curl -s -o /dev/null --max-time 2 "http://127.0.0.2:$port/"; then echo "it answers on 127.0.0.2:$port too: it listens beyond 127.0.0.1" >&2; return 1; fi
      return 0
    fi
    sleep 0.1
  done
  echo "nothing answered on 127.0.0.1:$port within 60 s:" >&2; cat "$log" >&2; return 1
}
__unserve() { kill -- "-$1" 2>/dev/null || true; while kill -0 "$1" 2>/dev/null; do sleep 0.1; done; }
`;

/** Writes the page's blocks into its folder as one bash script (run.sh) and its ts programs; returns what to type-check. */
async function preparePage(root: string, page: string): Promise<PreparedPage> {
  const dir = projectDir(root, page);
  const own = blocks.filter((block) => block.page === page);
  // Ports: each serving block gets a free port, and the blocks below it say that port instead of the documented one.
  const ports = new Map<string, number>();
  const located = (block: DocBlock) => `${block.page}:${block.line}`;
  const text = new Map<DocBlock, string>();
  const servedOn = new Map<DocBlock, number>();
  for (const block of own) {
    if ('serves' in block.markers) {
      ports.set(block.markers['serves']!, await freePort());
      servedOn.set(block, ports.get(block.markers['serves']!)!);
    }
    let code = block.code;
    for (const [documented, port] of ports) code = code.replace(new RegExp(`\\b${documented}\\b`, 'g'), String(port));
    text.set(block, code);
  }
  const named = new Map(own.filter((block) => 'name' in block.markers).map((block) => [block.markers['name']!, block]));
  const programs: Program[] = [];
  const writeProgram = (parts: DocBlock[], file: string): void => {
    const origin: string[] = [];
    const source = parts
      .map((block) => {
        const lines = text.get(block)!.replace(/\n$/, '').split('\n');
        lines.forEach((_, i) => origin.push(`${block.page}:${block.line + 1 + i}`));
        return lines.join('\n');
      })
      .join('\n');
    writeFileSync(join(dir, `${file}.mts`), `${source}\n`);
    const compiled = ts.transpileModule(source, { compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 } }).outputText;
    writeFileSync(join(dir, `${file}.mjs`), compiled);
    programs.push({ file: join(dir, `${file}.mts`), origin });
  };
  const main = own.filter((block) => block.lang === 'ts' && !('fragment' in block.markers) && !('name' in block.markers) && !('after' in block.markers));
  const script = [SHELL_PRELUDE];
  const serving = new Map<string, string>();
  own.forEach((block, index) => {
    if ('fragment' in block.markers || 'name' in block.markers) return;
    const at = `__at ${JSON.stringify(`${located(block)} (${block.lang} block)`)}`;
    if ('file' in block.markers) {
      // A file the page shows is there before any block runs, wherever the page shows it.
      writeFileSync(join(dir, block.markers['file']!), text.get(block)!);
      return;
    }
    let command: string | undefined;
    if (block.lang === 'sh') {
      writeFileSync(join(dir, `.block-${index}.sh`), text.get(block)!);
      command = 'serves' in block.markers ? `bash -euo pipefail .block-${index}.sh` : `source .block-${index}.sh`;
    } else if ('after' in block.markers) {
      const first = named.get(block.markers['after']!);
      if (!first) throw new Error(`${located(block)}: after: ${block.markers['after']} names no block of ${page}`);
      writeProgram([first, block], `.program-${index}`);
      command = `node .program-${index}.mjs`;
    } else if (block === main.at(-1)) {
      writeProgram(main, '.program-main');
      command = 'node .program-main.mjs';
    }
    if (command === undefined) return;
    if ('serves' in block.markers) {
      const documented = block.markers['serves']!;
      const previous = serving.get(documented);
      if (previous) script.push(`__unserve ${previous}`);
      script.push(at, `__serve ${servedOn.get(block)} .serve-${index}.log ${command}`, `__pid_${index}="$\{__servers[-1]}"`);
      serving.set(documented, `"$__pid_${index}"`);
    } else {
      script.push(at, command);
    }
  });
  writeFileSync(join(dir, 'run.sh'), `${script.join('\n')}\n`);
  return { dir, programs };
}

/** The environment of a reader's terminal: no npm script variables, no node_modules/.bin on PATH. */
function readerEnvironment(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) if (!/^(npm_|VITEST|NODE_OPTIONS$)/i.test(key)) env[key] = value;
  env['PATH'] = (process.env['PATH'] ?? '').split(':').filter((entry) => !entry.includes('node_modules')).join(':');
  return env;
}

function runPage(dir: string): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn('bash', ['run.sh'], { cwd: dir, env: readerEnvironment(), detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const timer = setTimeout(() => {
      output += `\n(stopped after ${PAGE_TIMEOUT_MS / 1000} s)`;
      process.kill(-child.pid!, 'SIGKILL');
    }, PAGE_TIMEOUT_MS);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    });
  });
}

describe('README.md and docs/*.md: every sh and ts block', () => {
  let root: string;
  const prepared = new Map<string, PreparedPage>();

  beforeAll(async () => {
    for (const needed of [cliPath, join(repoRoot, 'datasets', 'build', 'gss.arrow'), join(repoRoot, 'datasets', 'build', 'nhanes.arrow')]) {
      if (!existsSync(needed)) throw new Error(`${needed} is missing: run npm run build first`);
    }
    root = mkdtempSync(join(tmpdir(), 'crosstab-docs-'));
    for (const page of pages) prepared.set(page, await preparePage(root, page));
  });
  afterAll(() => {
    if (root) rmSync(root, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
  });

  it('marks every block it does not run with the reason, and nothing else', () => {
    const problems: string[] = [];
    for (const block of blocks) {
      const where = `${block.page}:${block.line}`;
      if ('fragment' in block.markers && block.markers['fragment']!.length < 20) problems.push(`${where}: a fragment must say why it cannot run here`);
      if ('serves' in block.markers && !/^\d+$/.test(block.markers['serves']!)) problems.push(`${where}: serves: takes the port the block listens on`);
      if ('file' in block.markers && !/^[\w.-]+$/.test(block.markers['file']!)) problems.push(`${where}: file: takes a file name`);
      // npm in the page's folder would prune the linked node_modules: such a block (the checkout's own install) is a fragment.
      if (block.lang === 'sh' && !('fragment' in block.markers) && /\bnpm (install|i|ci|start|test)\b/.test(block.code)) problems.push(`${where}: runs npm in a reader's project; mark it a fragment`);
      if (('name' in block.markers || 'after' in block.markers) && block.lang !== 'ts') problems.push(`${where}: name: and after: are for ts blocks`);
    }
    expect(problems).toEqual([]);
    // Most blocks run: the fragments are the few that need a peer no block can start here.
    const fragments = blocks.filter((block) => 'fragment' in block.markers);
    expect(fragments.length).toBeLessThan(blocks.length / 3);
  });

  it('type-checks every ts program as written against the built package', () => {
    const programs = [...prepared.values()].flatMap((page) => page.programs);
    expect(programs.length).toBeGreaterThan(0);
    const origin = new Map(programs.map((program) => [program.file, program.origin]));
    const program = ts.createProgram([...origin.keys()], {
      module: ts.ModuleKind.NodeNext,
      moduleResolution: ts.ModuleResolutionKind.NodeNext,
      target: ts.ScriptTarget.ES2022,
      strict: true,
      noEmit: true,
      skipLibCheck: true,
      types: ['node'],
    });
    const problems = ts.getPreEmitDiagnostics(program).map((diagnostic) => {
      const file = diagnostic.file;
      const line = file ? file.getLineAndCharacterOfPosition(diagnostic.start ?? 0).line : 0;
      const where = file ? (origin.get(file.fileName)?.[line] ?? file.fileName) : '';
      return `${where}: ${ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n')}`;
    });
    expect(problems).toEqual([]);
  }, 120_000);

  it.each(pages)('%s runs as written', async (page) => {
    const { dir } = prepared.get(page)!;
    const { code, output } = await runPage(dir);
    const block = existsSync(join(dir, '.docs-block')) ? readFileSync(join(dir, '.docs-block'), 'utf8').trim() : '(none)';
    expect(code, `failed in ${block}:\n${output.slice(-4000)}`).toBe(0);
  }, PAGE_TIMEOUT_MS + 10_000);
});
