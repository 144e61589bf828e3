// `crosstab serve` publishing a new build without downtime: the dataset file replaced by an
// atomic rename is reloaded on SIGHUP (and with --watch on its own), verified before it
// serves; requests under load all answer 200 with the figures of the old or of the new
// version, each marked by the X-Dataset-Version of the version that computed it; GET
// /v1/surveys shows the version served. A file that fails to open, or holds another survey,
// leaves the old version serving, and the log says why.
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, writeFileSync, readFileSync, renameSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { addApiKey } from '../../src/http/index.js';
import { openDataset } from '../../src/index.js';
import { appendWave, buildWaveCsv, damagedPart, publish, segmentParts, WAVE_QUERIES, WAVE_QUERY, waveAnswer, waveAnswers, writeWave } from '../support/survey-waves.js';
import { CLI, startServe, type ServeChild } from './serve-child.js';
import { tempDir } from './support.js';

let dir: string;
let apiKey: string;
const versions: Array<{ path: string; checksum: string; builtAt: string; body: unknown }> = [];
let otherSurvey: string;
const running: ServeChild[] = [];

beforeAll(async () => {
  expect(existsSync(CLI), `${CLI} is missing: run \`npm run build\` first`).toBe(true);
  dir = tempDir();
  apiKey = await addApiKey(join(dir, 'keys.json'), { surveys: ['_ALL_'], groups: ['_ALL_'], name: 'publisher' }).then((added) => added.apiKey);
  for (const rows of [20_000, 24_000, 26_000]) {
    const path = await writeWave(rows);
    versions.push({ path, ...(await waveAnswer(path)) });
  }
  otherSurvey = await writeWave(1000, 'OTHER');
});

afterEach(async () => {
  for (const server of running.splice(0)) {
    server.child.kill('SIGTERM');
    await server.exited;
  }
});

async function serve(path: string, extra: string[] = []): Promise<ServeChild> {
  const server = await startServe(['--dataset', path, '--keys', join(dir, 'keys.json'), '--ledger', join(dir, `usage-${running.length}.ndjson`), '--port', '0', ...extra], { cwd: dir });
  running.push(server);
  return server;
}

async function ask(server: ServeChild, query: unknown = WAVE_QUERY): Promise<{ status: number; version: string | null; body: unknown }> {
  const response = await fetch(`${server.origin}/v1/crosstab`, { method: 'POST', headers: { 'content-type': 'application/json', 'service-engine-authorizer': apiKey }, body: JSON.stringify(query) });
  return { status: response.status, version: response.headers.get('x-dataset-version'), body: await response.json() };
}

async function catalogVersion(server: ServeChild): Promise<unknown> {
  const response = await fetch(`${server.origin}/v1/surveys`, { headers: { 'service-engine-authorizer': apiKey } });
  expect(response.status).toBe(200);
  return ((await response.json()) as { Surveys: Array<{ Version: unknown }> }).Surveys[0]?.Version;
}

/** Waits until the server's log has `count` lines of `event`. */
async function logged(server: ServeChild, event: string, count = 1): Promise<Array<Record<string, unknown>>> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const lines = server
      .output()
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as Record<string, unknown>)
      .filter((line) => line['event'] === event);
    if (lines.length >= count) return lines;
    if (Date.now() > deadline) throw new Error(`no ${event} in:\n${server.output()}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** Clients in closed loops until stopped: every answer, with the version header it carried. */
function loadUntil(server: ServeChild, clients: number): { stop: () => Promise<Array<Awaited<ReturnType<typeof ask>>>> } {
  let going = true;
  const answers: Array<Awaited<ReturnType<typeof ask>>> = [];
  const loops = Array.from({ length: clients }, async () => {
    while (going) answers.push(await ask(server));
  });
  return {
    stop: async () => {
      going = false;
      await Promise.all(loops);
      return answers;
    },
  };
}

/** Each answer is a 200 whose figures are those of the version its header names, and that version is one of `allowed`. */
function expectVersionedAnswers(answers: Array<Awaited<ReturnType<typeof ask>>>, allowed: typeof versions): void {
  const byChecksum = new Map(allowed.map((version) => [version.checksum, version.body]));
  const wrong = answers.filter((answer) => answer.status !== 200 || !byChecksum.has(answer.version ?? '') || JSON.stringify(answer.body) !== JSON.stringify(byChecksum.get(answer.version ?? '')));
  expect(wrong).toEqual([]);
}

describe('crosstab serve: reload on SIGHUP', () => {
  it('answers carry the version; GET /v1/surveys lists it; after a rename and SIGHUP the new build serves, with 0 non-2xx under load', async () => {
    const [first, second] = versions as [(typeof versions)[0], (typeof versions)[0]];
    const served = join(tempDir(), 'waves.arrow');
    publish(first.path, served);
    const server = await serve(served);
    const before = await ask(server);
    expect(before).toEqual({ status: 200, version: first.checksum, body: first.body });
    expect(await catalogVersion(server)).toEqual({ Checksum: first.checksum, BuiltAt: first.builtAt });

    const load = loadUntil(server, 6);
    await new Promise((resolve) => setTimeout(resolve, 300));
    publish(second.path, served);
    server.child.kill('SIGHUP');
    const [reloaded] = await logged(server, 'dataset_reloaded');
    await new Promise((resolve) => setTimeout(resolve, 300));
    const answers = await load.stop();

    expect(reloaded).toMatchObject({ survey: 'WAVES', trigger: 'SIGHUP', from: first.checksum, to: second.checksum, builtAt: second.builtAt, path: served });
    expectVersionedAnswers(answers, [first, second]);
    // Load ran on both sides of the swap.
    expect(answers.filter((answer) => answer.version === first.checksum).length).toBeGreaterThan(0);
    expect(answers.filter((answer) => answer.version === second.checksum).length).toBeGreaterThan(0);
    expect(await ask(server)).toEqual({ status: 200, version: second.checksum, body: second.body });
    expect(await catalogVersion(server)).toEqual({ Checksum: second.checksum, BuiltAt: second.builtAt });
  });

  it('a file that fails to open, or holds another survey, leaves the old version serving and logs why; an unchanged file is logged as such', async () => {
    const [first, second] = versions as [(typeof versions)[0], (typeof versions)[0]];
    const served = join(tempDir(), 'waves.arrow');
    publish(first.path, served);
    const server = await serve(served);

    server.child.kill('SIGHUP');
    expect((await logged(server, 'dataset_unchanged'))[0]).toMatchObject({ survey: 'WAVES', from: first.checksum });

    // A truncated copy (a publish that skipped the rename and was cut off).
    const bytes = readFileSync(second.path);
    writeFileSync(`${served}.tmp`, bytes.subarray(0, Math.floor(bytes.length / 2)));
    renameSync(`${served}.tmp`, served);
    server.child.kill('SIGHUP');
    const [truncated] = await logged(server, 'dataset_reload_failed');
    expect(String(truncated?.['message'])).toMatch(/waves\.arrow.*goes on serving/s);
    expect(await ask(server)).toEqual({ status: 200, version: first.checksum, body: first.body });

    // A damaged buffer: the file opens, its checksums find it before it serves.
    const damaged = Buffer.from(bytes);
    damaged[Math.floor(damaged.length / 3)]! ^= 0xff;
    writeFileSync(`${served}.tmp`, damaged);
    renameSync(`${served}.tmp`, served);
    server.child.kill('SIGHUP');
    const failures = await logged(server, 'dataset_reload_failed', 2);
    expect(String(failures[1]?.['message'])).toMatch(/checksum|corrupt|damaged|modified/i);
    expect(await ask(server)).toEqual({ status: 200, version: first.checksum, body: first.body });

    publish(otherSurvey, served);
    server.child.kill('SIGHUP');
    const other = await logged(server, 'dataset_reload_failed', 3);
    expect(String(other[2]?.['message'])).toMatch(/holds survey OTHER, not WAVES/);
    expect(await ask(server)).toEqual({ status: 200, version: first.checksum, body: first.body });

    // A good build after the failures is taken.
    publish(second.path, served);
    server.child.kill('SIGHUP');
    await logged(server, 'dataset_reloaded');
    expect(await ask(server)).toEqual({ status: 200, version: second.checksum, body: second.body });
  });
});

describe('crosstab serve --watch', () => {
  it('reloads when crosstab weight writes the weights file; a new build beside the old weights file is refused and the old version goes on serving', async () => {
    const [first, second] = versions as [(typeof versions)[0], (typeof versions)[0]];
    const served = join(tempDir(), 'weighted.arrow');
    publish(first.path, served);
    const server = await serve(served, ['--watch']);
    const targets = join(dir, 'region-targets.json');
    writeFileSync(targets, JSON.stringify({ margins: [{ variable: 'region', proportions: { N: 0.3, S: 0.3, E: 0.2, W: 0.2 } }] }));
    const weight = spawnSync(process.execPath, [CLI, 'weight', served, '--targets', targets, '--method', 'poststratify', '--name', 'wt_region'], { encoding: 'utf8' });
    expect(weight.stderr).toBe('');
    const weighted = await openDataset(served);
    const checksum = weighted.info.checksum;
    const share = await weighted.crosstab({ base: '*', targets: ['region=N'], weight: 'wt_region' });
    weighted.close();
    expect(checksum).toBe(weighted.info.weightsFile!.checksum);
    expect((await logged(server, 'dataset_reloaded'))[0]).toMatchObject({ trigger: 'watch', from: first.checksum, to: checksum });
    const answer = await ask(server);
    expect(answer).toMatchObject({ status: 200, version: checksum });
    expect(await catalogVersion(server)).toMatchObject({ Checksum: checksum });
    expect(share.targets[0]!.weighted / share.base.weighted).toBeCloseTo(0.3, 12);
    // A new build renamed over the file: its old weights file does not fit it.
    publish(second.path, served);
    const failed = (await logged(server, 'dataset_reload_failed'))[0]!;
    expect(String(failed['message'])).toMatch(/holds weights made for another version of weighted.arrow/);
    expect((await ask(server)).version).toBe(checksum);
  });

  it('reloads a replaced file without a signal, under load, each answer of the version its header names', async () => {
    const [first, second, third] = versions as [(typeof versions)[0], (typeof versions)[0], (typeof versions)[0]];
    const served = join(tempDir(), 'waves.arrow');
    publish(first.path, served);
    const server = await serve(served, ['--watch']);
    const load = loadUntil(server, 4);
    await new Promise((resolve) => setTimeout(resolve, 200));
    publish(second.path, served);
    expect((await logged(server, 'dataset_reloaded'))[0]).toMatchObject({ trigger: 'watch', to: second.checksum });
    publish(third.path, served);
    expect((await logged(server, 'dataset_reloaded', 2))[1]).toMatchObject({ trigger: 'watch', from: second.checksum, to: third.checksum });
    const answers = await load.stop();
    expectVersionedAnswers(answers, [first, second, third]);
    expect(await ask(server)).toEqual({ status: 200, version: third.checksum, body: third.body });
  });
});

describe('crosstab serve: a file rewritten in place (copied over, not renamed)', () => {
  it('answers from the version it verified at start, whole, until the reload takes up the new file; garbage copied over it leaves the old version serving', async () => {
    const [first, second] = versions as [(typeof versions)[0], (typeof versions)[0]];
    const served = join(tempDir(), 'waves.arrow');
    publish(first.path, served);
    const server = await serve(served, ['--watch']);
    // No query has read a buffer yet: a copy over the same inode changes the bytes under the open file.
    copyFileSync(second.path, served);
    // The first version's answer, or (once --watch has reloaded) the second's: never a 500.
    expectVersionedAnswers([await ask(server)], [first, second]);
    expect((await logged(server, 'dataset_reloaded'))[0]).toMatchObject({ trigger: 'watch', from: first.checksum, to: second.checksum });
    expect(await ask(server)).toEqual({ status: 200, version: second.checksum, body: second.body });
    // Garbage written over it in place, under load: every answer stays the second version's.
    const load = loadUntil(server, 3);
    writeFileSync(served, Buffer.alloc(70_000, 0x5a));
    const [failed] = await logged(server, 'dataset_reload_failed');
    expect(String(failed?.['message'])).toMatch(/waves\.arrow.*goes on serving/s);
    const answers = await load.stop();
    expectVersionedAnswers(answers, [second]);
    expect(answers.length).toBeGreaterThan(0);
  });
});

describe('crosstab serve --watch: tables streamed while the file is replaced', () => {
  it('each table answer, read whole, is the figures of the version its header names: renamed over, written over in place, garbage in place', async () => {
    const [first, second] = versions as [(typeof versions)[0], (typeof versions)[0]];
    const served = join(tempDir(), 'waves.arrow');
    publish(first.path, served);
    const server = await serve(served, ['--watch']);
    const TABLE = { SurveyCode: 'WAVES', PopulationBaseCode: 'region=N,S,E', Rows: [{ Variable: 'age' }, 'brand=A'], Columns: ['*', { Variable: 'brand' }, { Variable: 'region' }], Statistics: ['vpct', 'sig'] };
    const table = async () => {
      const response = await fetch(`${server.origin}/v1/tables`, { method: 'POST', headers: { 'content-type': 'application/json', 'service-engine-authorizer': apiKey }, body: JSON.stringify(TABLE) });
      return { status: response.status, version: response.headers.get('x-dataset-version'), text: await response.text() };
    };
    const reference = new Map<string, string>();
    const quiet = async () => {
      const answer = await table();
      expect(answer.status, answer.text).toBe(200);
      reference.set(answer.version!, answer.text);
    };
    await quiet();
    let going = true;
    const answers: Array<Awaited<ReturnType<typeof table>>> = [];
    const loops = Array.from({ length: 3 }, async () => {
      while (going) answers.push(await table());
    });
    publish(second.path, served);
    await logged(server, 'dataset_reloaded', 1);
    copyFileSync(first.path, served);
    await logged(server, 'dataset_reloaded', 2);
    writeFileSync(served, Buffer.alloc(50_000, 0x41));
    await logged(server, 'dataset_reload_failed', 1);
    await new Promise((resolve) => setTimeout(resolve, 200));
    going = false;
    await Promise.all(loops);
    publish(second.path, served);
    await logged(server, 'dataset_reloaded', 3);
    await quiet();
    expect([...reference.keys()].sort()).toEqual([first.checksum, second.checksum].sort());
    const wrong = answers.filter((answer) => answer.status !== 200 || reference.get(answer.version ?? '') !== answer.text).map((answer) => ({ status: answer.status, version: answer.version, text: answer.text.slice(0, 200) }));
    expect(wrong).toEqual([]);
    expect(answers.length).toBeGreaterThan(2);
  });
});

describe('crosstab serve: a wave appended in segments (`crosstab append` renamed over the served file)', () => {
  // The respondents of the built file, then of each wave: each append adds a segment (2, then 3).
  const WAVES = [20_000, 21_500, 23_000];
  /** The figures of a build of the same rows (no segments): what the appended file must answer. */
  const built = new Map<number, Promise<unknown[]>>();
  const compactAnswers = (rows: number) => {
    if (!built.has(rows)) built.set(rows, buildWaveCsv(rows).then(waveAnswers));
    return built.get(rows)!;
  };

  /** Appends the next wave over `served`; the new version, checked to be in `segments` segments and to answer as a build of all its rows. */
  async function appendNext(served: string, wave: number, segments: number): Promise<(typeof versions)[0]> {
    expect(await appendWave(served, WAVES[wave - 1]!, WAVES[wave]!)).toBe(segments);
    const stored = segmentParts(served);
    expect(stored.format).toBe('crosstab-engine/4');
    expect(new Set(stored.parts.map((part) => part.segment)).size).toBe(segments);
    const version = { path: served, ...(await waveAnswer(served)) };
    expect(await waveAnswers(served)).toEqual(await compactAnswers(WAVES[wave]!));
    return version;
  }

  /** Every query answered by `server` as a build of all the rows of `version` answers it, marked with its checksum. */
  async function expectServes(server: ServeChild, version: (typeof versions)[0], rows: number): Promise<void> {
    const expected = await compactAnswers(rows);
    for (const [index, query] of WAVE_QUERIES.entries()) expect(await ask(server, query)).toEqual({ status: 200, version: version.checksum, body: expected[index] });
    expect(await catalogVersion(server)).toEqual({ Checksum: version.checksum, BuiltAt: version.builtAt });
  }

  it.each([
    ['SIGHUP', [] as string[]],
    ['watch', ['--watch']],
  ] as const)('%s: the file with 1, then 2 appended waves (2, then 3 segments) is served under load, each answer of the version its header names, then as a build of all its rows answers', async (trigger, extra) => {
    const served = join(tempDir(), 'waves.arrow');
    publish(await buildWaveCsv(WAVES[0]!), served);
    const first = { path: served, ...(await waveAnswer(served)) };
    const server = await serve(served, [...extra]);
    await expectServes(server, first, WAVES[0]!);
    const seen = [first];
    for (const [wave, segments] of [[1, 2], [2, 3]] as const) {
      const load = loadUntil(server, 4);
      const next = await appendNext(served, wave, segments);
      if (trigger === 'SIGHUP') server.child.kill('SIGHUP');
      const reloaded = (await logged(server, 'dataset_reloaded', wave))[wave - 1];
      await new Promise((resolve) => setTimeout(resolve, 300));
      const answers = await load.stop();
      expect(reloaded).toMatchObject({ survey: 'WAVES', trigger, from: seen.at(-1)!.checksum, to: next.checksum, builtAt: next.builtAt, path: served });
      seen.push(next);
      expectVersionedAnswers(answers, seen);
      expect(answers.filter((answer) => answer.version === next.checksum).length).toBeGreaterThan(0);
      await expectServes(server, next, WAVES[wave]!);
    }
    // A server started on the file in segments (every buffer put together and checked before it answers).
    if (trigger === 'SIGHUP') await expectServes(await serve(served), seen.at(-1)!, WAVES[2]!);
  }, 120_000);

  it('an appended file with a byte changed in a wave\'s part, renamed over the served file, leaves the old version serving and logs why; the good one is then taken', async () => {
    const served = join(tempDir(), 'waves.arrow');
    const base = await buildWaveCsv(WAVES[0]!);
    publish(base, served);
    const first = { path: served, ...(await waveAnswer(served)) };
    const server = await serve(served);
    // The same append made beside the served file, damaged in the wave's part of a buffer every query reads, then renamed over it.
    const staging = join(tempDir(), 'waves.arrow');
    publish(base, staging);
    expect(await appendWave(staging, WAVES[0]!, WAVES[1]!)).toBe(2);
    for (const [count, name] of [[1, 'weight:w'], [2, 'code:brand=A']] as const) {
      writeFileSync(`${served}.tmp`, damagedPart(staging, name, 1));
      renameSync(`${served}.tmp`, served);
      server.child.kill('SIGHUP');
      const failed = (await logged(server, 'dataset_reload_failed', count))[count - 1];
      expect(failed).toMatchObject({ survey: 'WAVES', from: first.checksum });
      expect(String(failed?.['message'])).toContain(`fails the checksum of stored part`);
      expect(String(failed?.['message'])).toContain(`(${name})`);
      expect(String(failed?.['message'])).toMatch(/waves\.arrow.*goes on serving/s);
      await expectServes(server, first, WAVES[0]!);
    }
    publish(staging, served);
    server.child.kill('SIGHUP');
    await logged(server, 'dataset_reloaded');
    await expectServes(server, { path: served, ...(await waveAnswer(staging)) }, WAVES[1]!);
  }, 120_000);
});
