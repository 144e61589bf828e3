// Publishing a new build behind Debian's nginx running the shipped deploy/nginx.conf, with
// two `crosstab serve` replicas serving the same dataset file: the new build is renamed over
// the file and the replicas are reloaded one after the other (SIGHUP), under closed-loop
// load through nginx. Clients see only 200s, and every answer is the figures of the old or
// of the new build, the one its X-Dataset-Version names: never a mixture, never a failure.
// Then the same with --watch (both replicas pick the file up on their own).
// Needs nginx: under CI=true its absence fails; otherwise the suite is skipped loudly.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findNginx, freePorts, startNginx, type RunningNginx } from '../../bench/lib/nginx.js';
import { addApiKey } from '../../src/http/index.js';
import { appendWave, buildWaveCsv, publish, WAVE_QUERY, waveAnswer, writeWave } from '../support/survey-waves.js';
import { CLI, startServe, type ServeChild } from '../http/serve-child.js';
import { tempDir } from '../http/support.js';

const REPLICAS = 2;
const CLIENTS = 16;

const missing = findNginx() === undefined;
const ci = process.env['CI'] === 'true';
if (missing && !ci) console.warn('\n*** SKIPPED test/deploy/publish-nginx.test.ts: nginx not installed (apt-get install -y nginx; .ci/run does) ***\n');

type Version = { checksum: string; builtAt: string; body: unknown; path: string };
interface Answer {
  status: number;
  version: string | null;
  body: string;
}

describe.skipIf(missing && !ci)('publishing a new build to 2 replicas behind nginx (deploy/nginx.conf)', () => {
  let dir: string;
  let apiKey: string;
  const versions: Version[] = [];
  const replicas: ServeChild[] = [];
  let nginx: RunningNginx | undefined;

  async function start(served: string, extra: string[] = []): Promise<void> {
    const ports = await freePorts(REPLICAS);
    for (const [index, port] of ports.entries()) {
      replicas.push(await startServe(['--dataset', served, '--keys', join(dir, 'keys.json'), '--ledger', join(dir, `usage-${replicas.length}-${index}.ndjson`), '--port', String(port), '--trust-proxy', '127.0.0.1', ...extra], { cwd: dir }));
    }
    nginx = await startNginx({ dir: tempDir(), replicas: ports.map((port) => `127.0.0.1:${port}`) });
  }

  async function stop(): Promise<void> {
    await nginx?.stop();
    nginx = undefined;
    for (const replica of replicas.splice(0)) {
      replica.child.kill('SIGTERM');
      await replica.exited;
    }
  }

  function loadThroughNginx(): { stop: () => Promise<{ answers: Answer[]; errors: string[] }> } {
    let going = true;
    const answers: Answer[] = [];
    const errors: string[] = [];
    const loops = Array.from({ length: CLIENTS }, async () => {
      while (going) {
        try {
          const response = await fetch(`${nginx!.origin}/v1/crosstab`, { method: 'POST', headers: { 'content-type': 'application/json', 'service-engine-authorizer': apiKey }, body: JSON.stringify(WAVE_QUERY), signal: AbortSignal.timeout(30_000) });
          answers.push({ status: response.status, version: response.headers.get('x-dataset-version'), body: await response.text() });
        } catch (error) {
          errors.push(String(error));
        }
      }
    });
    return {
      stop: async () => {
        going = false;
        await Promise.all(loops);
        return { answers, errors };
      },
    };
  }

  async function reloaded(replica: ServeChild, count: number): Promise<void> {
    const deadline = Date.now() + 60_000;
    while ((replica.output().match(/"event":"dataset_reloaded"/g)?.length ?? 0) < count) {
      if (Date.now() > deadline) throw new Error(`no reload in:\n${replica.output()}`);
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
  }

  function check(answers: Answer[], errors: string[], old: Version, next: Version): void {
    const byChecksum = new Map([old, next].map((version) => [version.checksum, JSON.stringify(version.body)]));
    const nonOk = answers.filter((answer) => answer.status !== 200);
    const mixed = answers.filter((answer) => answer.status === 200 && byChecksum.get(answer.version ?? '') !== answer.body);
    const counts = [old, next].map((version) => answers.filter((answer) => answer.version === version.checksum).length);
    console.log(`publish through nginx to ${REPLICAS} replicas: ${answers.length} answers (${counts[0]} old, ${counts[1]} new), ${nonOk.length} non-2xx, ${mixed.length} not the figures of their version, ${errors.length} client errors`);
    expect(errors).toEqual([]);
    expect(nonOk).toEqual([]);
    expect(mixed).toEqual([]);
    expect(counts[0]).toBeGreaterThan(0);
    expect(counts[1]).toBeGreaterThan(0);
  }

  beforeAll(async () => {
    if (missing) throw new Error('CI=true and nginx not installed: .ci/run installs it (apt-get install -y nginx)');
    expect(existsSync(CLI), `${CLI} is missing: run \`npm run build\` first`).toBe(true);
    dir = tempDir();
    apiKey = (await addApiKey(join(dir, 'keys.json'), { surveys: ['WAVES'], groups: ['_ALL_'], name: 'dashboards' })).apiKey;
    for (const rows of [40_000, 44_000]) {
      const path = await writeWave(rows);
      versions.push({ path, ...(await waveAnswer(path)) });
    }
  });

  afterAll(stop);

  it('rolling publish with SIGHUP, one replica after the other: 0 non-2xx, every answer the old or the new figures as its header says', async () => {
    const [old, next] = versions as [Version, Version];
    const served = join(tempDir(), 'waves.arrow');
    publish(old.path, served);
    await start(served);
    const load = loadThroughNginx();
    await new Promise((resolve) => setTimeout(resolve, 500));
    publish(next.path, served);
    for (const replica of replicas) {
      replica.child.kill('SIGHUP');
      await reloaded(replica, 1);
      // Both versions answer through nginx for a while: each answer still names its own.
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
    const { answers, errors } = await load.stop();
    check(answers, errors, old, next);
    await stop();
  }, 180_000);

  it('rolling publish of a wave appended in segments (`crosstab append` over the served file, 2 then 3 segments), SIGHUP one replica after the other: 0 non-2xx, no mixed answer, then the figures of a build of all the rows', async () => {
    const WAVES = [40_000, 42_000, 44_000];
    const served = join(tempDir(), 'waves.arrow');
    publish(await buildWaveCsv(WAVES[0]!), served);
    let old: Version = { path: served, ...(await waveAnswer(served)) };
    await start(served);
    for (const [wave, segments] of [[1, 2], [2, 3]] as const) {
      const load = loadThroughNginx();
      await new Promise((resolve) => setTimeout(resolve, 500));
      expect(await appendWave(served, WAVES[wave - 1]!, WAVES[wave]!)).toBe(segments);
      const next: Version = { path: served, ...(await waveAnswer(served)) };
      for (const replica of replicas) {
        replica.child.kill('SIGHUP');
        await reloaded(replica, wave);
        await new Promise((resolve) => setTimeout(resolve, 500));
      }
      const { answers, errors } = await load.stop();
      check(answers, errors, old, next);
      // What every answer of the new version said is what a build of all its rows says (built apart, no segments).
      expect(next.body).toEqual((await waveAnswer(await buildWaveCsv(WAVES[wave]!))).body);
      old = next;
    }
    await stop();
  }, 240_000);

  it('--watch: both replicas pick up the renamed file on their own: 0 non-2xx, no mixed answer', async () => {
    const [old, next] = versions as [Version, Version];
    const served = join(tempDir(), 'waves.arrow');
    publish(old.path, served);
    await start(served, ['--watch']);
    const load = loadThroughNginx();
    await new Promise((resolve) => setTimeout(resolve, 500));
    publish(next.path, served);
    for (const replica of replicas) await reloaded(replica, 1);
    await new Promise((resolve) => setTimeout(resolve, 500));
    const { answers, errors } = await load.stop();
    check(answers, errors, old, next);
    await stop();
  }, 180_000);
});
