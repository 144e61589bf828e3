// Billing when the ledger's file system misbehaves under a running server: the ledger file
// or its folder removed, the file rotated by rename, SIGHUP, and a write that fails half way
// (a real file-size limit, RLIMIT_FSIZE, on the `crosstab serve` process: the kernel
// refuses the write past the limit as a full disk does, leaving a partial line).
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { openDataset, type Dataset } from '../../src/index.js';
import { createCrosstabHandler, listen, type RunningServer } from '../../src/http/index.js';
import { CLI, startServe } from './serve-child.js';
import { makeKeyFile, readLedger, tempDir, type TestKeys } from './support.js';

const paths = inject('testDatasets');
const BODY = JSON.stringify({ SurveyCode: 'GSS', PopulationBaseCode: '*', TargetCodes: ['sex=2'] });
let keys: TestKeys;
let dir: string;

beforeAll(async () => {
  dir = tempDir();
  keys = await makeKeyFile(dir);
});

async function post(origin: string, key = keys.all): Promise<{ status: number; requestId: string }> {
  const response = await fetch(`${origin}/v1/crosstab`, { method: 'POST', headers: { 'content-type': 'application/json', 'service-engine-authorizer': key }, body: BODY });
  await response.arrayBuffer();
  return { status: response.status, requestId: response.headers.get('x-request-id') as string };
}

const idsIn = (path: string): string[] => readLedger(path).flatMap((record) => (typeof record.requestId === 'string' ? [record.requestId] : []));

describe('ledger removed or rotated while serving (in-process node:http)', () => {
  let dataset: Dataset;
  let server: RunningServer;
  const events: string[] = [];
  let ledger: string;

  beforeAll(async () => {
    dataset = await openDataset(paths.gss);
    ledger = join(dir, 'L', 'u.ndjson');
    const handler = await createCrosstabHandler({
      datasets: [dataset],
      keys: keys.path,
      usage: ledger,
      log: (entry) => {
        if ('event' in entry) events.push(entry.event);
      },
    });
    server = await listen(handler, { port: 0 });
  });
  afterAll(async () => {
    await server?.close();
    dataset?.close();
  });
  const origin = (): string => server.url.replace(/\/v1$/, '');

  it('bills to a fresh ledger at the same path after its folder is removed (rm -rf)', async () => {
    const first = await post(origin());
    expect(first.status).toBe(200);
    rmSync(join(dir, 'L'), { recursive: true, force: true });
    const second = await post(origin());
    expect(second.status).toBe(200);
    expect(idsIn(ledger)).toEqual([second.requestId]);
    expect(events).toContain('ledger_reopened');
  });

  it('bills to the path, not to the renamed file, after rotation by rename', async () => {
    const before = await post(origin());
    expect(before.status).toBe(200);
    const rotated = `${ledger}.1`;
    renameSync(ledger, rotated);
    const after = await Promise.all([post(origin()), post(origin()), post(origin())]);
    expect(after.map((response) => response.status)).toEqual([200, 200, 200]);
    expect(idsIn(rotated)).not.toContain(after[0]?.requestId);
    expect(idsIn(rotated)).toContain(before.requestId);
    expect(idsIn(ledger).sort()).toEqual(after.map((response) => response.requestId).sort());
  });

  it('bills to the new file after another file is renamed over the path (replaced, not removed)', async () => {
    const before = await post(origin());
    expect(before.status).toBe(200);
    const replacement = join(dir, 'L', 'replacement.ndjson');
    writeFileSync(replacement, '{"requestId":"kept"}\n');
    renameSync(replacement, ledger); // the old file is unlinked; the path now names the replacement
    const after = await post(origin());
    expect(after.status).toBe(200);
    expect(idsIn(ledger)).toEqual(['kept', after.requestId]);
  });
});

describe('`crosstab serve` child: SIGHUP and a write that fails half way', () => {
  beforeAll(() => {
    expect(existsSync(CLI), `${CLI} is missing: run \`npm run build\` first`).toBe(true);
  });

  it('SIGHUP reopens the ledger and keeps serving (log rotation)', async () => {
    const folder = join(dir, 'hup');
    mkdirSync(folder);
    const ledger = join(folder, 'u.ndjson');
    const serve = await startServe(['--dataset', paths.gss, '--keys', keys.path, '--port', '0', '--ledger', ledger]);
    try {
      const first = await post(serve.origin);
      renameSync(ledger, `${ledger}.1`);
      serve.child.kill('SIGHUP');
      await new Promise((resolve) => setTimeout(resolve, 200));
      const second = await post(serve.origin);
      expect([first.status, second.status]).toEqual([200, 200]);
      expect(idsIn(`${ledger}.1`)).toEqual([first.requestId]);
      expect(idsIn(ledger)).toEqual([second.requestId]);
      expect(serve.output()).toContain('ledger_reopened');
    } finally {
      serve.child.kill('SIGTERM');
      await serve.exited;
    }
  });

  it('a failed write answers 503 and leaves no partial line for the next record to join', async () => {
    const folder = join(dir, 'full');
    mkdirSync(folder);
    const ledger = join(folder, 'u.ndjson');
    // `ulimit -S -f 8`: the server may write files up to 8 KiB. Fill the ledger to 60 bytes
    // short of that with a whole padding line, so the next record (~150 bytes) fails part way.
    const limit = 8 * 1024;
    const padding = `{"padding":"${'x'.repeat(limit - 60 - 15)}"}\n`;
    writeFileSync(ledger, padding);
    const serve = await startServe(['--dataset', paths.gss, '--keys', keys.path, '--port', '0', '--ledger', ledger], { limits: 'ulimit -S -f 8' });
    try {
      const refused = await post(serve.origin);
      expect(refused.status).toBe(503);
      // The disk gets space again (the limit is lifted on the running process).
      execFileSync('prlimit', ['--pid', String(serve.child.pid), '--fsize=unlimited']);
      const billed = await post(serve.origin);
      expect(billed.status).toBe(200);
      const lines = readFileSync(ledger, 'utf8').split('\n').filter((line) => line !== '');
      for (const line of lines) expect(() => JSON.parse(line), `ledger line ${JSON.stringify(line.slice(0, 80))}`).not.toThrow();
      expect(idsIn(ledger)).toEqual([billed.requestId]);
      expect(statSync(ledger).size).toBe(padding.length + lines[1]!.length + 1);
    } finally {
      serve.child.kill('SIGTERM');
      await serve.exited;
    }
  });
});
