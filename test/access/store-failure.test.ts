// The access store failing under a running server: the embedded folder removed or renamed,
// a PostgreSQL server stopped and started again, a PostgreSQL server frozen (SIGSTOP). The
// rule is the usage ledger's: no 200 without a durable row; the client gets the contract's
// 503 body, the log says so once per change of state, nothing hangs (SIGTERM exits), and a
// restart never puts an empty database in place of the one that was lost.
import { execFileSync } from 'node:child_process';
import { appendFileSync, rmSync, renameSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import { addAccount, addKey, DbKeyStore, DbUsageSink, openDatabase, type Database } from '../../src/access/index.js';
import { createCrosstabHandler, listen, type RunningServer } from '../../src/http/index.js';
import { openDataset, type Dataset } from '../../src/index.js';
import { startServe, type ServeChild } from '../http/serve-child.js';
import { tempDir } from '../http/support.js';
import { startPostgres, type PostgresServer } from './postgres-server.js';
import { newEmbeddedFolder } from '../support/embedded-template.js';

const paths = inject('testDatasets');
const BODY = JSON.stringify({ SurveyCode: 'GSS', PopulationBaseCode: '*', TargetCodes: ['sex=2'] });

interface Answer {
  status: number;
  body: { ResultCode?: number; error?: { code?: string; message?: string; hint?: string } };
  retryAfter: string | null;
}

/** POST /crosstab; a request that gets no answer within 60 s fails the test (it hung). */
async function post(origin: string, apiKey: string): Promise<Answer> {
  const response = await fetch(`${origin}/v1/crosstab`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'service-engine-authorizer': apiKey },
    body: BODY,
    signal: AbortSignal.timeout(60_000),
  });
  return { status: response.status, body: (await response.json()) as Answer['body'], retryAfter: response.headers.get('retry-after') };
}

function expectUnavailable(answer: Answer): void {
  expect(answer.status).toBe(503);
  expect(answer.body).toMatchObject({ ResultCode: 503, error: { code: 'unavailable', message: expect.stringMatching(/not billed/), hint: expect.any(String) } });
  expect(Number(answer.retryAfter)).toBeGreaterThan(0);
}

/** Every `crosstab serve` started here, killed after each test if a failed expectation left it running. */
const started: ServeChild[] = [];
afterEach(() => {
  for (const serve of started.splice(0)) if (serve.child.exitCode === null && serve.child.signalCode === null) serve.child.kill('SIGKILL');
});
async function serveOn(args: string[], cwd: string): Promise<ServeChild> {
  const serve = await startServe(['--dataset', paths.gss, '--port', '0', ...args], { cwd, timeoutMs: 120_000 });
  started.push(serve);
  return serve;
}

const linesOf = (output: string, event: string): string[] => output.split('\n').filter((line) => line.includes(`"event":"${event}"`));

/** Resolves once `child` has exited; fails the test when it does not within 60 s of SIGTERM (it hung). */
async function stop(serve: ServeChild): Promise<number | null> {
  serve.child.kill('SIGTERM');
  const timer = setTimeout(() => serve.child.kill('SIGKILL'), 60_000);
  const code = await serve.exited;
  clearTimeout(timer);
  return code;
}

describe('`crosstab serve` whose embedded database folder is removed', () => {
  it('answers 503 (never 200), logs it once, exits on SIGTERM, and a restart refuses to create an empty database there', async () => {
    const cwd = tempDir('crosstab-store-');
    const serve = await serveOn([], cwd);
    let apiKey: string | undefined;
    for (let wait = 0; wait < 600 && apiKey === undefined; wait++) {
      apiKey = /Development API key[^\n]*\n\s+(ctk_\S+)/.exec(serve.output())?.[1];
      if (apiKey === undefined) await new Promise((resolve) => setTimeout(resolve, 100));
    }
    if (apiKey === undefined) throw new Error(`no development key printed:\n${serve.output()}`);
    expect((await post(serve.origin, apiKey)).status).toBe(200);

    rmSync(join(cwd, '.crosstab', 'db'), { recursive: true, force: true });
    const answers: Answer[] = [];
    for (let i = 0; i < 5; i++) answers.push(await post(serve.origin, apiKey));
    answers.push(...(await Promise.all([1, 2, 3, 4, 5].map(() => post(serve.origin, apiKey)))));
    for (const answer of answers) expectUnavailable(answer);
    expect(linesOf(serve.output(), 'store_down'), serve.output()).toHaveLength(1);
    expect(linesOf(serve.output(), 'store_down')[0]).toMatch(/was removed, renamed or replaced/);
    expect(serve.output()).not.toMatch(/"status":50[03]/);

    expect(await stop(serve)).toBe(0);

    const again = startServe(['--dataset', paths.gss, '--port', '0'], { cwd, timeoutMs: 120_000 });
    const failure = await again.then(
      (serve) => {
        started.push(serve);
        return 'started';
      },
      (error: Error) => error.message,
    );
    expect(failure).toMatch(/exited with 1/);
    expect(failure).toMatch(/The embedded database \.crosstab\/db is missing/);
    expect(failure).not.toMatch(/Development API key/);
  });
});

describe('`crosstab serve` whose embedded database\'s disk fills up and is cleared again', () => {
  const mountPoint = tempDir('crosstab-full-');
  afterAll(() => {
    execFileSync('umount', ['--lazy', mountPoint]);
  });

  it('answers 200 with a durable row or 503, never hangs, logs the outage once, and serves again once there is room', async () => {
    // A small file system of its own (tmpfs, as root), so that filling it fills nothing else.
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=120m', 'tmpfs', mountPoint]);
    const serve = await serveOn([], mountPoint);
    let apiKey: string | undefined;
    for (let wait = 0; wait < 600 && apiKey === undefined; wait++) {
      apiKey = /Development API key[^\n]*\n\s+(ctk_\S+)/.exec(serve.output())?.[1];
      if (apiKey === undefined) await new Promise((resolve) => setTimeout(resolve, 100));
    }
    if (apiKey === undefined) throw new Error(`no development key printed:\n${serve.output()}`);
    const billed: string[] = [];
    const call = async (): Promise<number> => {
      const response = await fetch(`${serve.origin}/v1/crosstab`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'service-engine-authorizer': apiKey as string },
        body: BODY,
        signal: AbortSignal.timeout(60_000),
      });
      await response.arrayBuffer();
      if (response.status === 200) billed.push(response.headers.get('x-request-id') as string);
      return response.status;
    };
    expect(await call()).toBe(200);

    const filler = join(mountPoint, 'filler');
    const chunk = Buffer.alloc(1 << 20);
    try {
      for (;;) appendFileSync(filler, chunk);
    } catch (error) {
      expect((error as NodeJS.ErrnoException).code).toBe('ENOSPC');
    }
    const whileFull: number[] = [];
    for (let i = 0; i < 3000 && !whileFull.includes(503); i++) whileFull.push(await call());
    for (let i = 0; i < 20; i++) whileFull.push(await call());
    expect(new Set(whileFull)).toEqual(new Set(whileFull.includes(200) ? [200, 503] : [503]));

    rmSync(filler);
    let status = 0;
    for (let attempt = 0; attempt < 60 && status !== 200; attempt++) {
      status = await call();
      if (status !== 200) await new Promise((resolve) => setTimeout(resolve, 500));
    }
    expect(status).toBe(200);
    for (let wait = 0; wait < 100 && linesOf(serve.output(), 'store_up').length === 0; wait++) {
      expect(await call()).toBe(200);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    expect(linesOf(serve.output(), 'store_down'), serve.output()).toHaveLength(1);
    expect(linesOf(serve.output(), 'store_down')[0]).toMatch(/No space left on device/);
    expect(linesOf(serve.output(), 'store_up')).toHaveLength(1);
    expect(await stop(serve)).toBe(0);

    // Every 200 a client received has its usage row.
    const db = await openDatabase(join(mountPoint, '.crosstab', 'db'));
    const { rows } = await db.query<{ request_id: string }>('SELECT request_id FROM usage');
    await db.close();
    const rowIds = new Set(rows.map((row) => row.request_id));
    expect(billed.filter((id) => !rowIds.has(id))).toEqual([]);
    // Its own waits bound every step (60 s for the server to start, 60 s a call: "never hangs");
    // the whole, about 18 s quiet, took past the default 60 s with the machine loaded.
  }, 240_000);
});

describe('the embedded database folder renamed under an open store', () => {
  it('fails the next usage batch with store_unavailable and reports it once', async () => {
    const dir = tempDir('crosstab-store-');
    const events: string[] = [];
    const db = await openDatabase(await newEmbeddedFolder(join(dir, 'db')), { onEvent: (event) => events.push(event) });
    await addAccount(db, 'acme', new Map([['GSS', ['_ALL_']]]));
    const { key } = await addKey(db, { account: 'acme', name: 'production' });
    const accountId = (await db.query<{ id: string }>('SELECT id FROM accounts')).rows[0]?.id as string;
    const usage = new DbUsageSink(db);
    const record = (requestId: string): Promise<void> => usage.record({ time: new Date().toISOString(), requestId, keyId: key.id, accountId, survey: 'GSS', targets: 1 });
    await record('before');
    renameSync(join(dir, 'db'), join(dir, 'db.moved'));
    await expect(record('after-1')).rejects.toMatchObject({ code: 'store_unavailable' });
    await expect(record('after-2')).rejects.toMatchObject({ code: 'store_unavailable' });
    expect(events).toEqual(['store_down']);
    await usage.close();
    await db.close();
  });
});

describe('a PostgreSQL server that stops, starts again, or freezes under a running server', () => {
  let postgres: PostgresServer;
  beforeAll(async () => {
    postgres = await startPostgres();
  });
  afterAll(() => postgres?.stop());

  it('`crosstab serve`: 503 with the contract body while it is down, one log line when it goes and one when it is back, 200 again after', async () => {
    const database = await postgres.createDatabase(`outage_${Date.now()}`);
    const setup = await openDatabase(database);
    await addAccount(setup, 'acme', new Map([['GSS', ['_ALL_']]]));
    const { apiKey } = await addKey(setup, { account: 'acme', name: 'production' });
    await setup.close();
    const serve = await serveOn(['--database', database], tempDir('crosstab-store-'));
    try {
      expect((await post(serve.origin, apiKey)).status).toBe(200);
      postgres.pause();
      const answers: Answer[] = [];
      try {
        for (let i = 0; i < 10; i++) answers.push(await post(serve.origin, apiKey));
        answers.push(...(await Promise.all(Array.from({ length: 20 }, () => post(serve.origin, apiKey)))));
        // The portal too: a page that needs the database is a 503, not a 500 with a stack.
        const portal = await fetch(`${serve.origin}/portal/keys`, { headers: { cookie: `crosstab_portal=${'a'.repeat(43)}` }, redirect: 'manual', signal: AbortSignal.timeout(60_000) });
        expect(portal.status).toBe(503);
        expect(portal.headers.get('retry-after')).toBe('5');
      } finally {
        postgres.start();
      }
      for (const answer of answers) expectUnavailable(answer);
      let status = 0;
      for (let attempt = 0; attempt < 60 && status !== 200; attempt++) {
        status = (await post(serve.origin, apiKey)).status;
        if (status !== 200) await new Promise((resolve) => setTimeout(resolve, 500));
      }
      expect(status).toBe(200);
      // Back once it has answered for a few seconds without a failure.
      for (let wait = 0; wait < 100 && linesOf(serve.output(), 'store_up').length === 0; wait++) {
        await post(serve.origin, apiKey);
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
      const output = serve.output();
      expect(linesOf(output, 'store_down'), output).toHaveLength(1);
      expect(linesOf(output, 'store_up'), output).toHaveLength(1);
      expect(output).not.toMatch(/"code":"internal"|"status":50[03]|\bat \S+ \(|crosstab portal:/);
    } finally {
      expect(await stop(serve)).toBe(0);
    }
  });

  it('`crosstab serve` on a frozen server (SIGSTOP): a billed request gets 503, and SIGTERM exits', async () => {
    const database = await postgres.createDatabase(`frozen_cli_${Date.now()}`);
    const setup = await openDatabase(database);
    await addAccount(setup, 'acme', new Map([['GSS', ['_ALL_']]]));
    const { apiKey } = await addKey(setup, { account: 'acme', name: 'production' });
    await setup.close();
    const serve = await serveOn(['--database', database], tempDir('crosstab-store-'));
    expect((await post(serve.origin, apiKey)).status).toBe(200);
    postgres.signal('SIGSTOP');
    try {
      expectUnavailable(await post(serve.origin, apiKey));
      expect(await stop(serve)).toBe(0);
    } finally {
      postgres.signal('SIGCONT');
    }
    expect(linesOf(serve.output(), 'store_down')).toHaveLength(1);
  });

  describe('frozen (SIGSTOP)', () => {
    let db: Database;
    let dataset: Dataset;
    let server: RunningServer;
    let apiKey: string;
    const events: string[] = [];

    beforeAll(async () => {
      db = await openDatabase(await postgres.createDatabase(`frozen_${Date.now()}`), { timeoutMs: 2000, onEvent: (event) => events.push(event) });
      await addAccount(db, 'acme', new Map([['GSS', ['_ALL_']]]));
      ({ apiKey } = await addKey(db, { account: 'acme', name: 'production' }));
      dataset = await openDataset(paths.gss);
      const handler = await createCrosstabHandler({ datasets: [dataset], keys: new DbKeyStore(db), usage: new DbUsageSink(db) });
      server = await listen(handler, { port: 0 });
    });
    afterAll(async () => {
      postgres.signal('SIGCONT');
      await server?.close();
      await db?.close();
      dataset?.close();
    });

    it('billed requests get 503 while it is frozen instead of waiting for it, and 200 once it runs again', async () => {
      const origin = server.url.replace(/\/v1$/, '');
      expect((await post(origin, apiKey)).status).toBe(200);
      postgres.signal('SIGSTOP');
      const answers = await Promise.all([1, 2, 3].map(() => post(origin, apiKey))).finally(() => postgres.signal('SIGCONT'));
      for (const answer of answers) expectUnavailable(answer);
      let status = 0;
      for (let attempt = 0; attempt < 60 && status !== 200; attempt++) {
        status = (await post(origin, apiKey)).status;
        if (status !== 200) await new Promise((resolve) => setTimeout(resolve, 500));
      }
      expect(status).toBe(200);
      for (let wait = 0; wait < 100 && !events.includes('store_up'); wait++) {
        expect((await post(origin, apiKey)).status).toBe(200);
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
      expect(events).toEqual(['store_down', 'store_up']);
    });
  });
});
