// deploy/alerts.yml and deploy/prometheus.yml checked by Debian's promtool: the rules parse
// (`promtool check rules`), the scrape config is valid (`promtool check config`), and each
// alert fires on the series it is about and not on healthy ones (`promtool test rules
// deploy/alerts.test.yml`). Needs promtool: under CI=true its absence fails; otherwise skipped loudly.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const PROMTOOL = '/usr/bin/promtool';
const DEPLOY = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'deploy');
const missing = !existsSync(PROMTOOL);
if (missing && process.env['CI'] !== 'true') console.warn('\n*** SKIPPED test/deploy/alerts.test.ts: promtool not installed (apt-get install -y prometheus; .ci/run does) ***\n');

function promtool(args: string[]): string {
  const result = spawnSync(PROMTOOL, args, { cwd: DEPLOY, encoding: 'utf8' });
  expect(result.status, `promtool ${args.join(' ')}:\n${result.stdout}${result.stderr}`).toBe(0);
  return result.stdout + result.stderr;
}

describe.skipIf(missing && process.env['CI'] !== 'true')('deploy/ alert rules and Prometheus config (promtool)', () => {
  it('promtool check rules: every rule parses', () => {
    expect(promtool(['check', 'rules', 'alerts.yml'])).toMatch(/SUCCESS: 8 rules found/);
  });

  it('promtool check config: the scrape config and its rule file are valid', () => {
    expect(promtool(['check', 'config', 'prometheus.yml'])).toMatch(/SUCCESS/);
  });

  it('promtool test rules: the alerts fire on what they are about, and only there', () => {
    expect(promtool(['test', 'rules', 'alerts.test.yml'])).toMatch(/SUCCESS/);
  });
});
