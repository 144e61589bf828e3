// `crosstab serve` on the embedded database under a low `ulimit -n`: the embedded store holds
// a hundred-odd descriptors of its own, so the connection limit is what is left after the
// descriptors open at start plus a margin. A flood of held connections is then refused at the
// door and the process keeps descriptors free for what it opens later (here the sockets that
// fetch an SSO issuer's keys): billed calls still get 200 and a durable usage row, never an
// EMFILE.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { connect, type Socket } from 'node:net';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { CLI, startServe } from './serve-child.js';
import { tempDir } from './support.js';
import { startProvider } from '../access/oidc-provider.js';

const paths = inject('testDatasets');
const AUDIENCE = 'https://crosstab.test/v1';
const BODY = JSON.stringify({ SurveyCode: 'GSS', PopulationBaseCode: '*', TargetCodes: ['sex=2'] });
const wait = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

beforeAll(() => {
  expect(existsSync(CLI), `${CLI} is missing: run \`npm run build\` first`).toBe(true);
});

/** One request over `agent` (a kept-alive connection); resolves with the status and body. */
function send(agent: Agent, url: string, method: string, headers: Record<string, string> = {}, body?: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { agent, method, headers, timeout: 20_000 }, (response) => {
      let text = '';
      response.on('data', (chunk: Buffer) => (text += chunk.toString()));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, body: text }));
    });
    req.on('timeout', () => req.destroy(new Error(`${method} ${url}: no answer within 20 s`)));
    req.on('error', reject);
    req.end(body);
  });
}

/** Opens `count` connections from `addresses` in turn that send nothing and are held open. */
async function flood(port: number, count: number, addresses: string[]): Promise<Socket[]> {
  const sockets: Socket[] = [];
  for (let i = 0; i < count; i++) {
    const socket = connect({ host: '127.0.0.1', port, localAddress: addresses[i % addresses.length] as string });
    socket.on('error', () => {});
    socket.pause();
    sockets.push(socket);
  }
  await wait(1000);
  return sockets;
}

describe('`crosstab serve` on the embedded database under `ulimit -n 256`', () => {
  it('a flood of held connections is refused with descriptors to spare; SSO and billed calls still succeed and are recorded', { timeout: 240_000 }, async () => {
    const cwd = tempDir();
    const provider = await startProvider({ audience: AUDIENCE, clients: [{ id: 'acme-reporting' }] });
    const cli = (args: string[]) => spawnSync(process.execPath, [CLI, ...args], { cwd, encoding: 'utf8', timeout: 60_000 });
    let sockets: Socket[] = [];
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    try {
      for (const args of [
        ['accounts', 'add', '--name', 'acme', '--surveys', 'GSS', '--groups', 'GSS:_ALL_'],
        ['accounts', 'link', '--account', 'acme', '--issuer', provider.issuer, '--subject', 'acme-reporting'],
      ]) {
        const result = cli(args);
        expect(result.status, result.stderr).toBe(0);
      }
      const serve = await startServe(['--dataset', paths.gss, '--port', '0', '--idle-timeout', '30', '--oidc-issuer', provider.issuer, '--oidc-audience', AUDIENCE], { cwd, limits: 'ulimit -n 256', timeoutMs: 60_000 });
      try {
        const token = await provider.token('acme-reporting');
        // The client's connection is open before the flood; the issuer's keys are not fetched yet.
        expect((await send(agent, `${serve.origin}/v1/docs`, 'GET')).status).toBe(200);
        const port = Number(new URL(serve.origin).port);
        sockets = await flood(port, 600, Array.from({ length: 20 }, (_, i) => `127.0.2.${i + 1}`));
        expect(readdirSync(`/proc/${serve.child.pid}/fd`).length).toBeLessThan(256);
        const answers: { status: number; body: string }[] = [];
        for (let i = 0; i < 10; i++) answers.push(await send(agent, `${serve.origin}/v1/crosstab`, 'POST', { 'content-type': 'application/json', authorization: `Bearer ${token}` }, BODY));
        expect(answers.filter((answer) => answer.status !== 200)).toEqual([]);
        // A connection past the limit is closed at once rather than left waiting.
        await expect(fetch(`${serve.origin}/v1/docs`, { signal: AbortSignal.timeout(10_000) })).rejects.toThrow(/fetch failed/);
        expect(serve.output()).not.toMatch(/EMFILE|too many open files/i);
      } finally {
        agent.destroy();
        for (const socket of sockets) socket.destroy();
        serve.child.kill('SIGTERM');
        await serve.exited;
      }
      // Every 200 has its row in the database.
      const usage = cli(['usage', '--account', 'acme', '--json']);
      expect(usage.status, usage.stderr).toBe(0);
      expect(JSON.parse(usage.stdout)).toMatchObject({ calls: 10 });
    } finally {
      await provider.close();
    }
  });
});
