// `crosstab serve` for the REST benchmarks that time the server process itself: a key file
// with one key for every survey, the billed POST /v1/crosstab they all send, and a server
// pinned to one CPU (taskset) with its origin once it is listening.
import { execFileSync, spawn } from 'node:child_process';

/** Adds a key for every survey and group to the key file `keys` with the CLI `cli`; its API key. */
export function addBenchKey(cli, keys) {
  return JSON.parse(execFileSync(process.execPath, [cli, 'keys', 'add', '--keys', keys, '--surveys', '_ALL_', '--groups', '_ALL_', '--name', 'bench', '--json'], { encoding: 'utf8' })).apiKey;
}

/** The billed crosstab the benchmarks send (autocannon's request shape). */
export function billedCrosstab(apiKey) {
  return {
    method: 'POST',
    path: '/v1/crosstab',
    headers: { 'content-type': 'application/json', 'service-engine-authorizer': apiKey },
    body: JSON.stringify({ SurveyCode: 'GSS', PopulationBaseCode: 'year=2024', TargetCodes: ['sex=2', 'degree=3..4'] }),
  };
}

/**
 * `node [nodeOptions] cli serve ...serveArgs` on CPU `cpu`; resolves with the child and its
 * origin (http://127.0.0.1:PORT) once it prints it, rejects if it exits first (with its stderr,
 * which `onStderr` also sees; without it stderr is ignored).
 */
export async function startPinnedServe({ cli, serveArgs, cpu, nodeOptions = [], name = 'server', onStderr }) {
  const child = spawn('taskset', ['-c', cpu, process.execPath, ...nodeOptions, cli, 'serve', ...serveArgs], { stdio: ['ignore', 'pipe', onStderr === undefined ? 'ignore' : 'pipe'] });
  let stderr = '';
  child.stderr?.on('data', (chunk) => {
    stderr += chunk;
    onStderr?.(String(chunk));
  });
  const origin = await new Promise((found, fail) => {
    child.once('exit', (code) => fail(new Error(`${name} exited with ${code}${stderr === '' ? '' : `: ${stderr}`}`)));
    child.stdout.on('data', (chunk) => {
      const match = /http:\/\/[^\s/]+/.exec(String(chunk));
      if (match) found(match[0]);
    });
  });
  return { child, origin };
}
