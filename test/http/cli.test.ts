// `crosstab keys` and `crosstab serve` as users run them: the built CLI in a child process.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { cliPath } from '../support/paths.js';
import { tempDir } from './support.js';

const CLI = process.env['CROSSTAB_CLI'] ?? cliPath;
const paths = inject('testDatasets');

function crosstab(args: string[], cwd: string): { status: number | null; stdout: string; stderr: string } {
  const result = spawnSync(process.execPath, [CLI, ...args], { cwd, encoding: 'utf8', timeout: 30_000 });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

beforeAll(() => {
  expect(existsSync(CLI), `${CLI} is missing: run \`npm run build\` first`).toBe(true);
});

describe('crosstab keys', () => {
  it('adds a key shown once, lists without secrets, revokes by name', () => {
    const dir = tempDir();
    const file = join(dir, 'keys.json');
    const added = crosstab(['keys', 'add', '--keys', file, '--surveys', 'GSS', '--groups', '_ALL_', '--expires', '2099-01-01T00:00:00Z', '--name', 'reporting-prod'], dir);
    expect(added.status, added.stderr).toBe(0);
    const apiKey = /ctk_[A-Za-z0-9_-]{43}/.exec(added.stdout)?.[0] as string;
    expect(apiKey).toBeDefined();
    expect(readFileSync(file, 'utf8')).not.toContain(apiKey);
    expect(statSync(file).mode & 0o777).toBe(0o600);

    const listed = crosstab(['keys', 'list', '--keys', file, '--json'], dir);
    expect(listed.status).toBe(0);
    expect(listed.stdout).not.toContain('ctk_');
    expect(JSON.parse(listed.stdout)).toEqual([
      expect.objectContaining({ name: 'reporting-prod', surveys: ['GSS'], groups: ['_ALL_'], status: 'active', expiresAt: '2099-01-01T00:00:00.000Z' }),
    ]);

    expect(crosstab(['keys', 'revoke', '--keys', file, 'reporting-prod'], dir).status).toBe(0);
    expect(JSON.parse(crosstab(['keys', 'list', '--keys', file, '--json'], dir).stdout)[0].status).toBe('revoked');
  });

  it('rotates a key and refuses bad options with a hint', () => {
    const dir = tempDir();
    const file = join(dir, 'keys.json');
    const added = JSON.parse(crosstab(['keys', 'add', '--keys', file, '--surveys', 'GSS,NHANES', '--groups', 'demographics', '--json'], dir).stdout);
    expect(added.surveys).toEqual(['GSS', 'NHANES']);
    const rotated = JSON.parse(crosstab(['keys', 'rotate', '--keys', file, added.id, '--json'], dir).stdout);
    expect(rotated.apiKey).not.toBe(added.apiKey);
    expect(rotated.groups).toEqual(['demographics']);
    const statuses = JSON.parse(crosstab(['keys', 'list', '--keys', file, '--json'], dir).stdout).map((key: { status: string }) => key.status);
    expect(statuses).toEqual(['revoked', 'active']);

    const badDate = crosstab(['keys', 'add', '--keys', file, '--surveys', 'GSS', '--groups', '_ALL_', '--expires', 'tomorrow'], dir);
    expect(badDate.status).toBe(1);
    expect(badDate.stderr).toMatch(/ISO 8601/);
    const unknown = crosstab(['keys', 'revoke', '--keys', file, 'nobody'], dir);
    expect(unknown.status).toBe(1);
    expect(unknown.stderr).toMatch(/keys list/);
  });
});

describe('crosstab serve', () => {
  it('without --keys seeds the embedded database with a development account, prints its key and a curl that works, and stops on SIGTERM', async () => {
    const dir = tempDir();
    const child = spawn(process.execPath, [CLI, 'serve', '--dataset', paths.gss, '--dataset', paths.nhanes, '--port', '0'], { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
    const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
    let stdout = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    await expect.poll(() => stdout, { timeout: 30_000 }).toMatch(/curl .*-d '.*'\n/);
    expect(stdout).toMatch(/GSS, NHANES listening on http:\/\/127\.0\.0\.1:\d+\/v1/);
    const apiKey = /ctk_[A-Za-z0-9_-]{43}/.exec(stdout)?.[0] as string;
    const url = /curl -s (\S+)/.exec(stdout)?.[1] as string;
    const body = /-d '(.*)'/.exec(stdout)?.[1] as string;
    const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', 'service-engine-authorizer': apiKey }, body });
    expect(response.status).toBe(200);
    expect(((await response.json()) as { Results: unknown[] }).Results).toHaveLength(1);
    expect(stdout).toMatch(/developer@localhost\.localdomain {2}one-time password: \S{16}/);
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
    // The same embedded database, now free, holds the account, the key (as a hash) and the billed call.
    const usage = crosstab(['usage', '--account', 'development', '--json'], dir);
    expect(usage.status, usage.stderr).toBe(0);
    expect(JSON.parse(usage.stdout)).toMatchObject({ account: 'development', calls: 1 });
    const shown = crosstab(['accounts', 'show', 'development'], dir);
    expect(shown.stdout).toMatch(/GSS \[_ALL_\]; NHANES \[_ALL_\]/);
    expect(shown.stdout).not.toContain(apiKey);
  });

  it('with no --dataset serves the bundled datasets (what `npm start` runs)', async () => {
    const dir = tempDir();
    const child = spawn(process.execPath, [CLI, 'serve', '--port', '0'], { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
    // The exit code, or the signal that ended the process (with its stderr, to tell why).
    const exited = new Promise<string>((resolve) => child.once('exit', (code, signal) => resolve(code !== null ? `exit ${code}` : `signal ${signal}`)));
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    await expect.poll(() => stdout, { timeout: 30_000 }).toMatch(/listening on/);
    expect(stdout).toMatch(/GSS, NHANES listening on http:\/\/127\.0\.0\.1:\d+\/v1/);
    child.kill('SIGTERM');
    expect(`${await exited}\n${stderr}`).toMatch(/^exit 0\n/);
  });

  it('refuses an invalid --cors-origin and a missing key file with exit code 1', () => {
    const dir = tempDir();
    const cors = crosstab(['serve', '--dataset', paths.gss, '--port', '0', '--cors-origin', 'https://app.example/'], dir);
    expect(cors.status).toBe(1);
    expect(cors.stderr).toMatch(/corsOrigins.*scheme:\/\/host/);
    const keys = crosstab(['serve', '--dataset', paths.gss, '--port', '0', '--keys', join(dir, 'missing.json')], dir);
    expect(keys.status).toBe(1);
    expect(keys.stderr).toMatch(/keys add/);
    const cache = crosstab(['serve', '--dataset', paths.gss, '--port', '0', '--cell-cache', '-5'], dir);
    expect(cache.status).toBe(1);
    expect(cache.stderr).toMatch(/--cell-cache must be an integer from 0 to/);
    const fresh = tempDir();
    const statements = crosstab(['serve', '--dataset', paths.gss, '--port', '0', '--usage-statements', '0'], fresh);
    expect(statements.status).toBe(1);
    expect(statements.stderr).toMatch(/--usage-statements must be an integer from 1 to 8; got "0"/);
    const withKeys = crosstab(['serve', '--dataset', paths.gss, '--port', '0', '--keys', join(dir, 'missing.json'), '--usage-statements', '2'], fresh);
    expect(withKeys.status).toBe(1);
    expect(withKeys.stderr).toMatch(/--usage-statements applies to the accounts database; it cannot be combined with --keys/);
    const proxy = crosstab(['serve', '--dataset', paths.gss, '--port', '0', '--trust-proxy', '10.0.0.7,nginx'], fresh);
    expect(proxy.status).toBe(1);
    expect(proxy.stderr).toMatch(/--trust-proxy: "nginx" is not an IP address or CIDR range/);
    // A server URL with no scheme routes nowhere: refused before anything opens.
    for (const url of ['api.example/v1', 'ftp://api.example/v1', 'https://api.example/v1?x=1']) {
      const publicUrl = crosstab(['serve', '--dataset', paths.gss, '--port', '0', '--public-url', url], fresh);
      expect(publicUrl.status, url).toBe(1);
      expect(publicUrl.stderr).toMatch(/--public-url must be the absolute URL clients reach the API at, such as "https:\/\/api\.example\/v1"/);
    }
    // Nothing was created by the refused starts: no embedded database in the working directory.
    expect(existsSync(join(fresh, '.crosstab'))).toBe(false);
  });
});
