// `crosstab serve` as users run it: the built CLI in a child process, optionally under a
// shell prelude that sets resource limits (`ulimit -n 256`, `ulimit -f 8`).
import { spawn, type ChildProcess } from 'node:child_process';
import { cliPath } from '../support/paths.js';

/** The built CLI (`npm run build`); CROSSTAB_CLI overrides it. */
export const CLI = process.env['CROSSTAB_CLI'] ?? cliPath;

export interface ServeChild {
  child: ChildProcess;
  /** e.g. http://127.0.0.1:43121 (no base path). */
  origin: string;
  exited: Promise<number | null>;
  /** Everything the child wrote to stdout and stderr so far. */
  output(): string;
  /** What it wrote to stderr alone (its log). */
  errors(): string;
}

/**
 * Starts `crosstab serve ARGS` and resolves once it prints its URL. With `limits`, runs it as
 * `bash -c '<limits>; exec node ...'`, so the limits apply to the server process itself.
 */
export async function startServe(args: string[], options: { limits?: string; cwd?: string; timeoutMs?: number; env?: NodeJS.ProcessEnv } = {}): Promise<ServeChild> {
  const node = [process.execPath, CLI, 'serve', ...args];
  const child =
    options.limits === undefined
      ? spawn(node[0] as string, node.slice(1), { stdio: ['ignore', 'pipe', 'pipe'], cwd: options.cwd, env: options.env })
      : spawn('bash', ['-c', `${options.limits}; exec "$@"`, 'bash', ...node], { stdio: ['ignore', 'pipe', 'pipe'], cwd: options.cwd, env: options.env });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  let errors = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    output += chunk.toString();
    errors += chunk.toString();
  });
  const origin = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`crosstab serve did not start:\n${output}`)), options.timeoutMs ?? 30_000);
    const onData = (): void => {
      const match = /listening on (http:\/\/[^/\s]+)/.exec(output);
      if (match) {
        clearTimeout(timer);
        resolve(match[1] as string);
      }
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    void exited.then((code) => reject(new Error(`crosstab serve exited with ${code}:\n${output}`)));
  });
  return { child, origin, exited, output: () => output, errors: () => errors };
}
