// The provider's administration commands as users run them (the built CLI, a child process,
// the embedded database of the working directory): output, --json, and clear errors for bad
// input that leave nothing half-written.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { cliPath } from '../support/paths.js';
import { tempDir } from '../http/support.js';

const CLI = process.env['CROSSTAB_CLI'] ?? cliPath;

function crosstab(args: string[], cwd: string): { status: number | null; stdout: string; stderr: string } {
  const result = spawnSync(process.execPath, [CLI, ...args], { cwd, encoding: 'utf8', timeout: 60_000 });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

beforeAll(() => {
  expect(existsSync(CLI), `${CLI} is missing: run \`npm run build\` first`).toBe(true);
});

// Every command opens the embedded database (PGlite, ~1-3 s in a child process on a busy machine).
describe('crosstab accounts, users, keys, usage on the embedded database', { timeout: 300_000 }, () => {
  const dir = tempDir();
  const ok = (args: string[]): string => {
    const result = crosstab(args, dir);
    expect(result.status, result.stderr).toBe(0);
    return result.stdout;
  };
  const fails = (args: string[], message: RegExp): void => {
    const result = crosstab(args, dir);
    expect(result.status).toBe(1);
    expect(result.stderr).toMatch(message);
    expect(result.stderr).not.toMatch(/unexpected failure/);
  };

  it('creates an account, a user with a one-time password and a key shown once', () => {
    const account = JSON.parse(ok(['accounts', 'add', '--name', 'acme', '--surveys', 'GSS,NHANES', '--groups', 'GSS:_ALL_', '--groups', 'NHANES:demographics', '--rate-limit', '600', '--json']));
    expect(account).toMatchObject({ name: 'acme', disabled: false, rateLimitPerMinute: 600, monthlyQuota: null, licences: [{ survey: 'GSS', groups: ['_ALL_'] }, { survey: 'NHANES', groups: ['demographics'] }] });
    const user = JSON.parse(ok(['users', 'add', '--account', 'acme', '--email', 'analyst@acme.example', '--json']));
    expect(user).toMatchObject({ email: 'analyst@acme.example', mustChangePassword: true, account: 'acme' });
    expect(user.oneTimePassword).toMatch(/^\S{16}$/);
    expect(ok(['users', 'add', '--account', 'acme', '--email', 'second@acme.example'])).toMatch(/One-time password[^\n]*\n\n\S{16}\n/);
    const key = JSON.parse(ok(['keys', 'add', '--account', 'acme', '--name', 'production', '--expires', '2099-01-01T00:00:00Z', '--json']));
    expect(key).toMatchObject({ account: 'acme', name: 'production', status: 'active', expiresAt: '2099-01-01T00:00:00.000Z' });
    expect(key.apiKey).toMatch(/^ctk_[A-Za-z0-9_-]{43}$/);
    const listed = ok(['keys', 'list', '--account', 'acme', '--json']);
    expect(listed).not.toContain('ctk_');
    expect(JSON.parse(listed)).toEqual([expect.objectContaining({ id: key.id, status: 'active' })]);
    expect(ok(['accounts', 'list'])).toMatch(/acme .* GSS \[_ALL_\]; NHANES \[demographics\]/);
    expect(ok(['accounts', 'show', '--account', 'acme'])).toMatch(/analyst@acme\.example \(one-time password not changed yet\)/);
  });

  it('updates licences and limits, disables and enables an account', () => {
    const updated = JSON.parse(ok(['accounts', 'update', 'acme', '--surveys', 'GSS', '--groups', 'GSS:demographics', '--monthly-quota', '100000', '--rate-limit', 'none', '--json']));
    expect(updated).toMatchObject({ licences: [{ survey: 'GSS', groups: ['demographics'] }], rateLimitPerMinute: null, monthlyQuota: 100000 });
    expect(JSON.parse(ok(['accounts', 'disable', 'acme', '--json'])).disabled).toBe(true);
    expect(JSON.parse(ok(['accounts', 'update', 'acme', '--enable', '--json'])).disabled).toBe(false);
  });

  it('resets a user\'s password, disables and enables a user', () => {
    const reset = JSON.parse(ok(['users', 'reset-password', '--email', 'analyst@acme.example', '--json']));
    expect(reset).toMatchObject({ email: 'analyst@acme.example', mustChangePassword: true });
    expect(reset.oneTimePassword).toMatch(/^\S{16}$/);
    expect(JSON.parse(ok(['users', 'disable', '--email', 'analyst@acme.example', '--json'])).disabled).toBe(true);
    expect(ok(['users', 'list', '--account', 'acme'])).toMatch(/analyst@acme\.example .*disabled/);
    expect(ok(['users', 'enable', '--email', 'analyst@acme.example'])).toMatch(/enabled user analyst@acme\.example/);
    fails(['users', 'reset-password', '--email', 'nobody@acme.example'], /--email.*no user has the e-mail address nobody@acme\.example[\s\S]*users list/);
    fails(['users', 'disable'], /--email/);
  });

  it('links an OpenID Connect issuer\'s tokens to the account', () => {
    expect(JSON.parse(ok(['accounts', 'link', '--account', 'acme', '--issuer', 'https://idp.example/realms/partners', '--claim', 'org=acme', '--json']))).toMatchObject({
      account: 'acme', issuer: 'https://idp.example/realms/partners', claim: 'org', value: 'acme',
    });
  });

  it('reports usage as {account, calls, rows}', () => {
    const report = JSON.parse(ok(['usage', '--account', 'acme', '--from', '2026-01-01', '--to', '2099-12-31', '--by', 'key', '--json']));
    expect(report).toEqual({ account: 'acme', from: '2026-01-01T00:00:00.000Z', to: '2100-01-01T00:00:00.000Z', by: 'key', calls: 0, rows: [] });
  });

  it('refuses bad input with a clear error naming the flag, and writes nothing', () => {
    fails(['accounts', 'add', '--name', 'beta', '--surveys', 'GSS', '--groups', 'NHANES:demographics'], /--groups names survey NHANES .* not in --surveys/);
    fails(['accounts', 'add', '--name', 'beta', '--surveys', 'GSS', '--groups', 'GSS'], /--groups .*SURVEY:GROUP/);
    fails(['accounts', 'add', '--name', 'bad name', '--surveys', 'GSS'], /--name must be an account name/);
    fails(['accounts', 'add', '--name', 'beta', '--surveys', 'GSS', '--rate-limit', '-5'], /--rate-limit must be a positive integer/);
    fails(['accounts', 'add', '--name', 'acme', '--surveys', 'GSS'], /already taken/);
    expect(JSON.parse(ok(['accounts', 'list', '--json'])).map((a: { name: string }) => a.name)).toEqual(['acme']);
  });

  it('refuses bad input to the commands that read the database, and writes nothing', () => {
    fails(['accounts', 'show', 'nobody'], /no account "nobody"[\s\S]*accounts list/);
    fails(['accounts', 'update', 'acme', '--groups', 'GSS:_ALL_'], /--groups needs --surveys/);
    fails(['users', 'add', '--account', 'acme', '--email', 'not-an-address'], /--email must be an e-mail address/);
    fails(['users', 'add', '--account', 'acme', '--email', 'ANALYST@acme.example'], /already has a user/);
    fails(['keys', 'add', '--account', 'acme'], /--name must be a key name/);
    fails(['keys', 'add', '--account', 'acme', '--name', 'staging', '--expires', 'tomorrow'], /--expires must be an ISO 8601/);
    fails(['keys', 'add', '--account', 'acme', '--name', 'staging', '--expires', '2001-01-01'], /--expires is in the past/);
    fails(['keys', 'add', '--account', 'acme', '--name', 'staging', '--surveys', 'GSS'], /--surveys applies to key files/);
    fails(['keys', 'add', '--name', 'staging'], /--account is required/);
    fails(['keys', 'revoke', 'key_0000000000000000'], /no key "key_0000000000000000"/);
    fails(['usage', '--account', 'acme', '--by', 'month'], /--by must be key, day, survey or operation/);
    fails(['usage', '--account', 'acme', '--from', '2026-02-01', '--to', '2026-01-01'], /--to .* must be after --from/);
    fails(['accounts', 'list', '--database', 'postgres://nobody@127.0.0.1:1/none'], /Cannot connect to the database/);
    expect(JSON.parse(ok(['keys', 'list', '--account', 'acme', '--json']))).toHaveLength(1);
    fails(['accounts', 'link', '--account', 'acme', '--issuer', 'not a url', '--subject', 'x'], /--issuer must be the issuer URL/);
    fails(['accounts', 'link', '--account', 'acme', '--issuer', 'http://idp.example', '--subject', 'x'], /--issuer must be an https:\/\/ URL/);
    fails(['accounts', 'link', '--account', 'acme', '--issuer', 'https://idp.example', '--subject', 'x', '--claim', 'org=acme'], /--subject or --claim is required, not both/);
    fails(['accounts', 'link', '--account', 'acme', '--issuer', 'https://idp.example', '--claim', 'org'], /--claim must be NAME=VALUE/);
    fails(['serve', '--port', '0', '--oidc-issuer', 'https://idp.example'], /--oidc-issuer and --oidc-audience go together/);
    const sso = ['serve', '--port', '0', '--oidc-issuer', 'https://idp.example', '--oidc-audience', 'https://api.example/v1'];
    fails([...sso, '--oidc-max-token-lifetime', '0'], /--oidc-max-token-lifetime must be an integer from 1 to 31622400; got "0"/);
    fails([...sso, '--oidc-max-token-lifetime', '1d'], /--oidc-max-token-lifetime must be an integer/);
    fails([...sso, '--oidc-jwks-max-age', '-5'], /--oidc-jwks-max-age must be an integer from 1 to 86400/);
    fails(['serve', '--port', '0', '--oidc-max-token-lifetime', '3600'], /--oidc-max-token-lifetime applies to single sign-on: it needs --oidc-issuer/);
  });
});
